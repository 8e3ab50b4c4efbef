"""The distributions behind the intervals and the trend warning come from
SciPy (issue 25, item 6): the Student-t quantile of the study intervals is
`scipy.special.stdtrit`, the report's t constant is upstream's 2.093, and
the Mann–Kendall trend is `scipy.stats.kendalltau`'s test; none of them is
imported by a program that does not need it."""
from __future__ import annotations

import math
import subprocess
import sys

import pytest
import scipy.stats
from scipy.special import stdtrit

from serq.report.trust import trend_z
from serq.stats.summary import T95
from serq.study.stats import interval, t_quantile


def test_the_report_constant_is_upstreams_rounded_quantile():
    # Part 06 §3.1: the 95 % two-sided quantile for 20 batches (19 df), 2.093 to three places
    assert T95 == round(float(stdtrit(19, 0.975)), 3) == 2.093


@pytest.mark.parametrize("df", list(range(1, 41)) + [57, 100, 333, 1000])
def test_study_quantile_is_scipys_t(df):
    # bit for bit the quantile of scipy.stats.t, SciPy's reference distribution
    assert t_quantile(df) == float(scipy.stats.t.ppf(0.975, df))
    assert t_quantile(df, 0.9) == float(scipy.stats.t.ppf(0.95, df))


def test_study_quantile_closed_forms():
    # ν = 1 is the Cauchy law: tan(π(p − ½)); ν = 2: (2p − 1)·√(2 / (4p(1 − p)))
    p = 0.975
    assert t_quantile(1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-13)
    assert t_quantile(2) == pytest.approx((2 * p - 1) * math.sqrt(2 / (4 * p * (1 - p))),
                                          rel=1e-13)


def test_interval_uses_the_quantile():
    # three values 1, 2, 3: mean 2, s = 1, half-width t(2) · 1/√3
    iv = interval([1.0, 2.0, 3.0])
    assert iv.mean == 2.0 and iv.half_width == t_quantile(2) / math.sqrt(3)


def _mann_kendall_z(xs):
    """The textbook statistic: S = Σ sign(x_j − x_i), Var S = n(n−1)(2n+5)/18 (no ties)."""
    n = len(xs)
    s = sum((xs[j] > xs[i]) - (xs[j] < xs[i]) for i in range(n) for j in range(i + 1, n))
    return s / math.sqrt(n * (n - 1) * (2 * n + 5) / 18)


def test_trend_z_is_mann_kendall():
    rng = __import__("random").Random(25)
    for k in range(50):
        xs = [rng.random() + 0.02 * k * i for i in range(20)]
        assert trend_z(xs) == pytest.approx(_mann_kendall_z(xs), rel=1e-9, abs=1e-12)
    assert trend_z([2.0] * 20) == 0.0


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_a_settled_run_imports_no_scipy():
    # the text report checks every series for growth; a run that settles never
    # reaches the trend test, so `run` pays no SciPy import
    mods = _modules_after(
        "import serq\nfrom serq.report.text_report import to_text\n"
        "to_text(serq.run(serq.load('examples/single-turn/mg1.sq', sets={'lam': 0.5}),"
        " horizon=2000))")
    assert not any(m == "scipy" or m.startswith("scipy.") for m in mods)


def test_a_growing_run_is_tested_with_scipy():
    mods = _modules_after(
        "import serq\nfrom serq.report.text_report import to_text\n"
        "t = to_text(serq.run(serq.load('examples/single-turn/mg1.sq', sets={'lam': 1.2}),"
        " horizon=5000))\nassert 'grows through the run' in t")
    assert "scipy.stats" in mods
