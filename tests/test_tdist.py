"""The Student t quantile of the batch-means interval (serq/stats/tdist.py).

Computed without SciPy (start-up time); checked here against
`scipy.stats.t`, the reference implementation of the distribution.
"""
from __future__ import annotations

import math

import pytest

from serq.stats.tdist import t_cdf, t_quantile



def scipy_stats():
    """scipy.stats for the comparisons (skipped without it; the other tests need none)."""
    return pytest.importorskip("scipy.stats")

DFS = list(range(1, 41)) + [57, 100, 333, 1000]
PS = [0.55, 0.6, 0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9999, 0.45, 0.025, 0.001]


@pytest.mark.parametrize("df", DFS)
def test_quantile_matches_scipy(df: int) -> None:
    for p in PS:
        ours = t_quantile(p, df)
        ref = float(scipy_stats().t.ppf(p, df))
        assert ours == pytest.approx(ref, rel=1e-11, abs=0.0), (df, p)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 19, 20, 100])
def test_cdf_matches_scipy(df: int) -> None:
    for t in [-30.0, -2.5, -0.3, 0.0, 0.7, 2.093, 9.0, 250.0]:
        assert t_cdf(t, df) == pytest.approx(float(scipy_stats().t.cdf(t, df)), rel=1e-13, abs=1e-15)


def test_closed_forms() -> None:
    # ν = 1 is the Cauchy law: quantile tan(π(p − ½)); ν = 2: (2p−1)·√(2 / (4p(1−p)))
    for t in (1e-6, 0.7, 40.0):  # Cauchy: ½ + atan(t)/π (scipy loses digits near 0 here)
        assert t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, rel=1e-15)
    for p in (0.6, 0.9, 0.975, 0.999):
        assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-13)
        alpha = 4 * p * (1 - p)
        assert t_quantile(p, 2) == pytest.approx((2 * p - 1) * math.sqrt(2 / alpha), rel=1e-13)


def test_report_constant() -> None:
    # Part 06 §3.1: the 95 % two-sided quantile for 20 batches (19 df), 2.093 to three places
    from serq.stats.summary import T95
    assert round(t_quantile(0.975, 19), 3) == T95 == 2.093


def test_edges_and_errors() -> None:
    assert t_quantile(0.5, 5) == 0.0
    assert t_quantile(1.0, 5) == math.inf and t_quantile(0.0, 5) == -math.inf
    assert t_quantile(0.3, 9) == -t_quantile(0.7, 9)
    with pytest.raises(ValueError):
        t_quantile(1.5, 3)
    with pytest.raises(ValueError):
        t_quantile(0.9, 0)
    with pytest.raises(ValueError):
        t_quantile(0.9, 2.5)


def test_summary_does_not_import_scipy() -> None:
    import subprocess
    import sys
    code = "import sys, serq.stats.summary; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
