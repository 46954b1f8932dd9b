"""How long does keel take to check the config of a large hub?

    PYTHONPATH=tui python -m bench.config_validation [--peers 3000] [--runs 5]

Generates a hub's keel.toml with N WireGuard peers (each with its tunnel
address and a /24 behind it, as a hub of many edges has), writes it to a
temporary file, and loads it the way `keel config check` does (read, decode,
pre-scan, parse, every key against the schema, the relations between keys).
Prints the median load time of a few runs (wall clock, and this process's
CPU time, which other load on the machine does not inflate as much); never
fails on speed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

HEADER = """\
[system]
hostname = "hub"

[wan]
interface = "eth0"
mode = "static"
address = "203.0.113.2/24"
gateway = "203.0.113.1"

[wireguard]
enabled = true
address = ["10.64.0.1/16"]
listen_port = 51820

[firewall]
forward_tunnel_to_wan = true
"""


def public_key(n: int) -> str:
    """A distinct, canonical WireGuard public key for peer n."""
    return base64.b64encode(hashlib.sha256(f"peer {n}".encode()).digest()).decode()


def hub_config(peers: int) -> str:
    """A valid hub config with `peers` peers: 10.64.x.y/32 in the tunnel and
    a /24 of its own behind each (172.16.0.0/24, 172.16.1.0/24, ...)."""
    parts = [HEADER]
    for n in range(peers):
        host = n + 2
        behind = f"172.{16 + n // 256}.{n % 256}.0/24"
        parts.append(f"""
[[wireguard.peer]]
public_key = "{public_key(n)}"
allowed_ips = ["10.64.{host // 256}.{host % 256}/32", "{behind}"]
keepalive = 25
""")
    return "".join(parts)


def load_seconds(path: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one load of the file, from cold."""
    from keel.config.load import load_file
    from keel.config.netsets import network

    network.cache_clear()  # each run starts cold, as `keel config check` does
    wall, cpu = time.perf_counter(), time.process_time()
    load_file(path)
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        path = Path(tmp) / "keel.toml"
        path.write_text(hub_config(args.peers))
        size = path.stat().st_size
        runs = [load_seconds(path) for _ in range(args.runs)]
    times = [wall for wall, _ in runs]
    cpu = statistics.median(c for _, c in runs)
    print(f"config validation: {args.peers} peers ({size // 1024} KiB): "
          f"median {statistics.median(times) * 1000:.0f} ms over {args.runs} runs "
          f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f} ms; "
          f"CPU {cpu * 1000:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
