"""Doctor checks: pure functions from what was read to verdicts."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keel.upgrade.slots import UpgradeStatus

from dataclasses import asdict, dataclass, field
from typing import Any

from keel.apply.boot import BootRecord
from keel.model import RouterModel
from keel.parse import nftlist
from keel.parse.procstat import CpuShare
from keel.parse.tcqdisc import Qdisc, root_cake
from keel.parse.wgdump import WgInterface
from keel.render import nft
from keel.render.cake import ifb_name, shaped_device
from keel.system.cpu_sysfs import CpuTuning
from keel.system.crypt import login_checks
from keel.thresholds import HANDSHAKE_STALE_S, STEAL_WARN

OK, INFO, WARN, FAIL = "ok", "info", "warn", "fail"


@dataclass(frozen=True)
class Check:
    area: str
    name: str
    status: str
    detail: str
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_kernel(features: dict[str, bool]) -> list[Check]:
    """features: kernel feature name -> present (built in or loadable)."""
    return [Check("kernel", name, OK if present else FAIL,
                  "present" if present else "missing from this kernel")
            for name, present in sorted(features.items())]


def check_tuning(tuning: CpuTuning, governor: str = "performance",
                 max_latency_us: int | None = None) -> list[Check]:
    checks = []
    if not tuning.has_cpufreq:
        checks.append(Check("tuning", "governor", INFO,
                            "no cpufreq: the CPU clock is managed by the hypervisor or firmware"))
    else:
        wrong = {cpu: f.governor for cpu, f in tuning.freq.items() if f.governor != governor}
        mhz = {cpu: (f.cur_khz // 1000, f.max_khz // 1000) for cpu, f in tuning.freq.items()}
        slow = [cpu for cpu, (cur, top) in mhz.items() if top and cur < 0.8 * top]
        detail = ", ".join(f"cpu{c} {cur}/{top} MHz" for c, (cur, top) in sorted(mhz.items()))
        if wrong:
            checks.append(Check("tuning", "governor", FAIL,
                                f"{governor} asked; in force: "
                                + ", ".join(f"cpu{c} {g}" for c, g in sorted(wrong.items())),
                                {"governors": {str(c): f.governor
                                               for c, f in tuning.freq.items()}}))
        else:
            checks.append(Check("tuning", "governor", OK, f"{governor} on every CPU"))
        checks.append(Check("tuning", "clock", WARN if slow else OK,
                            ("below 80 % of max: " if slow else "") + detail,
                            {"mhz": {str(c): {"cur": cur, "max": top}
                                     for c, (cur, top) in mhz.items()}}))
    if not tuning.has_cpuidle:
        checks.append(Check("tuning", "idle states", INFO,
                            "no cpuidle driver: idle states are managed by the hypervisor"))
    else:
        allowed = tuning.states_allowed()
        deepest = max((s.latency_us for s in allowed), default=0)
        names = sorted({f"{s.name} ({s.latency_us} us)" for s in allowed})
        bad = max_latency_us is not None and deepest > max_latency_us
        checks.append(Check("tuning", "idle states", FAIL if bad else OK,
                            "allowed: " + ", ".join(names),
                            {"deepest_exit_latency_us": deepest}))
    limit = tuning.pm_qos_us
    if max_latency_us is not None:
        held = limit is not None and limit <= max_latency_us
        checks.append(Check("tuning", "pm qos", OK if held else FAIL,
                            f"cpu_dma_latency {limit} us (asked <= {max_latency_us} us)",
                            {"pm_qos_us": limit}))
    else:
        checks.append(Check("tuning", "pm qos", INFO, f"cpu_dma_latency {limit} us",
                            {"pm_qos_us": limit}))
    return checks


def check_steal(share: dict[str, CpuShare], seconds: float) -> Check:
    total = share.get("cpu")
    if total is None:
        return Check("cpu", "steal", INFO, "no CPU time read")
    per_cpu = {name: round(s.steal * 100, 1) for name, s in share.items() if name != "cpu"}
    pct = total.steal * 100
    status = WARN if total.steal > STEAL_WARN else OK
    detail = f"{pct:.1f} % over the last {seconds:.0f} s"
    if status == WARN:
        detail += ": the host is taking CPU time from this VM (burstable VPS out of credits?)"
    return Check("cpu", "steal", status, detail, {"percent": round(pct, 1), "per_cpu": per_cpu})


def check_shaping(model: RouterModel, qdiscs: list[Qdisc]) -> list[Check]:
    checks = []
    tun = model.wireguard.interface if model.wireguard else None
    for wan in model.wans:
        shaped, _ = shaped_device(wan, tun)
        for direction, dev, rate, way in (("egress", shaped, wan.shaping.upload_kbit,
                                           "upload"),
                                          ("ingress", ifb_name(shaped),
                                           wan.shaping.download_kbit, "download")):
            if rate <= 0:
                continue
            q = root_cake(qdiscs, dev)
            want_bps = rate * 1000
            low, _, high = wan.shaping.bounds(way)
            if q is None:
                checks.append(Check("cake", f"{wan.interface} {direction}", FAIL,
                                    f"no CAKE on {dev} ({rate} kbit/s asked)"))
            elif not low * 1000 <= q.bandwidth_bps <= high * 1000:
                asked = (f"{want_bps} asked" if low == high
                         else f"adaptive between {low} and {high} kbit/s asked")
                checks.append(Check("cake", f"{wan.interface} {direction}", FAIL,
                                    f"CAKE on {dev} at {q.bandwidth_bps} bit/s, {asked}"))
            else:
                now = q.bandwidth_bps // 1000
                how = f"{now} kbit/s" if low == high else f"{now} kbit/s (adaptive, base {rate})"
                checks.append(Check("cake", f"{wan.interface} {direction}", OK,
                                    f"CAKE on {dev} at {how}, {q.packets} packets, "
                                    f"{q.drops} drops",
                                    {"dev": dev, "bandwidth_bps": q.bandwidth_bps,
                                     "packets": q.packets, "drops": q.drops}))
    return checks


def check_tunnel(model: RouterModel, interfaces: dict[str, WgInterface], now: float) -> list[Check]:
    t = model.wireguard
    if t is None:
        return []
    wg = interfaces.get(t.interface)
    if wg is None:
        return [Check("wireguard", t.interface, FAIL, "interface missing")]
    checks = [Check("wireguard", t.interface, OK,
                    f"port {wg.listen_port}, {len(wg.peers)} peer(s)")]
    for peer in wg.peers:
        age = peer.handshake_age(now)
        name = f"peer {peer.public_key[:8]}..."
        if age is None:
            status, detail = WARN, "no handshake yet"
        elif age > HANDSHAKE_STALE_S:
            status, detail = WARN, f"last handshake {age:.0f} s ago"
        else:
            status, detail = OK, f"last handshake {age:.0f} s ago"
        checks.append(Check("wireguard", name, status, detail,
                            {"endpoint": peer.endpoint, "handshake_age_s": age}))
    return checks


def check_mtu(model: RouterModel, mtus: dict[str, int]) -> list[Check]:
    checks = []
    for wan in model.wans:
        if wan.interface in mtus:
            checks.append(Check("mtu", wan.interface, OK, f"{mtus[wan.interface]}"))
    t = model.wireguard
    if t is not None and t.interface in mtus:
        have = mtus[t.interface]
        wan_mtu = min((mtus[w.interface] for w in model.wans if w.interface in mtus), default=1500)
        fits = have + 80 <= wan_mtu
        status = OK if have == t.mtu and fits else WARN
        detail = f"{have} (asked {t.mtu}; WAN {wan_mtu} leaves room for {wan_mtu - 80})"
        checks.append(Check("mtu", t.interface, status, detail,
                            {"mtu": have, "asked": t.mtu, "wan_mtu": wan_mtu}))
    return checks


def check_boot(record: BootRecord | None) -> list[Check]:
    """What `keel apply --boot` applied, and why it fell back if it did."""
    if record is None:
        return []
    why = "; ".join(f"{f.source}: {f.reason}" for f in record.failures)
    data = record.as_dict()
    if record.applied is None:
        return [Check("config", "boot", FAIL, f"no config could be applied at boot: {why}", data)]
    cut = (f"; access cut to what the newer config allows: {', '.join(record.narrowed)}"
           if record.narrowed else "")
    if record.failures:
        return [Check("config", "boot", WARN,
                      f"booted on {record.applied} because {why}{cut}", data)]
    return [Check("config", "boot", OK, f"booted on {record.applied}", data)]


def check_upgrade(status: UpgradeStatus | None) -> list[Check]:
    """The slots (keel upgrade status) and how the last upgrade ended: a
    rollback by the health gate, or an install that failed or was cut, is
    said in one line; a slot that holds no usable keel is not [ok]."""
    if status is None:
        return []
    data = status.as_dict()
    slots = "; ".join(s.line() for s in status.slots)
    found = []
    if status.last is not None and (status.last.result == "rolled back"
                                    or status.last.install_broke):
        found.append(Check("upgrade", "last upgrade", WARN, status.last.line(), data))
    elif status.last is not None:
        found.append(Check("upgrade", "last upgrade", OK, status.last.line(), data))
    if status.pending is not None:
        found.append(Check("upgrade", "trial", WARN,
                           f"{status.pending.to_version} in slot {status.pending.to_slot} is on "
                           "trial: kept after its first healthy boot", data))
    unusable = [s.name for s in status.slots if s.state in ("bad", "?")
                or (s.state == "empty" and status.last is not None
                    and status.last.install_broke and status.last.slot == s.name)]
    if status.problem:
        found.append(Check("upgrade", "slots", WARN, f"{slots} ({status.problem})", data))
    elif unusable:
        found.append(Check("upgrade", "slots", WARN,
                           f"{slots} (slot {', '.join(unusable)} holds no usable keel)", data))
    else:
        found.append(Check("upgrade", "slots", OK, slots, data))
    return found


@dataclass(frozen=True)
class RulesetState:
    """What the firewall check reads: the config's ruleset as keel renders
    it, the one keel last loaded, what nft listed right after that load and
    what it lists now, and the pairing set's elements."""
    rendered_sha: str
    loaded_sha: str | None  # the stamp `keel apply` left; None: none loaded
    recorded: str | None  # the listing right after that load
    live: str | None  # the listing now; None: nft could not list it
    pairing: tuple[nftlist.Element, ...] = ()


def check_firewall(state: RulesetState) -> list[Check]:
    if state.live is None:
        found = [Check("firewall", "ruleset", FAIL, "nft cannot list the ruleset")]
    elif state.loaded_sha is None or state.recorded is None:
        found = [Check("firewall", "ruleset", FAIL,
                       "keel has not loaded its ruleset since boot (keel apply loads it)")]
    elif (changes := nftlist.drift(state.recorded, state.live)):
        found = [Check("firewall", "ruleset", FAIL,
                       "drift from what keel loaded: " + "; ".join(changes)
                       + " (keel apply loads keel's again)", {"drift": changes})]
    elif state.loaded_sha != state.rendered_sha:
        found = [Check("firewall", "ruleset", FAIL,
                       "the ruleset loaded is not this config's (keel apply loads it)")]
    else:
        found = [Check("firewall", "ruleset", OK, "as keel loaded it, for this config")]
    for e in state.pairing:
        # the same test as keel apply's (keel.apply.engine.plan_firewall): what
        # fails here is what apply removes by loading the ruleset again
        if (why := nftlist.stray(e, nft.PAIRING_LONGEST_S)):
            found.append(Check("firewall", "pairing port", FAIL,
                               f"{why} in the pairing set: open on the WAN, not keel pair's "
                               "(keel apply removes it)"))
        else:
            found.append(Check("firewall", "pairing port", INFO,
                               f"TCP {e.port} open on the WAN for a pairing code, closes by "
                               f"itself in {e.expires_s or 0} s"))
    return found


def check_password(hashed: str | None) -> list[Check]:
    """Root's password, when one is set: whether the console's login can
    check its hash (never shown). Nothing when there is none or it is locked."""
    if not hashed or hashed.startswith(("!", "*")):
        return []
    if login_checks(hashed):
        return [Check("access", "root password", OK,
                      "set; the console's login (serial, tty1) checks it")]
    return [Check("access", "root password", WARN,
                  "stored by an earlier keel in a scheme the console's login cannot check "
                  "(it refuses the right password): set it again (keel access password, "
                  "or the console UI asks)")]


def exit_status(checks: list[Check]) -> int:
    return 1 if any(c.status == FAIL for c in checks) else 0
