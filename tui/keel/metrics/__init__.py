"""Metrics for the console UI: where data is read (Source), the immutable
snapshots collectors build, and the arithmetic of what the tunnel costs."""
