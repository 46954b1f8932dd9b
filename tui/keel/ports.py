"""Ports keel itself uses whatever the config says, in a module without
imports: the config's checks name them (a forward may not take them), and
the modules that serve them read them from here."""

# `keel pair` on the hub: the TCP port open on the WAN while a code waits
# (keel pair --port gives another)
PAIRING_TCP = 51820
