"""A hub's metrics endpoint serves its edges' figures, labelled by edge
(keel_fleet_*), parsed by a real parser (prometheus_client's): one
Prometheus scraping each hub watches every site. And the poller that feeds
them runs beside the endpoint, never making a scrape wait on an edge."""

from __future__ import annotations

import time

from prometheus_client.parser import text_string_to_metric_families

from keel.fleet import hub, wire
from keel.metrics import exposition as ex

STATUS = wire.Status(name="edge-a", version="0.2.0", at=1.0, uptime_s=9.0, slot="B",
                     tunnel_p95_ms=48.0, outside_p95_ms=12.0, loss=0.05, day_p95_ms=90.0,
                     cake_up_kbit=8000, cake_down_kbit=16000, causes=("bloat",))
EDGES = (ex.EdgeSample("edge-a", STATUS, 12.0, 1_800_000_000.0),
         ex.EdgeSample('edge-"b"', None, None, 1_800_000_000.0))


def samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    out: dict[str, list] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, []).append((s.labels, s.value))
    return out


def test_each_edge_is_labelled_and_parses() -> None:
    got = samples(ex.render(ex.Scrape(version="0.2.0", edges=EDGES)))
    assert got["keel_fleet_edge_up"] == [({"edge": "edge-a"}, 1), ({"edge": 'edge-"b"'}, 0)]
    assert ({"edge": "edge-a", "path": "tunnel"}, 0.048) in got[
        "keel_fleet_edge_latency_p95_seconds"]
    assert got["keel_fleet_edge_cake_rate_bytes_per_second"] == [
        ({"edge": "edge-a", "direction": "up"}, 1_000_000.0),
        ({"edge": "edge-a", "direction": "down"}, 2_000_000.0)]
    assert got["keel_fleet_edge_verdict"] == [({"edge": "edge-a", "cause": "bloat"}, 1)]
    assert got["keel_fleet_edge_info"] == [({"edge": "edge-a", "version": "0.2.0",
                                             "slot": "B"}, 1)]
    # an edge that did not answer: only that, and when it was asked
    assert not any(labels.get("edge") == 'edge-"b"' for labels, _ in
                   got["keel_fleet_edge_latency_day_p95_seconds"])


def test_a_router_without_edges_has_no_fleet_families() -> None:
    assert "keel_fleet" not in ex.render(ex.Scrape(version="0.2.0"))


def test_the_poller_keeps_the_last_poll_for_the_scrapes() -> None:
    looks: list[float] = []

    def look():
        looks.append(time.monotonic())
        return [hub.EdgeRow(hub.Edge("edge-a", "10.77.0.2", "k"), STATUS)], 5.0

    poller = hub.Poller(every=0.05, look=look).start()
    try:
        deadline = time.monotonic() + 10
        while len(looks) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        rows, at = poller.rows()
        assert len(looks) >= 3 and at == 5.0 and rows[0].status == STATUS
    finally:
        poller.stop()
