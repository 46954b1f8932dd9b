"""The fleet: a hub and its edges over the tunnel that pairing made. Each
edge answers its hub (and nothing else) on a small channel inside the tunnel
(keel.fleet.agent); the hub polls every edge's health and gives each the
routes to the others' LANs (keel.fleet.hub). docs/fleet.md says how."""
