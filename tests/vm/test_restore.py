"""Guests restored from a saved state (tests/lab/saved.py) are what the other
lab tests run on: each must be what a boot gives, and its own machine.

One lab: `booted` boots as a machine does; `one` and `two` are restored from
the saved state of the same kind, all three on one link. The restored ones
must have what the booted one has (the shipped default's firewall,
addresses and daemons, the DHCP client on their own MAC), and nothing their
sibling has: MAC, WireGuard key, SSH host key, DHCPv6 DUID, the random
generator's output; their clocks are the host's."""

from __future__ import annotations

import ipaddress
import time

import pytest

from tests.lab import labs
from tests.lab.guest import Guest

# the daemons a keel guest may run, each named with what it runs on (a
# one-NIC guest on the shipped default has no LAN: no dnsmasq)
DAEMONS = ("udhcpc -f -i eth0", "dnsmasq --conf-file=/run/keel/dnsmasq.conf",
           "dhcpcd", "dropbear", "keel stall-meter")
ALWAYS = {"udhcpc -f -i eth0", "dropbear", "keel stall-meter"}


pytestmark = pytest.mark.lab("restore")


@pytest.fixture(scope="module")
def lab(make_module_lab):
    started = labs.RESTORE.build(make_module_lab)
    return started["booted"], started["one"], started["two"]


def identity(guest: Guest) -> dict[str, str]:
    return {
        "mac": guest.check("cat /sys/class/net/eth0/address"),
        "wireguard": guest.check("keel show pubkey"),
        "ssh host key": guest.check("cut -d' ' -f2 /data/keel/ssh/host_ed25519.pub"),
        "duid": guest.check("cat /data/keel/dhcpcd/duid"),
        "random": guest.check("head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n'"),
    }


def test_the_restored_guests_were_restored_and_the_other_booted(lab):
    booted, one, two = lab
    for guest in lab:
        assert guest.check("cat /run/keel/boot-fallback.json")  # the boot's apply ended
    assert "virtual machine fork" in one.check("dmesg | grep 'crng reseeded' || true")
    assert "virtual machine fork" in two.check("dmesg | grep 'crng reseeded' || true")
    assert "virtual machine fork" not in booted.check("dmesg | grep 'crng reseeded' || true")


def test_each_restored_guest_is_its_own_machine(lab):
    seen = [identity(g) for g in lab]
    for what in seen[0]:
        values = [s[what] for s in seen]
        assert len(set(values)) == len(values), f"{what} shared: {values}"
    for guest, got in zip(lab, seen, strict=True):
        assert got["mac"] == guest.nics[0].mac  # the lab's, as a boot would have it


def test_a_restored_guests_clock_is_the_hosts(lab):
    """Stepped on restore: the restored guests' clocks as the step left them
    (tests/lab/saved.py), the booted one's now. Read minutes later on a
    loaded host (load average 6-13), a restored guest's clock was 6 s behind
    the host's, and so was one read after its restore's `keel apply --boot`
    (two minutes on a loaded guest): it had run slow since, which the step
    does not govern (why it ran slow is not known yet: see docs/lab.md)."""
    booted, *restored = lab
    for guest in restored:
        assert guest.clock_at_restore is not None, guest.name
        before, seconds, after = guest.clock_at_restore
        assert before - 5 <= seconds <= after + 5, (guest.name, seconds, before)
    before = time.time()
    seconds = float(booted.check("date +%s"))
    assert before - 5 <= seconds <= time.time() + 5, (booted.name, seconds, before)


def test_a_restored_guest_runs_what_a_booted_one_does(lab):
    booted, one, two = lab

    def state(guest: Guest) -> dict[str, object]:
        return {
            "ruleset": guest.check("nft list ruleset"),
            "ipv4": guest.check("ip -4 -o addr show | awk '{print $2, $4}'"),
            "up": guest.check("ip -o link show up | awk '{print $2}'"),
            "link-local on": guest.check("ip -6 -o addr show scope link | awk '{print $2}'"),
            "daemons": [d for d in DAEMONS if guest.run(f"pgrep -f '{d}'").rc == 0],
            "config": guest.check("keel config show"),
            "revisions": guest.check("keel show revisions"),
        }

    want = state(booted)
    assert set(want["daemons"]) >= ALWAYS, want["daemons"]
    assert state(one) == want
    assert state(two) == want


def test_a_restored_guests_link_local_addresses_are_its_own_and_outlive_dhcpcd(lab):
    """The link-local address comes from the lab's MAC, made by the kernel as
    at boot: stopping keel's daemons (as tests that set a guest up by hand
    do) leaves it, as on a booted guest (dhcpcd takes only those it made)."""
    booted, one, _ = lab
    mac = one.nics[0].mac.split(":")
    eui = f"fe80::{int(mac[0], 16) ^ 2:x}{mac[1]}:{mac[2]}ff:fe{mac[3]}:{mac[4]}{mac[5]}"
    want = str(ipaddress.IPv6Address(eui))
    assert want in one.check("ip -6 -o addr show dev eth0 scope link")
    for guest in (booted, one):
        guest.check("pkill -x dhcpcd; n=0; while pgrep -x dhcpcd >/dev/null && [ $n -lt 50 ]; "
                    "do sleep 0.2; n=$((n + 1)); done; true")
    assert want in one.check("ip -6 -o addr show dev eth0 scope link")
    assert "fe80::" in booted.check("ip -6 -o addr show dev eth0 scope link")
    # keel's own daemons back, as the next test and a booted guest have them
    for guest in (booted, one):
        guest.check("keel apply --boot >/dev/null", 120)


def test_a_restored_guests_dhcp_client_asks_with_its_own_mac(lab):
    """The booted guest serves DHCP on the link (a dnsmasq by hand); the
    restored one's client, which the shipped default runs on eth0, gets a
    lease for the MAC its lab gave it."""
    booted, one, _ = lab
    wire = booted.ifname("w1")
    # eth0 is the shipped default's WAN: its firewall lets no DHCP in
    booted.check("nft insert rule inet keel input udp dport 67 accept")
    booted.check(f"ip addr add 10.66.0.1/24 dev {wire} && "
                 f"dnsmasq --port=0 --interface={wire} --bind-interfaces "
                 "--dhcp-range=10.66.0.50,10.66.0.60,1h --dhcp-leasefile=/run/lab.leases "
                 "--pid-file=/run/lab-dnsmasq.pid")
    one.until("ip -4 -o addr show dev eth0 | grep -q 10.66.0.", 60, every=2)
    leases = booted.until("grep 10.66.0. /run/lab.leases", 30)
    assert one.nics[0].mac in leases, leases
