"""wan.shaping.adaptive and its bounds: what the loader takes and the
message for what it does not."""

from __future__ import annotations

import pytest

from keel.config.errors import ConfigError
from keel.config.load import load_text
from keel.model.from_config import model_from_config

KEY = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="
TUNNEL = ("[wireguard]\nenabled = true\naddress = ['10.7.0.2/24']\n"
          f"[[wireguard.peer]]\npublic_key = '{KEY}'\nallowed_ips = ['10.7.0.1/32']\n"
          "endpoint = '198.51.100.7:51820'\n")


def shaping(**keys: object) -> str:
    lines = {"download_kbit": 3600, "upload_kbit": 1350, "adaptive": "true",
             "download_min_kbit": 1500, "download_max_kbit": 4000,
             "upload_min_kbit": 600, "upload_max_kbit": 1500}
    lines.update(keys)
    return "[wan.shaping]\n" + "".join(f"{k} = {v}\n" for k, v in lines.items()
                                       if v is not None)


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load_text(text, "t.toml")
    return [str(p) for p in err.value.problems]


def test_an_adaptive_line_is_taken_with_its_bounds() -> None:
    model = model_from_config(load_text(shaping() + TUNNEL, "t.toml"))
    s = model.wans[0].shaping
    assert s.bounds("upload") == (600, 1350, 1500)
    assert s.bounds("download") == (1500, 3600, 4000)
    assert s.accepts("download", 1500) and s.accepts("download", 4000)
    assert not s.accepts("download", 1499) and not s.accepts("upload", 1501)


def test_fixed_shaping_accepts_its_rate_only() -> None:
    model = model_from_config(load_text(shaping(adaptive="false", download_min_kbit=None,
                                                download_max_kbit=None, upload_min_kbit=None,
                                                upload_max_kbit=None), "t.toml"))
    s = model.wans[0].shaping
    assert s.bounds("upload") == (1350, 1350, 1350)
    assert s.accepts("upload", 1350) and not s.accepts("upload", 1349)


@pytest.mark.parametrize(("keys", "message"), [
    ({"download_min_kbit": 4000}, "wan.shaping.download_min_kbit: 4000 is above the base "
                                  "download_kbit = 3600"),
    ({"upload_max_kbit": 1000}, "wan.shaping.upload_max_kbit: 1000 is below the base "
                                "upload_kbit = 1350"),
    ({"upload_min_kbit": None}, "wan.shaping.upload_min_kbit: missing: adaptive = true "
                                "(at most upload_kbit = 1350)"),
    ({"download_max_kbit": None}, "wan.shaping.download_max_kbit: missing: adaptive = true "
                                  "(at least download_kbit = 3600)"),
    ({"download_kbit": 0, "upload_kbit": 0}, "wan.shaping.adaptive: no rate to adapt"),
    ({"adaptive": "false"}, "wan.shaping.download_min_kbit: only with adaptive = true"),
])
def test_bad_bounds_are_named(keys: dict, message: str) -> None:
    assert any(p.startswith(message) for p in problems(shaping(**keys) + TUNNEL)), \
        problems(shaping(**keys) + TUNNEL)


def test_adaptive_needs_a_peer_to_probe() -> None:
    assert problems(shaping()) == [
        "wan.shaping.adaptive: needs the tunnel: its peer answers the delay probes "
        "(wireguard.enabled, a peer with an endpoint)"]


@pytest.mark.parametrize("end", ["min", "max"])
def test_a_bound_of_a_direction_not_shaped_is_named_and_no_other(end: str) -> None:
    """Only upload_<end>_kbit in the file, upload not shaped: that key is
    named, not the other bound (which the file does not have)."""
    other = "max" if end == "min" else "min"
    text = shaping(upload_kbit=0, **{f"upload_{end}_kbit": 4000,
                                     f"upload_{other}_kbit": None}) + TUNNEL
    found = problems(text)
    assert found == [f"wan.shaping.upload_{end}_kbit: upload is not shaped (upload_kbit = 0)"]
    assert not any(f"upload_{other}_kbit" in p for p in found)


V6_ONLY = ("[wireguard]\nenabled = true\naddress = ['fd77::2/64']\n"
           f"[[wireguard.peer]]\npublic_key = '{KEY}'\nallowed_ips = ['fd77::1/128']\n"
           "endpoint = '198.51.100.7:51820'\n")


@pytest.mark.parametrize(("tunnel", "says"), [
    (V6_ONLY, "wireguard.address has no IPv4 address"),
    (TUNNEL.replace("['10.7.0.1/32']", "['10.7.0.1/32', 'fd77::1/128']")
     .replace("['10.7.0.2/24']", "['fd77::2/64']"), "wireguard.address has no IPv4 address"),
    (TUNNEL.replace("['10.7.0.1/32']", "['fd77::1/128', '10.7.1.0/24']")
     .replace("['10.7.0.2/24']", "['10.7.0.2/24', 'fd77::2/64']"),
     "needs its IPv4 tunnel address, a single address (/32), in allowed_ips"),
])
def test_adaptive_on_a_tunnel_without_ipv4_probes_is_refused(tunnel: str, says: str) -> None:
    """The probes are IPv4 only: a tunnel the daemon could not probe over is
    refused by the loader, naming the key (it was taken, and never ran)."""
    (found,) = problems(shaping() + tunnel)
    assert found.startswith("wan.shaping.adaptive: the delay probes are IPv4") and says in found


def test_adaptive_on_a_dual_stack_tunnel_is_taken() -> None:
    text = shaping() + TUNNEL.replace("['10.7.0.1/32']", "['fd77::1/128', '10.7.0.1/32']")
    assert load_text(text, "t.toml").wan.shaping.adaptive
