"""A hub's metrics endpoint serves its edges' figures, labelled by edge
(keel_fleet_*), parsed by a real parser (prometheus_client's): one
Prometheus scraping each hub watches every site. And the poller that feeds
them runs beside the endpoint, never making a scrape wait on an edge."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from keel.fleet import hub, watch, wire
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


def test_the_endpoint_serves_the_watchers_snapshot(tmp_path) -> None:
    """keel fleet watch writes what it found; the metrics read it whole."""
    rows = [hub.EdgeRow(hub.Edge("edge-a", "10.77.0.2", "k"), STATUS, handshake_age_s=12.0,
                        last_seen=1_800_000_000.0),
            hub.EdgeRow(hub.Edge("edge-b", "10.77.0.3", "k2"), None, "no answer in time")]
    path = tmp_path / "edges.json"
    watch.write_json(path, watch.snapshot_json(rows, 1_800_000_000.0))
    seen, at = watch.read_snapshot(path)
    assert at == 1_800_000_000.0 and [s.status for s in seen] == [STATUS, None]
    edges = tuple(ex.EdgeSample(e.name, e.status, e.handshake_age_s, at) for e in seen)
    got = samples(ex.render(ex.Scrape(version="0.2.0", edges=edges)))
    assert got["keel_fleet_edge_up"] == [({"edge": "edge-a"}, 1), ({"edge": "edge-b"}, 0)]
    path.write_text('{"at": 1, "edges": [{"name": "x", "status": {"name": "bad name"}}]}')
    assert watch.read_snapshot(path) == ((), 0.0)
    assert watch.read_snapshot(tmp_path / "none.json") == ((), 0.0)
