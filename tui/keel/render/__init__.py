"""Rendering the router's desired state from a RouterModel: pure functions
that return text (nftables ruleset, dnsmasq config) or argv lists (ip, tc, wg)."""
