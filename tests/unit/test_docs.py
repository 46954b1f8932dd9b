"""The README stays a front page and the pages of docs/ stay true to the tree.

- README.md is at most 200 lines, and links to every page of docs/.
- Every relative link of README.md and docs/*.md resolves: the file exists and,
  where the link names a heading, the heading does (GitHub's anchors).
- docs/design.md names every part of the keel package, and the layers it names
  are the ones tests/unit/test_layering.py enforces.
- docs/boot.md names every init script of the overlay.
- Every repository path, `make` target and `keel` command the pages give exists.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
README = TOP / "README.md"
DOCS = TOP / "docs"
PAGES = sorted(DOCS.glob("*.md"))
EVERY_PAGE = [README, *PAGES]
README_MAX_LINES = 200

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_BLOCK = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
# where a path in the repository starts
REPO_ROOTS = ("tui/", "tests/", "board/", "overlay/", "bench/", "buildroot-external/",
              ".ci/", "docs/")
# what the benchmarks write (not in the repository until they have run)
GENERATED = ("bench/results/",)
# targets the Makefile passes to Buildroot (docs/release-image.md says so)
PASSED_TO_BUILDROOT = {"linux-menuconfig", "busybox-rebuild", "keel-rebuild", "printvars"}


def rel(path: Path) -> str:
    return str(path.relative_to(TOP))


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces
    to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> set[str]:
    text = CODE_BLOCK.sub("", path.read_text())
    found: set[str] = set()
    for line in text.splitlines():
        if m := re.match(r"^#{1,6} (.+)$", line):
            base = anchor(m.group(1))
            name, n = base, 0
            while name in found:
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def links(path: Path) -> list[str]:
    return LINK.findall(CODE_BLOCK.sub("", path.read_text()))


def code(path: Path) -> list[str]:
    """The code of a page: its code blocks' lines and its code spans."""
    text = path.read_text()
    blocks = [line for block in CODE_BLOCK.findall(text) for line in block.splitlines()[1:-1]]
    return blocks + CODE_SPAN.findall(CODE_BLOCK.sub("", text))


def test_the_pages_are_there():
    assert README.exists() and len(PAGES) >= 10
    assert DOCS / "design.md" in PAGES


def test_the_readme_is_a_front_page():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, \
        f"README.md has {len(lines)} lines; at most {README_MAX_LINES}: put the rest in docs/"


def test_the_readme_links_to_every_page_of_docs():
    linked = {(README.parent / link.split("#")[0]).resolve() for link in links(README)
              if not re.match(r"^[a-z]+:", link)}
    assert [rel(p) for p in PAGES if p.resolve() not in linked] == []


@pytest.mark.parametrize("page", EVERY_PAGE, ids=rel)
def test_every_relative_link_resolves(page):
    broken = []
    for link in links(page):
        if re.match(r"^[a-z]+:", link):  # http:, https:, mailto:
            continue
        target, _, fragment = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(f"{link}: no such file")
        elif fragment and path.suffix == ".md" and fragment not in anchors(path):
            broken.append(f"{link}: no heading #{fragment} in {rel(path)}")
    assert broken == []


def test_the_anchors_are_github_s():
    assert anchor("First boot: the setup wizard") == "first-boot-the-setup-wizard"
    assert anchor("The bottleneck and the host's CPU") == "the-bottleneck-and-the-hosts-cpu"
    assert anchor("What a forward opens (threat model)") == "what-a-forward-opens-threat-model"


@pytest.mark.parametrize("page", EVERY_PAGE, ids=rel)
def test_every_repository_path_exists(page):
    """A path a page gives (`tests/lab/topology.py`, `overlay/etc/init.d`)
    exists; `module.Attribute` after a path names a module that does."""
    missing = []
    for span in code(page):
        for word in span.split():
            word = word.strip("(),;:'\"")
            if (not word.startswith(REPO_ROOTS) or word.startswith(GENERATED)
                    or re.search(r"[<>*]|\.\.\.", word)):
                continue
            path = TOP / word
            module = TOP / (word.rsplit(".", 1)[0] + ".py")
            if not (path.exists() or module.exists()):
                missing.append(word)
    assert missing == []


@cache
def make_targets() -> set[str]:
    text = (TOP / "Makefile").read_text()
    return set(re.findall(r"^([a-z][\w-]*):", text, re.M))


@pytest.mark.parametrize("page", EVERY_PAGE, ids=rel)
def test_every_make_target_exists(page):
    given = {m for span in code(page) for m in re.findall(r"(?:^|[\s;(])make ([a-z][\w-]*)", span)}
    assert given - make_targets() - PASSED_TO_BUILDROOT == set()


@cache
def keel_commands() -> set[str]:
    sys.path.insert(0, str(TOP / "tui"))
    from keel import cli

    return set(cli.COMMANDS) | set(cli.BUILT_IN)


@pytest.mark.parametrize("page", EVERY_PAGE, ids=rel)
def test_every_keel_command_exists(page):
    given = {m for span in code(page)
             for m in re.findall(r"(?:^|[;(|#]\s*|&&\s*)keel ([a-z][\w-]*)", span.strip())}
    assert given - keel_commands() == set()


def design() -> str:
    return (DOCS / "design.md").read_text()


def test_design_names_every_part_of_the_package():
    package = TOP / "tui" / "keel"
    parts = sorted(
        f"keel.{p.stem}" for p in package.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and p.name not in ("__init__.py", "__main__.py")))
    assert [p for p in parts if f"`{p}`" not in design()] == []


def test_design_names_the_layers_test_layering_enforces():
    sys.path.insert(0, str(TOP))
    from tests.unit import test_layering

    chains = re.findall(r"^\s+(\w+(?: -> [\w/]+)+)", test_layering.__doc__.replace(";", "\n"),
                        re.M)
    assert len(chains) == 2
    for chain in chains:
        assert chain.strip() in design()
    assert [layer for layer in test_layering.PURE if f"`{layer}`" not in design()] == []


def test_the_boot_page_names_every_init_script():
    scripts = sorted(p.name for p in (TOP / "overlay/etc/init.d").glob("S*"))
    boot = (DOCS / "boot.md").read_text()
    assert len(scripts) > 5
    assert [s for s in scripts if s not in boot] == []


def test_what_the_code_cites_of_docs_exists():
    """Comments, docstrings and the schema's descriptions cite docs/<page>.md:
    each page exists, and nothing cites a DESIGN.md outside the tree."""
    cited, stale = set(), []
    for root in ("tui", "tests", "board", "bench", "overlay", "buildroot-external", ".ci"):
        for path in (TOP / root).rglob("*"):
            if not path.is_file() or path.suffix in (".svg", ".pyc", ".json") \
                    or path.resolve() == Path(__file__).resolve():
                continue
            try:
                text = path.read_text()
            except (UnicodeDecodeError, OSError):
                continue
            cited |= set(re.findall(r"\bdocs/([\w-]+\.md)", text))
            if "DESIGN.md" in text:
                stale.append(rel(path))
    assert stale == []
    assert {"design.md", "lab.md", "cake.md"} <= cited
    assert sorted(page for page in cited if not (DOCS / page).exists()) == []


def test_the_hardware_page_names_every_driver_the_kernel_carries():
    """Each NIC, disk, VM and watchdog driver of the one list of kernel features
    (the module it builds as) is on docs/hardware.md: what it runs on."""
    sys.path.insert(0, str(TOP / "tui"))
    from keel import kernel_features as kf

    hardware = (DOCS / "hardware.md").read_text()
    drivers = [f.module for f in kf.FEATURES if f.module
               and (f.area in (kf.NIC, kf.VM) or f.symbol.endswith("_WDT")
                    or f.symbol in ("SP5100_TCO", "BLK_DEV_NVME", "SATA_AHCI", "USB_STORAGE"))]
    assert len(drivers) > 10
    assert [d for d in drivers if f"`{d}`" not in hardware] == []
