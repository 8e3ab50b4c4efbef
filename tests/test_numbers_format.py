"""The text report's number formats (`serq/report/numbers.py`), branch by
branch. Every expected string follows from the module's documented rules:
a mean and its half-width share the decimals that show the half-width's
first significant digit while the mean keeps 3 to 6 significant digits;
other figures get 4 significant digits; fractions 3 decimals; NaN prints
as an en dash, infinities as `inf`/`-inf`; beyond `MAX_DECIMALS` (9)
decimals a figure is written in scientific notation with 3 digits.
These close the gaps mutation testing found (issue: infinite figures and
the scientific branch ran in no test)."""
from __future__ import annotations

import math

import pytest

from serq.report.numbers import (DASH, MAX_DECIMALS, decimals, fixed_or_dash, mean_cells,
                                 row_decimals, share, sig)

INF = math.inf
NAN = math.nan


def test_max_decimals_is_nine():
    assert MAX_DECIMALS == 9


@pytest.mark.parametrize("x, digits, expected", [
    (0.05, 2, 3),        # 5.0e-2: two significant digits need 3 decimals
    (-0.05, 2, 3),       # the sign does not count
    (12.31, 4, 2),
    (999.0, 3, 0),       # never negative decimals
    (1000.0, 3, 0),
    (1.0, 1, 0),
    (0.1, 1, 1),         # log10 exactly -1
    (INF, 2, None), (-INF, 2, None), (NAN, 2, None), (0.0, 2, None),
])
def test_decimals(x, digits, expected):
    assert decimals(x, digits) == expected


@pytest.mark.parametrize("x, places, expected", [
    (INF, 3, "inf"), (-INF, 3, "-inf"), (NAN, 3, DASH),
    (2e-9, 9, "0.000000002"),            # 9 decimals: still fixed
    (1.5e-10, 10, "1.50e-10"),           # 10 > MAX_DECIMALS: scientific
    (1.234e-12, 12, "1.23e-12"),
    (-1.234e-12, 12, "-1.23e-12"),
    (2.5, 0, "2"), (3.14159, 2, "3.14"),
])
def test_fixed_or_dash(x, places, expected):
    assert fixed_or_dash(x, places) == expected


@pytest.mark.parametrize("x, expected", [
    (INF, "inf"), (-INF, "-inf"), (NAN, DASH), (0.0, "0"),
    (123456.0, "123456"), (0.000123456, "0.0001235"), (3.16666, "3.167"),
    (0.06, "0.06"), (1.0, "1"), (1.2e-12, "1.20e-12"),  # scientific keeps its zeros
])
def test_sig(x, expected):
    assert sig(x) == expected


@pytest.mark.parametrize("x, expected", [(0.12345, "0.123"), (1.0, "1.000"), (NAN, DASH),
                                         (INF, "inf")])
def test_share(x, expected):
    assert share(x) == expected


@pytest.mark.parametrize("mean, ci, expected", [
    (12.3456, 0.05, 2),        # the docstring's `12.31 ±0.05`
    (0.000213, 0.000004, 6),   # the docstring's `0.000213 ±0.000004`
    (1234567.0, 0.00001, 0),   # the mean's 6 significant digits cap the decimals
    (1.234567, 1e-9, 5),       # ... 1.23457, not the 9 decimals the interval asks
    (0.5, 300.0, 3),           # the mean keeps 3 significant digits
    (0.0, 0.001, 3),           # mean 0: the interval decides
    (0.0, 1e-12, MAX_DECIMALS),  # ... at most MAX_DECIMALS
    (0.0, INF, 4),             # neither: 4 decimals
    (12.3456, INF, 2),         # no interval: 4 significant digits of the mean
    (1234.5, INF, 0),
])
def test_row_decimals(mean, ci, expected):
    assert row_decimals(mean, ci) == expected


def test_mean_cells():
    assert mean_cells(12.3456, 0.05, 13.0) == ["12.35", "±0.05", "13.00"]
    assert mean_cells(0.000213, 0.000004) == ["0.000213", "±0.000004"]
    # an infinite half-width is a dash, an infinite mean is `inf`
    assert mean_cells(12.3456, INF, 20.0) == ["12.35", DASH, "20.00"]
    assert mean_cells(INF, 1.0) == ["inf", "±1"]
    assert mean_cells(NAN, INF) == [DASH, DASH]
    # tiny figures: 14 decimals would be needed, so scientific notation
    assert mean_cells(1.234e-12, 5e-14, 2e-12) == ["1.23e-12", "±5.00e-14", "2.00e-12"]
