"""Time-averaged signals and the inter-token histogram (spec Part 06 §6.2, §7).

`GaugeTrace` keeps the change points of a piecewise-constant value (a
gauge) and summarises it over the measured span: the exact time average,
the batch-means interval over 20 equal windows, and the least and greatest
value held for a positive time. `LogHistogram` is upstream's logarithmic
histogram with buckets 1 % wide, used for `itl_p50` / `itl_p99`.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from .summary import BATCHES, NAN, batch_means_half_width, sum_in_order

#: ln(1.01): the width of a histogram bucket on the log scale (§6.2).
_LOG_WIDTH: float = math.log1p(0.01)
#: The bucket of every value ≤ 0, below all others.
_NONPOSITIVE: int = -(2 ** 31)
VECTOR_MIN = 128  # gaps that `LogHistogram.add_many` adds with numpy (fewer: one by one)
VECTOR_CHUNK = 1 << 16  # ... at most this many at a time


def _same(a: float, b: float) -> bool:
    """Equal values, NaN equal to NaN (a NaN gauge does not change at every instant)."""
    return a == b or (a != a and b != b)


class GaugeTrace:
    """The change points `(t, v)` of one gauge, from time 0 (warm-up included)."""

    def __init__(self) -> None:
        self.points: list[tuple[float, float]] = []

    def record(self, t: float, v: float) -> None:
        """Note the settled value `v` at time `t` (call after each settled instant).

        A point is stored only when `v` differs from the value held before;
        the first call (at t = 0) always stores one. A second call at the
        same time replaces that instant's value (only the settled value
        counts), and drops the point if the value no longer changes.
        """
        v = float(v)
        t = float(t)
        if self.points and self.points[-1][0] == t:
            self.points.pop()
            if self.points and _same(self.points[-1][1], v):
                return
            self.points.append((t, v))
            return
        if self.points and _same(self.points[-1][1], v):
            return
        self.points.append((t, v))

    def finish(self, warmup: float, end: float) -> tuple[float, float, float, float]:
        """`(mean, ci, min, max)` over `[warmup, end]` (§7).

        `mean` is the exact time average; `ci` the half-width over 20 equal
        windows (window mean = its integral / Δ); `min`/`max` are over the
        values held for a positive time within the span. All NaN when the
        span is empty or nothing was recorded.
        """
        return time_stats(self.points, warmup, end)


def time_stats(points: list[tuple[float, float]], start: float, end: float,
               windows: int = BATCHES) -> tuple[float, float, float, float]:
    """`(mean, ci, min, max)` of a step signal given by its change points, over `[start, end]`.

    A value set before `start` holds into the span. Window `w` covers
    `[start + w·Δ, start + (w+1)·Δ)`, the last one ending exactly at `end`;
    each segment adds its overlap with every window it touches, the window
    bounds being computed (not stepped), so rounding never drops a window.
    """
    span = end - start
    if not span > 0.0 or not points or windows < 1:
        return NAN, NAN, NAN, NAN
    width = span / windows
    sums = [0.0] * windows
    total = 0.0
    lo, hi = math.inf, -math.inf

    def window_of(x: float) -> int:
        return min(int(max((x - start) / width, 0.0)), windows - 1)

    def bounds(w: int) -> tuple[float, float]:
        w_lo = start if w == 0 else start + w * width
        w_hi = end if w == windows - 1 else start + (w + 1) * width
        return w_lo, w_hi

    for k, (t, v) in enumerate(points):
        following = points[k + 1][0] if k + 1 < len(points) else end
        a, b = max(t, start), min(following, end)
        if b <= a:
            continue
        lo, hi = min(lo, v), max(hi, v)
        total += v * (b - a)
        for w in range(max(window_of(a) - 1, 0), min(window_of(b) + 2, windows)):
            w_lo, w_hi = bounds(w)
            overlap = min(b, w_hi) - max(a, w_lo)
            if overlap > 0.0:
                sums[w] += v * overlap
    if lo > hi:  # no value held for a positive time
        return NAN, NAN, NAN, NAN
    ci = batch_means_half_width([s / width for s in sums], windows) if windows >= 2 else NAN
    return total / span, ci, lo, hi


class LogHistogram:
    """Counts in buckets 1 % wide on the log scale, for quantiles of positive gaps (§6.2).

    A gap `x > 0` goes to bucket `⌊ln x / ln 1.01⌋`, every `x ≤ 0` to one
    bucket below all others; a bucket keeps its count and the least and
    greatest value it received. The mean is exact (a left-to-right sum).
    """

    def __init__(self) -> None:
        self._buckets: dict[int, list[float]] = {}  # k -> [count, least, greatest]
        self.count: int = 0
        self._sum: float = 0.0

    def add(self, x: float) -> None:
        """Add one gap."""
        self.add_many((float(x),))

    def add_many(self, xs: Sequence[float]) -> None:
        """Add the gaps `xs` (floats), in order: each to its bucket, the sum
        left to right (a gap equal to the one before it only counts: its
        bucket's bounds hold it already). Many positive gaps at once go
        through numpy (`_add_arrays`), with the same result."""
        if len(xs) >= VECTOR_MIN and self._add_arrays(xs):
            return
        buckets = self._buckets
        log = math.log
        floor = math.floor
        width = _LOG_WIDTH
        total = self._sum
        prev = None
        bucket: list = []
        run = 0  # gaps equal to `prev` since it, not counted yet
        for x in xs:
            total += x
            if x == prev:
                run += 1
                continue
            if run:
                bucket[0] += run
                run = 0
            prev = x
            k = floor(log(x) / width) if x > 0.0 else _NONPOSITIVE
            bucket = buckets.get(k)
            if bucket is None:
                bucket = buckets[k] = [1, x, x]
            else:
                bucket[0] += 1
                if x < bucket[1]:
                    bucket[1] = x
                elif x > bucket[2]:
                    bucket[2] = x
        if run:
            bucket[0] += run
        self.count += len(xs)
        self._sum = total

    def _add_arrays(self, xs: Sequence[float]) -> bool:
        """`add_many` with numpy, `VECTOR_CHUNK` gaps at a time (a chunk's
        temporaries stay small), when every gap is positive and finite (else
        False, nothing added)."""
        x = np.asarray(xs, dtype=np.float64)
        if not (x > 0.0).all() or not np.isfinite(x).all():
            return False
        for i in range(0, len(x), VECTOR_CHUNK):
            self._add_array(x[i:i + VECTOR_CHUNK])
        return True

    def _add_array(self, x: np.ndarray) -> None:
        """Add the positive, finite gaps `x` in order, as the loop of
        `add_many` does. The sum adds left to right as the loop does
        (`sum_in_order`); a bucket is `⌊ln x / ln 1.01⌋` as the loop
        computes it, numpy's `log` checked against `math.log` wherever the
        quotient lies within 1e-6 of a whole number (a log a few ulps apart
        moves it by about 1e-12: only there could `⌊⌋` differ); counts,
        least and greatest do not depend on the order."""
        y = np.log(x) / _LOG_WIDTH
        k = np.floor(y)
        near = np.flatnonzero(np.abs(y - np.rint(y)) < 1e-6)
        if len(near):
            log, floor, width = math.log, math.floor, _LOG_WIDTH
            for i in near.tolist():
                k[i] = floor(log(float(x[i])) / width)
        order = np.argsort(k, kind="stable")
        ks = k[order]
        xs_sorted = x[order]
        starts = np.flatnonzero(np.concatenate(([True], ks[1:] != ks[:-1])))
        counts = np.diff(np.append(starts, len(x)))
        least = np.minimum.reduceat(xs_sorted, starts)
        greatest = np.maximum.reduceat(xs_sorted, starts)
        buckets = self._buckets
        for b, c, lo, hi in zip(ks[starts].astype(np.int64).tolist(), counts.tolist(),
                                least.tolist(), greatest.tolist()):
            bucket = buckets.get(b)
            if bucket is None:
                buckets[b] = [c, lo, hi]
            else:
                bucket[0] += c
                if lo < bucket[1]:
                    bucket[1] = lo
                if hi > bucket[2]:
                    bucket[2] = hi
        self._sum = sum_in_order(self._sum, x)
        self.count += len(x)

    def mean(self) -> float:
        """The exact mean of the gaps; NaN if none."""
        return self._sum / self.count if self.count else NAN

    def quantile(self, q: float) -> float:
        """The `q` quantile: rank `min(max(⌈q·n⌉, 1), n)`, its bucket's geometric middle
        `exp((k + 0.5)·ln 1.01)` (0 for the non-positive bucket) clamped into the
        bucket's `[least, greatest]`; NaN if empty."""
        if self.count == 0:
            return NAN
        rank = min(max(math.ceil(q * self.count), 1), self.count)
        seen = 0
        found: Optional[int] = None
        for k in sorted(self._buckets):
            seen += int(self._buckets[k][0])
            if seen >= rank:
                found = k
                break
        assert found is not None, "bucket counts add up to n"
        _, least, greatest = self._buckets[found]
        middle = 0.0 if found == _NONPOSITIVE else math.exp((found + 0.5) * _LOG_WIDTH)
        return min(max(middle, least), greatest)
