"""MSER-5 (`serq/study/warmup.py`) pinned against the rule as White (1997)
states it, computed here the slow way: batch means Z₁…Z_k of 5 samples,
MSER(d) = Σ_{j>d} (Z_j − Z̄_{d+1..k})² / (k − d)² for 0 ≤ d ≤ k/2, d* the
smallest minimiser, 5·d* samples dropped. These close the gaps mutation
testing found: the statistic itself, the d ≤ k/2 bound, short series, ties
between series, client series, an unknown `--observe` and the JSON's
`candidates` map were untested."""
from __future__ import annotations

import json
import os
import random
from types import SimpleNamespace

import pytest

import serq
from serq.study.warmup import (BATCH, METHOD, MIN_SAMPLES, WarmupChoice, choose, mser5,
                               truncation_time)

MG1 = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "examples", "single-turn", "mg1.sq")


def mser5_by_the_formula(values):
    k = len(values) // BATCH
    if k < 2:
        return 0
    z = [sum(values[j * BATCH:(j + 1) * BATCH]) / BATCH for j in range(k)]
    best_d, best = 0, None
    for d in range(0, k // 2 + 1):
        tail = z[d:]
        mean = sum(tail) / len(tail)
        stat = sum((x - mean) ** 2 for x in tail) / (k - d) ** 2
        if best is None or stat < best - 1e-12 * max(abs(best), 1e-300):
            best_d, best = d, stat
    return best_d * BATCH


@pytest.mark.parametrize("seed", range(12))
def test_mser5_is_the_formula(seed):
    rng = random.Random(seed)
    n = rng.randrange(10, 400)
    level = rng.uniform(0, 20)
    transient = rng.randrange(0, n // 2 + 1)
    values = [level + rng.expovariate(1.0) * (3 if i < transient else 1) + (5 if i < transient else 0)
              for i in range(n)]
    assert mser5(values) == mser5_by_the_formula(values)


def test_mser5_never_drops_more_than_half_the_batches():
    """d ≤ k/2: a series that falls all the way down still keeps half.
    40 samples (k = 8 batches) falling linearly: the statistic keeps
    decreasing with d, so d* is the bound, 4 batches = 20 samples."""
    values = [float(40 - i) for i in range(40)]
    assert mser5(values) == 20 == mser5_by_the_formula(values)
    # 45 samples: k = 9, ⌊9/2⌋ = 4 batches (the 45th sample's batch is whole)
    values = [float(45 - i) for i in range(45)]
    assert mser5(values) == 20
    # 49 samples: still k = 9 (4 samples in no batch)
    assert mser5([float(49 - i) for i in range(49)]) == 20


def test_truncation_time_is_the_midpoint_after_the_last_dropped_sample():
    times = [0.5, 2.0, 3.0, 7.0]
    assert truncation_time(times, 0) == 0.0
    assert truncation_time(times, 1) == 1.25   # between samples 0 and 1
    assert truncation_time(times, 3) == 5.0


def test_mser5_short_series():
    """Fewer than two batches (under 10 samples): nothing dropped."""
    assert MIN_SAMPLES == 10 == 2 * BATCH
    assert mser5([100.0, 0, 0, 0, 0, 0, 0, 0, 0]) == 0
    # exactly two batches: d may be 0 or 1 (k/2 = 1); a first batch far off goes
    assert mser5([100.0] * 5 + [0.0, 1.0, 0.0, 1.0, 0.0]) == 5


def test_mser5_ties_take_the_smallest_d():
    """A constant series: every MSER(d) is 0, d* = 0 — also where the
    suffix sums round the statistic a few ulps below 0 (0.1 × 100: one
    candidate comes out at −3.5e-18 before the clamp at 0)."""
    assert mser5([3.0] * 100) == 0
    assert mser5([0.1] * 100) == 0
    assert mser5([0.3] * 100) == 0


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_mser5_is_the_formula_at_any_scale(scale):
    """The rule does not depend on the units: batch means of a few
    thousandths (statistics far below 1) pick the same d* as the formula."""
    rng = random.Random(11)
    values = [scale * (rng.expovariate(1.0) + (4 if i < 60 else 0)) for i in range(300)]
    assert mser5(values) == mser5_by_the_formula(values) == 60


def _series(values, times=None):
    return SimpleNamespace(values=values, times=times or [float(i) for i in range(len(values))])


def _report(observes=None, client=None):
    return SimpleNamespace(observes=observes or {}, client=client or {})


def test_choose_latest_series_wins_and_ties_keep_the_first():
    """On every series at once the latest truncation time wins; equal times
    keep the first series looked at (observations before client series)."""
    a = [10.0] * 20 + [float(i % 2) for i in range(80)]   # drops 20: time 19.5
    b = [10.0] * 40 + [float(i % 2) for i in range(60)]   # drops 40: time 39.5
    c = list(b)                                          # the same time as b
    rep = _report({"a": _series(a), "b": _series(b)}, {"c": _series(c)})
    choice = choose(rep)
    assert (choice.observation, choice.time, choice.dropped) == ("b", 39.5, 40)
    assert choice.candidates == {"a": 19.5, "b": 39.5, "c": 39.5}
    assert choice.method == METHOD == "MSER-5"


def test_choose_skips_short_series_and_reads_client_series():
    short = _series([9.0] * (MIN_SAMPLES - 1))
    ttft = _series([10.0] * 20 + [float(i % 2) for i in range(80)])
    choice = choose(_report({"short": short}, {"ttft": ttft}))
    assert choice.observation == "ttft" and choice.time == 19.5
    assert "short" not in choice.candidates
    # a client series named like an observation is looked at once, as the observation
    rep = _report({"ttft": _series([1.0] * 50)}, {"ttft": ttft})
    assert choose(rep).candidates == {"ttft": 0.0}
    # nothing long enough: warm-up 0, no series
    nothing = choose(_report({"short": short}))
    assert (nothing.time, nothing.observation, nothing.candidates) == (0.0, None, {})
    assert nothing.dropped == 0
    assert "no series with enough samples" in nothing.describe()


def test_choose_looks_at_a_series_of_exactly_min_samples():
    """Ten samples are two batches, enough for MSER-5 (`MIN_SAMPLES`): the
    first batch far off is dropped, truncation at (4 + 5)/2 = 4.5."""
    rep = _report({"x": _series([100.0] * 5 + [0.0, 1.0, 0.0, 1.0, 0.0])})
    choice = choose(rep)
    assert choice.candidates == {"x": 4.5} and choice.dropped == 5


def test_choose_one_named_series_client_included():
    ttft = _series([10.0] * 20 + [float(i % 2) for i in range(80)])
    other = _series([10.0] * 40 + [float(i % 2) for i in range(60)])
    rep = _report({"other": other}, {"ttft": ttft})
    assert choose(rep, "ttft").observation == "ttft"
    assert choose(rep, "ttft").candidates == {"ttft": 19.5}


def test_choose_unknown_observe_names_what_exists():
    rep = _report({"response": _series([1.0] * 20)}, {"ttft": _series([1.0] * 20)})
    with pytest.raises(ValueError) as err:
        choose(rep, "respnse")
    assert "--observe respnse" in str(err.value)
    assert "response, ttft" in str(err.value)


def test_choice_json_and_text():
    choice = WarmupChoice(39.5, "b", dropped=40, candidates={"a": 19.5, "b": 39.5})
    d = choice.to_dict()
    assert d == {"method": "MSER-5", "time": 39.5, "observation": "b", "dropped": 40,
                 "candidates": {"a": 19.5, "b": 39.5}}
    d["candidates"]["a"] = 0  # a copy: the choice is not changed through its JSON
    assert choice.candidates["a"] == 19.5
    assert json.loads(json.dumps(choice.to_dict()))["candidates"] == {"a": 19.5, "b": 39.5}
    assert choice.describe() == "warm-up 39.5 chosen by MSER-5 (on b, 40 samples dropped)"


def test_mser5_drops_a_transient():
    # 100 samples at 10, then 400 alternating 0/1 (mean 0.5): MSER-5 drops
    # exactly the 100 transient samples (20 batches)
    values = [10.0] * 100 + [float(i % 2) for i in range(400)]
    assert mser5(values) == 100
    assert mser5([1.0] * 50) == 0
    times = [float(i) for i in range(len(values))]
    assert truncation_time(times, 100) == 99.5


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mser5_on_mm1_started_empty(seed):
    """M/M/1 at ρ = 0.9 starts empty; after MSER-5's truncation the
    batch-means interval of the mean holds W = 1/(1-0.9) = 10 (closed form,
    Kleinrock 1975 sec. 3.2). With seed 2 MSER-5 drops 875 samples (t ≈ 971);
    with seeds 1 and 3 it keeps them all (the transient from empty is short
    against the run's fluctuations)."""
    prog = serq.load(MG1, sets={"lam": "0.9"})
    pilot = serq.run(prog, seed=seed, horizon=20000, warmup=0)
    choice = choose(pilot, "response")
    assert choice.method == "MSER-5" and choice.observation == "response"
    assert choice.dropped == {1: 0, 2: 875, 3: 0}[seed]
    assert (choice.time > 970) == (seed == 2) and 0 <= choice.time < 1000
    kept = serq.run(prog, seed=seed, horizon=20000, warmup=choice.time).observes["response"]
    assert abs(kept.mean - 10.0) <= kept.ci
