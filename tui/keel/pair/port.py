"""The pairing port on the hub's WAN: one element of the set
`inet keel pairing` that keel's ruleset always has (keel.render.nft), added
with a kernel timeout so that it expires by itself even if `keel pair` is
killed (SIGKILL, a power cut), and deleted alone when pairing ends. The
rest of the ruleset is never touched: no reload, no flush."""

from __future__ import annotations

from keel.pair.errors import PairError
from keel.render import nft
from keel.system.commands import Runner

MARGIN_S = 15  # the element outlives the code's window by this much at most


class PairingPort:
    def __init__(self, port: int, window_s: float, runner: Runner | None = None) -> None:
        self.port = port
        # never longer than keel apply and keel doctor take for keel's own
        self.timeout_s = min(int(window_s) + MARGIN_S, nft.PAIRING_LONGEST_S)
        self.runner = runner or Runner()
        self.is_open = False

    def open(self) -> None:
        """Raises PairError (nothing opened) when keel's ruleset has no
        pairing set (not loaded by this keel: keel apply loads it)."""
        proc = self.runner.run(nft.pairing_open(self.port, self.timeout_s), check=False)
        if proc.returncode != 0:
            why = (proc.stderr or "").strip().splitlines()
            raise PairError(f"cannot open TCP {self.port} for pairing: keel's ruleset has no "
                            f"pairing set (run keel apply first; nft said: "
                            f"{why[0] if why else proc.returncode})")
        self.is_open = True

    def close(self) -> str:
        """The element deleted; what to say. Never raises: an element that
        cannot be deleted closes by itself at its timeout."""
        if not self.is_open:
            return f"TCP {self.port} closed"
        self.is_open = False
        try:
            proc = self.runner.run(nft.pairing_close(self.port), check=False)
        except Exception as err:  # nft missing, a timeout: the kernel's timeout closes it
            return (f"TCP {self.port} closes by itself within {self.timeout_s} s "
                    f"(nft: {type(err).__name__})")
        if proc.returncode == 0 or "No such file" in (proc.stderr or ""):
            # gone already: expired, or the ruleset was loaded again meanwhile
            return f"TCP {self.port} closed"
        return (f"TCP {self.port} closes by itself within {self.timeout_s} s (the kernel's "
                f"timeout; nft could not delete it now)")
