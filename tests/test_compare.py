"""`serq.compare` and `serq-simpy compare`: paired replications with common
random numbers, differences with Student-t intervals.

Expected numbers: M/M/1's mean response time 1/(mu − lam) (Kleinrock,
Queueing Systems Vol. 1, §3.2), so at lam = 0.5 the exact difference
between mu = 1.25 and mu = 1 is 1/0.75 − 1/0.5 = −2/3; a program against
itself differs by exactly 0 in every replication (same seeds, same runs).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import serq
from serq.study.comparison import paired_difference

MM1 = """
let lam = 0.5;
let mu = 1;
stage svc : fifo;
workload { arrive poisson(lam); }
session { turn; set t0 = now; run svc (~exp(1 / mu)); observe response = now - t0; }
run { horizon 2000; warmup 200; }
"""
EXACT = 1 / (1.25 - 0.5) - 1 / (1.0 - 0.5)  # -2/3


def test_paired_difference_matches_scipy_ttest_rel():
    from scipy import stats
    a = [1.0, 2.0, 3.5, 4.0, 2.2]
    b = [1.5, 2.1, 3.9, 4.8, 2.0]
    d = paired_difference(("observe", "x", "mean"), a, b)
    ref = stats.ttest_rel(b, a)
    assert d.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    lo, hi = ref.confidence_interval(0.95)
    assert d.diff - d.half_width == pytest.approx(lo, rel=1e-9)
    assert d.diff + d.half_width == pytest.approx(hi, rel=1e-9)


def test_a_program_against_itself_differs_nowhere():
    c = serq.compare(source=MM1, replications=4, executor=1, horizon=500, warmup=50)
    assert c.replications == 4
    diffs = c.differences()
    assert diffs and all(d.diff == 0 for d in diffs if d.n)
    assert c.significant() == []
    assert "0 of" in c.text() and " *" not in c.text().splitlines()[3]


def test_two_service_rates_differ_and_the_interval_covers_the_exact_difference():
    c = serq.compare(source=MM1, sets_b={"mu": 1.25}, replications=10, executor=1)
    d = c.difference("observe", "response", "mean")
    assert d.significant and abs(d.diff - EXACT) <= d.half_width
    # the same seeds on both sides: the arrivals are the same
    assert c.difference("run", "run", "arrivals").diff == 0
    assert [r.seed for r in c.a.reports] == [r.seed for r in c.b.reports] == list(range(1, 11))
    text = c.text()
    assert "mu=1.25" in text
    row = next(ln for ln in text.splitlines() if ln.split()[:3] == ["observe", "response",
                                                                      "mean"])
    assert row.rstrip().endswith("*")
    assert any(ln.split()[:3] == ["observe", "response", "p99"] for ln in text.splitlines())


def test_compare_command(tmp_path):
    prog = tmp_path / "mm1.sq"
    prog.write_text(MM1, encoding="utf-8")
    fig = tmp_path / "diff.png"
    out = subprocess.run([sys.executable, "-m", "serq", "compare", str(prog), "--b-set",
                          "mu=1.25", "--replications", "3", "--horizon", "600",
                          "--jobs", "1", "--json", "--plot", str(fig)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["comparison"]["replications"] == 3
    assert got["comparison"]["sets_b"] == {"mu": "1.25"}
    row = next(d for d in got["differences"]
               if (d["section"], d["name"], d["statistic"]) == ("observe", "response", "mean"))
    assert row["diff"] < 0
    assert fig.stat().st_size > 1000
    bad = subprocess.run([sys.executable, "-m", "serq", "compare", str(prog),
                          "--replications", "1"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "at least 2" in bad.stderr


@pytest.mark.slow
def test_paired_interval_coverage_over_100_studies():
    """100 comparisons (base seeds 1, 101, …; 10 paired replications each):
    the 95% interval of the difference of mean response times covers the
    exact −2/3 in at least 93 of them (the binomial(100, 0.95) count is
    below 91 with probability 1.1%)."""
    covered = 0
    for k in range(100):
        c = serq.compare(source=MM1, sets_b={"mu": 1.25}, replications=10, executor=1,
                         seed=1 + 100 * k, horizon=4000, warmup=400)
        d = c.difference("observe", "response", "mean")
        covered += abs(d.diff - EXACT) <= d.half_width
    assert covered >= 93, covered


def test_compare_is_documented_and_the_example_uses_it():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "docs", "policies.md"), encoding="utf-8") as fh:
        page = fh.read()
    assert "serq-simpy compare" in page and "p99" in page
    with open(os.path.join(root, "examples", "policies", "compare.py"), encoding="utf-8") as fh:
        assert "serq.compare(" in fh.read()
