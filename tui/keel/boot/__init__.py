"""The boot: its timeline (/run/keel/boot.jsonl) and how it is read."""
