"""`keel peers`' table: a peer's name and endpoint came from the peer, so
every cell is escaped for the terminal (keel.shown)."""

from __future__ import annotations

from keel.pair.peers import PeerRow, table


def test_cells_are_escaped():
    rows = [PeerRow("edge\x1b[2J", "10.77.0.2", "198.51.100.2:51820\r\n\x9b31m", 5.0,
                    ("192.168.77.0/24",), "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg=")]
    lines = table(rows)
    assert len(lines) == 2
    assert "edge\\x1b[2J" in lines[1] and "51820\\x0d\\x0a\\x9b31m" in lines[1]
    assert all(ch.isprintable() for line in lines for ch in line)


def test_plain_rows_are_unchanged():
    rows = [PeerRow("edge-a", "10.77.0.2", "-", None, (), "x")]
    assert table(rows)[1].split() == ["edge-a", "10.77.0.2", "-", "never", "-"]
