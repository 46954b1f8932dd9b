"""What the router should be: the RouterModel (fields named as the schema
names its keys), built from a validated Config in one place, and the config
in force. Layers: config -> model -> render -> apply."""

from keel.model.from_config import model_from_config
from keel.model.reading import (
    InvalidConfig,
    config_in_force,
    in_force,
    model_of,
    read_loaded,
    read_model,
)
from keel.model.router import (
    Firewall,
    Forward,
    Ipv6,
    Lan,
    Metrics,
    Nat,
    Peer,
    RouterModel,
    Selftest,
    Shaping,
    System,
    Tuning,
    Wan,
    WireGuard,
)

__all__ = ["Firewall", "Forward", "InvalidConfig", "Ipv6", "Lan", "Metrics", "Nat", "Peer",
           "RouterModel", "Selftest", "Shaping", "System", "Tuning", "Wan", "WireGuard",
           "config_in_force", "in_force", "model_from_config", "model_of", "read_loaded",
           "read_model"]
