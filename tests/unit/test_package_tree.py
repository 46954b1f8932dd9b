"""The keel package ships whole: the wheel (tui/pyproject.toml's
`packages.find`, which the dev image and the Buildroot package both build)
finds only directories with an __init__.py, so every directory of the
package that holds Python has one, and the console's stylesheet is package
data."""

from __future__ import annotations

import tomllib
from pathlib import Path

TUI = Path(__file__).resolve().parents[2] / "tui"


def test_every_directory_with_python_is_a_package():
    missing = sorted(str(d.relative_to(TUI)) for d in (TUI / "keel").rglob("*")
                     if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py"))
                     and not (d / "__init__.py").exists())
    assert missing == []


def test_the_stylesheets_are_package_data():
    data = tomllib.loads((TUI / "pyproject.toml").read_text())["tool"]["setuptools"]
    globs = data["package-data"]["keel"]
    sheets = {str(p.relative_to(TUI / "keel")) for p in (TUI / "keel").rglob("*.tcss")}
    assert sheets
    assert all(any(Path(sheet).match(g) for g in globs) for sheet in sheets)
    assert data["packages"]["find"]["include"] == ["keel*"]
