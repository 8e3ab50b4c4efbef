"""Summary statistics of a series of samples (spec Part 06 §3).

`summarize` gives what the report shows for an `observe` series or a client
series: the count, the mean (Welford's update, for results equal to serq's
to the last bit), the half-width of the batch-means 95 % interval (§3.1),
cv² and the nearest-rank 99th percentile (§3.2) -- the reference's
statistics -- and the nearest-rank percentiles serving benchmarks report
(`PERCENTILES`: p50, p90, p95, p99, or those asked for).

Sums are written as explicit left-to-right loops on purpose: Python 3.12's
built-in `sum` compensates float rounding, which would move the last bit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: Number of batches of the batch-means interval (§3.1).
BATCHES: int = 20
#: Two-sided 95 % Student-t quantile for 19 degrees of freedom, rounded to
#: three decimals, the constant upstream hard-codes (§3.1): 2.093
#: (`round(scipy.special.stdtrit(19, 0.975), 3)`, tests/test_t_quantiles.py).
T95: float = 2.093
#: Samples below which a series has no interval (§3.1).
MIN_SAMPLES: int = 40
#: The percentiles a summary has unless others are asked for (`--percentiles`):
#: those `vllm bench serve` reports.
PERCENTILES: tuple[float, ...] = (50.0, 90.0, 95.0, 99.0)

NAN = float("nan")
INF = float("inf")


@dataclass(frozen=True)
class Summary:
    """The summary of one series (§3, JSON §9.2).

    `mean`, `cv2`, `p99` are NaN when undefined; `ci` is `+inf` when there
    are fewer than `MIN_SAMPLES` samples (the text report prints `±inf`, the
    JSON writes `null`). `percentiles` holds `(q, value)` pairs in ascending
    `q` (`PERCENTILES` unless others were asked for; NaN without samples).
    """

    count: int
    mean: float
    ci: float
    cv2: float
    p99: float
    percentiles: tuple[tuple[float, float], ...] = ()

    def percentile(self, q: float) -> float:
        """The nearest-rank `q`-th percentile (`q` one of `percentiles`', or 99)."""
        for p, value in self.percentiles:
            if p == q:
                return value
        if q == 99.0:
            return self.p99
        have = ", ".join(percentile_key(p) for p, _v in self.percentiles)
        raise KeyError(f"no p{q:g} in this summary (it has {have or 'p99'})")

    @property
    def p50(self) -> float:
        """The median (nearest rank)."""
        return self.percentile(50.0)

    @property
    def p90(self) -> float:
        """The nearest-rank 90th percentile."""
        return self.percentile(90.0)

    @property
    def p95(self) -> float:
        """The nearest-rank 95th percentile."""
        return self.percentile(95.0)


def percentile_key(q: float) -> str:
    """A percentile's name in reports: `p50`, `p99`, `p99.9`."""
    return f"p{q:g}"


def parse_percentiles(text: str) -> tuple[float, ...]:
    """`"50,90,99.9"` → `(50.0, 90.0, 99.9)` (sorted, without repeats);
    ValueError naming the bad item unless each is a number in (0, 100]."""
    out: set[float] = set()
    for item in text.split(","):
        item = item.strip()
        try:
            q = float(item)
        except ValueError:
            raise ValueError(f"percentile `{item}` is not a number (write e.g. 50,90,99.9)") \
                from None
        if not 0.0 < q <= 100.0:
            raise ValueError(f"percentile {item} is outside (0, 100]")
        out.add(q)
    return tuple(sorted(out))


def sum_in_order(x0: float, terms: Sequence[float]) -> float:
    """`x0` plus the terms, added left to right, as a loop of `+=` adds them
    (`np.add.accumulate` adds in order: no pairwise summation)."""
    if not len(terms):
        return x0
    acc = np.empty(len(terms) + 1)
    acc[0] = x0
    acc[1:] = terms
    return float(np.add.accumulate(acc)[-1])


def welford(values: Sequence[float]) -> tuple[int, float, float]:
    """`(n, mean, M)` by Welford's online update in recording order (§3).

    `M` is the sum of squared deviations; the sample variance is `M/(n−1)`.
    The mean of no sample is NaN.
    """
    n = 0
    mean = 0.0
    m2 = 0.0
    for x in values:
        n += 1
        d = x - mean
        mean += d / n
        m2 += d * (x - mean)
    return n, (mean if n else NAN), m2


def batch_means(values: Sequence[float], batches: int = BATCHES) -> list[float]:
    """The means of `batches` consecutive batches of `b = ⌊n/B⌋` samples (the
    samples after the last whole batch are not used); empty when `b < 1`.
    Sums left to right, as the report's interval needs them to the last bit."""
    size = len(values) // batches if batches > 0 else 0
    if size < 1:
        return []
    means: list[float] = []
    for k in range(batches):
        acc = 0.0
        for x in values[k * size:(k + 1) * size]:
            acc += x
        means.append(acc / size)
    return means


def batch_means_half_width(values: Sequence[float], batches: int = BATCHES) -> float:
    """Half-width `t·√(S²/B)` of the batch-means interval over `batches` batches.

    Batch `k` holds samples `k·b … (k+1)·b − 1`, `b = ⌊n/B⌋`; the samples
    after the last whole batch are not used. `+inf` when `b < 1` (or fewer
    than 2 batches). The t quantile is `T95` for 20 batches, 2.0 otherwise
    (upstream's rule; the report only uses 20).
    """
    if batches < 2:
        return INF
    means = batch_means(values, batches)
    if not means:
        return INF
    total = 0.0
    for m in means:
        total += m
    centre = total / batches
    squares = 0.0
    for m in means:
        d = m - centre
        squares += d * d
    variance = squares / (batches - 1)
    t = T95 if batches == BATCHES else 2.0
    return t * math.sqrt(variance / batches)


def _total_order_keys(values: Sequence[float]) -> np.ndarray:
    """Integer keys that sort doubles in IEEE total order (−0 before +0, NaN last).

    A fresh array (one copy of the samples, changed in place), so that the
    caller may partition it in place."""
    keys = np.array(values, dtype=np.float64).view(np.int64)
    np.bitwise_xor(keys, np.int64(0x7FFFFFFFFFFFFFFF), out=keys, where=keys < 0)
    return keys


#: Samples per step of the radix selection (512 KiB of keys at a time).
CHUNK: int = 1 << 16
_FLIP = 0x7FFFFFFFFFFFFFFF
_SIGN = 1 << 63


def _from_key(key: int) -> float:
    bits = key if key >= 0 else key ^ _FLIP
    return float(np.array([bits], dtype=np.int64).view(np.float64)[0])


def _biased(values: Sequence[float]) -> np.ndarray:
    """Unsigned keys in total order (the signed keys with the sign bit flipped)."""
    return _total_order_keys(values).view(np.uint64) ^ np.uint64(_SIGN)


def _kth_key(values: Sequence[float], k: int, chunk: int) -> int:
    """The `k`-th smallest (0-based) total-order key of `values`, never
    holding more than about `chunk` keys at once: a radix selection on 16
    bits a pass, until the keys left fit in a chunk."""
    n = len(values)
    if n <= chunk:
        keys = _total_order_keys(values)
        keys.partition(k)
        return int(keys[k])
    prefix, bits = 0, 0  # the top `bits` bits of the wanted key are `prefix`
    while True:
        shift = 48 - bits
        counts = np.zeros(1 << 16, dtype=np.int64)
        for lo in range(0, n, chunk):
            u = _biased(values[lo:lo + chunk])
            if bits:
                u = u[(u >> np.uint64(64 - bits)) == np.uint64(prefix)]
            counts += np.bincount(((u >> np.uint64(shift)) & np.uint64(0xFFFF)).astype(np.intp),
                                  minlength=1 << 16)
        below = np.cumsum(counts)
        digit = int(np.searchsorted(below, k, side="right"))
        k -= int(below[digit - 1]) if digit else 0
        prefix, bits = (prefix << 16) | digit, bits + 16
        if bits == 64:
            return prefix - _SIGN  # the biased key back to the signed one
        if counts[digit] <= chunk:  # the rest fits: gather it and partition
            parts = []
            for lo in range(0, n, chunk):
                u = _biased(values[lo:lo + chunk])
                parts.append(u[(u >> np.uint64(64 - bits)) == np.uint64(prefix)])
            rest = np.concatenate(parts)
            rest.partition(k)
            return int(rest[k]) - _SIGN


def nearest_rank(values: Sequence[float], q: float, chunk: int = CHUNK) -> float:
    """The sample of rank `min(max(⌈q·n⌉, 1), n)` in ascending order; NaN if none (§3.2).

    Long series are searched `chunk` samples at a time, so that the
    summary never holds a second copy of them."""
    n = len(values)
    if n == 0:
        return NAN
    rank = min(max(math.ceil(q * n), 1), n)
    return _from_key(_kth_key(values, rank - 1, chunk))


def nearest_ranks(values: Sequence[float], qs: Sequence[float],
                  chunk: int = CHUNK) -> list[float]:
    """`nearest_rank(values, q / 100)` for each percentile `q` of `qs`; a
    short series is partitioned once for all of them."""
    n = len(values)
    if n == 0 or n > chunk:
        return [nearest_rank(values, q / 100.0, chunk) for q in qs]
    ranks = [min(max(math.ceil(q / 100.0 * n), 1), n) - 1 for q in qs]
    keys = _total_order_keys(values)
    keys.partition(sorted(set(ranks)))
    return [_from_key(int(keys[k])) for k in ranks]


def summarize(values: Sequence[float],
              percentiles: Sequence[float] = PERCENTILES) -> Summary:
    """The §3 summary of `values` (after warm-up, in recording order), with
    the nearest-rank `percentiles` (in (0, 100])."""
    n, mean, m2 = welford(values)
    cv2 = NAN
    if n >= 2 and mean != 0.0 and not math.isnan(mean):
        variance = m2 / (n - 1)
        square = mean * mean
        # a mean whose square underflows: the ratio is unbounded
        cv2 = variance / square if square != 0.0 else (INF if variance > 0 else NAN)
    ci = batch_means_half_width(values) if n >= MIN_SAMPLES else INF
    qs = sorted(set(float(q) for q in percentiles) | {99.0})
    ranked = dict(zip(qs, nearest_ranks(values, qs)))
    return Summary(count=n, mean=mean, ci=ci, cv2=cv2, p99=ranked[99.0],
                   percentiles=tuple((q, ranked[q]) for q in sorted(set(map(float, percentiles)))))
