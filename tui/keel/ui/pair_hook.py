"""Pairing with the other keel router (keel pair), as the console starts
it: after the setup wizard, and from the peers screen."""

from __future__ import annotations

from collections.abc import Callable

from keel.ui import setup_model as model

Say = Callable[[str], None]
PairAfterSetup = Callable[[str, str, str, Say], tuple[bool, str]]


def pair_after_setup(role: str, hub: str, code: str, say: Say) -> tuple[bool, str]:
    """THE PAIRING HOOK: pair this router with the other keel router, once
    the setup is applied and kept. Called in a worker thread (it blocks:
    the hub waits up to 10 min for the edge; each side applies the paired
    config with confirm and keeps it once the first handshake happened).
    `role` "hub" or "edge"; `hub` HUB[:PORT] and `code` (the edge's
    answers; "" on a hub); `say(line)` shows a line of progress (the hub's
    code). Returns (paired?, the last thing to say)."""
    try:
        from keel.pair import run
    except ImportError:
        return False, model.PAIRING_NOTE
    sides = run.Sides(say=say)
    try:
        rc = run.pair_hub(sides) if role == "hub" else run.pair_edge(hub, code, sides)
    except Exception as err:  # keel pair's own one-line reasons: shown, never a crash
        return False, f"not paired: {err}"
    return rc == 0, ("paired: the tunnel is up and kept" if rc == 0 else
                     "not paired: no handshake, the pairing rolls back by itself")
