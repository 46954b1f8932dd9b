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

# Verdicts (keel.verdicts): what limits latency now
# Stall meter: its worst wakeup in a second (at 25 wakeups a second per CPU,
# p99 is nearly the worst). A healthy router comes back within a few ms, even
# an emulated one on a busy host; a starving VPS's stall is its host's slice,
# around a hundred ms and more (docs/verdicts.md, "The stall meter", has the
# figures seen).
STALL_P99_MS = 50.0
STALL_MAX_MS = 100.0
# ... in at least 3 of the window's seconds: one long stall (a live migration,
# a host hiccup) is not a starving host.
STALL_MIN_SECONDS = 3
# Steal: 10 % of the CPU time taken by the host is what `keel doctor` warns at;
# held for 3 s so one noisy tick count is not a verdict.
STEAL_BAD = STEAL_WARN
STEAL_MIN_SECONDS = 3
# Starvation's evidence in the tunnel: its slowest probe of a second at least
# 20 ms over the idle baseline (well above ping jitter on a healthy path).
STARVED_LATENCY_MARGIN_MS = 20.0
# A meter that could not get SCHED_FIFO is delayed by ordinary load: its stalls
# do not count in a second where some core was this busy.
NOT_REALTIME_BUSY = 0.90
# CPU-bound: one core at least 90 % busy (a core with 10 % spare can still
# absorb a burst) ...
CPU_BOUND_BUSY = CORE_SATURATED
# ... mostly kernel work: softirq + system at least half of its busy time
# (WireGuard's encryption runs in softirq and kernel workers; user time is
# someone else's program, not the tunnel) ...
CPU_BOUND_KERNEL_SHARE = 0.5
# ... or the tunnel itself taking 80 % of a core ...
CPU_BOUND_TUNNEL_CPU = 0.8
# ... while traffic flows: 1 Mbit/s is more than keepalives and pings.
CPU_BOUND_MIN_MBIT = 1.0
# Bloat: latency 30 ms over the idle baseline under load is what the
# DSLReports grading calls bloat (grade B and worse start near there).
BLOAT_MARGIN_MS = 30.0
# CAKE holding 128 KiB is ~20 ms of queue at 50 Mbit/s: a queue, not a burst.
BLOAT_BACKLOG_BYTES = 128 * 1024
# Tunnel path: the tunnel's latency BLOAT_MARGIN_MS over idle while the probe
# outside it rose by less than half as much (and under the margin): the rise
# is inside the tunnel only (the peer's side, or the tunnel's own path), not
# the link both share (docs/verdicts.md: the field case's figures).
TUNNEL_ONLY_OUTSIDE_SHARE = 0.5
# Clock: below 80 % of its maximum (what `keel doctor` warns at: a CPU held at
# half its clock doubles a tunnel's latency, docs/verdicts.md).
CLOCK_LOW = 0.80
# Deep idle: states whose exit latency is above this are "deep" (the producer
# of Signals applies it; 20 us is well under any network latency that matters
# but above C1/C1E on every x86 seen).
DEEP_IDLE_EXIT_US = 20
# "Most of the window": 60 % of its seconds, and never fewer than 3.
MOST_OF_WINDOW = 0.6
MIN_HELD_SECONDS = 3

# Upgrades (keel.upgrade): a new slot is kept only when, after its boot, every
# peer that had a session before the upgrade has one again within this many
# seconds of the boot's apply ending (WireGuard's own limit for a session: a
# handshake older than 180 s is no session), the boot's apply took the user's config, the console UI
# runs on tty1 and the stall meter runs (each seen within UPGRADE_SEEN_S).
UPGRADE_HANDSHAKE_WAIT_S = 180
# `keel upgrade --tunnel-wait S` may set another wait for one install, within these
UPGRADE_HANDSHAKE_WAIT_RANGE_S = (30, 3600)
UPGRADE_SEEN_S = 120
# a boot step still under way on a trial boot is slow, not failed: the boot's
# `keel apply --boot` (its process alive), the console UI not drawn yet but
# not failed either (tty1 not fallen back to a login: the UI still starting,
# Python and Textual on a throttled CPU, or not spawned yet, init's start
# scripts still running). It gets until this much uptime; one that failed (no
# apply process; tty1 a login after CONSOLE_UI_TRIES) is judged at
# UPGRADE_SEEN_S (docs/upgrades.md says how slow they were seen). The peers'
# handshake window counts from the apply's end.
UPGRADE_SLOW_START_S = 600
# a console UI still starting on a boot that is slow all through (its apply
# ended late: a starved CPU is slow at everything) gets this many times the
# apply's end uptime, when that is longer, and never more than
# UPGRADE_SLOWEST_START_S: a UI that hangs is still found out
UPGRADE_SLOW_START_PACE = 4
UPGRADE_SLOWEST_START_S = 1800
# keel fleet upgrade (keel.fleet.rollout): an edge answers the hub's bundle
# once it has checked and written it (`keel upgrade`'s install: minutes on a
# slow disk), then has until its gate's latest decision, and a boot, to say
# the outcome; past either it stops the rollout
FLEET_INSTALL_REPLY_S = 1800
FLEET_UPGRADE_BACK_S = UPGRADE_SLOWEST_START_S + 600
# the console UI's failed starts in a row (each ending in an error within 30
# s) before tty1 falls back to a login (/usr/share/keel/tty1)
CONSOLE_UI_TRIES = 3
# GRUB tries a slot at most this many times before the next (grub.cfg.in)
UPGRADE_BOOT_TRIES = 3

# Adaptive CAKE (keel.adaptive; wan.shaping.adaptive): CAKE's rates follow the
# line, judged per direction from one-way delays to the tunnel's peer. The
# figures start from cake-autorate's defaults (docs/cake.md, "The controller",
# says where each differs, and why).
ADAPT_PROBE_HZ = 10  # probes a second through the tunnel
# while the line rests (every adapted direction at its base with under
# ADAPT_IDLE_LOAD of it going through) this many: the first tick that sees
# load goes back to ADAPT_PROBE_HZ. cake-autorate sleeps on idle too; the
# controller has nothing to do then, and 10 probes a second would be most of
# its cost (and the peer's)
ADAPT_RESTING_HZ = 1
# a sample is "delayed" this far over its direction's baseline, plus the time
# one full-size packet (1500 bytes) takes at the current rate (which matters
# under about 12 Mbit/s: 12 ms at 1 Mbit/s); docs/cake.md says how it compares
# with cake-autorate's and sqm-autorate's
ADAPT_DELAY_MS = 20.0
ADAPT_PACKET_BITS = 1500 * 8
# bufferbloat: this many delayed samples among the last ADAPT_WINDOW
ADAPT_DELAYED = 3
ADAPT_WINDOW = 6
# a cut takes the rate (or what got through, if less) down by a factor between
# these, in proportion to the delay over the threshold (the largest cut at
# ADAPT_CUT_FULL_MS over it), and at most once every ADAPT_CUT_EVERY_S
ADAPT_CUT_LEAST = 0.01
ADAPT_CUT_MOST = 0.25
ADAPT_CUT_FULL_MS = 60.0
ADAPT_CUT_EVERY_S = 0.3
# under load (what got through is at least this share of the rate) with no
# delayed sample, the rate rises by this step, at most once every
# ADAPT_RAISE_EVERY_S and not within ADAPT_RAISE_AFTER_CUT_S of a cut
ADAPT_HIGH_LOAD = 0.75
ADAPT_RAISE_STEP = 0.04
ADAPT_RAISE_EVERY_S = 0.2
ADAPT_RAISE_AFTER_CUT_S = 1.0
# with less load than this share, the rate drifts back to the base, closing
# this share of the gap a second
ADAPT_IDLE_LOAD = 0.2
ADAPT_DRIFT_PER_S = 0.05
# "what got through" is read from CAKE's byte counters over this window
ADAPT_LOAD_WINDOW_S = 0.5
# the baseline follows a sample below it at once (most of the way) and one
# above it slowly (and not while the sample is delayed)
ADAPT_BASELINE_DOWN = 0.9
ADAPT_BASELINE_UP = 0.001
# a peer that stops answering: the rate is held this long, then set to the base
ADAPT_PEER_HOLD_S = 2.0
ADAPT_PEER_LOST_S = 5.0
# a change smaller than this share of the rate is not written to CAKE
ADAPT_WRITE_LEAST = 0.02
# a tick is "stalled" (no cut, no raise) when this router's loop woke this late,
# when a core was saturated (read every ADAPT_CPU_EVERY_S), or when the peer's
# answer says its CPU was away this long; a stall marks ADAPT_STALL_HOLD_S
ADAPT_OWN_STALL_MS = 20.0
ADAPT_PEER_STALL_MS = 20.0
ADAPT_CPU_EVERY_S = 0.5
ADAPT_STALL_HOLD_S = 1.0
# what the console and the verdicts read of it (keel.system.adaptive): the
# daemon rewrites /run/keel/adapt.json once a second (every
# ADAPT_STATE_RESTING_S while the line rests: nothing changes then); a file
# older than ADAPT_STATE_FRESH_S is a daemon that died without removing it,
# not adaptive CAKE at work
ADAPT_STATE_RESTING_S = 5.0
ADAPT_STATE_FRESH_S = 10.0
# the verdict "the line dropped: CAKE followed" (keel.verdicts): a direction's
# adaptive rate under this share of its base, held over the window, while the
# latency through the tunnel stays under BLOAT_MARGIN_MS over its idle baseline
ADAPT_DROPPED_SHARE = 0.70
