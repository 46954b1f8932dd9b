"""Pilot tests of the first-boot setup wizard at 80x24 on the console
profile, by keystrokes: a whole edge to the apply-with-confirm countdown, a
hub that pairs after its setup, an invalid value (the loader's message, then
the fix), and the wizard coming up only when there is no user config, a one-port
machine offered the hub, the port step following the links, and a port
found by its cable. keel's commands go to a fake `run` and the ports come
from a fake read_ports (tests.fixtures.ports) whose links a test changes:
no system is touched. Snapshots of the port step at 80x24 (console) and
120x40."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

from textual.events import Key

from keel.apply.rates import KEEL
from keel.config.load import parse_config
from keel.state.revisions import RevisionStore
from keel.ui.config_actions import ConfigActions
from keel.ui.dialogs import CountdownScreen, ReviewScreen
from keel.ui.profile import CONSOLE, MODERN
from keel.ui.screens.cable import CableScreen
from keel.ui.screens.pairing import PairingScreen
from keel.ui.screens.selftest import SelfTestScreen
from keel.ui.screens.setup import ChoiceSet, SetupScreen
from keel.ui.widgets.nic_table import NicTable
from tests.fixtures.ports import PORTS, TWO_PORTS, VPS_PORT, linked
from tests.ui.uihelpers import StepClock, asynctest, make_app, screen_lines, settle

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_TEXT = (ROOT / "overlay/etc/keel/keel.toml").read_text()
SHIPPED = parse_config(SHIPPED_TEXT).config
KEY = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="
PLAN = "address: wan eth0 by dhcp"
ENS4, ENS5 = "mac:52:54:00:12:34:02", "mac:52:54:00:12:34:03"


class FakePorts:
    """read_ports(): the ports now (a test changes them), or, while a
    script is left, its next list (one per read: the cable watch's polls)."""

    def __init__(self, ports) -> None:
        self.ports = list(ports)
        self.script: list[list] = []
        self.reads = 0

    def __call__(self) -> list:
        self.reads += 1
        if self.script:
            self.ports = self.script.pop(0)
        return list(self.ports)


class FakeLinks:
    """keel.system.nic_link.set_up on the fake ports: a port set up reads up
    (no carrier yet), set down reads down."""

    def __init__(self, ports: FakePorts) -> None:
        self.ports = ports
        self.calls: list[tuple[str, bool]] = []

    def __call__(self, name: str, up: bool) -> bool:
        self.calls.append((name, up))
        self.ports.ports = [dataclasses.replace(p, up=up, carrier=False if up else None)
                            if p.name == name else p for p in self.ports.ports]
        return True


def fake_cable(role: str, read) -> CableScreen:
    """The watch on a clock of its own, half a second a read; the test
    reads (watch_reads): its own poll does not come. Ports set up on the
    fake ports, 1 s to warm up."""
    return CableScreen(role, read, poll_s=3600.0, timeout_s=5.0, settle_s=1.0,
                       clock=StepClock(0.0, 0.5), link=FakeLinks(read), warm_s=1.0,
                       id="cable-screen")


async def watch_reads(app, pilot, count: int) -> None:
    """The cable watch's next reads, each judged and shown."""
    for _ in range(count):
        if isinstance(app.screen, CableScreen):
            app.screen._poll()
        await settle(pilot)


class FakeKeel:
    """`python -m keel.cli ...` as a list of the commands asked for."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str]) -> subprocess.CompletedProcess:
        assert argv[:len(KEEL)] == list(KEEL)
        command = argv[len(KEEL):]
        self.calls.append(command)
        out = {"apply": PLAN if "--dry-run" in command else
               "applied; rolls back in 120 s unless `keel confirm` comes first",
               "confirm": "confirmed", "rollback": "rolled back"}[command[0]]
        return subprocess.CompletedProcess(argv, 0, stdout=out + "\n", stderr="")

    def commands(self) -> list[str]:
        return [" ".join(c) for c in self.calls]


class FakePairing:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    def __call__(self, role, hub, code, say):
        self.calls.append((role, hub, code))
        say("    code   1234-5678")
        say("on the edge: keel pair 198.51.100.7 1234-5678")
        return True, "paired: the tunnel is up and kept"


def text_of(app) -> str:
    text = "\n".join(screen_lines(app))
    assert text.isascii()  # the console profile draws nothing outside ASCII
    return text


def wizard(tmp_path, fake: FakeKeel, ports=PORTS, pair=None, first_boot=True,
           read: FakePorts | None = None, poll_s: float = 3600.0) -> SetupScreen:
    actions = ConfigActions(run=fake, proposed=tmp_path / "run" / "proposed.toml")
    return SetupScreen(SHIPPED, ports, read=read or FakePorts(ports), actions=actions,
                       revisions=RevisionStore(tmp_path / "revisions"),
                       pair=pair or FakePairing(), first_boot=first_boot, poll_s=poll_s,
                       cable=fake_cable)


async def open_wizard(app, pilot, screen: SetupScreen) -> SetupScreen:
    app.push_screen(screen)
    await settle(pilot)
    return screen


async def keys(pilot, *typed: str) -> None:
    """Each argument: a key name ("enter", "down"), or text typed a
    character at a time."""
    for item in typed:
        if len(item) > 1 and item not in ("enter", "down", "up", "tab", "escape"):
            await pilot.press(*item)
        else:
            await pilot.press(item)
        await settle(pilot)


def title(app) -> str:
    return screen_lines(app)[0]


@asynctest
async def test_an_edge_by_keystrokes_to_the_countdown(tmp_path):
    fake = FakeKeel()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_wizard(app, pilot, wizard(tmp_path, fake))
        text = text_of(app)
        assert "step 1/7: What is this router?  (first boot)" in text
        assert "(*) edge" in text and "( ) hub" in text
        await keys(pilot, "enter")  # edge

        assert "step 2/7: Which NIC is which?" in title(app)
        text = text_of(app)
        assert "52:54:00:12:34:02" in text and "virtio_net" in text and "no carrier" in text
        assert "up 1000 Mbit/s" in text and "up 100 Mbit/s" in text and "0000:00:05.0" in text
        # ens4 has a link: it is the WAN; of two others the LAN is not guessed
        assert (screen.answers.wan_interface, screen.answers.lan_interface) == (ENS4, "")
        assert "LAN: no port chosen: [l] on its row, or [g] to find it by its cable" in text
        await keys(pilot, "enter")
        assert "step 2/7" in title(app) and "1 problem to fix first: LAN" in text_of(app)
        await keys(pilot, "down", "l")  # the LAN on the e1000e
        assert (screen.answers.wan_interface, screen.answers.lan_interface) == (ENS4, ENS5)
        assert "LAN: no port chosen" not in text_of(app)
        await keys(pilot, "enter")

        assert "step 3/7" in title(app)
        await keys(pilot, "enter")  # DHCP
        assert "step 4/7: The LAN" in title(app)
        assert "192.168.77.1/24" in text_of(app) and "192.168.77.100" in text_of(app)
        await keys(pilot, "enter", "enter", "enter")  # the defaults

        assert "step 5/7: The WireGuard tunnel" in title(app)
        assert "( ) pair with the hub" in text_of(app)
        await keys(pilot, "up", "enter")  # by hand
        assert "wireguard.peer[0].public_key: invalid key" in text_of(app)
        await keys(pilot, "enter")  # the tunnel address: 10.77.0.2/24
        await keys(pilot, KEY, "enter", "203.0.113.2:51820", "enter", "enter")

        assert "step 6/7: Shaping" in title(app)
        assert "( ) measure: the throughput self-test after setup, then [a] takes" in \
            text_of(app)  # "[a]" is shown, not read as markup
        await keys(pilot, "up", "enter")  # rates by hand
        await keys(pilot, "4500", "enter", "18000", "enter")

        assert "step 7/7: Review and apply" in title(app)
        text = text_of(app)
        assert "WAN        mac:52:54:00:12:34:02, ens4 today" in text
        assert "LAN        mac:52:54:00:12:34:03, ens5 today" in text
        assert "peer       HlOu1tgN6j... at 203.0.113.2:51820" in text
        await keys(pilot, "enter")
        assert isinstance(app.screen, ReviewScreen)
        text = text_of(app)
        assert '-wan.interface = "eth0"' in text and f'+wan.interface = "{ENS4}"' in text
        assert "+wan.shaping.upload_kbit = 4500" in text
        for _ in range(10):  # the plan below the diff: on screen, or [down] to it
            if PLAN in text:
                break
            await keys(pilot, "down")
            text = text_of(app)
        assert PLAN in text, text
        proposed = tmp_path / "run" / "proposed.toml"
        cfg = parse_config(proposed.read_text()).config
        assert (cfg.wan.interface, cfg.lan.interface, cfg.wireguard.enabled) == (
            ENS4, ENS5, True)
        assert cfg.wireguard.peer[0].public_key == KEY
        assert (cfg.wan.shaping.upload_kbit, cfg.wan.shaping.download_kbit) == (4500, 18000)

        await keys(pilot, "y")
        assert isinstance(app.screen, CountdownScreen)
        assert fake.commands() == [f"apply --dry-run {proposed}",
                                   f"apply --confirm 120 {proposed}"]
        assert "KEEP THESE SETTINGS?" in text_of(app)
        await keys(pilot, "y")
        assert fake.commands()[-1] == "confirm"
        await keys(pilot, "enter")
        assert not isinstance(app.screen, (SetupScreen, CountdownScreen, ReviewScreen))


@asynctest
async def test_a_hub_on_a_vps_pairs_after_its_setup(tmp_path):
    fake, pairing = FakeKeel(), FakePairing()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_wizard(app, pilot, wizard(tmp_path, fake, VPS_PORT, pairing))
        text = text_of(app)
        assert "(*) hub" in text  # one port: the hub, and why
        assert "one port found (eth0): the hub role is offered, as an edge needs a second" in \
            text
        await keys(pilot, "enter")  # hub
        assert "step 2/6" in title(app)  # no LAN step
        assert "WAN eth0" in text_of(app)
        await keys(pilot, "l")
        assert "a hub uses one port, its WAN: no LAN" in text_of(app)
        await keys(pilot, "g")
        assert "a hub uses one port, its WAN: no LAN" in text_of(app)
        await keys(pilot, "enter")
        await keys(pilot, "down", "enter")  # static: a VPS's /32, the gateway on-link
        await keys(pilot, "198.51.100.7/32", "enter", "198.51.100.1", "enter")
        assert "step 4/6: The WireGuard tunnel" in title(app)
        await keys(pilot, "up", "up", "enter")  # pair
        text = text_of(app)
        assert "pairing: once this setup is applied, the hub shows a one-time code" in text
        assert screen.answers.tunnel_address == "10.77.0.1/24"
        await keys(pilot, "enter", "enter")  # address, port
        assert "step 5/6: Shaping" in title(app)
        await keys(pilot, "enter")  # off
        text = text_of(app)
        assert "WAN        mac:fa:16:3e:00:00:07, eth0 today" in text
        assert "           static 198.51.100.7/32 via 198.51.100.1" in text
        assert "a hub also opens SSH on the WAN" in text
        await keys(pilot, "enter")
        assert isinstance(app.screen, ReviewScreen)
        text = text_of(app)
        assert "-lan.interface" in text and '+wan.address = "198.51.100.7/32"' in text
        assert '+wan.interface = "mac:fa:16:3e:00:00:07"' in text
        await keys(pilot, "y", "y", "enter")
        assert isinstance(app.screen, PairingScreen)
        assert pairing.calls == [("hub", "", "")]
        text = text_of(app)
        assert "code   1234-5678" in text and "paired: the tunnel is up and kept" in text
        await keys(pilot, "enter")
        assert not isinstance(app.screen, (PairingScreen, SetupScreen))


@asynctest
async def test_an_invalid_value_its_message_then_the_fix(tmp_path):
    fake = FakeKeel()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_wizard(app, pilot, wizard(tmp_path, fake, TWO_PORTS))
        await keys(pilot, "enter", "enter", "enter", "enter")  # to the LAN's DHCP start
        field = screen.query_one("#a-dhcp_start")
        assert field.has_focus
        field.value = ""
        await keys(pilot, "192.168.78.100")
        text = text_of(app)
        assert "lan.dhcp_start: not inside the LAN 192.168.77.0/24" in text
        assert field.has_class("invalid")
        await keys(pilot, "enter", "enter")  # dhcp_end, then: not on
        assert "step 4/7" in title(app)
        assert "1 problem to fix first: lan.dhcp_start: not inside" in text_of(app)
        assert screen.query_one("#a-dhcp_start").has_focus
        field.value = ""
        await keys(pilot, "192.168.77.50")
        assert "not inside" not in text_of(app) and not field.has_class("invalid")
        await keys(pilot, "enter", "enter")
        assert "step 5/7" in title(app)
        assert fake.calls == []


@asynctest
async def test_a_kept_setup_with_the_self_test_runs_it(tmp_path):
    fake = FakeKeel()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_wizard(app, pilot, wizard(tmp_path, fake, TWO_PORTS))
        await keys(pilot, "enter", "enter", "enter", "enter", "enter", "enter")
        await keys(pilot, "up", "enter", "enter", KEY, "enter", "203.0.113.2:51820",
                   "enter", "enter")
        await keys(pilot, "up", "up", "enter")  # measure
        assert screen.answers.shaping == "selftest"
        assert "off until the self-test after setup" in text_of(app)
        await keys(pilot, "enter", "y", "y", "enter")
        assert isinstance(app.screen, SelfTestScreen)
        await settle(pilot)
        assert app.runner.started[-1][0] == "throughput"
        assert "[a] apply" in text_of(app)


async def until(pilot, check, rounds: int = 400) -> None:
    for _ in range(rounds):
        await pilot.pause(0.02)
        if check():
            return
    raise AssertionError("never came")


def row_of(app, name: str) -> str:
    return next(line for line in screen_lines(app) if f" {name} " in f" {line} ")


@asynctest
async def test_the_port_step_follows_the_links_and_the_ports(tmp_path):
    """A cable plugged in shows on its row; a port plugged in (a USB NIC)
    gets a row of its own, and the picks stay where they were."""
    ports = FakePorts(PORTS)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_wizard(app, pilot, wizard(tmp_path, FakeKeel(), read=ports,
                                                      poll_s=0.05))
        await keys(pilot, "enter")
        assert "no carrier" in row_of(app, "ens3")
        ports.ports = [linked(PORTS[0], True), *PORTS[1:]]
        await until(pilot, lambda: "up 1000 Mbit/s" in row_of(app, "ens3"))
        usb = PORTS[2].__class__("usb0", "00:e0:4c:68:00:01", "00:e0:4c:68:00:01", "", "2-1",
                                 "r8152", True, False, None, "down")
        await keys(pilot, "up")  # the cursor on ens3 stays there
        ports.ports = [*ports.ports, usb]
        await until(pilot, lambda: any("usb0" in line for line in screen_lines(app)))
        assert screen.query_one(NicTable).under_cursor == "ens3"
        assert "usb 2-1" in row_of(app, "usb0") and "r8152" in row_of(app, "usb0")
        assert screen.answers.wan_interface == ENS4 and "WAN" in row_of(app, "ens4")


@asynctest
async def test_the_wan_and_the_lan_found_by_their_cables(tmp_path):
    """[f]: every cable out, then the WAN's in: ens5's link came up, ens5 is
    the WAN; [g] the same for the LAN, on ens3 (the WAN's, ens5, taken)."""
    ports = FakePorts(PORTS)
    fake = FakeKeel()
    app = make_app()
    out = [linked(p, False) for p in PORTS]
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_wizard(app, pilot, wizard(tmp_path, fake, read=ports))
        await keys(pilot, "enter")
        plugged = [out[0], out[1], linked(PORTS[2], True)]
        ports.script = [list(PORTS), out, plugged, plugged]
        await keys(pilot, "f")  # the first read: the links as they are
        assert isinstance(app.screen, CableScreen)
        text = text_of(app)
        assert "FIND THE WAN BY ITS CABLE" in text and "[esc] back" in text
        assert "unplug all cables, then plug the WAN cable in now" in text
        await watch_reads(app, pilot, 2)  # all out, then ens5 in
        assert "link up on ens5: waiting 1 s for other cables" in text_of(app)
        await watch_reads(app, pilot, 2)  # settled
        assert isinstance(app.screen, SetupScreen)
        assert screen.answers.wan_interface == ENS5
        assert "the WAN cable is in ens5: ens5 is the WAN" in text_of(app)
        assert "WAN" in row_of(app, "ens5")

        wan_in = linked(PORTS[2], True)
        lan_in = [linked(PORTS[0], True), out[1], out[2]]
        ports.script = [[out[0], out[1], wan_in], out, lan_in, lan_in, lan_in]
        await keys(pilot, "g")
        await watch_reads(app, pilot, 4)
        assert isinstance(app.screen, SetupScreen)
        assert (screen.answers.wan_interface, screen.answers.lan_interface) == (
            ENS5, "mac:52:54:00:12:34:01")
        assert "the LAN cable is in ens3: ens3 is the LAN" in text_of(app)
        await keys(pilot, "enter")
        assert "step 3/7" in title(app)


@asynctest
async def test_no_cable_or_two_cables_are_said_and_the_watch_runs_again(tmp_path):
    ports = FakePorts(PORTS)
    app = make_app()
    out = [linked(p, False) for p in PORTS]
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_wizard(app, pilot, wizard(tmp_path, FakeKeel(), read=ports))
        await keys(pilot, "enter")
        ports.script = [out]  # and so it stays: no link comes up
        await keys(pilot, "f")
        await watch_reads(app, pilot, 8)  # 4.5 s
        assert "(1 s left)" in text_of(app)
        await watch_reads(app, pilot, 1)
        text = text_of(app)
        assert "no link came up in 5 s: is the cable in, the other end on?" in text
        assert "[enter] watch again  [esc] back" in text
        both = [linked(PORTS[0], True), out[1], linked(PORTS[2], True)]
        ports.script = [out, both, both, both]
        await keys(pilot, "enter")
        await watch_reads(app, pilot, 3)
        assert "links came up on ens3, ens5: plug in the WAN cable alone" in text_of(app)
        await keys(pilot, "escape")
        assert isinstance(app.screen, SetupScreen)
        assert screen.answers.wan_interface == ENS4  # as it was


@asynctest
async def test_a_port_keel_has_not_set_up_is_set_up_while_the_watch_runs(tmp_path):
    """ens5 is down (no role in the config in force): the watch sets it up,
    lets its link settle, finds the cable plugged into it, and sets it down
    again when it ends."""
    down = dataclasses.replace(PORTS[2], up=False, carrier=None, speed_mbps=None)
    ports = FakePorts([*PORTS[:2], down])
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_wizard(app, pilot, wizard(tmp_path, FakeKeel(), ports.ports,
                                                      read=ports))
        await keys(pilot, "enter")
        assert "down" in row_of(app, "ens5")
        await keys(pilot, "f")
        cable = app.screen
        assert isinstance(cable, CableScreen) and cable.link.calls == [("ens5", True)]
        assert "setting up ens5 to see their links ..." in text_of(app)
        out = [linked(p, False) for p in PORTS]
        ports.script = [out, out, out, [out[0], out[1], linked(PORTS[2], True)]]
        await watch_reads(app, pilot, 2)  # 1 s: warm
        assert "unplug all cables, then plug the WAN cable in now" in text_of(app)
        await watch_reads(app, pilot, 5)
        assert isinstance(app.screen, SetupScreen) and screen.answers.wan_interface == ENS5
        assert cable.link.calls == [("ens5", True), ("ens5", False)]


def _first_boot_app(tmp_path, user: Path):
    fake = FakeKeel()
    return make_app(user_config=user,
                    setup=lambda first: wizard(tmp_path, fake, first_boot=first))


@asynctest
async def test_no_user_config_brings_the_wizard_an_existing_one_does_not(tmp_path):
    user = tmp_path / "data" / "keel.toml"
    app = _first_boot_app(tmp_path, user)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SetupScreen) and app.screen.first_boot
        await keys(pilot, "escape")  # leave it: a question first
        await keys(pilot, "y")
        assert not isinstance(app.screen, SetupScreen)
        await keys(pilot, "w")  # the dashboard's key opens it again
        assert isinstance(app.screen, SetupScreen)

    user.parent.mkdir(parents=True)
    user.write_text(SHIPPED_TEXT)
    app = _first_boot_app(tmp_path, user)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not isinstance(app.screen, SetupScreen)


# --- snapshots -------------------------------------------------------------------------

def _nic_step(tmp_path):
    async def run_before(pilot) -> None:
        await open_wizard(pilot.app, pilot, wizard(tmp_path, FakeKeel()))
        await pilot.press("enter")
        await settle(pilot)
    return run_before


def test_nic_step_console_80x24(snap_compare, tmp_path):
    assert snap_compare(make_app(CONSOLE), terminal_size=(80, 24),
                        run_before=_nic_step(tmp_path))


def test_nic_step_modern_120x40(snap_compare, tmp_path):
    assert snap_compare(make_app(MODERN), terminal_size=(120, 40),
                        run_before=_nic_step(tmp_path))


def typed_at_once(app, *typed: str) -> None:
    """Keys as a fast typist on a slow console sends them: all in the app's
    queue before it has taken the first (no pilot wait between them)."""
    for item in typed:
        for key in ([item] if item in ("enter", "down", "up", "tab") else list(item)):
            name = {".": "full_stop", "/": "slash"}.get(key, key)
            char = {"enter": "\r", "tab": "\t"}.get(key, key if len(key) == 1 else None)
            app._driver.send_message(Key(name, char))


async def until_title(app, pilot, text: str, rounds: int = 100) -> None:
    for _ in range(rounds):
        if text in (screen_lines(app) or [""])[0]:  # (none between two screens)
            return
        await pilot.pause(0.05)
    raise AssertionError(f"no {text!r} in the title: {title(app)!r}")


@asynctest
async def test_keys_typed_ahead_land_in_the_field_they_were_typed_for(tmp_path):
    """The VPS step typed at once: the choice, its [enter], the address, its
    [enter] and the gateway before the UI has moved the focus once."""
    app = make_app(typeahead=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_wizard(app, pilot, wizard(tmp_path, FakeKeel(), VPS_PORT))
        await keys(pilot, "enter", "enter")  # hub (one port), its one port
        assert "step 3/6" in title(app)
        typed_at_once(app, "down", "enter", "198.51.100.7/32", "enter", "198.51.100.1",
                      "enter")
        await until_title(app, pilot, "step 4/6: The WireGuard tunnel")
        answers = screen.answers
        assert (answers.wan_mode, answers.wan_address, answers.wan_gateway) == (
            "static", "198.51.100.7/32", "198.51.100.1")


@asynctest
async def test_a_choice_set_gone_before_its_first_refresh_is_no_error():
    """The shaping step's [enter], typed at once as the lab's first boot
    types it, takes its choice and goes on before the step's first refresh:
    the choices are gone when the refresh's callback comes (the lab saw the
    wizard stop there with "Choice(...) is not in list", and tty1 fall back
    to a login). That callback, on a set whose choices are gone, does
    nothing; on a set still whole, it puts the cursor on the choice in force."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        choices = ChoiceSet("shaping", {"off": "off", "selftest": "measure"}, "selftest")
        await app.screen.mount(choices)
        await settle(pilot)
        choices._selected = 0
        choices._highlight_pressed()
        assert choices._selected == 1  # the choice in force
        await choices.remove_children()
        choices._highlight_pressed()  # no ValueError
        assert app.is_running


@asynctest
async def test_each_step_typed_at_once_once_shown_reaches_the_review(tmp_path):
    """The hub's steps as the lab's first boot types them: each step's keys
    at once, as soon as its title shows."""
    app = make_app(typeahead=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_wizard(app, pilot, wizard(tmp_path, FakeKeel(), VPS_PORT))
        for title_shown, typed in (
                ("step 1/", ("enter",)),
                ("step 2/6", ("enter",)),
                ("step 3/6", ("down", "enter", "198.51.100.7/32", "enter", "198.51.100.1",
                              "enter")),
                ("step 4/6", ("up", "up", "enter", "enter", "enter")),
                ("step 5/6", ("enter",)),
                ("step 6/6", ("enter",))):
            await until_title(app, pilot, title_shown, rounds=1200)
            typed_at_once(app, *typed)
        await until_title(app, pilot, "REVIEW", rounds=1200)
        assert app.is_running
