"""Where keel draws its lines: the one module of thresholds the dashboard, the
doctor, the self-tests and the verdicts share (pure constants)."""

from __future__ import annotations

# CPU
CORE_SATURATED = 0.90  # a core this busy (or this deep in softirq) is saturated
OTHERS_IDLE = 0.50  # the other cores idle at least this much: one core carries the load
STEAL_WARN = 0.10  # the hypervisor takes more than this share of the CPU

# WireGuard re-handshakes every 2 minutes while traffic flows: a handshake
# older than this means the peer is not answering
HANDSHAKE_STALE_S = 180

# Bufferbloat grades (DSLReports' bands, also the LibreQoS test page): the
# upper bound of the latency increase under load in ms, and the grade
GRADE_BANDS: tuple[tuple[float, str], ...] = (
    (5.0, "A+"),
    (30.0, "A"),
    (60.0, "B"),
    (200.0, "C"),
    (400.0, "D"),
)
GRADE_LINES_MS = (5.0, 30.0, 60.0)  # drawn on the latency plots, above the idle baseline
