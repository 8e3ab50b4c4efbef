"""The report's summary statistics to the last bit (`serq/stats/summary.py`,
spec Part 06 §3). These close gaps that mutation testing found: no test
compared a non-integer mean exactly, the chunked nearest-rank was not run
on keys that share their leading bits, and cv² of a mean whose square
underflows was unchecked."""
from __future__ import annotations

import math
import random

import pytest

from serq.stats.summary import (BATCHES, batch_means, batch_means_half_width, nearest_rank,
                                summarize, sum_in_order, welford)


def test_welford_mean_is_the_running_update_not_the_sum():
    """Part 06 §3: the mean is Welford's update `mean += (x − mean)/n` from
    0 in recording order. For 0.1, 0.2, 0.3 that gives 0.2 exactly
    (0.1, then 0.1 + 0.1/2 = 0.15000000000000002, then + 0.15/3 → 0.2), while the
    plain sum divided by 3 gives 0.20000000000000004."""
    n, mean, m2 = welford([0.1, 0.2, 0.3])
    assert n == 3
    assert mean == 0.2
    assert (0.1 + 0.2 + 0.3) / 3 == 0.20000000000000004  # what a sum would give
    # M = Σ d·(x − mean) with the same running means: 0 + 0.1·0.05 + 0.15·0.1
    assert m2 == 0.1 * (0.2 - 0.15000000000000002) + (0.3 - 0.15000000000000002) * (0.3 - 0.2)
    assert summarize([0.1, 0.2, 0.3]).mean == 0.2


def test_welford_of_nothing_is_nan():
    n, mean, m2 = welford([])
    assert n == 0 and math.isnan(mean) and m2 == 0.0


def test_welford_order_matters_as_recorded():
    """The update runs in recording order: the same values in another
    order may round differently (here they do), and the summary follows
    the recorded order."""
    a = [0.1, 0.2, 0.3, 0.7, 1e-3]
    b = [0.1, 0.2, 0.7, 1e-3, 0.3]
    assert welford(a)[1] == 0.2602
    assert welford(b)[1] == 0.26020000000000004
    assert summarize(b).mean == 0.26020000000000004


@pytest.mark.parametrize("chunk", [16, 64, 1 << 16])
def test_nearest_rank_on_keys_sharing_leading_bits(chunk):
    """§3.2: the sample of rank ⌈q·n⌉. 500 values 1 + i·2⁻⁵² share their top
    55 bits, so the radix selection must go down to the last 16-bit digit;
    shuffled, q = 0.99 → rank 495 → 1 + 494·2⁻⁵²."""
    values = [1.0 + i * 2.0 ** -52 for i in range(500)]
    random.Random(7).shuffle(values)
    assert nearest_rank(values, 0.99, chunk=chunk) == 1.0 + 494 * 2.0 ** -52
    assert nearest_rank(values, 0.0, chunk=chunk) == 1.0  # rank max(⌈0⌉, 1) = 1
    assert nearest_rank(values, 1.0, chunk=chunk) == 1.0 + 499 * 2.0 ** -52
    assert nearest_rank(values, 0.5, chunk=chunk) == 1.0 + 249 * 2.0 ** -52


def test_nearest_rank_when_no_pass_narrows_to_a_chunk():
    """More equal samples than a chunk holds: the radix selection reads all
    four 16-bit digits (64 bits) and returns the key itself."""
    values = [2.0] * 5 + [1.0] * 20
    assert nearest_rank(values, 0.5, chunk=4) == 1.0   # rank 13 of 25
    assert nearest_rank(values, 0.99, chunk=4) == 2.0  # rank 25
    assert nearest_rank(values, 0.8, chunk=4) == 1.0   # rank 20, the last 1.0
    assert nearest_rank(values, 0.81, chunk=4) == 2.0  # rank 21


def test_nearest_rank_keeps_the_sign_of_zero():
    """Key 0 is +0.0 itself (its bits are all zero); −0.0 sorts before it."""
    assert nearest_rank([0.0], 0.5) == 0.0  # not the NaN a flipped key would give
    assert math.copysign(1.0, nearest_rank([0.0], 0.5)) == 1.0
    assert math.copysign(1.0, nearest_rank([-0.0], 0.5)) == -1.0
    assert math.copysign(1.0, nearest_rank([0.0, -0.0], 0.5)) == -1.0  # rank 1
    assert math.copysign(1.0, nearest_rank([0.0, -0.0], 1.0)) == 1.0   # rank 2


@pytest.mark.parametrize("chunk", [8, 100, 1 << 16])
def test_nearest_rank_signs_zeros_and_chunks(chunk):
    """Total order: negatives before −0 before +0 before positives; rank
    ⌈q·n⌉ of 1000 values is the sorted list's element ⌈q·n⌉ − 1."""
    rng = random.Random(3)
    values = [rng.uniform(-5, 5) for _ in range(997)] + [-0.0, 0.0, -1e-300]
    ordered = sorted(values)
    for q in (0.001, 0.25, 0.5, 0.9, 0.99, 0.999):
        assert nearest_rank(values, q, chunk=chunk) == ordered[math.ceil(q * 1000) - 1]
    assert math.isnan(nearest_rank([], 0.99, chunk=chunk))


def test_cv2_when_the_mean_squared_underflows():
    """cv² = s²/mean² (§3). For 1e-100, −1e-100, 3e-163 Welford's mean is
    about 1e-163, whose square (about 1e-326) underflows to 0, while s² = 1e-200: the
    ratio in IEEE arithmetic (the reference's f64 division) is +inf."""
    s = summarize([1e-100, -1e-100, 3e-163])
    assert 0.0 < s.mean < 2e-163 and s.mean * s.mean == 0.0
    assert s.cv2 == math.inf
    # no spread at all: 0/0 stays undefined
    assert math.isnan(summarize([1e-170, 1e-170]).cv2)
    # the defined cases: §3's W-1 example, 1..45 → 172.5/529
    assert summarize([float(i) for i in range(1, 46)]).cv2 == 0.32608695652173914
    # mean 0 and n < 2: undefined (§3 table)
    assert math.isnan(summarize([-1.0, 1.0]).cv2)
    assert math.isnan(summarize([5.0]).cv2)


def test_batch_means_use_whole_batches_only():
    """§3.1: b = ⌊n/20⌋, the samples after the last whole batch unused."""
    values = [float(i) for i in range(45)]  # b = 2, samples 40..44 unused
    means = batch_means(values)
    assert len(means) == BATCHES
    assert means[0] == 0.5 and means[-1] == 38.5
    assert batch_means(values[:19]) == []
    # other batch counts: 3 batches of 15 for 45 samples
    assert batch_means(values, 3) == [7.0, 22.0, 37.0]
    assert batch_means(values, 0) == []
    assert batch_means([1.0, 2.0, 3.0, 4.0], 1) == [2.5]  # one batch: the mean


def test_half_width_for_other_batch_counts():
    """Upstream's rule: t = 2.093 for 20 batches, 2.0 otherwise; fewer than 2
    batches (or b < 1) has no interval. 3 batches of [7, 22, 37]: S² = 225,
    half-width 2·√(225/3) = 17.32…"""
    values = [float(i) for i in range(45)]
    assert batch_means_half_width(values, 3) == 2.0 * math.sqrt(225.0 / 3)
    assert batch_means_half_width(values, 1) == math.inf
    # 2 batches of 22 (samples 0..21, 22..43): means 10.5 and 32.5, S² = 242
    assert batch_means_half_width(values, 2) == 2.0 * math.sqrt(242.0 / 2)
    assert batch_means_half_width(values[:2], 3) == math.inf
    # §3's W-1 example (1..45, 20 batches of 2): 5.537557494058189
    assert batch_means_half_width([float(i) for i in range(1, 46)]) == 5.537557494058189


def test_a_summary_is_a_value():
    """A summary is immutable and hashable: reports share them freely."""
    import dataclasses
    s = summarize([1.0, 2.0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.mean = 0.0
    assert hash(s) == hash(summarize([1.0, 2.0]))


def test_sum_in_order_adds_left_to_right():
    """1e16 + 1 + 1 added left to right stays 1e16 (each 1 is lost);
    a compensated or pairwise sum would give 1.0000000000000002e16."""
    assert sum_in_order(1e16, [1.0, 1.0]) == 1e16
    assert sum_in_order(2.5, []) == 2.5
    assert sum_in_order(0.0, [0.1, 0.2, 0.3]) == 0.6000000000000001
