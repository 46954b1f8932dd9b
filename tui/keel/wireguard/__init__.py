"""WireGuard: the private key on /data, the interface and its peers."""
