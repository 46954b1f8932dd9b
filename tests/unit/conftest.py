"""Unit tests import the keel package from its source tree."""

from __future__ import annotations

import sys
from pathlib import Path

TUI = str(Path(__file__).resolve().parents[2] / "tui")
if TUI not in sys.path:
    sys.path.insert(0, TUI)
