"""Compact sample storage (serq/stats/samples.py) and the p99 selection
that never copies a whole series (serq/stats/summary.py).

Memory per recorded sample ≤ 40 bytes (issue 11): four numbers of 8 bytes
each, measured with tracemalloc over the recording and the summary.
"""
from __future__ import annotations

import copy
import math
import pickle
import random
import tracemalloc

import pytest

from serq.report.model import Series
from serq.stats.samples import Samples, Turns, doubles, integers
from serq.stats.summary import nearest_rank, summarize


def test_samples_compare_as_lists():
    s = doubles([1.0, 3.0, 6.0])
    assert s == [1, 3, 6] and s == (1.0, 3.0, 6.0) and s != [1, 3] and s != [1, 3, 7]
    assert integers([0, 2, 1]) == [0, 2, 1]
    assert list(s) == [1.0, 3.0, 6.0] and s[1] == 3.0 and len(s) == 3 and s
    assert s[:2] == [1, 3] and isinstance(s[1:], Samples) and s[::-1] == [6, 3, 1]
    assert not doubles()
    assert pickle.loads(pickle.dumps(s)) == s and copy.deepcopy(s) == s
    assert isinstance(pickle.loads(pickle.dumps(s)), Samples)


def test_turns_read_as_integers():
    t = Turns()
    t.append(1.0)
    t.append(2.0)
    assert t == [1, 2] and list(t) == [1, 2] and t[0] == 1 and isinstance(t[0], int)
    assert t[:1] == [1] and t.tolist() == [1, 2] and all(isinstance(x, int) for x in t)
    assert pickle.loads(pickle.dumps(t)) == t and type(copy.copy(t)) is Turns


def _recorded(n: int) -> Series:
    """A series filled as the generated code fills it (four bound appends)."""
    s = Series()
    v, t, k, u = s.values.append, s.times.append, s.sessions.append, s.turns.append
    rnd = random.Random(5)
    for i in range(n):
        v(rnd.expovariate(1.0))
        t(i * 0.5)
        k(i)
        u(1.0)
    return s


def _peak(n: int) -> int:
    """Bytes traced at the peak of recording `n` samples and summarising them."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        series = _recorded(n)
        assert series.summary().count == n
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_memory_per_sample():
    # the summary's working memory is a fixed few MiB (chunks of keys), not per sample
    small, large = 100_000, 400_000
    slope = (_peak(large) - _peak(small)) / (large - small)
    assert slope <= 40.0, f"{slope:.1f} bytes per sample"


@pytest.mark.parametrize("seed", range(6))
def test_chunked_rank_equals_whole(seed):
    rnd = random.Random(seed)
    pool = [0.0, -0.0, math.inf, -math.inf, 5e-324, -5e-324, 1.0, 1.0 + 2 ** -52, 2.5]
    for _ in range(40):
        n = rnd.randrange(1, 2000)
        if seed % 2:
            values = [rnd.choice(pool) for _ in range(n)]
        else:
            values = [rnd.lognormvariate(0, 3) * rnd.choice((-1, 1)) for _ in range(n)]
        for q in (0.0, 0.01, 0.5, 0.99, 1.0):
            a = nearest_rank(values, q, chunk=rnd.randrange(1, 300))
            b = nearest_rank(values, q, chunk=10 ** 9)
            assert a == b and math.copysign(1, a) == math.copysign(1, b)
            # nearest rank (§3.2): the ⌈q·n⌉-th smallest, at least the first
            rank = min(max(math.ceil(q * n), 1), n)
            assert b == sorted(values)[rank - 1]


def test_summary_of_arrays_equals_lists():
    rng = random.Random(2)  # one generator: 1000 different values
    values = [rng.gauss(3, 1) for _ in range(1000)]
    assert summarize(doubles(values)) == summarize(values)
