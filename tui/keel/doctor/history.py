"""Doctor checks of what keeps and serves the router's past: the history
daemon (S42history; keel.history.daemon) and the metrics endpoint
([metrics]; keel.apply.metrics). Pure: from what was read to verdicts."""

from __future__ import annotations

from dataclasses import dataclass

from keel.doctor.checks import FAIL, INFO, OK, WARN, Check
from keel.model import RouterModel

# a point is made every INTERVAL_S (keel.history.sampler); this many missed
# in a row and the daemon counts as stuck
MISSED_POINTS = 3


@dataclass(frozen=True)
class HistoryState:
    """What was read of the history daemon: its process, its newest point's
    time (latest.json), its last batch kept (written.json: when), the store's
    size on /data (the file and its WAL)."""

    running: bool
    newest: float | None = None
    kept_at: float | None = None
    store_bytes: int | None = None


def check_history(state: HistoryState, now: float, interval: float, batch: float) -> Check:
    """The daemon runs, makes a point every `interval` seconds and keeps them
    every `batch` seconds. Not running, or stuck, is a warning: the router
    routes without it, but the past it would show is lost."""
    data = {"running": state.running, "newest": state.newest, "kept_at": state.kept_at,
            "store_bytes": state.store_bytes}
    if not state.running:
        return Check("history", "daemon", WARN,
                     "not running: nothing is kept (/etc/init.d/S42history start; "
                     "its errors: /run/keel/history.log)", data)
    if state.newest is None or now - state.newest > MISSED_POINTS * interval:
        since = "no point yet" if state.newest is None \
            else f"no point for {now - state.newest:.0f} s"
        return Check("history", "daemon", WARN,
                     f"runs, but {since} (every {interval:.0f} s expected; "
                     "its errors: /run/keel/history.log)", data)
    if state.kept_at is not None and now - state.kept_at > 2 * batch + interval:
        return Check("history", "daemon", WARN,
                     f"points made, but none kept for {now - state.kept_at:.0f} s "
                     f"(a batch every {batch:.0f} s expected; /data full or read-only? "
                     "its errors: /run/keel/history.log)", data)
    size = "" if state.store_bytes is None else f"; store {state.store_bytes / 1e6:.1f} MB"
    kept = "none kept yet" if state.kept_at is None \
        else f"last kept {now - state.kept_at:.0f} s ago"
    return Check("history", "daemon", OK,
                 f"a point every {interval:.0f} s, {kept}{size}", data)


def check_metrics(model: RouterModel, running: bool, listen: list[str]) -> Check:
    """The endpoint runs exactly when [metrics] enables it."""
    port = model.metrics.port
    data = {"enabled": model.metrics.enabled, "running": running, "port": port,
            "listen": listen}
    if not model.metrics.enabled:
        if running:
            return Check("metrics", "endpoint", WARN,
                         "runs though [metrics] is off (keel apply stops it)", data)
        return Check("metrics", "endpoint", INFO, "off ([metrics] enabled = false)", data)
    if not running:
        return Check("metrics", "endpoint", FAIL,
                     f"[metrics] is on, but nothing serves port {port} (keel apply starts it)",
                     data)
    where = ", ".join(listen) if listen else "nowhere"
    wan = "; the WAN too" if model.metrics.on_wan else ""
    return Check("metrics", "endpoint", OK, f"on {where}, port {port}{wan}", data)
