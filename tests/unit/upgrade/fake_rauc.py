"""A fake RAUC command line on PATH for the install's host tests: `rauc`
(info, mount, install), `umount`, `modprobe` and `dbus-send`, each logging
its argv to calls.log; what they answer is conf.json (FakeRauc.set)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

RAUC = r'''#!PYTHON
import json, os, sys
d = os.environ["FAKE_RAUC"]
with open(os.path.join(d, "calls.log"), "a") as log:
    log.write(" ".join(["rauc", *sys.argv[1:]]) + "\n")
conf = json.load(open(os.path.join(d, "conf.json")))
cmd = sys.argv[1]
if cmd == "info":
    if conf.get("info_error"):
        print(conf["info_error"], file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"compatible": conf.get("compatible", "keel-x86_64"),
                      "version": conf["version"]}))
elif cmd == "mount":
    print("rauc-Message: 00:00:00.000: Mounting bundle", file=sys.stderr)
    # RAUC 1.13's words, as the upgrade lab saw them
    print(f"Mounted bundle at {conf['mount']}. Use 'umount {conf['mount']}' to unmount.")
elif cmd == "install":
    for line in conf.get("install_lines", []):
        print(line, flush=True)
    sys.exit(conf.get("install_rc", 0))
'''
LOGGER = r'''#!PYTHON
import os, sys
with open(os.path.join(os.environ["FAKE_RAUC"], "calls.log"), "a") as log:
    log.write(" ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]]) + "\n")
sys.exit(int(os.environ.get("FAKE_RC_" + os.path.basename(sys.argv[0]).replace("-", "_"), 0)))
'''


class FakeRauc:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.mount = root / "mnt" / "bundle"
        self.mount.mkdir(parents=True)
        self.conf: dict = {"version": "0.2.0", "mount": str(self.mount)}
        self.write()

    def write(self) -> None:
        (self.root / "conf.json").write_text(json.dumps(self.conf))

    def set(self, **kwargs) -> None:
        self.conf.update(kwargs)
        self.write()

    def payload(self, images: dict[str, bytes], sizes: dict[str, int] | None = None,
                digests: dict[str, str] | None = None) -> int:
        """The mounted bundle: its images and a manifest naming their size and
        sha256 (or the ones given: a manifest that does not match)."""
        manifest = "[update]\ncompatible=keel-x86_64\nversion=0.2.0\n\n[bundle]\nformat=verity\n"
        for name, data in images.items():
            (self.mount / name).write_bytes(data)
            size = (sizes or {}).get(name, len(data))
            digest = (digests or {}).get(name, hashlib.sha256(data).hexdigest())
            manifest += (f"\n[image.{name.split('.')[0]}]\nfilename={name}\nsize={size}\n"
                         f"sha256={digest}\n")
        (self.mount / "manifest.raucm").write_text(manifest)
        return sum(len(d) for d in images.values())

    def calls(self) -> list[str]:
        log = self.root / "calls.log"
        return log.read_text().splitlines() if log.exists() else []

    def installs(self) -> list[str]:
        return [c for c in self.calls() if c.startswith("rauc install")]


@pytest.fixture
def fake_rauc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeRauc:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("rauc", RAUC), ("umount", LOGGER), ("modprobe", LOGGER),
                       ("dbus-send", LOGGER)):
        script = bin_dir / name
        script.write_text(text.replace("PYTHON", sys.executable, 1))
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_RAUC", str(tmp_path))
    monkeypatch.setenv("FAKE_RC_dbus_send", "1")  # RAUC's service: no LastError
    return FakeRauc(tmp_path)
