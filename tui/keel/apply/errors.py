"""Why an apply stops: the config is invalid (nothing was changed), or the
system refused a change (nothing after the failing step ran)."""

from __future__ import annotations

from keel.config.errors import ConfigError


class InvalidConfig(Exception):
    """The config failed validation; the message lists every problem."""

    def __init__(self, error: ConfigError) -> None:
        self.error = error
        super().__init__(str(error))

    def summary(self) -> str:
        return self.error.summary()


class Refused(Exception):
    """The system refused a change; the message says which and why."""
