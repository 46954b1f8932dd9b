"""What a lab test module's markers say about how it is run: the only source
of its lab, lane and scheduling (tests/lab/lanes.py, tests/lab/lifetime.py).

    pytestmark = [pytest.mark.lab("bloated", fresh=True), pytest.mark.measures]

- `lab(name, fresh=False)`: the lab of tests/lab/labs.py the module runs on
  (its lane is the lab's). `fresh`: the shared lab's guests as first started,
  before any other module set them up.
- `measures`: the module's verdicts measure the host's spare CPU (rates,
  latency under load, CPU cost): its lab's other modules run before it.
- `host_alone(first=(...), saturates=False)`: it needs the host to itself
  (adaptive CAKE, whose controller rightly ignores the seconds in which its
  own CPU stalled): once its lab is up and the module fixtures named in
  `first` are set up, it waits until the side and main lanes take only idle
  CPU time (or have ended). `saturates`: its guests keep every host core busy,
  which would leave the lanes stepped aside no CPU at all for a minute (their
  guests' 30 s watchdogs would reset them): it waits until they have ended.
  Implies `measures`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.lab import labs
from tests.lab.paths import LabError

MARKERS = (
    "lab(name, fresh=False): the lab of tests/lab/labs.py this module runs on",
    "measures: the module's verdicts measure the host's spare CPU (the quiet lane, last)",
    "host_alone(first=(), saturates=False): the module needs the host to itself "
    "(the other lanes stepped aside, or ended)",
)


@dataclass(frozen=True)
class Traits:
    """A module's markers, read: `lab` is None for a module with no lab."""

    lab: labs.Topology | None = None
    fresh: bool = False
    measures: bool = False
    alone: bool = False
    first: tuple[str, ...] = ()
    saturates: bool = False

    @property
    def shared(self) -> str | None:
        """The name of the shared lab the module uses, if it uses one."""
        return self.lab.name if self.lab is not None and self.lab.shared else None


NONE = Traits()


def _marks(module: Any) -> list[pytest.Mark]:
    marks = getattr(module, "pytestmark", [])
    marks = marks if isinstance(marks, list) else [marks]
    return [getattr(m, "mark", m) for m in marks]  # MarkDecorator or Mark


def traits(module: Any) -> Traits:
    """The traits `module` (a test module, or None) declares by its
    `pytestmark`; an error naming the module for a marker that is wrong."""
    if module is None:
        return NONE
    where = getattr(module, "__name__", repr(module))
    found = {m.name: m for m in _marks(module)}
    lab = found.get("lab")
    topology, fresh = None, False
    if lab is not None:
        if len(lab.args) != 1 or set(lab.kwargs) - {"fresh"}:
            raise LabError(f"{where}: pytest.mark.lab takes a lab's name and fresh=, "
                           f"not {lab.args} {lab.kwargs}")
        try:
            topology = labs.named(lab.args[0])
        except LabError as err:
            raise LabError(f"{where}: {err}") from None
        fresh = bool(lab.kwargs.get("fresh", False))
        if fresh and not topology.shared:
            raise LabError(f"{where}: fresh= is for a shared lab; {topology.name!r} is not")
    alone = found.get("host_alone")
    first: tuple[str, ...] = ()
    saturates = False
    if alone is not None:
        first = tuple(alone.kwargs.get("first", ()))
        saturates = bool(alone.kwargs.get("saturates", False))
        if alone.args or set(alone.kwargs) - {"first", "saturates"}:
            raise LabError(f"{where}: pytest.mark.host_alone takes first=(fixture names) "
                           "and saturates= only")
    measures = "measures" in found or alone is not None
    if measures and (topology is None or topology.lane != "quiet"):
        on = f"{topology.name!r} (the {topology.lane} lane)" if topology else "no lab"
        raise LabError(f"{where}: a module that measures the host runs on a lab of the quiet "
                       f"lane, not on {on}")
    return Traits(topology, fresh, measures, alone is not None, first, saturates)
