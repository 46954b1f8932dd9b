"""A titled panel: Textual's border title on a top border (ASCII on the
console), one row for the title whatever the panel holds."""

from __future__ import annotations

from textual.containers import Vertical


class Frame(Vertical):
    """`side` adds a left border: the panel stands right of another. `grow`
    takes the height the other panels leave."""

    DEFAULT_CSS = """
    Frame {
        height: auto;
        border-top: round $primary;
        border-title-style: bold;
        border-title-color: $foreground;
    }
    Frame.side { border-left: round $primary; }
    Frame.console { border-top: ascii $primary; }
    Frame.console.side { border-left: ascii $primary; }
    Frame.grow { height: 1fr; }
    """

    def __init__(self, title: str, *, console: bool, side: bool = False, grow: bool = False,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.set_class(console, "console")
        self.set_class(side, "side")
        self.set_class(grow, "grow")
        self.title = title

    @property
    def title(self) -> str:
        return self._title

    @title.setter
    def title(self, text: str) -> None:
        """The border title, set only when it changes (it repaints the frame).
        Beside a left border Textual pads the title by a space of its own."""
        self._title = text
        title = f"{text} " if self.has_class("side") else f" {text} "
        if self.border_title != title:
            self.border_title = title
