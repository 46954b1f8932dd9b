"""Configs of a hub and an edge for the pairing tests (the shipped examples,
the edge's tunnel not set up yet)."""

from __future__ import annotations

import dataclasses

import pytest

from keel.config import paths
from keel.config.load import parse_config
from keel.config.schema import Config

HUB_KEY = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="
EDGE_KEY = "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg="
EDGE2_KEY = "sYboCPJPHlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGY="


def hub_config(prefix: str = "10.77.0.1/24", port: int = 51820) -> Config:
    cfg = parse_config(paths.example_text("hub")).config
    return dataclasses.replace(cfg, wireguard=dataclasses.replace(
        cfg.wireguard, peer=(), address=(prefix,), listen_port=port))


def edge_config(lan: str = "192.168.77.1/24", hostname: str = "edge") -> Config:
    cfg = parse_config(paths.example_text("edge")).config
    net = lan.rsplit(".", 1)[0]
    return dataclasses.replace(
        cfg, system=dataclasses.replace(cfg.system, hostname=hostname),
        lan=dataclasses.replace(cfg.lan, address=lan, dhcp_start=f"{net}.100",
                                dhcp_end=f"{net}.199"),
        wan=dataclasses.replace(cfg.wan, shaping=dataclasses.replace(cfg.wan.shaping,
                                                                     attach="wan")),
        wireguard=dataclasses.replace(cfg.wireguard, enabled=False, address=(), peer=(),
                                      route="none", prefixes=()))


@pytest.fixture
def hub() -> Config:
    return hub_config()


@pytest.fixture
def edge() -> Config:
    return edge_config()
