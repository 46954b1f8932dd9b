"""The config in force (the user's, else the shipped default), read through
keel's one reading path: what apply, doctor and the self-tests load."""

from __future__ import annotations

from pathlib import Path

from keel.config.errors import ConfigError
from keel.config.load import Loaded, read_config
from keel.model.from_config import model_from_config
from keel.model.router import RouterModel

USER_CONFIG = Path("/data/keel/keel.toml")
DEFAULT_CONFIG = Path("/etc/keel/keel.toml")


class InvalidConfig(Exception):
    """The config failed validation; the message lists every problem."""

    def __init__(self, error: ConfigError) -> None:
        self.error = error
        super().__init__(str(error))

    def summary(self) -> str:
        return self.error.summary()


def config_in_force(user: Path | None = None, default: Path | None = None) -> Path:
    """The user's config when there is one, else the shipped default."""
    user = user or USER_CONFIG
    return user if user.exists() else (default or DEFAULT_CONFIG)


def read_loaded(path: Path, source: str | None = None) -> Loaded:
    """The config file through keel's one reading path (raises InvalidConfig)."""
    try:
        return read_config(path, source)
    except ConfigError as err:
        raise InvalidConfig(err) from None


def model_of(loaded: Loaded) -> RouterModel:
    return model_from_config(loaded.config)


def read_model(path: Path) -> RouterModel:
    """The RouterModel of a config file (raises InvalidConfig)."""
    return model_of(read_loaded(path))


def in_force() -> RouterModel:
    """The RouterModel of the config in force (raises InvalidConfig)."""
    return read_model(config_in_force())
