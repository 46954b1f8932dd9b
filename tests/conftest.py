"""Fixtures for the QEMU lab tests: labs that are always torn down, and whose
consoles' logs are kept under out/lab-runs/ when a test fails."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.lab.lab import Lab
from tests.lab.paths import RUNS, TOP

# the keel package is tested from its source tree
sys.path.insert(0, str(TOP / "tui"))

# CI runs the property tests with a fixed seed, so a run is repeatable;
# developers get new examples each run
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        item.keel_failed = True
        item.module.keel_failed = True


def _workdir(nodeid: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")
    path = RUNS / safe
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def _finish(labs: list[Lab], workdir: Path, failed: bool) -> None:
    for lab in labs:
        lab.close()
    if failed:
        for disk in workdir.glob("*.qcow2"):
            disk.unlink()
        print(f"\nconsole logs kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)


def _lab_factory(name: str, failed: Callable[[], bool]) -> Iterator[Callable[[], Lab]]:
    workdir = _workdir(name)
    labs: list[Lab] = []

    def factory() -> Lab:
        lab = Lab(workdir / f"lab{len(labs)}")
        labs.append(lab)
        return lab

    yield factory
    _finish(labs, workdir, failed())


@pytest.fixture
def make_lab(request) -> Iterator[Callable[[], Lab]]:
    """A factory of labs for one test; every guest is stopped afterwards."""
    yield from _lab_factory(request.node.nodeid,
                            lambda: getattr(request.node, "keel_failed", False))


@pytest.fixture(scope="module")
def make_module_lab(request) -> Iterator[Callable[[], Lab]]:
    """Like make_lab, shared by the tests of one module (run in file order)."""
    yield from _lab_factory(request.module.__name__,
                            lambda: getattr(request.module, "keel_failed", False))
