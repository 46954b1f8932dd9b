"""keel's config commands as the console runs them (`python -m keel.cli
apply --dry-run | apply --confirm | confirm | rollback`), through an
injectable runner: the tests run no real system."""

from __future__ import annotations

from pathlib import Path

from keel.apply import rates
from keel.apply.rates import KEEL, Run

PROPOSED = Path("/run/keel/proposed-settings.toml")


class ConfigActions:
    """keel's commands as the console's screens use them; each returns (ok,
    what keel said). `run` takes an argv and returns a CompletedProcess; by
    default keel.apply.rates' runner (the console's one starter of `keel
    apply`: this module starts no process of its own)."""

    def __init__(self, run: Run | None = None, proposed: Path = PROPOSED,
                 keel: tuple[str, ...] = KEEL) -> None:
        self.run: Run = run or rates._run
        self.proposed, self.keel = proposed, keel

    def _call(self, *args: str) -> tuple[bool, str]:
        try:
            proc = self.run([*self.keel, *args])
        except OSError as err:
            return False, f"cannot run keel: {err.strerror or err}"
        said = [s.strip() for s in (proc.stdout, proc.stderr) if s and s.strip()]
        return proc.returncode == 0, "\n".join(said) or f"exit {proc.returncode}"

    def propose(self, text: str) -> Path:
        """Write the proposed config where apply will read it (raises OSError)."""
        self.proposed.parent.mkdir(parents=True, exist_ok=True)
        self.proposed.write_text(text)
        return self.proposed

    def dry_run(self, path: Path) -> tuple[bool, str]:
        return self._call("apply", "--dry-run", str(path))

    def apply_confirm(self, path: Path, seconds: float) -> tuple[bool, str]:
        return self._call("apply", "--confirm", str(round(seconds)), str(path))

    def confirm(self) -> tuple[bool, str]:
        return self._call("confirm")

    def rollback(self, number: int | None = None) -> tuple[bool, str]:
        return self._call("rollback", *([] if number is None else [str(number)]))
