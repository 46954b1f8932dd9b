"""Big letters for the grade and digits for the pairing code: '#' glyphs on the
console, half blocks elsewhere."""

from __future__ import annotations

FONT: dict[str, tuple[str, ...]] = {
    "A": (" ### ", "#   #", "#####", "#   #", "#   #"),
    "B": ("#### ", "#   #", "#### ", "#   #", "#### "),
    "C": (" ####", "#    ", "#    ", "#    ", " ####"),
    "D": ("#### ", "#   #", "#   #", "#   #", "#### "),
    "E": ("#####", "#    ", "#### ", "#    ", "#####"),
    "F": ("#####", "#    ", "#### ", "#    ", "#    "),
    "0": (" ### ", "#  ##", "# # #", "##  #", " ### "),
    "1": ("  #  ", " ##  ", "  #  ", "  #  ", " ### "),
    "2": (" ### ", "#   #", "  ## ", " #   ", "#####"),
    "3": ("#### ", "    #", " ### ", "    #", "#### "),
    "4": ("#   #", "#   #", "#####", "    #", "    #"),
    "5": ("#####", "#    ", "#### ", "    #", "#### "),
    "6": (" ### ", "#    ", "#### ", "#   #", " ### "),
    "7": ("#####", "    #", "   # ", "  #  ", "  #  "),
    "8": (" ### ", "#   #", " ### ", "#   #", " ### "),
    "9": (" ### ", "#   #", " ####", "    #", " ### "),
    "+": ("     ", "  #  ", " ### ", "  #  ", "     "),
    "-": ("     ", "     ", " ### ", "     ", "     "),
    "?": (" ### ", "#   #", "  ## ", "     ", "  #  "),
    " ": ("  ", "  ", "  ", "  ", "  "),
}
HEIGHT = 5


def big_rows(text: str) -> list[str]:
    """Rows of '#' and ' ' (5 high), one space between glyphs."""
    glyphs = [FONT.get(ch, FONT["?"]) for ch in text.upper()]
    return [" ".join(g[row] for g in glyphs) for row in range(HEIGHT)]


def big_text(text: str, console: bool) -> list[str]:
    """The console gets '#' (in every code page); other terminals get the
    same shapes in half blocks (3 rows instead of 5)."""
    rows = big_rows(text)
    if console:
        return rows
    rows.append(" " * len(rows[0]))
    out = []
    for top, bottom in zip(rows[::2], rows[1::2], strict=True):
        out.append("".join(
            "\u2588" if a == "#" and b == "#" else "\u2580" if a == "#" else
            "\u2584" if b == "#" else " " for a, b in zip(top, bottom, strict=True)))
    return out
