"""Upgrades: two root slots (A and B) written by RAUC from signed bundles,
chosen by GRUB from one grubenv, a new slot kept only when keel's health gate
says the router is healthy (`keel upgrade`)."""
