"""CAKE on a WAN's egress, and on its ingress through an IFB (`ifb4<wan>`) fed
by a matchall filter with a mirred redirect, as argv lists for `tc` and `ip`."""

from __future__ import annotations

from keel.render.model import Shaping, Wan

IFB_PREFIX = "ifb4"
INGRESS_HANDLE = "ffff:"


def ifb_name(wan: str) -> str:
    """`ifb4<wan>`, cut to the kernel's 15 characters."""
    return (IFB_PREFIX + wan)[:15]


def cake_options(shaping: Shaping, rate_kbit: int, *, ingress: bool) -> list[str]:
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
    if shaping.overhead:
        opts += shaping.overhead.split()
    opts += ["rtt", f"{shaping.rtt_ms}ms"]
    return opts


def egress_commands(wan: Wan) -> list[list[str]]:
    rate = wan.shaping.upload_kbit
    if rate <= 0:
        return [["tc", "qdisc", "replace", "dev", wan.ifname, "root", "fq_codel"]]
    return [["tc", "qdisc", "replace", "dev", wan.ifname, "root", "cake",
             *cake_options(wan.shaping, rate, ingress=False)]]


def ingress_commands(wan: Wan) -> list[list[str]]:
    """Set up (or, at rate 0, tear down) ingress shaping through the IFB."""
    ifb = ifb_name(wan.ifname)
    rate = wan.shaping.download_kbit
    if rate <= 0:
        return [["tc", "qdisc", "del", "dev", wan.ifname, "handle", INGRESS_HANDLE, "ingress"],
                ["ip", "link", "del", ifb]]
    return [
        ["ip", "link", "add", ifb, "type", "ifb"],
        ["ip", "link", "set", ifb, "up"],
        ["tc", "qdisc", "replace", "dev", ifb, "root", "cake",
         *cake_options(wan.shaping, rate, ingress=True)],
        ["tc", "qdisc", "replace", "dev", wan.ifname, "handle", INGRESS_HANDLE, "ingress"],
        ["tc", "filter", "replace", "dev", wan.ifname, "parent", INGRESS_HANDLE, "prio", "1",
         "handle", "1", "matchall", "action", "mirred", "egress", "redirect", "dev", ifb],
    ]
