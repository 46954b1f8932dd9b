"""Who may get in: the root password and the SSH keys, kept on /data."""
