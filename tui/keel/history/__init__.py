"""A router that remembers: the history on /data (keel.history.store), the
daemon that writes it, and what reads it back."""
