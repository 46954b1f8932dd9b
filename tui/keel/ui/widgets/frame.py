"""Titled panels: Textual's border title on a top border (ASCII on the
console), one row for the title whatever the panel holds.

A panel of one widget carries the border itself (`frame(widget, ...)`): a
container around it would be one more layer the compositor renders under
every change. `Frame` is the container for a panel of several widgets."""

from __future__ import annotations

from typing import TypeVar

from textual.containers import Vertical
from textual.widget import Widget

W = TypeVar("W", bound=Widget)

# unscoped (Frame.SCOPED_CSS): the rules hold for any widget of class "frame"
FRAME_CSS = """
.frame {
    height: auto;
    border-top: round $primary;
    border-title-style: bold;
    border-title-color: $foreground;
}
.frame.side { border-left: round $primary; }
.frame.console { border-top: ascii $primary; }
.frame.console.side { border-left: ascii $primary; }
.frame.grow { height: 1fr; }
"""


def frame(widget: W, title: str, *, console: bool, side: bool = False,
          grow: bool = False) -> W:
    """Give a widget a titled top border (`side`: and a left border, for a
    panel right of another; `grow`: the height the others leave)."""
    widget.add_class("frame")
    widget.set_class(console, "console")
    widget.set_class(side, "side")
    widget.set_class(grow, "grow")
    set_title(widget, title)
    return widget


def set_title(widget: Widget, text: str) -> None:
    """The border title, set only when it changes (it repaints the panel).
    Beside a left border Textual pads the title by a space of its own."""
    title = f"{text} " if widget.has_class("side") else f" {text} "
    if widget.border_title != title:
        widget.border_title = title


class Frame(Vertical):
    """A titled panel holding several widgets."""

    SCOPED_CSS = False
    DEFAULT_CSS = FRAME_CSS

    def __init__(self, title: str, *, console: bool, side: bool = False, grow: bool = False,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        frame(self, title, console=console, side=side, grow=grow)
