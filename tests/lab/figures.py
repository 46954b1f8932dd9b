"""Figures the lab tests measure, kept for the record (never asserted here):
one JSON line per measurement in out/lab-runs/figures.jsonl, so runs under
different host loads (tests/lab/busy.py) can be compared afterwards."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from tests.lab.paths import RUNS

FIGURES = RUNS / "figures.jsonl"


def record(what: str, setup: dict[str, Any], **results: Any) -> None:
    RUNS.mkdir(parents=True, exist_ok=True)
    line = {"when": time.strftime("%Y-%m-%dT%H:%M:%S"), "what": what,
            "label": os.environ.get("KEEL_LAB_LABEL", ""), "setup": setup, **results}
    with FIGURES.open("a") as f:
        f.write(json.dumps(line) + "\n")
