"""The screens' bottom line: their keys, or a message for a while."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class Footer(Static):
    """Keys, or a message for a while (no toasts: they animate and draw glyphs)."""

    def __init__(self, keys: str, **kwargs) -> None:
        super().__init__(Text(keys), **kwargs)
        self.keys = keys
        self._say_timer = None

    def say(self, text: str, seconds: float = 8.0) -> None:
        self.update(Text(text, style="bold"))
        if self._say_timer is not None:
            self._say_timer.stop()
        self._say_timer = self.set_timer(seconds, lambda: self.update(Text(self.keys)))
