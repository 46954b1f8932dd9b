"""The one layer that reads the running system: one reader per fact, each
through a Source (keel.system.source), each returning what keel.parse makes of
it. cpu_times (/proc/stat), kworkers (the kernel's workers), qdiscs
(`tc -s -j qdisc show`), wireguard (`wg show all dump`), links (the NICs'
counters and RPS masks), cpu_sysfs (cpufreq, cpuidle), pm_qos
(/dev/cpu_dma_latency), ping (one ping process type). Commands that change the
system go through keel.system.commands."""
