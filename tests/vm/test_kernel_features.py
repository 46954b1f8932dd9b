"""What the router is made of can really be created in the guest's kernel:
a WireGuard interface, an IFB, CAKE, a matchall + mirred redirect, an
nftables table."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.lab("image")


def test_router_kernel_features_work(shared_lab):
    guest = shared_lab.bios
    wan = guest.ifname("x1")  # a NIC no test configures: enough to hang qdiscs on

    guest.check(f"ip link set {wan} up")
    guest.check("ip link add wg0 type wireguard")
    # the private key goes from wg to wg through a file, never through the console
    guest.check("umask 077 && wg genkey > /run/wg0.key && "
                "wg set wg0 listen-port 51820 private-key /run/wg0.key")
    wg = guest.check("wg show wg0 listen-port")
    assert wg == "51820"
    assert "private" not in guest.check("wg show wg0 public-key")

    guest.check(f"ip link add ifb4{wan} type ifb && ip link set ifb4{wan} up")
    guest.check(f"tc qdisc replace dev {wan} root cake bandwidth 20mbit besteffort")
    guest.check(f"tc qdisc replace dev ifb4{wan} root cake bandwidth 50mbit besteffort ingress")
    guest.check(f"tc qdisc add dev {wan} handle ffff: ingress")
    guest.check(f"tc filter add dev {wan} parent ffff: matchall "
                f"action mirred egress redirect dev ifb4{wan}")

    egress = guest.json(f"tc -j qdisc show dev {wan} root")
    assert egress[0]["kind"] == "cake"
    assert egress[0]["options"]["bandwidth"] == 20_000_000 // 8
    ingress = guest.json(f"tc -j qdisc show dev ifb4{wan} root")
    assert ingress[0]["kind"] == "cake"
    assert ingress[0]["options"]["bandwidth"] == 50_000_000 // 8
    filters = guest.check(f"tc filter show dev {wan} parent ffff:")
    assert "matchall" in filters
    assert f"Redirect to device ifb4{wan}" in filters

    guest.check("nft add table inet keeltest && "
                "nft add chain inet keeltest input '{ type filter hook input priority 0; }' && "
                "nft add rule inet keeltest input tcp dport 9 counter drop")
    tables = guest.json("nft -j list tables")["nftables"]
    assert any(t.get("table", {}).get("name") == "keeltest" for t in tables)
