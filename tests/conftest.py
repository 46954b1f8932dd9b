"""Fixtures for the QEMU lab tests: labs that are always torn down, and whose
consoles' logs are kept under out/lab-runs/ when a test fails; labs that
several modules share (tests/lab/lifetime.py says how)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import settings

from tests.lab import lifetime
from tests.lab.lab import Lab
from tests.lab.paths import TOP

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


def _lab_factory(name: str, failed: Callable[[], bool]) -> Iterator[Callable[[], Lab]]:
    where = lifetime.workdir(name)
    labs: list[Lab] = []
    yield lifetime.factory(where, labs)
    lifetime.finish(labs, where, failed())


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


_SHARED = lifetime.SharedLabs()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items[:] = lifetime.grouped(items)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    yield
    module = getattr(item, "module", None)
    name = lifetime.shared_name(module)
    if name in _SHARED.open:
        failed = getattr(module, "keel_failed", False)
        if lifetime.ends_after(module, getattr(nextitem, "module", None), failed):
            _SHARED.close(name, failed)


@pytest.fixture(scope="module")
def shared_lab(request) -> Any:
    """The lab the module's SHARED_LAB builds, shared with the modules that
    name the same builder."""
    build = getattr(request.module, "SHARED_LAB", None)
    if build is None:
        raise pytest.UsageError(f"{request.module.__name__} uses shared_lab without SHARED_LAB")
    return _SHARED.get(build, request.module.__name__,
                       fresh=getattr(request.module, "SHARED_LAB_FRESH", False))


@pytest.fixture(scope="session", autouse=True)
def _close_shared_labs() -> Iterator[None]:
    yield
    _SHARED.close_all()
