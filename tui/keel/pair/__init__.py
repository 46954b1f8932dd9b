"""Pairing: two keel routers set up their WireGuard tunnel from a one-time
code (SPAKE2, then every message sealed under the derived keys)."""
