"""Talking to the running system: commands and files, behind small interfaces."""
