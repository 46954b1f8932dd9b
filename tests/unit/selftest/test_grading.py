"""Bufferbloat grading: the DSLReports bands at their edges, percentiles, RPM."""

from __future__ import annotations

import math

import pytest

from keel.selftest import grading


@pytest.mark.parametrize(("increase", "letter"), [
    (0, "A+"), (4.99, "A+"), (5, "A"), (29.9, "A"), (30, "B"), (59.9, "B"),
    (60, "C"), (199.9, "C"), (200, "D"), (399.9, "D"), (400, "F"), (2500, "F"),
])
def test_grade_bands(increase, letter):
    assert grading.grade(increase) == letter


def test_percentiles_interpolate():
    values = [10, 20, 30, 40, 50]
    assert grading.percentile(values, 50) == 30
    assert grading.percentile(values, 95) == pytest.approx(48)
    assert grading.percentile([7.0], 99) == 7.0
    with pytest.raises(ValueError):
        grading.percentile([], 50)


def test_stats_count_losses():
    stats = grading.latency_stats([20.0, None, 22.0, 24.0, None])
    assert (stats.samples, stats.lost, stats.p50_ms) == (5, 2, 22.0)
    assert stats.loss == pytest.approx(0.4)
    assert math.isnan(grading.latency_stats([None]).p50_ms)


def test_rpm():
    assert grading.rpm(60) == 1000
    assert grading.rpm_label(grading.rpm(600)) == "Low"
    assert grading.rpm_label(grading.rpm(30)) == "High"
