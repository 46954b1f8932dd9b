"""The pairing port on the hub's WAN: keel's whole nftables ruleset, loaded
again (atomically, `nft -f`) with one more rule while a code waits, and
again without it afterwards."""

from __future__ import annotations

from pathlib import Path

from keel.apply.probe import RUN_DIR
from keel.model import RouterModel
from keel.render.nft import render_ruleset
from keel.system.commands import CommandError, Runner


class PairingPort:
    def __init__(self, model: RouterModel, port: int, runner: Runner | None = None,
                 run_dir: Path = RUN_DIR) -> None:
        self.model, self.port = model, port
        self.runner = runner or Runner()
        self.path = run_dir / "ruleset-pairing.nft"
        self.is_open = False

    def _load(self, pairing_port: int | None) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(render_ruleset(self.model, pairing_port))
        self.runner.run(["nft", "-f", str(self.path)])

    def open(self) -> None:
        self._load(self.port)
        self.is_open = True

    def close(self) -> None:
        """Back to the ruleset `keel apply` loaded (the same text: its stamp holds)."""
        try:
            self._load(None)
        except CommandError:
            # keel's own ruleset failed to load back: flush the pairing rule at least
            self.runner.run(["nft", "flush", "ruleset"], check=False)
            raise
        finally:
            self.is_open = False
            self.path.unlink(missing_ok=True)
