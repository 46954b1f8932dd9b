"""Pilot tests of the fleet screen ([l] on the peers screen): every edge as
`keel fleet` prints it, asked again on [r]; [s] gives the edges their routes
and says which did not take them."""

from __future__ import annotations

from keel.fleet import hub, rollout, wire
from keel.fleet.hub import Edge, EdgeRow, Synced
from keel.ui.screens.fleet import FleetScreen
from keel.ui.screens.peers import PeersScreen
from tests.ui.test_ui_peers import peers_app
from tests.ui.uihelpers import asynctest, make_app, screen_lines, settle

ROWS = [EdgeRow(Edge("edge-a", "10.77.0.2", "k1"),
                wire.Status(name="edge-a", version="0.1.0", at=1.0, uptime_s=9.0,
                            tunnel_p95_ms=4.1, day_p95_ms=9.0, loss=0.0,
                            routes=("192.168.78.0/24",)),
                handshake_age_s=12.0, last_seen=100.0, routes_due=("192.168.78.0/24",)),
        EdgeRow(Edge("edge-b", "10.77.0.3", "k2"), None, "no answer in time",
                handshake_age_s=200.0, last_seen=-140.0)]


class Fake:
    def __init__(self) -> None:
        self.reads = 0
        self.syncs = 0

    def read(self) -> list[str]:
        self.reads += 1
        return hub.lines(ROWS, 100.0)

    def sync(self) -> list[Synced]:
        self.syncs += 1
        return [Synced("edge-a", ("192.168.78.0/24",)),
                Synced("edge-b", ("192.168.77.0/24",), "no answer in time")]


@asynctest
async def test_the_fleet_shows_each_edge_and_asks_again_on_r():
    fake = Fake()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(FleetScreen(read=fake.read, sync=fake.sync, id="fleet-screen"))
        await settle(pilot)
        assert fake.reads == 1
        text = "\n".join(screen_lines(app))
        assert "p95 4.1 ms now, 9.0 ms worst of the day" in text
        assert "NO ANSWER (last answered 4 min ago): no answer in time" in text
        await pilot.press("r")
        await settle(pilot)
        assert fake.reads == 2
        await pilot.press("s")
        await settle(pilot)
        assert "edge-b: no answer in time" in "\n".join(screen_lines(app))
        assert fake.syncs == 1 and fake.reads == 3  # asked again after the sync
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, FleetScreen)


@asynctest
async def test_l_on_the_peers_screen_opens_the_fleet(monkeypatch):
    fake = Fake()
    monkeypatch.setattr("keel.ui.screens.fleet.read_fleet", fake.read)
    app, screen, _ = peers_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(screen)
        await pilot.pause()
        assert isinstance(app.screen, PeersScreen)
        await pilot.press("l")
        await settle(pilot)
        assert isinstance(app.screen, FleetScreen) and fake.reads == 1
        assert "FLEET" in "\n".join(screen_lines(app))


def _rollout(ended: bool) -> rollout.Rollout:
    steps = (rollout.Step("edge-a", 0, "kept", "keel 0.2.0"),
             rollout.Step("edge-b", 1, "sending", percent=40))
    if ended:
        steps = (rollout.Step("edge-a", 0, "failed", "rolled back: the apply failed"),
                 rollout.Step("edge-b", 1, "untouched"))
    return rollout.Rollout("keel-0.2.0.raucb", 200 << 20, 1.0, steps, ended=ended,
                           verdict="stopped at edge-a: rolled back: the apply failed; edge-b "
                                   "not touched" if ended else "", pid=1)


@asynctest
async def test_u_starts_a_staged_upgrade_and_its_progress_is_drawn():
    fake = Fake()
    started: list[str] = []
    state: list[rollout.Rollout | None] = [_rollout(ended=True)]
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(FleetScreen(read=fake.read, sync=fake.sync, rollout=lambda: state[0],
                                    order=lambda: "edge-a first, alone; then edge-b, 4 at a time",
                                    start=started.append, id="fleet-screen"))
        await settle(pilot)
        text = "\n".join(screen_lines(app))
        assert "stopped at edge-a" in text and "STOPPED HERE" in text
        await pilot.press("u")
        await pilot.press(*"/tmp/b/x.txt", "enter")
        await settle(pilot)
        assert "is not a .raucb bundle" in "\n".join(screen_lines(app)) and not started
        app.screen.query_one("#fleet-bundle").value = ""
        await pilot.press(*"/tmp/b/good.raucb", "enter")
        await settle(pilot)
        assert "edge-a first, alone; then edge-b" in "\n".join(screen_lines(app))
        await pilot.press("y")
        await settle(pilot)
        assert started == ["/tmp/b/good.raucb"]
        state[0] = _rollout(ended=False)
        await pilot.pause(2.5)  # the state is read every 2 s
        text = "\n".join(screen_lines(app))
        assert "edge-b" in text and "sending the bundle 40%" in text
        # a second [u] while it runs starts nothing
        await pilot.press("u")
        await settle(pilot)
        assert "a rollout runs" in "\n".join(screen_lines(app)) and started == [
            "/tmp/b/good.raucb"]
