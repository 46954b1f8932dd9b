"""Pure parsers of what the kernel and the router's tools print.

Each takes text (or decoded JSON) and returns frozen dataclasses; none reads a
file or runs a command. Collectors, self-tests and `keel doctor` call them.
"""
