"""`serq.capacity` and `serq-simpy capacity`: SLO texts, the search against
closed forms (M/M/1 p99 and attainment, M/M/c with Erlang C), executors,
the results directory, the CLI and the figures.

Closed forms: M/M/1 (mu = 1, FCFS) has an exponential response time of rate
1 − lam (Kleinrock, Queueing Systems Vol. 1, 1975, §3.2), so its p99 is
ln(100)/(1 − lam) and P(W ≤ x) = 1 − e^{−(1−lam)x}; M/M/c's mean response
time is C(c, lam)/(c − lam) + 1 (Erlang C, tests/closed_forms.py).
"""
from __future__ import annotations

import json
import math
import os

import pytest

import serq
from serq.cli import main
from serq.study.capacity_search import PILOT, Probe, pilot_line, root_interval
from serq.study.slo import SloError, parse_slo

from closed_forms import erlang_c

MG1 = "examples/single-turn/mg1.sq"
MMC = os.path.join(os.path.dirname(__file__), "data", "mmc.sq")
#: p99 of M/M/1's response time is at most X for lam ≤ 1 − ln(100)/X: 0.5 here.
X = 2 * math.log(100)
#: The mean response time of M/M/1 is 1/(1 − lam): at most 2 for lam ≤ 0.5.
MEAN_SLO = "response:mean<=2"


def _mean_search(**kw):
    return serq.capacity(MG1, "lam", [MEAN_SLO], horizon=1000, warmup=50, precision=0.1, **kw)


@pytest.fixture(scope="module")
def mean_result():
    return _mean_search(jobs=1)


# -- SLO texts ------------------------------------------------------------------

@pytest.mark.parametrize("text, kind, q, op, limit, canonical", [
    ("ttft:p99<=0.5", "percentile", 0.99, "<=", 0.5, "ttft:p99<=0.5"),
    ("tpot:p90 <= 0.05", "percentile", 0.9, "<=", 0.05, "tpot:p90<=0.05"),
    ("client.ttft:mean<0.3", "mean", math.nan, "<=", 0.3, "client.ttft:mean<=0.3"),
    ("ttft<=0.2 for 90%", "attainment", 0.9, "<=", 0.2, "ttft<=0.2 for 90%"),
    ("observe.tokens:p99.9>=12", "percentile", 0.999, ">=", 12.0,
     "observe.tokens:p99.9>=12.0"),
])
def test_slo_texts(text, kind, q, op, limit, canonical):
    s = parse_slo(text)
    assert (s.kind, s.op, s.limit, s.canonical) == (kind, op, limit, canonical)
    assert s.q == q or (math.isnan(q) and math.isnan(s.q))


def test_slo_statistics_and_margins():
    values = [float(v) for v in range(1, 101)]  # 1 … 100
    assert parse_slo("x:p90<=50").value(values) == 90.0   # nearest rank ⌈0.9·100⌉
    assert parse_slo("x:mean<=50").value(values) == 50.5
    att = parse_slo("x<=80 for 90%")
    assert att.value(values) == 0.8
    assert att.margin(0.8) == pytest.approx(1.0)           # twice the allowed misses
    assert parse_slo("x:p99<=2").margin(3.0) == pytest.approx(0.5)
    assert parse_slo("x:mean>=2").margin(3.0) == pytest.approx(-0.5)


@pytest.mark.parametrize("text, col, words", [
    ("ttft:p99<=x", 11, "a number"),
    ("ttft<=0.2", 5, "statistic is missing"),
    ("ttft:p100<=1", 6, "not between"),
    ("ttft:q99<=1", 6, "expected a statistic"),
    ("ttft:p99==1", 9, "comparison"),
    ("ttft<=1 for 90", 15, "`%`"),
    ("stage.svc:p99<=1", 1, "not a section"),
    ("ttft:p99<=1 extra", 13, "unexpected text"),
    ("9ttft:p99<=1", 1, "series name"),
])
def test_bad_slo_texts_point_at_the_fault(text, col, words):
    with pytest.raises(SloError) as info:
        parse_slo(text)
    assert info.value.col + 1 == col
    msg = str(info.value)
    assert words in msg and f"--slo:1:{col}:" in msg
    assert msg.splitlines()[2] == "  | " + " " * (col - 1) + "^" * info.value.length


def test_cli_bad_slo_is_a_usage_error_with_a_caret(capsys):
    assert main(["capacity", MG1, "--vary", "lam", "--slo", "response:p99<=fast"]) == 2
    err = capsys.readouterr().err
    assert "--slo:1:15: expected a number" in err
    assert "1 | response:p99<=fast\n  |               ^" in err
    assert main(["capacity", MG1, "--vary", "lam", "--slo", "resp:p99<=3"]) == 2
    assert "records no series 'resp' (its series: response)" in capsys.readouterr().err


# -- the search against closed forms -------------------------------------------------

def test_mm1_p99_capacity_intervals_cover_the_closed_form():
    """Three searches (base seeds 1, 1001, 2001): p99 ≤ 2 ln 100 holds for
    lam ≤ 0.5. A 95 % interval misses one time in twenty, so at least two
    of the three must cover (all three miss-free with probability 0.86;
    two or more misses: 0.7 %). tests/test_capacity_slow.py counts 100.
    The precision is the width aimed at (the final batch is reported
    whatever its width): the median half-width is within it, and the note
    says when one is not."""
    covered, widths = 0, []
    for seed in (1, 1001, 2001):
        r = serq.capacity(MG1, "lam", [f"response:p99<={X!r}"], horizon=2000, warmup=50,
                          precision=0.1, seed=seed, jobs=1)
        c = r.configs[0]
        assert c.status == "found"
        widths.append(c.relative_half_width)
        assert ("final batch wider than the ±10% aimed at" in r.text()) == (
            c.relative_half_width > 0.1)
        covered += c.low <= 0.5 <= c.high
        assert c.runs == sum(p["replications"] for p in c.probes) > 0
        assert c.events > 1000 * c.runs * 0.3  # ~2 events a request, ~lam·2000 requests
        # the pilot pair ran the same seeds from 0 (common random numbers: its
        # line gives the slope), at least PILOT of them
        pair = [p for p in c.probes if p["x"] in c.pair and p["first_seed"] == 0]
        assert len(pair) == 2 and min(p["replications"] for p in pair) >= PILOT
        # the interval's final batch ran seeds no other probe ran (and it is
        # the last batch the search ran)
        final = c.probes[-1]
        assert final["x"] == c.final and final["replications"] == c.replications
        assert final["first_seed"] >= max(p["first_seed"] + p["replications"]
                                          for p in c.probes[:-1])
    assert covered >= 2
    assert sorted(widths)[1] <= 0.1, widths


def test_a_budget_too_small_for_the_final_batch_is_imprecise():
    """80 runs cannot hold the bracket, the pilot (2 × 16) and a final batch
    for ±2 % on runs of 2 000: the search says so (status, note, exit 1's
    condition) instead of reporting an interval it did not plan."""
    r = serq.capacity(MG1, "lam", [f"response:p99<={X!r}"], horizon=2000, warmup=50,
                      precision=0.02, max_runs=80, seed=1, jobs=1)
    c = r.configs[0]
    assert c.status == "imprecise" and c.runs <= 80 + 2 * PILOT
    assert "precision not reached" in r.text()


def test_root_interval_is_the_t_interval_when_the_slope_is_known():
    """With var(slope) = 0, Fieller's interval for the root of mean + s·d is
    (−mean ± t·√var)/s; t(9) = 2.262 (Student's t table)."""
    low, high = root_interval(0.1, 0.0004, 9, 2.0, 0.0, 15)
    assert low == pytest.approx((-0.1 - 2.2622 * 0.02) / 2, abs=1e-4)
    assert high == pytest.approx((-0.1 + 2.2622 * 0.02) / 2, abs=1e-4)
    # an uncertain slope widens it, mostly away from d = 0 (where the slope
    # does not matter); a slope not clearly above 0 leaves it unbounded
    wider = root_interval(0.1, 0.0004, 9, 2.0, 0.04, 15)
    assert wider[1] - wider[0] > high - low and wider[0] < low < -0.05 < wider[1]
    assert root_interval(0.1, 0.0004, 9, 0.5, 0.25, 15) is None


def test_final_interval_covers_a_known_root_95_percent_of_the_time():
    """The pilot line and a fresh final batch, on synthetic margins
    y = 2·(x − 0.5) + noise (sd 0.08, common to the pilot pair per seed):
    over 2000 trials the interval covers 0.5 in 95 % of them (binomial
    sd 0.5 points: 93.5–96.5 % is within 3 sd)."""
    import random
    rng = random.Random(20261202)
    covered = 0
    for _ in range(2000):
        a, b = Probe(0.48), Probe(0.52)
        for _ in range(PILOT):
            e = rng.gauss(0, 0.08)
            a.margins.append([2 * (a.x - 0.5) + e])
            b.margins.append([2 * (b.x - 0.5) + e + rng.gauss(0, 0.01)])
        line = pilot_line(a, b, PILOT)
        final = Probe(round(line.crossing, 6), first_seed=PILOT)
        final.margins = [[2 * (final.x - 0.5) + rng.gauss(0, 0.08)] for _ in range(60)]
        low, high, _ = line.interval(final, 60)
        covered += low <= 0.5 <= high
    assert 0.935 <= covered / 2000 <= 0.965, covered


def test_mm1_attainment_capacity_covers_the_closed_form():
    """P(W ≤ 5) ≥ 90 % holds for lam ≤ 1 − ln(10)/5 = 0.5395."""
    r = serq.capacity(MG1, "lam", ["response<=5 for 90%"], horizon=2000, warmup=50,
                      precision=0.1, jobs=1)
    c = r.configs[0]
    assert c.status == "found"
    assert c.low <= 1 - math.log(10) / 5 <= c.high, (c.low, c.high)
    # goodput: the requests meeting the limit, P(W ≤ 5) = 1 − e^{−(1−lam)·5} of
    # the throughput (≈ lam) at the probe `goodput_at`
    assert c.throughput == pytest.approx(c.goodput_at, rel=0.1)
    assert c.goodput / c.throughput == pytest.approx(1 - math.exp(-(1 - c.goodput_at) * 5),
                                                     abs=0.03)


def _mmc_capacity(c: int) -> float:
    """The lam at which M/M/c's mean response time C(c, lam)/(c − lam) + 1 is 1.5."""
    from scipy.optimize import brentq
    return brentq(lambda lam: erlang_c(c, lam) / (c - lam) + 1 - 1.5, 1e-6, c - 1e-9)


def test_mmc_grid_names_the_cheapest_c_that_carries_the_load():
    """Capacities 1.155, 2.057, 2.990 for c = 2, 3, 4 (Erlang C): at lam = 2.5
    the cheapest c is 4."""
    r = serq.capacity(MMC, slos=["response:mean<=1.5"], grid=["c=2,3,4"], cost="c",
                      load="lam=2.5", horizon=1000, warmup=50, precision=0.1, jobs=1)
    assert [cc.config for cc in r.configs] == [{"c": 2}, {"c": 3}, {"c": 4}]
    for cc in r.configs:
        assert cc.low <= _mmc_capacity(cc.config["c"]) <= cc.high, (cc.config, cc.low,
                                                                    cc.high)
    assert r.cheapest().config == {"c": 4} and r.cheapest().cost == 4.0
    assert [cc.carries(2.5) for cc in r.configs] == ["no", "no", "yes"]
    text = r.text()
    assert "the cheapest configuration that carries it is c=4 (cost 4)" in text


def test_overlapping_intervals_cannot_be_told_apart(mean_result):
    import copy
    r = copy.copy(mean_result)
    a = mean_result.configs[0]
    b = copy.copy(a)
    b.config = {"copy": 1}
    r.configs, r.grid = [a, b], {"copy": [0, 1]}
    assert r.overlapping() == [(0, 1)]
    assert "cannot be told apart at this budget" in r.text()


# -- executors and the results directory ----------------------------------------------

def test_jobs_1_and_2_give_the_same_answer(mean_result):
    assert _mean_search(jobs=2).to_dict() == mean_result.to_dict()


def test_local_cluster_gives_the_same_answer(mean_result):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = _mean_search(executor=client)
    assert remote.to_dict() == mean_result.to_dict()


def test_an_interrupted_search_loses_no_finished_run(tmp_path, mean_result):
    out = str(tmp_path / "cap")
    first = _mean_search(jobs=1, out=out)
    assert (first.computed, first.reused) == (first.runs, 0)
    runs = sorted(os.listdir(os.path.join(out, "runs")))
    assert len(runs) == first.runs
    for name in runs[::2]:  # as if the search had stopped before these runs
        os.remove(os.path.join(out, "runs", name))
    again = _mean_search(jobs=1, out=out)
    assert again.computed == len(runs[::2]) and again.reused == first.runs - again.computed
    strip = lambda d: {k: v for k, v in d.items() if k not in ("computed", "reused")}
    assert strip(again.to_dict()) == strip(first.to_dict()) == strip(mean_result.to_dict())
    with open(os.path.join(out, "capacity.json"), encoding="utf-8") as fh:
        assert json.load(fh)["slos"] == [MEAN_SLO]


# -- the command, its JSON and figures -----------------------------------------------

def test_cli_json_text_and_plot(tmp_path, capsys, mean_result):
    argv = ["capacity", MG1, "--vary", "lam", "--slo", MEAN_SLO, "--horizon", "1000",
            "--warmup", "50", "--precision", "0.1", "--jobs", "1", "--no-progress"]
    fig = str(tmp_path / "cap.png")
    assert main(argv + ["--json", "--plot", fig]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["configs"][0]["low"] == mean_result.configs[0].low
    assert d["runs"] == mean_result.runs and d["confidence"] == 0.95
    assert os.path.getsize(fig) > 1000
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out == mean_result.text()
    assert "95% interval" in out and "goodput" in out


def test_search_figure_shows_threshold_probes_and_interval(mean_result):
    fig = mean_result.plot()
    ax = fig.axes[0]
    c = mean_result.configs[0]
    assert any(list(line.get_ydata()) == [2.0, 2.0] for line in ax.get_lines())
    (span,) = ax.patches  # the shaded capacity interval (a Rectangle in axes y units)
    assert span.get_x() == pytest.approx(c.low)
    assert span.get_x() + span.get_width() == pytest.approx(c.high)
    assert ax.get_xlabel() == "lam"


def test_configs_figure_has_one_row_per_configuration(mean_result):
    fig = mean_result.plot_configs()
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["-"]


@pytest.mark.parametrize("kw, words", [
    (dict(vary="lam", slos=[]), "at least one SLO"),
    (dict(vary="lam", slos=[MEAN_SLO], load="mu=1"), "the load is a value of"),
    (dict(vary="lam", slos=[MEAN_SLO], grid=["lam=1,2"]), "cannot also be a --grid"),
    (dict(slos=[MEAN_SLO], grid=["c=1,2"], cost="c * d", vary="lam"), "`d` is not a --grid"),
    (dict(slos=[MEAN_SLO], grid=["c=1,2"], cost="open('x')", vary="lam"), "only numbers"),
])
def test_bad_requests_are_refused(kw, words):
    with pytest.raises(ValueError, match=words):
        serq.capacity(MG1, **kw)
