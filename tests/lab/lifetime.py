"""How long a lab lives, and where its consoles' logs go: labs for one test
or one module (tests/conftest.py's fixtures), and labs that several modules
share.

Starting a lab costs half a minute to two minutes under software emulation,
so modules that can work on the same guests share one: a module names a
shared lab of tests/lab/labs.py with `pytest.mark.lab(name)` (`fresh=True`
for guests no other module has set up: tests/lab/marks.py) and gets it from
the `shared_lab` fixture. Collection keeps the modules sharing a lab together;
the lab is stopped after the last of them, or after a module with a failing
test: the next module then boots a fresh one, and the failed lab's consoles'
logs are kept under out/lab-runs/."""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.lab import paths
from tests.lab.lab import Lab
from tests.lab.marks import traits

MakeLab = Callable[[], Lab]
Build = Callable[[MakeLab], Any]


def workdir(name: str) -> Path:
    """An empty directory under out/lab-runs/ for the labs of `name`."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")
    path = paths.RUNS / safe
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def factory(where: Path, labs: list[Lab]) -> MakeLab:
    """Makes labs under `where`, each kept in `labs` to be stopped."""
    def make() -> Lab:
        lab = Lab(where / f"lab{len(labs)}")
        labs.append(lab)
        return lab
    return make


def finish(labs: list[Lab], where: Path, failed: bool) -> None:
    """Stop every guest; keep the consoles' logs (not the disks) if `failed`."""
    for lab in labs:
        lab.close()
    if failed or os.environ.get("KEEL_KEEP_LOGS") == "1":
        for disk in where.rglob("*.qcow2"):
            disk.unlink()
        print(f"\nconsole logs kept in {where}")
    else:
        shutil.rmtree(where, ignore_errors=True)


@dataclass
class _Shared:
    value: Any
    labs: list[Lab]
    where: Path
    modules: set[str] = field(default_factory=set)


class _Early(threading.Thread):
    """A shared lab built in the background (while the host tests run)."""

    def __init__(self, name: str, build: Build, module: str) -> None:
        super().__init__(name=f"early-{name}", daemon=True)
        self.build, self.module = build, module
        self.where = workdir(f"{name}.from.{module}")
        self.labs: list[Lab] = []
        self.value: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.value = self.build(factory(self.where, self.labs))
        except BaseException as err:  # raised again by the module that asks for it
            self.error = err


class SharedLabs:
    """The shared labs open now, by builder name."""

    def __init__(self) -> None:
        self.open: dict[str, _Shared] = {}
        self.early: dict[str, _Early] = {}

    def start_early(self, name: str, build: Build, module: str) -> None:
        """Boot and set up `build`'s lab in the background now, for `module`,
        the first to ask for it (guests boot while the host tests run)."""
        early = self.early[name] = _Early(name, build, module)
        early.start()

    def join_early(self) -> None:
        """Wait until every lab booting in the background is up (or failed:
        the module asking for it raises the error)."""
        for early in list(self.early.values()):
            early.join()

    def _built(self, name: str, build: Build, module: str) -> _Shared:
        early = self.early.pop(name, None)
        if early is not None and early.module == module:
            early.join()
            if early.error is not None:
                finish(early.labs, early.where, True)
                raise early.error
            return _Shared(early.value, early.labs, early.where)
        if early is not None:  # asked for by another module first: not used
            early.join()
            finish(early.labs, early.where, False)
        where = workdir(f"{name}.from.{module}")
        labs: list[Lab] = []
        try:
            value = build(factory(where, labs))
        except BaseException:
            finish(labs, where, True)
            raise
        return _Shared(value, labs, where)

    def get(self, name: str, build: Build, module: str, *, fresh: bool = False) -> Any:
        """What `build` makes, built once for the modules that share it.
        `fresh`: a lab no other module has used yet."""
        shared = self.open.get(name)
        if shared is not None and fresh and shared.modules - {module}:
            self.close(name, failed=False)
            shared = None
        if shared is None:
            shared = self.open[name] = self._built(name, build, module)
        shared.modules.add(module)
        return shared.value

    def close(self, name: str, failed: bool) -> None:
        shared = self.open.pop(name, None)
        if shared is not None:
            finish(shared.labs, shared.where, failed)

    def close_all(self) -> None:
        for name in list(self.open):
            self.close(name, failed=False)
        for early in self.early.values():  # built, never asked for
            early.join()
            finish(early.labs, early.where, False)
        self.early.clear()


def shared_name(module: ModuleType | None) -> str | None:
    """The name of the shared lab `module` names with its lab marker, if any."""
    return traits(module).shared


def grouped(items: Iterable[Any]) -> list[Any]:
    """Test items with the modules that share a lab one after the other, where
    the first of them was; every other module keeps its place. Within a
    shared lab, the modules that ask for fresh guests (`fresh=True`) come
    first, so the lab is booted once for all of them."""
    blocks: dict[object, list[Any]] = {}
    for item in items:
        module = getattr(item, "module", None)
        key = shared_name(module) or module or item.nodeid
        blocks.setdefault(key, []).append(item)

    def fresh_first(block: list[Any]) -> list[Any]:
        return sorted(block, key=lambda i: not traits(getattr(i, "module", None)).fresh)

    return [item for block in blocks.values() for item in fresh_first(block)]


def ends_after(module: ModuleType, next_module: ModuleType | None, failed: bool) -> bool:
    """Whether the lab `module` shares is stopped once its test is done: the
    next test shares another lab (or none, or there is none), or `module`
    had a failing test and the next test is another module's."""
    if shared_name(next_module) != shared_name(module):
        return True
    return failed and next_module is not module
