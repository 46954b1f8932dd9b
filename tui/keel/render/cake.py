"""CAKE on a WAN's egress, and on its ingress through an IFB (`ifb4<wan>`) fed
by a matchall filter with a mirred redirect, as argv lists for `tc` and `ip`."""

from __future__ import annotations

from keel.config.schema import OVERHEAD_PRESETS
from keel.model import Shaping, Wan

IFB_PREFIX = "ifb4"
INGRESS_HANDLE = "ffff:"


def ifb_name(wan: str) -> str:
    """`ifb4<wan>`, cut to the kernel's 15 characters."""
    return (IFB_PREFIX + wan)[:15]


def overhead_bytes(overhead: str | int) -> int:
    """The bytes of a preset (keel.config.schema.OVERHEAD_PRESETS) or a number."""
    if isinstance(overhead, int):
        return overhead
    return OVERHEAD_PRESETS[overhead]


def overhead_options(overhead: str | int) -> list[str]:
    """CAKE's words for the overhead: none for "none", its own keyword for
    "docsis" (18 bytes and MPU 64), else `overhead N`."""
    if overhead == "none":
        return []
    if overhead == "docsis":
        return ["docsis"]
    return ["overhead", str(overhead_bytes(overhead))]


def cake_options(shaping: Shaping, rate_kbit: int, *, ingress: bool,
                 extra_overhead: int = 0) -> list[str]:
    opts = ["bandwidth", f"{rate_kbit}kbit", shaping.diffserv]
    if shaping.nat:
        opts.append("nat")
    else:
        opts.append("nonat")
    if ingress:
        opts.append("ingress")
        opts.append("wash" if shaping.wash_ingress else "nowash")
    else:
        opts.append("ack-filter" if shaping.ack_filter else "no-ack-filter")
    if extra_overhead:
        # inside a tunnel: the link carries each packet plus the tunnel's bytes
        opts += ["overhead", str(overhead_bytes(shaping.overhead) + extra_overhead)]
    else:
        opts += overhead_options(shaping.overhead)
    opts += ["rtt", f"{shaping.rtt_ms}ms"]
    return opts


def shaped_device(wan: Wan, tunnel_ifname: str | None) -> tuple[str, int]:
    """The device CAKE sits on for this WAN, and the overhead to add there."""
    if wan.shaping.attach == "tunnel" and tunnel_ifname:
        return tunnel_ifname, wan.shaping.tunnel_overhead
    return wan.interface, 0


def egress_commands(wan: Wan, tunnel_ifname: str | None = None) -> list[list[str]]:
    dev, extra = shaped_device(wan, tunnel_ifname)
    rate = wan.shaping.upload_kbit
    if rate <= 0:
        return [["tc", "qdisc", "replace", "dev", dev, "root", "fq_codel"]]
    return [["tc", "qdisc", "replace", "dev", dev, "root", "cake",
             *cake_options(wan.shaping, rate, ingress=False, extra_overhead=extra)]]


def ingress_commands(wan: Wan, tunnel_ifname: str | None = None) -> list[list[str]]:
    """Set up (or, at rate 0, tear down) ingress shaping through the IFB.

    On the tunnel, GRO goes off while CAKE shapes its ingress: GRO would glue
    the decrypted packets back into super-packets only for CAKE to split
    them again, and the ping reply waits for the batch (docs/cake.md has
    the latency it saves, measured)."""
    dev, extra = shaped_device(wan, tunnel_ifname)
    ifb = ifb_name(dev)
    rate = wan.shaping.download_kbit
    on_tunnel = dev == tunnel_ifname
    if rate <= 0:
        return [["tc", "qdisc", "del", "dev", dev, "handle", INGRESS_HANDLE, "ingress"],
                ["ip", "link", "del", ifb],
                *([["ethtool", "-K", dev, "gro", "on"]] if on_tunnel else [])]
    return [
        ["ip", "link", "add", ifb, "type", "ifb"],
        ["ip", "link", "set", ifb, "up"],
        ["tc", "qdisc", "replace", "dev", ifb, "root", "cake",
         *cake_options(wan.shaping, rate, ingress=True, extra_overhead=extra)],
        ["tc", "qdisc", "replace", "dev", dev, "handle", INGRESS_HANDLE, "ingress"],
        ["tc", "filter", "replace", "dev", dev, "parent", INGRESS_HANDLE, "prio", "1",
         "handle", "1", "matchall", "action", "mirred", "egress", "redirect", "dev", ifb],
        *([["ethtool", "-K", dev, "gro", "off"]] if on_tunnel else []),
    ]
