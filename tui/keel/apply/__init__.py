"""`keel apply`: validate, render, check, apply only what differs, record."""
