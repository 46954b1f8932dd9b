"""The lab's serial-console framing: a kernel message printed in the middle of
a marker's line (as CI saw: a virtio_net TX watchdog while four guests booted)
must not hide the marker, and the command's exit code still comes through."""

from __future__ import annotations

import sys
import textwrap

import pexpect

from tests.lab.console import Console

# a fake guest shell: reads one command line, answers with the bytes CI's
# console showed (the kernel's line right after BEGIN's text, before its \n)
FAKE = textwrap.dedent(r'''
    import re, sys
    line = sys.stdin.readline()
    tag = re.search(r'EGIN-(\S+?)"', line).group(1)
    out = sys.stdout
    out.write("BEGIN-" + tag + "[   79.076653] virtio_net virtio1 eth0: NETDEV WATCHDOG: "
              "CPU: 0: transmit queue 0 timed out 5988 ms\r\n")
    out.write("[   79.092489] virtio_net virtio1 eth0: TX timeout on queue: 0\r\n\r\n")
    out.write("hello\r\n")
    out.write("\r\nEND-" + tag + " 3[   80.1] another kernel line\r\n")
    out.flush()
''')


def test_a_kernel_message_inside_the_marker_lines_is_survived():
    child = pexpect.spawn(sys.executable, ["-c", FAKE], echo=False, timeout=10)
    try:
        result = Console(child, "fake", lambda seconds: seconds).run("echo hello", timeout=10)
    finally:
        child.close(force=True)
    assert result.rc == 3
    assert "hello" in result.output
