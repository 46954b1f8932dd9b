"""The setup wizard's port table: every port with its MAC, driver, link
and speed, and where it sits (PCI function, USB port); the keys that pick
or find the WAN and the LAN post messages the screen acts on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from keel.parse.nic_identity import Port
from keel.ui.fmt import cut

NIC_COLUMNS = (("use", 4), ("name", 10), ("MAC", 18), ("driver", 12), ("link", 17),
               ("bus", 14))


def bus(port: Port) -> str:
    return port.pci or (f"usb {port.usb}" if port.usb else "-")


class NicTable(DataTable):
    """The ports; [w] makes the one under the cursor the WAN, [l] the LAN;
    [f] finds the WAN by its cable, [g] the LAN. A row's key is the port's
    kernel name; its "use" and "link" cells are updated in place."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("w", "pick('wan')", "WAN", show=False),
        Binding("l", "pick('lan')", "LAN", show=False),
        Binding("f", "find('wan')", "find the WAN by its cable", show=False),
        Binding("g", "find('lan')", "find the LAN by its cable", show=False)]

    class Picked(Message):
        def __init__(self, which: str, name: str) -> None:
            super().__init__()
            self.which, self.name = which, name

    class Find(Message):
        def __init__(self, which: str) -> None:
            super().__init__()
            self.which = which

    def __init__(self, ports: Sequence[Port], use: Callable[[Port], str],
                 cursor: str | None = None, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, cell_padding=0, **kwargs)
        for label, width in NIC_COLUMNS:
            self.add_column(label, width=width, key=label)
        for port in ports:
            self.add_row(use(port), cut(port.name, 9), port.permanent_mac or port.mac or "-",
                         cut(port.driver or "-", 11), port.link, cut(bus(port), 14),
                         key=port.name)
        names = [p.name for p in ports]
        if cursor in names:
            self.move_cursor(row=names.index(cursor))

    @property
    def under_cursor(self) -> str | None:
        """The kernel name of the port under the cursor (None: no row)."""
        if not self.row_count:
            return None
        return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)

    def move_to(self, name: str) -> None:
        for row, key in enumerate(self.rows):
            if key.value == name:
                self.move_cursor(row=row)
                return

    def action_pick(self, which: str) -> None:
        name = self.under_cursor
        if name is not None:
            self.post_message(self.Picked(which, name))

    def action_find(self, which: str) -> None:
        self.post_message(self.Find(which))
