"""The layers of the keel package (docs/design.md, "Layers of the keel package"),
held by walking every module's imports (its AST: top-level and function-level
imports alike), and by running `keel --help` in a fresh interpreter.

    config -> model -> render -> apply;  system -> parse -> metrics/selftest -> ui

- Textual and Rich only inside keel.ui.
- keel.ui imported only by keel.cli (and keel.ui itself).
- config, model, render and parse touch no system: no subprocess, no
  keel.system, and nothing above them.
- keel.system is the one reader of the running system: no module outside it
  names a path under /proc, /sys or /dev (keel.tuning writes the sysfs files
  it tunes), and only the modules that start processes of their own (a load,
  a shell, a child keel, `keel apply`) import subprocess.
- `keel --help` loads no Textual; a sub-command that cannot be imported fails
  loudly (keel.cli imports them without catching ImportError); a command line
  loads its own command's module and no other's.
- No import circle anywhere in keel. Every import counts, top-level,
  function-level and under `if TYPE_CHECKING:` alike (none is excluded). An
  import names the deepest keel module it reaches: `from keel.model import
  router` is an import of keel.model.router, `from keel.model import
  model_from_config` one of the package keel.model (its __init__). That a
  submodule's import runs its package's __init__ first is Python's, not an
  edge: a package re-exporting its submodules is no circle with them.
- Inside keel.ui (docs/design.md, "The console UI in layers"): the widgets
  import no screen, no dialog and not the app; the dialogs no screen and not
  the app; only keel.ui.cli imports the app (screens reach it through
  keel.ui.app_protocol); and the modules without Textual (models, panels,
  formatting, the self-test's view) reach no Textual, not even through
  another keel module, so they are unit-tested without an app."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

TUI = Path(__file__).resolve().parents[2] / "tui"
PACKAGE = TUI / "keel"

# the pure layers: what they may not import (prefix match on module names)
PURE = ("keel.config", "keel.model", "keel.render", "keel.parse",
        # pairing's protocol and decisions: no system, so every fault is unit-tested
        "keel.pair.code", "keel.pair.messages", "keel.pair.protocol", "keel.pair.session",
        "keel.pair.settle",
        # the upgrade's boot state and slot view: parsers of what GRUB and RAUC keep
        "keel.upgrade.grubenv", "keel.upgrade.slots",
        # adaptive CAKE's controller and its probes on the wire
        "keel.adaptive.controller", "keel.adaptive.wire", "keel.adaptive.target",
        # the fleet channel's messages and what it changes in a config
        "keel.fleet.wire", "keel.fleet.learn")
TOUCHES_THE_SYSTEM = ("subprocess", "keel.system", "keel.apply", "keel.metrics",
                      "keel.selftest", "keel.doctor", "keel.tuning", "keel.state",
                      "keel.wireguard", "keel.ui", "textual", "rich")


def module_name(path: Path) -> str:
    parts = path.relative_to(TUI).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def imports() -> dict[str, set[str]]:
    """Every keel module -> the modules it imports (absolute names)."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                names.add(prefix)
                names.update(f"{prefix}.{alias.name}" for alias in node.names)
        found[name] = names
    return found


@cache
def edges() -> dict[str, set[str]]:
    """Every keel module -> the keel modules it imports, each the deepest
    module the import names (see the docstring: no edge to a package for
    importing one of its submodules)."""
    modules = set(imports())

    def deepest(name: str) -> str | None:
        parts = name.split(".")
        while parts and ".".join(parts) not in modules:
            parts.pop()
        return ".".join(parts) or None

    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(t for a in node.names if (t := deepest(a.name)))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                targets.update(t for a in node.names if (t := deepest(f"{prefix}.{a.name}")))
        found[name] = targets - {name}
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's,
    iterative): each is an import circle, its modules sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def within(name: str, prefixes: tuple[str, ...] | str) -> bool:
    prefixes = (prefixes,) if isinstance(prefixes, str) else prefixes
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def offenders(importer_ok, imported: tuple[str, ...]) -> list[str]:
    return sorted(f"{mod} imports {dep}" for mod, deps in imports().items()
                  if not importer_ok(mod) for dep in deps if within(dep, imported))


def test_the_walk_sees_the_package():
    assert len(imports()) > 50
    assert "keel.ui.app" in imports() and "keel.config.load" in imports()


def test_the_circle_finder_finds_circles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "d"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_edges_hold_every_kind_of_import():
    found = edges()
    assert "keel.ui.screens.setup" in found["keel.ui.app"]  # function-level
    assert "keel.model.router" in found["keel.model.from_config"]  # from a package import a module
    assert "keel.model" not in found["keel.model.from_config"]
    assert "keel.model.reading" in found["keel.ui.app"]


def test_no_import_circle_in_keel():
    """An import circle ties its modules into one: none can be read, tested
    or loaded without the others (and Python's partial modules make the
    order of imports matter)."""
    assert circles(edges()) == []


UI = "keel.ui"
WIDGETS = "keel.ui.widgets"
SCREENS = "keel.ui.screens"
DIALOGS = "keel.ui.dialogs"
APP = "keel.ui.app"
# keel.ui's modules without Textual: what the screens draw and decide, tested without an app
NO_TEXTUAL = ("keel.ui.app_protocol", "keel.ui.bars", "keel.ui.cable_watch",
              "keel.ui.config_actions", "keel.ui.fmt", "keel.ui.history_view",
              "keel.ui.pair_hook", "keel.ui.panels", "keel.ui.profile", "keel.ui.selftest",
              "keel.ui.selftest_latency", "keel.ui.selftest_runner", "keel.ui.settings_model",
              "keel.ui.setup_model", "keel.ui.setup_ports", "keel.ui.shell", "keel.ui.signals")


def ui_offenders(importers: str, imported: tuple[str, ...]) -> list[str]:
    return sorted(f"{mod} imports {dep}" for mod, deps in edges().items()
                  if within(mod, importers) for dep in deps if within(dep, imported))


def test_the_ui_widgets_import_no_screens_dialogs_or_app():
    assert ui_offenders(WIDGETS, (SCREENS, DIALOGS, APP)) == []


def test_the_ui_dialogs_import_no_screens_or_app():
    assert ui_offenders(DIALOGS, (SCREENS, APP)) == []


def test_only_the_ui_command_imports_the_app():
    """The screens reach the app through keel.ui.app_protocol."""
    assert [m for m, deps in edges().items() if APP in deps] == ["keel.ui.cli"]


def test_the_ui_modules_without_textual_reach_none():
    assert set(NO_TEXTUAL) <= set(edges())  # the list names no module that is gone
    reached = set(NO_TEXTUAL)
    todo = list(NO_TEXTUAL)
    while todo:
        for dep in edges()[todo.pop()] - reached:
            reached.add(dep)
            todo.append(dep)
    assert offenders(lambda mod: mod not in reached, ("textual",)) == []


def test_textual_and_rich_only_inside_the_ui():
    assert offenders(lambda mod: within(mod, "keel.ui"), ("textual", "rich")) == []


def test_the_ui_is_imported_only_by_the_command_line():
    assert offenders(lambda mod: within(mod, "keel.ui") or mod == "keel.cli",
                     ("keel.ui",)) == []


@pytest.mark.parametrize("layer", PURE)
def test_the_pure_layers_touch_no_system(layer):
    assert offenders(lambda mod: not within(mod, layer), TOUCHES_THE_SYSTEM) == []


def test_keel_help_loads_no_textual():
    code = ("import sys\nfrom keel import cli\n"
            "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'rich'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": str(TUI)}, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def loaded_commands(*argv: str) -> list[str]:
    """The sub-command modules `keel ARGV` loads (help and errors end it)."""
    code = ("import sys\nfrom keel import cli\n"
            f"try:\n    cli.main({list(argv)!r})\nexcept SystemExit:\n    pass\n"
            "print(sorted({m for m in sys.modules if m.endswith('.cli')} - {'keel.cli'}))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(TUI)}, check=True)
    return ast.literal_eval(proc.stdout.strip().splitlines()[-1])


def every_command_module() -> list[str]:
    sys.path.insert(0, str(TUI))
    from keel.cli import COMMANDS

    return sorted({module for module, _ in COMMANDS.values()})


EVERY_COMMAND_MODULE = every_command_module()


@pytest.mark.parametrize(("argv", "loads"), [
    (("access", "--help"), ["keel.access.cli"]),
    (("stall-meter", "--help"), ["keel.stall.cli"]),
    (("upgrade", "status", "--help"), ["keel.upgrade.cli"]),
    (("peers", "--help"), ["keel.pair.cli"]),
    (("--version",), []),
    (("show", "--help"), []),
    ((), EVERY_COMMAND_MODULE),  # the help: every command
    (("--help",), EVERY_COMMAND_MODULE),
    (("--help", "doctor"), EVERY_COMMAND_MODULE),
    (("no-such-command",), EVERY_COMMAND_MODULE),  # the error lists them all
])
def test_a_command_line_loads_its_own_commands_module_alone(argv, loads):
    """Each sub-command's module costs a second or more of CPU under emulation
    on every `keel` run (the boot's stall meter and upgrade gate, the console
    UI, every command a user types on a slow VPS): a command line loads its
    command's alone."""
    assert loaded_commands(*argv) == loads


def test_every_command_is_registered_by_the_module_named_for_it():
    """COMMANDS' names are what their modules register: each module, given a
    parser, adds the commands that name it, and no others."""
    import argparse

    from keel import cli

    for module in EVERY_COMMAND_MODULE:
        sub = argparse.ArgumentParser().add_subparsers()
        add = {f for m, f in cli.COMMANDS.values() if m == module}
        assert len(add) == 1
        getattr(__import__(module, fromlist=["x"]), add.pop())(sub)
        assert set(sub.choices) == {n for n, (m, _) in cli.COMMANDS.items() if m == module}
    assert not set(cli.BUILT_IN) & set(cli.COMMANDS)


def test_a_broken_sub_command_fails_loudly(tmp_path):
    """A sub-command module that cannot be imported stops `keel` with the
    ImportError, rather than vanishing from the command line."""
    shadow = tmp_path / "keel" / "doctor"
    shadow.mkdir(parents=True)
    (tmp_path / "keel" / "__init__.py").write_text(
        f"__path__ = [{str(tmp_path / 'keel')!r}, {str(PACKAGE)!r}]\n"
        "__version__ = 'test'\n")
    (shadow / "__init__.py").write_text("")
    (shadow / "cli.py").write_text("import a_module_that_does_not_exist\n")
    proc = subprocess.run([sys.executable, "-m", "keel.cli", "doctor"], capture_output=True,
                          text=True, env={"PYTHONPATH": f"{tmp_path}:{TUI}"}, check=False)
    assert proc.returncode != 0
    assert "a_module_that_does_not_exist" in proc.stderr
    assert "invalid choice" not in proc.stderr


SYSTEM_PATH = re.compile(r"^/(proc|sys|dev)(/[\w.:-]*)*$")
# who may name such a path outside keel.system, and why
WRITES_THE_SYSTEM = ("keel.tuning",)  # the governor, RPS/XPS masks, the PM QoS request
# who may start processes outside keel.system, and why
STARTS_PROCESSES = {
    "keel.selftest.procs": "the self-tests' iperf3 load",
    "keel.ui.shell": "the console's root shell",
    "keel.ui.selftest_runner": "`keel selftest --events` as a child",
    "keel.apply.confirmed": "`keel apply --confirm` from the console and keel pair",
    "keel.apply.command": "`keel apply` re-run by the boot and rollback paths",
    "keel.upgrade.system": "rauc, the updater (its D-Bus service writes the slots)",
    "keel.fleet.background": "`keel fleet sync` in the background after pairing and "
                             "unpairing, and a staged upgrade started from the console",
}


@cache
def path_constants() -> dict[str, set[str]]:
    """Every keel module -> the string constants in it that are system paths
    (docstrings are not constants of the code, and messages do not match)."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                and n.body and isinstance(n.body[0], ast.Expr)
                and isinstance(n.body[0].value, ast.Constant)}
        found[module_name(path)] = {
            n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
            and SYSTEM_PATH.match(n.value)}
    return found


def test_only_keel_system_reads_proc_sys_and_dev():
    readers = sorted(f"{mod}: {sorted(paths)}" for mod, paths in path_constants().items()
                     if paths and not within(mod, ("keel.system", *WRITES_THE_SYSTEM)))
    assert readers == []
    assert "/proc/stat" in path_constants()["keel.system.cpu_times"]  # the walk sees them


def test_only_process_starters_import_subprocess():
    starters = {mod for mod, deps in imports().items() if "subprocess" in deps}
    assert starters - set(STARTS_PROCESSES) - {m for m in starters if within(m, "keel.system")} \
        == set()
    assert set(STARTS_PROCESSES) <= starters  # the list names no module that no longer does
