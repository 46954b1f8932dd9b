"""A shell on a guest's serial console, as Buildroot's support/testing does it:
log in, quiet the kernel, then run commands and read their output and exit code.

Each command is framed by two markers the guest prints itself. The echoed
command line spells them split ("B""EGIN"), so only the guest's real output
matches: no dependence on terminal width, line editing or the prompt.
"""

from __future__ import annotations

import base64
import itertools
import re
import shlex
from dataclasses import dataclass

import pexpect

from tests.lab.paths import EmulatorCrash, LabError

# QEMU's own assertion failures, e.g. seen once under TCG with -smp 2:
# "qemu-system-x86_64: system/physmem.c:2678: iotlb_to_section: Assertion ... failed."
QEMU_ASSERTION = re.compile(r"qemu-system-\S+: \S+: \S+: Assertion .* failed")

_counter = itertools.count(1)


@dataclass(frozen=True)
class Result:
    cmd: str
    output: str
    rc: int

    def check(self) -> Result:
        if self.rc != 0:
            raise LabError(f"`{self.cmd}` exited {self.rc}:\n{self.output}")
        return self


class Console:
    def __init__(self, child: pexpect.spawn, name: str, scale) -> None:
        self.child = child
        self.name = name
        self.scale = scale  # seconds at KVM speed -> seconds here

    def login(self, timeout: float = 30, user: str = "root") -> None:
        """Wait for the getty's login prompt, log in, set up the shell."""
        self.expect(r"login: ", timeout)
        self.child.sendline(user)
        # a bound on a hang (scaled): a pairing lab's guest booting beside two
        # other lanes, the host's load average 12, showed no prompt in 120 s
        self.expect(r"[#$] ", 60)
        self.set_up_shell()

    def set_up_shell(self) -> None:
        # Kernel messages would interleave with command output.
        self.run("dmesg -n 1; export PS1='lab# ' TERM=dumb; stty columns 2000 2>/dev/null; true",
                 timeout=60).check()

    def login_with_password(self, password: str, timeout: float = 60,
                            user: str = "root") -> bool:
        """At the getty's login prompt, log in as a user would, with a
        password: True with a shell (set up for run()), False when login
        said "Login incorrect". The password never reaches a message."""
        self.expect(r"login: ", timeout)
        self.child.sendline(user)
        self.expect(r"Password: ", 30)
        self.child.sendline(password)
        # BusyBox's login waits about 3 s after a wrong one; hashing takes
        # its time under emulation
        got = self.expect(r"Login incorrect|[#$] ", 60)
        if got.group(0) == b"Login incorrect":
            return False
        self.set_up_shell()
        return True

    def expect(self, pattern: str, timeout: float) -> re.Match:
        try:
            self.child.expect(pattern, timeout=self.scale(timeout))
        except pexpect.TIMEOUT:
            tail = (self.child.before or b"")[-600:].decode(errors="replace")
            raise LabError(f"{self.name}: no {pattern!r} within {self.scale(timeout):.0f} s; "
                           f"console ended with:\n{tail}") from None
        except pexpect.EOF:
            tail = (self.child.before or b"")[-600:].decode(errors="replace")
            if crash := QEMU_ASSERTION.search(tail):
                raise EmulatorCrash(f"{self.name}: QEMU crashed while waiting for {pattern!r}: "
                                    f"{crash.group(0)}") from None
            raise LabError(f"{self.name}: QEMU exited while waiting for {pattern!r}; "
                           f"console ended with:\n{tail}") from None
        return self.child.match

    def _send(self, cmd: str, timeout: float) -> str:
        """Type `cmd` framed by BEGIN/END markers (the END line carries $?)."""
        tag = f"{next(_counter)}x{id(self) % 10000}"
        self.child.sendline(f"printf '%s\\n' \"B\"\"EGIN-{tag}\"; {cmd}; "
                            f"printf '\\n%s %d\\n' \"E\"\"ND-{tag}\" $?")
        # a kernel message (printed before `dmesg -n 1`, or one of level <= 1)
        # may land inside a marker's line: the rest of that line is not output
        self.expect(rf"BEGIN-{tag}[^\n]*\n", timeout)
        return tag

    def _result(self, cmd: str, tag: str, timeout: float, before: str = "") -> Result:
        match = self.expect(rf"\r*\nEND-{tag} (\d+)[^\n]*\n", timeout)
        output = before + self.child.before.decode(errors="replace")
        return Result(cmd=cmd, output=re.sub(r"\r+\n", "\n", output).strip("\n"),
                      rc=int(match.group(1)))

    def begin(self, cmd: str, timeout: float = 30) -> str:
        """Start `cmd` and return at once (end() waits for it): several
        guests' commands then run side by side."""
        return self._send(cmd, timeout)

    def end(self, cmd: str, tag: str, timeout: float = 30) -> Result:
        return self._result(cmd, tag, timeout)

    def run(self, cmd: str, timeout: float = 30) -> Result:
        """Run `cmd` in the guest's shell; its output (CRs removed) and exit code."""
        return self._result(cmd, self._send(cmd, timeout), timeout)

    def run_answering(self, cmd: str, prompt: str, answer: str, timeout: float = 30) -> Result:
        """Run `cmd`, which asks a question on the tty (like a password, not
        echoed): wait for `prompt`, type `answer`, then wait for the end."""
        tag = self._send(cmd, timeout)
        self.expect(re.escape(prompt), timeout)
        before = self.child.before.decode(errors="replace") + prompt
        self.child.sendline(answer)
        return self._result(cmd, tag, timeout, before)

    def check(self, cmd: str, timeout: float = 30) -> str:
        """Run `cmd`; its output, or LabError if it fails."""
        return self.run(cmd, timeout).check().output

    def write_file(self, path: str, content: str) -> None:
        """Write a file in the guest, through the tty as base64 in short lines
        (a tty's line is at most 4096 bytes)."""
        data = base64.b64encode(content.encode()).decode()
        tmp = shlex.quote(path + ".b64")
        self.check(f": > {tmp}")
        for i in range(0, len(data), 1000):
            self.check(f"echo {data[i:i + 1000]} >> {tmp}")
        self.check(f"base64 -d {tmp} > {shlex.quote(path)} && rm {tmp}")
