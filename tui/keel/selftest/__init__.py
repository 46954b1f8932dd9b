"""Self-tests run against the WireGuard peer: throughput, bufferbloat, MTU."""
