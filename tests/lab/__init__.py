"""The QEMU lab: keel guests booted from the dev image, wired by QEMU network
backends into named links, driven over their serial consoles."""
