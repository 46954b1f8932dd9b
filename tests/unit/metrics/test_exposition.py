"""The Prometheus exposition (keel.metrics.exposition), read back by a real
parser (prometheus_client's): every family parses with its type and help,
the values are the inputs', and label values from outside (quotes,
backslashes, newlines, control characters) come back exactly."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from keel.history.point import Cake as PointCake
from keel.history.point import Latency, Point
from keel.metrics import exposition as ex
from keel.metrics.snapshots import CakeAdaptive, CakeDirection, CakeSnapshot, TinStat
from keel.parse.wgdump import WgInterface, WgPeer

KEY_A = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="
KEY_B = "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg="
HOSTILE = 'a"b\\c\nd\x00\x01\r\x7f\u2028é😀}{,='


def peer(key: str, ips: tuple[str, ...], handshake: int, rx: int, tx: int,
         interface: str = "wg0") -> WgPeer:
    return WgPeer(interface, key, "203.0.113.2:51820", ips, handshake, rx, tx, 25)


def tunnel(name: str = "wg0", *peers: WgPeer) -> WgInterface:
    return WgInterface(name, KEY_B, 51820, 0xCA6C, peers)


def direction(dev: str, egress: bool, adaptive: bool = False) -> CakeDirection:
    tins = (TinStat("Bulk", 12.5, 3.0, 4, 5, 600, 7000),
            TinStat("Best Effort", 8.0, 2.5, 40, 50, 1514, 900_000))
    return CakeDirection(
        "egress" if egress else "ingress", dev, 4_500_000 if egress else None, 3e6, 3028, 44, 55,
        tins, CakeAdaptive(2_250_000, 4_500_000, 5_000_000) if adaptive else None,
        sent_bytes=123_456_789)


POINT = Point(t=1_800_000_010, latency={"tunnel": Latency(21.5, 48.0, 90.0, 0.05, 20),
                                        "outside": Latency(12.0, None, 15.0, 0.0, 20)},
              cake={"up": PointCake(4500)}, stall_worst_ms=3.25, tunnel_cpu_cores=0.42,
              causes={"bloat": 7, "healthy": 3}, evidence="latency 48 ms under load")

FULL = ex.Scrape(
    version="1.4.0+gabc", slot="B",
    wireguard=(tunnel("wg0", peer(KEY_A, ("10.77.0.1/32", "172.31.77.0/24"), 1_800_000_000,
                                  71_420_072, 3_208_804),
                      peer(KEY_B, (), 0, 0, 0)),),
    peer_names={KEY_A: "hub"},
    cake=CakeSnapshot((direction("eth0", True, adaptive=True), direction("ifb4eth0", False))),
    point=POINT, verdicts=(("bloat", "warn"),))


def parse(text: str) -> dict[str, object]:
    """The families by name (prometheus_client drops a counter's _total)."""
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert len(families) == text.count("# TYPE ")  # each one parsed
    return families


def samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    return [(s.labels, s.value) for f in text_string_to_metric_families(text)
            for s in f.samples if s.name == name]


def test_every_family_parses_with_its_type_and_help():
    text = ex.render(FULL)
    families = parse(text)
    kinds = {name: f.type for name, f in families.items()}
    assert kinds["wireguard_sent_bytes"] == kinds["wireguard_received_bytes"] == "counter"
    assert kinds["wireguard_latest_handshake_seconds"] == "gauge"
    assert kinds["keel_cake_drops"] == kinds["keel_cake_tin_sent_packets"] == "counter"
    assert kinds["keel_verdict"] == kinds["keel_info"] == "gauge"
    assert families["wireguard_sent_bytes"].documentation == "Bytes sent to the peer"
    assert all(f.documentation for f in families.values())
    assert text.endswith("\n") and "\n\n" not in text
    for line in text.splitlines():
        assert line.startswith("# ") or " " in line


def test_wireguard_keeps_the_common_exporters_names_and_labels():
    text = ex.render(FULL)
    named = {"interface": "wg0", "public_key": KEY_A,
             "allowed_ips": "10.77.0.1/32,172.31.77.0/24", "friendly_name": "hub"}
    unnamed = {"interface": "wg0", "public_key": KEY_B, "allowed_ips": ""}
    assert samples(text, "wireguard_sent_bytes_total") == [(named, 3_208_804), (unnamed, 0)]
    assert samples(text, "wireguard_received_bytes_total") == [(named, 71_420_072),
                                                               (unnamed, 0)]
    assert samples(text, "wireguard_latest_handshake_seconds") == [(named, 1_800_000_000),
                                                                   (unnamed, 0)]


def test_cake_per_direction_and_tin_in_base_units():
    text = ex.render(FULL)
    up = {"interface": "eth0", "direction": "up"}
    down = {"interface": "ifb4eth0", "direction": "down"}
    # the rate in bytes/s; an unlimited CAKE has none
    assert samples(text, "keel_cake_rate_bytes_per_second") == [(up, 562_500)]
    assert samples(text, "keel_cake_sent_bytes_total") == [(up, 123_456_789),
                                                           (down, 123_456_789)]
    assert samples(text, "keel_cake_drops_total") == [(up, 44), (down, 44)]
    assert samples(text, "keel_cake_ecn_marks_total") == [(up, 55), (down, 55)]
    assert samples(text, "keel_cake_backlog_bytes") == [(up, 3028), (down, 3028)]
    assert samples(text, "keel_cake_adaptive_rate_bytes_per_second") == [
        ({**up, "bound": "min"}, 281_250), ({**up, "bound": "base"}, 562_500),
        ({**up, "bound": "max"}, 625_000)]
    bulk, best = {**up, "tin": "Bulk"}, {**up, "tin": "Best Effort"}
    assert samples(text, "keel_cake_tin_sent_packets_total")[:2] == [(bulk, 7000),
                                                                     (best, 900_000)]
    assert samples(text, "keel_cake_tin_drops_total")[:2] == [(bulk, 4), (best, 40)]
    assert samples(text, "keel_cake_tin_ecn_marks_total")[:2] == [(bulk, 5), (best, 50)]
    assert samples(text, "keel_cake_tin_backlog_bytes")[:2] == [(bulk, 600), (best, 1514)]
    assert samples(text, "keel_cake_tin_peak_delay_seconds")[:2] == [(bulk, 0.0125),
                                                                     (best, 0.008)]
    assert samples(text, "keel_cake_tin_avg_delay_seconds")[:2] == [(bulk, 0.003),
                                                                    (best, 0.0025)]
    assert len(samples(text, "keel_cake_tin_avg_delay_seconds")) == 4


def test_the_history_point_latency_stall_cpu_and_verdict():
    text = ex.render(FULL)
    tun, out = {"path": "tunnel"}, {"path": "outside"}
    assert samples(text, "keel_latency_p50_seconds") == [(tun, 0.0215), (out, 0.012)]
    assert samples(text, "keel_latency_p95_seconds") == [(tun, 0.048)]  # outside's unmeasured
    assert samples(text, "keel_latency_max_seconds") == [(tun, 0.09), (out, 0.015)]
    assert samples(text, "keel_latency_loss_ratio") == [(tun, 0.05), (out, 0.0)]
    assert samples(text, "keel_stall_worst_wakeup_seconds") == [({}, 0.00325)]
    assert samples(text, "keel_tunnel_cpu_cores") == [({}, 0.42)]
    assert samples(text, "keel_history_point_timestamp_seconds") == [({}, 1_800_000_010)]
    # the causes named now, from the daemon's file; else the point's own
    assert samples(text, "keel_verdict") == [({"cause": "bloat", "severity": "warn"}, 1)]
    older = ex.render(ex.Scrape("1.4.0", point=POINT))
    assert samples(older, "keel_verdict") == [({"cause": "bloat", "severity": ""}, 1),
                                              ({"cause": "healthy", "severity": ""}, 1)]


def test_keel_itself_and_what_each_collector_read():
    text = ex.render(FULL)
    assert samples(text, "keel_info") == [({"version": "1.4.0+gabc", "slot": "B"}, 1)]
    ok = {"wireguard": 1, "cake": 1, "history": 1}
    assert {s["collector"]: v for s, v in samples(text, "keel_scrape_collector_success")} == ok


def test_what_was_not_read_is_left_out_and_said():
    """wg failed, CAKE's tc failed, no fresh point: the families are there
    (parseable, empty) and keel_scrape_collector_success says which."""
    bare = ex.render(ex.Scrape("1.4.0", wireguard=None, cake=CakeSnapshot(error="tc: boom")))
    families = parse(bare)
    assert {s["collector"]: v for s, v in samples(bare, "keel_scrape_collector_success")} == \
        {"wireguard": 0, "cake": 0, "history": 0}
    assert samples(bare, "keel_info") == [({"version": "1.4.0", "slot": ""}, 1)]
    empty = [n for n, f in families.items() if not f.samples]
    assert "wireguard_sent_bytes" in empty and "keel_verdict" in empty
    assert "keel_latency_p50_seconds" in empty and "keel_cake_drops" in empty
    # no tunnel at all is a read that found none
    none = ex.render(ex.Scrape("1.4.0", wireguard=()))
    assert ({"collector": "wireguard"}, 1) in samples(none, "keel_scrape_collector_success")


def hostile_scrape(label: str) -> ex.Scrape:
    """Every label value that comes from outside set to `label`."""
    wg = (tunnel(label, WgPeer(label, label, None, (label, label), 1, 2, 3, None)),)
    tin = TinStat(label, 1.0, 1.0, 1, 1, 1, 1)
    cake = CakeSnapshot((CakeDirection("egress", label, 8000, None, 0, 0, 0, (tin,)),))
    return ex.Scrape(label, label, wg, {label: label}, cake, POINT, ((label, label),))


def outside_values(text: str) -> list[str]:
    """Every label value of the exposition but those keel writes itself."""
    own = {"up", "tunnel", "outside", "wireguard", "cake", "history"}
    return [v for f in text_string_to_metric_families(text) for s in f.samples
            for k, v in s.labels.items() if v not in own and k != "collector"]


def test_hostile_label_values_come_back_exactly():
    text = ex.render(hostile_scrape(HOSTILE))
    values = outside_values(text)
    assert len(values) > 20 and set(values) == {HOSTILE, f"{HOSTILE},{HOSTILE}"}
    # each sample is still one line of the exposition (the format's lines end
    # at "\n" alone: a carriage return or U+2028 inside a value is no break)
    for line in text.split("\n")[:-1]:
        assert line.startswith("# ") or ex.METRIC_NAME.match(line), repr(line)
    assert '\\"' in text and "\\\\" in text and "\\n" in text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=60))
def test_any_label_value_parses_and_reads_back(label):
    text = ex.render(hostile_scrape(label))
    values = outside_values(text)
    assert values and all(v in (label, f"{label},{label}") for v in values)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1,
               max_size=5), st.text(max_size=10))
def test_a_lone_surrogate_becomes_a_replacement_and_the_text_stays_utf8(bad, good):
    text = ex.render(hostile_scrape(good + bad))
    text.encode("utf-8")  # the server sends UTF-8: no surrogate is left
    fixed = good + "\ufffd" * len(bad)
    assert set(outside_values(text)) == {fixed, f"{fixed},{fixed}"}


def test_numbers_as_the_format_spells_them():
    assert [ex.format_value(v) for v in (3, 0.25, 1e20, math.nan, math.inf, -math.inf, True)] == \
        ["3", "0.25", "1e+20", "NaN", "+Inf", "-Inf", "1"]
    fam = ex.Family("keel_x", "gauge", "help \\ and\nnewline")
    for v in (math.nan, math.inf, -math.inf, 1e-300, 2**63):
        fam.add(v)
    (parsed,) = text_string_to_metric_families(ex.render_families([fam]))
    assert parsed.documentation == "help \\ and\nnewline"
    values = [s.value for s in parsed.samples]
    assert math.isnan(values[0]) and values[1:] == [math.inf, -math.inf, 1e-300, 2**63]


@pytest.mark.parametrize(("name", "label"), [
    ("keel-x", "a"), ("0keel", "a"), ("keel_x", "0a"), ("keel_x", "__name"), ("", "a"),
])
def test_a_bad_name_is_keels_own_bug_and_refused(name, label):
    fam = ex.Family(name, "gauge", "x")
    fam.samples.append(((( label, "v"),), 1))
    with pytest.raises(ValueError):
        ex.render_families([fam])


def test_a_family_once_and_of_a_known_kind():
    with pytest.raises(ValueError):
        ex.render_families([ex.Family("keel_x", "gauge", "x"), ex.Family("keel_x", "gauge", "x")])
    with pytest.raises(ValueError):
        ex.render_families([ex.Family("keel_x", "histogram", "x")])
