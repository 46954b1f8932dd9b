"""CPU tuning for latency: governor, idle states (PM QoS), RPS/XPS."""
