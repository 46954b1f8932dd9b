"""The box for a bundle's path or https URL (the upgrade screen's, and the
fleet screen's staged upgrade): a paste enters only as one line of printable
ASCII (what keel.upgrade.target.check_target takes), else check_target says
why. Keys type only printable characters."""

from __future__ import annotations

from keel.ui.widgets.paste_input import GuardedPasteInput
from keel.upgrade.target import check_target


def target_lines(text: str) -> list[str]:
    """A pasted target's lines, each without the blanks around it."""
    return [line for line in (part.strip(" \t\r") for part in text.split("\n")) if line]


def target_input(id: str, placeholder: str = "bundle path (.raucb) or https URL, [enter]"
                 ) -> GuardedPasteInput:
    return GuardedPasteInput(target_lines, lambda ch: 33 <= ord(ch) < 127, check_target,
                             "paste one path or URL", placeholder=placeholder, id=id)
