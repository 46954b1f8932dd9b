"""The router's state on /data: applied config revisions, pending confirmation."""
