"""keel: a router appliance's config engine, metrics, self-tests and console UI."""

__version__ = "0.1.0"
