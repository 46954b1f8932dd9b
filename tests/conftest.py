"""Fixtures for the QEMU lab tests: labs that are always torn down, and whose
consoles' logs are kept under out/lab-runs/ when a test fails.

Booting a lab costs one to two minutes under software emulation, so modules
that can work on the same guests share a lab: a module names it with
`SHARED_LAB = <a builder from tests/lab/shared.py>` and gets it from the
`shared_lab` fixture. The modules sharing a lab run one after the other
(collection keeps them together), and the lab is stopped after the last of
them, or as soon as a module that used it had a failing test: the next module
then boots a fresh one, and the failed lab's consoles' logs are kept."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


def _factory(workdir: Path, labs: list[Lab]) -> Callable[[], Lab]:
    """Makes labs under `workdir`, each kept in `labs` to be stopped."""
    def factory() -> Lab:
        lab = Lab(workdir / f"lab{len(labs)}")
        labs.append(lab)
        return lab
    return factory


def _lab_factory(name: str, failed: Callable[[], bool]) -> Iterator[Callable[[], Lab]]:
    workdir = _workdir(name)
    labs: list[Lab] = []
    yield _factory(workdir, labs)
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


@dataclass
class _Shared:
    value: Any
    labs: list[Lab]
    workdir: Path
    modules: set[str] = field(default_factory=set)


class SharedLabs:
    """The labs open now, by builder name."""

    def __init__(self) -> None:
        self.open: dict[str, _Shared] = {}

    def get(self, build: Callable[[Callable[[], Lab]], Any], module: str, *,
            fresh: bool = False) -> Any:
        """The lab `build` makes, booted once for the modules that share it.
        `fresh`: a lab no other module has used yet (guests as first booted)."""
        name = build.__name__
        shared = self.open.get(name)
        if shared is not None and fresh and shared.modules - {module}:
            self.close(name, failed=False)
            shared = None
        if shared is None:
            workdir = _workdir(f"{name}.from.{module}")
            labs: list[Lab] = []
            try:
                value = build(_factory(workdir, labs))
            except BaseException:
                _finish(labs, workdir, True)
                raise
            shared = self.open[name] = _Shared(value, labs, workdir)
        shared.modules.add(module)
        return shared.value

    def close(self, name: str, failed: bool) -> None:
        shared = self.open.pop(name, None)
        if shared is not None:
            _finish(shared.labs, shared.workdir, failed)


_SHARED = SharedLabs()


def _shared_name(item: pytest.Item | None) -> str | None:
    build = getattr(getattr(item, "module", None), "SHARED_LAB", None)
    return build.__name__ if build is not None else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules that share a lab run one after the other, where the first of
    them was; every other module keeps its place."""
    blocks: dict[object, list[pytest.Item]] = {}
    for item in items:
        key = _shared_name(item) or getattr(item, "module", None) or item.nodeid
        blocks.setdefault(key, []).append(item)
    items[:] = [item for block in blocks.values() for item in block]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    yield
    name = _shared_name(item)
    if name is None or name not in _SHARED.open:
        return
    failed = getattr(item.module, "keel_failed", False)
    next_module = getattr(nextitem, "module", None)
    if _shared_name(nextitem) != name or (failed and next_module is not item.module):
        _SHARED.close(name, failed)


@pytest.fixture(scope="module")
def shared_lab(request) -> Any:
    """The lab the module's SHARED_LAB builds, shared with the modules that
    name the same (see above)."""
    build = getattr(request.module, "SHARED_LAB", None)
    if build is None:
        raise pytest.UsageError(f"{request.module.__name__} uses shared_lab without SHARED_LAB")
    return _SHARED.get(build, request.module.__name__,
                       fresh=getattr(request.module, "SHARED_LAB_FRESH", False))


@pytest.fixture(scope="session", autouse=True)
def _close_shared_labs() -> Iterator[None]:
    yield
    for name in list(_SHARED.open):
        _SHARED.close(name, failed=False)
