"""The capacity search: the largest value of a load parameter `x` at which
every SLO holds, with a 95 % confidence interval.

Method (docs/guide/capacity.md has the long form):

1. **Bracket.** From a start value, grow `x` geometrically (×2) until a
   probe fails, or shrink it (÷2) until one holds. A probe's first
   replication stops it early when the run is plainly overloaded (the
   population grows without bound, or an SLO statistic is already `FAR`
   past its allowance, e.g. a p99 at twice its limit); otherwise
   replications are added (4, 8, 16) until the probe is *settled*: the 95 %
   Student-t interval of every SLO statistic lies on the good side of its
   threshold (the probe holds), or that of one SLO on the bad side (it
   fails).
2. **Locate.** The mean statistic is interpolated linearly between the
   probes around the crossing, and a pair of probes is placed around the
   interpolated crossing (8 replications each) until the pair is narrow
   (`LOCAL` target half-widths): a safeguarded regula falsi.
3. **Estimate, with common random numbers.** Replication `i` runs with
   the same seed at both probes of the pair, so per seed the SLO statistic
   is a line between them (a local linear regression of the sample path,
   as in retrospective approximation: Chen & Schmeiser 2001; Pasupathy &
   Kim 2011). The 95 % interval of the capacity is the set of `x` at which
   the t-test of "the statistic equals its threshold" does not reject
   (Fieller's interval for the root of a line, found by test inversion):
   its ends are the loads at which the interval on the SLO statistic just
   excludes the threshold. Replications are added to the pair — near the
   boundary, not far from it — until the interval is within the precision
   (its width shrinks as t(m−1)/√m). The pair keeps its replications while
   the crossing stays near it; a new pair starts again from the locate
   count.

Coverage: at the true capacity the t-test rejects with probability 5 %, so
the interval covers it in 95 % of searches, up to the bias of the SLO
statistic of a finite run (a nearest-rank p99 of n samples runs about
10/n low) and the curvature of the statistic across the pair (the pair is
a few per cent wide). The noisy-bisection view of the same problem is
Waeber, Frazier & Henderson (2013), "Bisection search with noisy
responses", SIAM J. Control Optim. 51(3).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from .stats import Interval, interval, t_quantile

#: A first replication whose statistic is this far past its allowance
#: (a margin of 1: twice the limit, or twice the allowed miss fraction)
#: marks a probe as plainly overloaded.
FAR = 1.0
#: Growth factor of the bracketing stage.
GROWTH = 2.0
#: Most bracketing steps (2^40: far beyond any sensible start value).
MAX_STEPS = 40
#: Most locate iterations.
MAX_ITERATIONS = 24
#: The two probes around the crossing must be at most this many target
#: half-widths apart before replications are added for precision.
LOCAL = 4.0
#: The pair is never wider than this fraction of the capacity (the statistic
#: must be close to a line across it), whatever the precision.
WIDEST = 0.1
#: The half-width aimed at, as a fraction of the precision target.
AIM = 0.9


@dataclass
class Probe:
    """One value `x` of the load parameter and its replications, in seed
    order: per replication the SLO statistics, their margins (above 0:
    violated), the run's events, goodput and throughput."""

    x: float
    values: list[list[float]] = field(default_factory=list)
    margins: list[list[float]] = field(default_factory=list)
    events: list[float] = field(default_factory=list)
    goodput: list[float] = field(default_factory=list)
    throughput: list[float] = field(default_factory=list)
    overloaded: bool = False

    @property
    def n(self) -> int:
        """Replications run."""
        return len(self.margins)

    def interval(self, k: int, n: Optional[int] = None, margin: bool = True) -> Interval:
        """The 95 % t interval of SLO `k`'s margin (or statistic) over the first `n` seeds."""
        rows = (self.margins if margin else self.values)[:n]
        return interval([r[k] for r in rows])

    def verdict(self, n: Optional[int] = None) -> str:
        """"holds", "fails" or "open" on the first `n` replications."""
        if self.overloaded:
            return "fails"
        if not self.margins:
            return "open"
        ivs = [self.interval(k, n) for k in range(len(self.margins[0]))]
        if any(iv.mean - iv.half_width > 0 for iv in ivs):
            return "fails"
        if all(iv.mean + iv.half_width < 0 for iv in ivs):
            return "holds"
        return "open"


@dataclass
class SearchOutcome:
    """What a search found. `status`: "found" (an interval within the
    precision), "imprecise" (the budget ran out first: the interval is the
    best settled pair), "unbounded" (every probe up to `high` holds),
    "none" (every probe down to `low` fails)."""

    status: str
    low: float
    high: float
    estimate: float
    replications: int
    binding: Optional[int]
    probes: list[Probe]
    pair: Optional[tuple[float, float]] = None
    bracket: Optional[tuple[Optional[float], Optional[float]]] = None

    @property
    def relative_half_width(self) -> float:
        """(high − low) / (high + low)."""
        s = self.high + self.low
        return (self.high - self.low) / s if s > 0 and math.isfinite(self.high) else math.inf


Evaluate = Callable[[Sequence[tuple[float, int]]], None]


class Search:
    """One capacity search over probes kept in `probes` (x → Probe);
    `evaluate(pairs)` must give each probe `x` at least `n` replications
    (seeds 0 … n−1, one batch for all pairs) and mark it overloaded when
    a run said so."""

    def __init__(self, evaluate: Evaluate, probes: dict[float, Probe], *, start: float,
                 precision: float, first: int, most: int, max_runs: int):
        if not (start > 0 and math.isfinite(start)):
            raise ValueError(f"the start value is {start}: the search starts from a "
                             "positive number (--start)")
        self.evaluate, self.probes = evaluate, probes
        self.start, self.precision = float(start), float(precision)
        self.first, self.most, self.max_runs = int(first), int(most), int(max_runs)
        self.bracket: Optional[tuple[Optional[float], Optional[float]]] = None

    # -- bookkeeping --------------------------------------------------------
    def runs(self) -> int:
        """Replications run so far in this search."""
        return sum(p.n for p in self.probes.values())

    def _ensure(self, pairs: Sequence[tuple[float, int]]) -> None:
        want = [(x, n) for x, n in pairs if x not in self.probes or (
            self.probes[x].n < n and not self.probes[x].overloaded)]
        if want:
            self.evaluate(want)

    def _over_budget(self) -> bool:
        return self.runs() >= self.max_runs

    # -- stage 1 -------------------------------------------------------------
    def _settle(self, x: float) -> str:
        self._ensure([(x, 1)])
        p = self.probes[x]
        if p.overloaded or any(m >= FAR for m in p.margins[0]):
            p.overloaded = True
            return "fails"
        n = self.first
        while True:
            self._ensure([(x, n)])
            v = p.verdict()
            if v != "open" or n >= 4 * self.first or self._over_budget():
                return v
            n = min(2 * n, 4 * self.first)

    def _bracket(self) -> tuple[Optional[float], Optional[float], float]:
        x, lo, hi = self.start, None, None
        for _ in range(MAX_STEPS):
            v = self._settle(x)
            if v == "holds":
                lo = x if lo is None else max(lo, x)
            elif v == "fails":
                hi = x if hi is None else min(hi, x)
            if (lo is not None and hi is not None) or self._over_budget():
                break
            x = x * GROWTH if hi is None else x / GROWTH
        return lo, hi, x

    # -- stage 2 -------------------------------------------------------------
    def _crossing(self, k: int) -> Optional[tuple[Probe, Probe]]:
        """The probes around SLO `k`'s crossing: the lowest whose mean margin
        is ≥ 0 (or overloaded), and the highest below it with a margin < 0."""
        ps = sorted(self.probes.values(), key=lambda p: p.x)
        upper = next((p for p in ps if p.overloaded or p.interval(k).mean >= 0), None)
        if upper is None:
            return None
        below = [p for p in ps if p.x < upper.x and not p.overloaded
                 and p.interval(k).mean < 0]
        return (below[-1], upper) if below else None

    def _fit(self, pair: Optional[tuple[Probe, Probe]] = None
             ) -> Optional[tuple[float, float, Probe, Probe]]:
        """The binding SLO's crossing: (x by linear interpolation of the mean
        margin, the replications' spread over the slope — the interval's
        half-width in x is t·that/√n —, the probes below and above it).
        With `pair`, the line through those two probes for every SLO."""
        best = None
        for k in range(self.nslo):
            if pair is None:
                around = self._crossing(k)
                if around is None:
                    continue
            else:
                around = pair
            a, b = around
            ia = a.interval(k)
            if b.overloaded:
                fit = (math.sqrt(a.x * b.x), math.nan, a, b)
            else:
                ib = b.interval(k)
                slope = (ib.mean - ia.mean) / (b.x - a.x)
                if pair is not None and not slope > 0:
                    continue  # this SLO does not tighten across the pair
                c = a.x - ia.mean / slope
                fit = (c, _spread(ia, ib, a.x, b.x, c) / slope, a, b)
            if best is None or fit[0] < best[0]:
                best = fit
        return best

    @property
    def nslo(self) -> int:
        """How many SLOs the probes carry."""
        return len(next(iter(self.probes.values())).margins[0])

    def _choose_m(self, unit: float, c: float, m: int) -> int:
        room = max(m, (self.max_runs - self.runs()) // 2)
        top = min(self.most, 4 * m, room)
        for n in range(m, top + 1):
            if t_quantile(n - 1) * unit / math.sqrt(n) <= AIM * self.precision * c:
                return n
        return max(m, top)

    def run(self) -> SearchOutcome:
        """Bracket, then locate; the outcome (see `SearchOutcome`)."""
        lo, hi, last = self._bracket()
        self.bracket = (lo, hi)
        if hi is None:
            return self._outcome("unbounded", last, math.inf, 0, None)
        if lo is None:
            return self._outcome("none", 0.0, last, 0, None)
        m = located = 2 * self.first  # replications for precision; at a new pair
        held: Optional[tuple[Probe, Probe]] = None  # the pair replications go to
        for _ in range(MAX_ITERATIONS):
            fit = self._fit(held) if held is not None else None
            if fit is None or not self._local(fit):
                held, fit = None, self._fit()
            if fit is None:
                break
            c, unit, a, b = fit
            window = self._window(c)
            if not self._local(fit):
                # locate: a pair of probes around the interpolated crossing
                w = min(self.precision, WIDEST / LOCAL) * c
                pair = [_tidy(max(c - w, a.x + 0.05 * (b.x - a.x))),
                        _tidy(min(c + w, b.x - 0.05 * (b.x - a.x)))]
                self._ensure([(x, located) for x in pair])
                continue
            fresh = held is None or held[0] is not a or held[1] is not b
            held = (a, b)  # kept while the crossing stays near it
            m = self._choose_m(unit, c, max(located if fresh else m, min(a.n, b.n)))
            self._ensure([(a.x, m), (b.x, m)])
            ends = fieller(a, b, m, reach=max(b.x - a.x, 2 * window))
            if ends is not None:
                low, high, k = ends
                if (high - low) / (high + low) <= self.precision:
                    return self._outcome("found", low, high, m, k, (a, b))
            if self._over_budget() or m >= self.most:
                if ends is not None:
                    return self._outcome("imprecise", ends[0], ends[1], m, ends[2], (a, b))
                break
            if ends is None:
                m = min(self.most, 2 * m)  # the ends lie far out: more seeds
            else:
                m = self._grow(m, (ends[1] - ends[0]) / (ends[1] + ends[0]))
        return self._outcome("imprecise", lo, hi, self.first, None)

    def _window(self, c: float) -> float:
        """How wide the pair may be around a crossing at `c`."""
        return min(LOCAL * self.precision, WIDEST) * c

    def _local(self, fit: tuple[float, float, Probe, Probe]) -> bool:
        """Whether the fit's pair is narrow and near its crossing (replications
        for precision go to it), else a new pair must be placed."""
        c, unit, a, b = fit
        window = self._window(c)
        return not b.overloaded and math.isfinite(unit) and b.x - a.x <= window \
            and a.x - window / 2 <= c <= b.x + window / 2

    def _grow(self, m: int, rel: float) -> int:
        """The replications at which an interval of relative half-width `rel`
        on `m` seeds shrinks to the aim: the width goes as t(n−1)/√n."""
        goal, t_m = AIM * self.precision, t_quantile(m - 1)
        n = m + 1
        while n < self.most and rel * t_quantile(n - 1) / t_m * math.sqrt(m / n) > goal:
            n += 1
        return min(self.most, n)

    def _outcome(self, status: str, low: float, high: float, m: int, k: Optional[int],
                 pair: Optional[tuple[Probe, Probe]] = None) -> SearchOutcome:
        est = math.nan
        if status in ("found", "imprecise"):
            fit = self._fit(pair) if pair is not None else self._fit()
            est = fit[0] if fit is not None else 0.5 * (low + high)
            est = min(max(est, low), high)
        probes = sorted(self.probes.values(), key=lambda p: p.x)
        return SearchOutcome(status, low, high, est, m, k, probes,
                             (pair[0].x, pair[1].x) if pair else None, self.bracket)


#: Points at which the interpolated t-test is evaluated between and around the pair.
FIELLER_POINTS = 4001


def fieller(a: Probe, b: Probe, m: int, reach: Optional[float] = None
            ) -> Optional[tuple[float, float, int]]:
    """The 95 % interval of the crossing from two probes `a` < `b` on the
    same first `m` seeds: per seed, the SLO margins are interpolated
    linearly between the probes; the interval is the set of `x` at which
    the t-test of "mean margin = 0" is not rejected for the binding SLO
    (Fieller's interval for the root of a line, by test inversion). Its
    ends are where the t interval first lies wholly below 0 for every SLO
    (holds) and wholly above 0 for one (fails). Returns (low, high, the
    binding SLO's index), or None when the ends are not inside the window
    (the pair ± `reach`, default its width)."""
    import numpy as np
    ya = np.asarray(a.margins[:m], dtype=float)  # m × SLOs
    yb = np.asarray(b.margins[:m], dtype=float)
    w = b.x - a.x
    r = w if reach is None else reach
    xs = np.linspace(a.x - r, b.x + r, FIELLER_POINTS)
    alpha = (xs - a.x) / w                       # points
    t = t_quantile(m - 1)
    holds = np.ones(len(xs), dtype=bool)
    fails = np.zeros(len(xs), dtype=bool)
    first_fail: list[float] = []
    for k in range(ya.shape[1]):
        z = ya[:, k][None, :] + alpha[:, None] * (yb[:, k] - ya[:, k])[None, :]
        mean = z.mean(axis=1)
        hw = t * z.std(axis=1, ddof=1) / math.sqrt(m)
        holds &= mean + hw < 0
        f = mean - hw > 0
        fails |= f
        first_fail.append(float(xs[np.argmax(f)]) if f.any() else math.inf)
    if not fails.any():
        return None
    hi_i = int(np.argmax(fails))
    below = np.nonzero(holds[:hi_i])[0]
    if len(below) == 0 or hi_i == 0:
        return None
    return float(xs[below[-1]]), float(xs[hi_i]), int(np.argmin(first_fail))


def _tidy(x: float) -> float:
    """A probe value rounded to 6 significant digits (readable --set values)."""
    return float(f"{x:.6g}")


def _spread(ia: Interval, ib: Interval, xa: float, xb: float, c: float) -> float:
    """The replications' standard deviation interpolated at `c`."""
    sa = ia.std if math.isfinite(ia.std) else ib.std
    sb = ib.std if math.isfinite(ib.std) else sa
    w = min(max((c - xa) / (xb - xa), 0.0), 1.0)
    return (1 - w) * sa + w * sb
