"""Ports keel itself uses whatever the config says, in a module without
imports: the config's checks name them (a forward may not take them), and
the modules that serve them read them from here."""

# `keel pair` on the hub: the TCP port open on the WAN while a code waits
# (keel pair --port gives another)
PAIRING_TCP = 51820
# the iperf3 server on the tunnel address (selftest.iperf3_server)
IPERF3 = 5201
# dnsmasq's DNS on the LAN (UDP and TCP)
DNS = 53
# SSH (dropbear), on the LAN and the tunnel, on the WAN with firewall.ssh_on_wan
SSH_TCP = 22
# the Prometheus endpoint's default (metrics.port): the port Prometheus's list
# of exporters gives the WireGuard exporters, whose metric names keel keeps
METRICS_TCP = 9586
# the fleet channel (keel.fleet.agent): an edge answers its hub on its tunnel
# address, from the hub's tunnel address only, through the tunnel only
FLEET_TCP = 9587
