"""Fixtures of the upgrade tests: a fake RAUC command line on PATH."""

from tests.unit.upgrade.fake_rauc import fake_rauc  # noqa: F401 (a fixture)
