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
3. **Pilot.** A pair of probes around the crossing, a few per cent of the
   capacity apart, runs a fixed `PILOT` (16) seeds — the same seeds at
   both (common random numbers), so per seed the SLO statistic is a line
   between them. The pilot gives the crossing `c`, the slope of the mean
   statistic with its standard error (from the per-seed slopes), and the
   replications' spread.
4. **Final batch.** `m` replications at `c` on a fresh block of seeds that
   no probe has run, `m` chosen from the pilot so that the expected
   half-width is `AIM` (85 %) of the precision. The 95 % interval is
   Fieller's for the root of the line "final mean + slope·(x − c)": the
   loads `x` at which |mean + slope·(x − c)| ≤ t·√(var(mean) +
   (x − c)²·var(slope)), the level from the final batch, the slope from
   the pilot (independent of it). It is reported whatever its width (so
   the precision is the width aimed at, met two to three times in four).

Why the final batch is fresh: the search looks at the pilot and every
probe to decide where to look and how many runs to spend, but never at
the final batch before it is complete, and its size does not depend on
it; given everything before it, the final batch is a fixed number of
independent replications at a fixed load, so its t statistic has its
nominal distribution. (Adding replications until the interval is narrow
enough — optional stopping — stops when the sample spread happens to be
low; for a right-skewed p99, runs without a long busy period have a low
spread and a low mean at once, so the narrow intervals sit too high.)
What remains assumed: the run's statistic is the steady-state one (a
nearest-rank p99 of n samples is biased low by about 10/n relative); the
mean of `m` runs is about normal; the statistic is linear between `c` and
the capacity with the pilot's slope (the pilot pair is a few per cent
wide). A final batch is never replaced by another because it came out
wide: choosing among batches by their width is a milder optional stopping
(scripts/capacity_final_batch_sim.py, a pilot of 16 and batches of
about 80: keeping the first batch covers 95.0 % for normal runs and
94.0 % for runs with skewness 1.4; a second batch whenever the first is
wider than the precision, 95.0 % and 93.4 %). The noisy-bisection view of the same
problem is Waeber, Frazier & Henderson (2013), "Bisection search with
noisy responses", SIAM J. Control Optim. 51(3); common random numbers
for the slope as in retrospective approximation (Chen & Schmeiser 2001;
Pasupathy & Kim 2011).
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
#: The pair is at most this fraction of the capacity either side of the
#: crossing (the precision, if smaller): wide enough for the slope.
HALF_PAIR = 0.4 * WIDEST
#: The pilot pair spans at least half this fraction of the window around
#: the crossing (a wider pair has a better-known slope).
PILOT_SPAN = 0.9
#: The half-width aimed at, as a fraction of the precision target (the
#: final interval's width is set by the pilot; its centre moves a little).
AIM = 0.85
#: Replications of the pilot at the pair (at least 4 × the first count):
#: fixed before they are seen, so their spread is an unselected estimate.
PILOT = 16


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
    #: The seed index of the first replication (replication i runs seed
    #: index first_seed + i): 0, but a later, fresh block for a final batch.
    first_seed: int = 0

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
    #: The load of the final batch the interval comes from.
    final: Optional[float] = None

    @property
    def relative_half_width(self) -> float:
        """(high − low) / (high + low)."""
        s = self.high + self.low
        return (self.high - self.low) / s if s > 0 and math.isfinite(self.high) else math.inf


Evaluate = Callable[[Sequence[tuple[Probe, int]]], None]


class Search:
    """One capacity search over probes kept in `probes` (x → Probe) and the
    final batches in `finals`; `evaluate(pairs)` must give each `(probe, n)`
    at least `n` replications (seed indices `probe.first_seed` … +n−1, one
    batch for all pairs) and mark the probe overloaded when a run said so."""

    def __init__(self, evaluate: Evaluate, probes: dict[float, Probe], *, start: float,
                 precision: float, first: int, most: int, max_runs: int):
        if not (start > 0 and math.isfinite(start)):
            raise ValueError(f"the start value is {start}: the search starts from a "
                             "positive number (--start)")
        self.evaluate, self.probes = evaluate, probes
        self.start, self.precision = float(start), float(precision)
        self.first, self.most, self.max_runs = int(first), int(most), int(max_runs)
        self.bracket: Optional[tuple[Optional[float], Optional[float]]] = None
        self.finals: list[Probe] = []

    # -- bookkeeping --------------------------------------------------------
    def runs(self) -> int:
        """Replications run so far in this search."""
        return sum(p.n for p in [*self.probes.values(), *self.finals])

    def _ensure(self, pairs: Sequence[tuple[float, int]]) -> None:
        want = []
        for x, n in pairs:
            p = self.probes.setdefault(x, Probe(x))
            if p.n < n and not p.overloaded:
                want.append((p, n))
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

    def _fit(self) -> Optional[tuple[float, float, Probe, Probe]]:
        """The binding SLO's crossing: (x by linear interpolation of the mean
        margin, the replications' spread over the slope — an interval's
        half-width in x is t·that/√n —, the probes below and above it)."""
        best = None
        for k in range(self.nslo):
            around = self._crossing(k)
            if around is None:
                continue
            a, b = around
            ia = a.interval(k)
            if b.overloaded:
                fit = (math.sqrt(a.x * b.x), math.nan, a, b)
            else:
                ib = b.interval(k)
                slope = (ib.mean - ia.mean) / (b.x - a.x)
                c = a.x - ia.mean / slope
                fit = (c, _spread(ia, ib, a.x, b.x, c) / slope, a, b)
            if best is None or fit[0] < best[0]:
                best = fit
        return best

    @property
    def nslo(self) -> int:
        """How many SLOs the probes carry."""
        return len(next(iter(self.probes.values())).margins[0])

    def run(self) -> SearchOutcome:
        """Bracket, locate, pilot, then the final batch; the outcome (see
        `SearchOutcome`)."""
        lo, hi, last = self._bracket()
        self.bracket = (lo, hi)
        if hi is None:
            return self._outcome("unbounded", last, math.inf, 0, None)
        if lo is None:
            return self._outcome("none", 0.0, last, 0, None)
        located, pilot = 2 * self.first, max(PILOT, 4 * self.first)
        for _ in range(MAX_ITERATIONS):
            fit = self._fit()
            if fit is None:
                break
            c, unit, a, b = fit
            if not self._local(fit):
                self._place(c, a, b, located)  # locate
                continue
            # the pilot: a fixed count of seeds at a pair wide enough for the
            # slope, whatever they show
            a, b, line = self._pilot(c, a, b, pilot)
            if line is None or self._over_budget():
                break
            c = line.crossing
            if not self._local((c, 1.0, a, b)):
                self._place(c, a, b, located)  # the pilot moved the crossing away
                continue
            m, planned = self._final_count(line, c)
            final = Probe(_tidy(c), first_seed=self._fresh_seed())
            self.finals.append(final)
            self.evaluate([(final, m)])
            ends = line.interval(final, m)
            if ends is None:
                self._adopt(final)  # the crossing is elsewhere: a probe like any other
                continue
            # reported whatever its width: choosing among batches by their
            # width would select the ones whose spread came out low
            low, high, k = ends
            status = "found" if planned or _rel(ends) <= self.precision else "imprecise"
            return self._outcome(status, low, high, m, k, (a, b), final)
        return self._outcome("imprecise", lo, hi, self.first, None)

    def _pilot(self, c: float, a: Probe, b: Probe, n: int
               ) -> tuple[Probe, Probe, Optional["PilotLine"]]:
        """`n` replications at the pair `a` < `b` around the crossing `c`, or
        at a pair `PILOT_SPAN` of the window wide around it when `a`, `b`
        are closer than half that (narrower, twice, when its upper end is
        overloaded); the pair and its line."""
        line = None
        for i in range(3):
            span = PILOT_SPAN * self._window(c) * 0.5 ** i
            if i > 0 or b.x - a.x < span / 2:
                a, b = (self.probes.setdefault(x, Probe(x))
                        for x in (_tidy(c - span / 2), _tidy(c + span / 2)))
            self._ensure([(a.x, n), (b.x, n)])
            line = pilot_line(a, b, n)
            if line is not None or not b.overloaded or self._over_budget():
                break
        return a, b, line

    def _place(self, c: float, a: Probe, b: Probe, n: int) -> None:
        """A pair of probes (`n` replications each) around the interpolated
        crossing `c`, inside the probes `a` < `b` around it."""
        w = min(self.precision, HALF_PAIR) * c
        lo, hi = (a.x, b.x) if a.x <= c <= b.x else (0.0, math.inf)
        pair = [_tidy(max(c - w, lo + 0.05 * (hi - lo) if math.isfinite(hi) else c - w)),
                _tidy(min(c + w, hi - 0.05 * (hi - lo) if math.isfinite(hi) else c + w))]
        self._ensure([(x, n) for x in pair])

    def _adopt(self, final: Probe) -> None:
        """A final batch whose interval could not be formed becomes an
        ordinary probe (its mean shows where the crossing is)."""
        if final.x not in self.probes:
            self.finals.remove(final)
            self.probes[final.x] = final

    def _fresh_seed(self) -> int:
        """The first seed index no probe has run yet: the final batch is
        independent of every run the search looked at."""
        return max(p.first_seed + p.n for p in [*self.probes.values(), *self.finals])

    def _final_count(self, line: "PilotLine", c: float) -> tuple[int, bool]:
        """The final batch's replications — the fewest whose interval is
        expected within `AIM` of the precision, with the pilot's spread —
        within the budget and `most`; and whether that many fit."""
        room = max(2, self.max_runs - self.runs())
        top, k = min(self.most, room), line.binding
        m = next((m for m in range(2, top + 1)
                  if line.half_width(k, c, m) <= AIM * self.precision * c), None)
        return (m, True) if m is not None else (top, False)

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

    def _outcome(self, status: str, low: float, high: float, m: int, k: Optional[int],
                 pair: Optional[tuple[Probe, Probe]] = None,
                 final: Optional[Probe] = None) -> SearchOutcome:
        est = math.nan
        if status in ("found", "imprecise"):
            if final is not None and pair is not None:
                line = pilot_line(pair[0], pair[1], max(PILOT, 4 * self.first))
                est = line.estimate(final, m, k) if line is not None else math.nan
            else:
                fit = self._fit()
                est = fit[0] if fit is not None else math.nan
            est = est if math.isfinite(est) else 0.5 * (low + high)
            est = min(max(est, low), high)
        probes = sorted(self.probes.values(), key=lambda p: p.x) + self.finals
        return SearchOutcome(status, low, high, est, m, k, probes,
                             (pair[0].x, pair[1].x) if pair else None, self.bracket,
                             final.x if final is not None else None)


@dataclass
class PilotLine:
    """The pilot's line of every SLO's margin across the pair `a` < `b`, on
    the pair's first `n` seeds (common random numbers): the mean margins and
    spreads (standard deviations) at both ends. The final interval takes
    its spread, and its slope, from here, and its mean from the final batch."""

    a: float
    b: float
    n: int
    mean_a: list[float]
    mean_b: list[float]
    sd_a: list[float]
    sd_b: list[float]
    #: The standard error of each SLO's slope (from the per-seed slopes).
    slope_se: list[float]

    def slope(self, k: int) -> float:
        """SLO `k`'s mean margin per unit load."""
        return (self.mean_b[k] - self.mean_a[k]) / (self.b - self.a)

    def _w(self, x: float) -> float:
        return min(max((x - self.a) / (self.b - self.a), 0.0), 1.0)

    def spread(self, k: int, x: float) -> float:
        """SLO `k`'s replication spread at `x` (interpolated between the ends)."""
        w = self._w(x)
        return (1 - w) * self.sd_a[k] + w * self.sd_b[k]

    @property
    def tightening(self) -> list[int]:
        """The SLOs whose margin grows across the pair."""
        return [k for k in range(len(self.mean_a)) if self.slope(k) > 0]

    @property
    def binding(self) -> int:
        """The SLO with the lowest crossing."""
        return min(self.tightening, key=lambda k: self.a - self.mean_a[k] / self.slope(k))

    @property
    def crossing(self) -> float:
        """The binding SLO's crossing of the pilot's line."""
        k = self.binding
        return self.a - self.mean_a[k] / self.slope(k)

    def half_width(self, k: int, x: float, m: int) -> float:
        """SLO `k`'s interval half-width in load expected at `x` from `m`
        replications: t(m−1) × √(sd²/m + d²·slope_se²) / slope, with sd the
        pilot's spread and d² the variance of the pilot's crossing (how far
        from the root `x` may be)."""
        s, sd = self.slope(k), self.spread(k, x)
        d2 = sd * sd / (self.n * s * s)
        return t_quantile(m - 1) * math.sqrt(sd * sd / m + d2 * self.slope_se[k] ** 2) / s

    def interval(self, final: Probe, m: int) -> Optional[tuple[float, float, int]]:
        """The 95 % interval of the capacity from the final batch at
        `final.x` (its first `m` replications) and the pilot's slope: per
        SLO that tightens, Fieller's interval for the root of the line
        through the final mean margin with the pilot's slope (two
        independent estimates; see `root_interval`); the capacity's is the
        lowest of these (low, high, binding SLO). None when the final batch
        is overloaded, an SLO that does not tighten is not plainly met
        there, a slope is not clearly positive, or the interval lies beyond
        the pair by more than its width."""
        if final.overloaded or final.n < m or m < 2:
            return None
        lows, highs = [], []
        for k in range(len(self.mean_a)):
            iv = final.interval(k, m)
            s = self.slope(k)
            if not s > 0:
                if iv.mean + iv.half_width < 0:
                    continue
                return None
            ends = root_interval(iv.mean, iv.std ** 2 / m, m - 1,
                                 s, self.slope_se[k] ** 2, self.n - 1)
            if ends is None:
                return None
            lows.append((final.x + ends[0], k))
            highs.append((final.x + ends[1], k))
        if not highs:
            return None
        low, (high, k) = min(lows)[0], min(highs)
        w = self.b - self.a
        if high < self.a - w or low > self.b + w:
            return None
        return low, high, k

    def estimate(self, final: Probe, m: int, k: Optional[int] = None) -> float:
        """SLO `k`'s (default: the binding one's) crossing from the final
        batch's mean margin and the pilot's slope."""
        k = self.binding if k is None else k
        mean = math.fsum(r[k] for r in final.margins[:m]) / m
        return final.x - mean / self.slope(k)


def pilot_line(a: Probe, b: Probe, n: int) -> Optional[PilotLine]:
    """The pilot's line across `a` < `b` on their first `n` seeds, or None
    (an end overloaded or short of seeds, or no SLO tightens across them)."""
    if a.overloaded or b.overloaded or a.n < n or b.n < n or n < 2:
        return None
    ia = [a.interval(k, n) for k in range(len(a.margins[0]))]
    ib = [b.interval(k, n) for k in range(len(b.margins[0]))]
    per_seed = [interval([(rb[k] - ra[k]) / (b.x - a.x)
                          for ra, rb in zip(a.margins[:n], b.margins[:n])])
                for k in range(len(ia))]
    line = PilotLine(a.x, b.x, n, [i.mean for i in ia], [i.mean for i in ib],
                     [i.std for i in ia], [i.std for i in ib],
                     [i.std / math.sqrt(n) for i in per_seed])
    ok = all(math.isfinite(v) for v in [*line.mean_a, *line.mean_b, *line.sd_a, *line.sd_b,
                                        *line.slope_se])
    return line if ok and line.tightening else None


def root_interval(mean: float, var: float, df: int, slope: float, var_slope: float,
                  df_slope: int) -> Optional[tuple[float, float]]:
    """Fieller's 95 % interval (Fieller 1954, "Some problems in interval
    estimation", JRSS B 16(2)) for the root `d` of the line `mean + slope·d`
    from two independent estimates: the level `mean` (variance `var`, `df`
    degrees of freedom) and the `slope` (variance `var_slope`, `df_slope`):
    the `d` at which |mean + slope·d| ≤ t·√(var + d²·var_slope), with t at
    the Welch–Satterthwaite degrees of freedom at the estimate −mean/slope.
    None when the slope is not clearly positive (the set is unbounded) or
    an input is not finite."""
    if not all(math.isfinite(v) for v in (mean, var, slope, var_slope)) or slope == 0:
        return None
    d0 = -mean / slope
    v = var + d0 * d0 * var_slope
    den = (var ** 2 / df if df > 0 else math.inf) + \
        ((d0 * d0 * var_slope) ** 2 / df_slope if df_slope > 0 else math.inf)
    nu = v * v / den if den > 0 else float(max(df, 1))
    t = t_quantile(max(1, min(df + df_slope, int(nu))))
    qa = slope * slope - t * t * var_slope
    if not qa > 0:
        return None
    qb, qc = 2 * mean * slope, mean * mean - t * t * var
    root = math.sqrt(max(qb * qb - 4 * qa * qc, 0.0))
    return (-qb - root) / (2 * qa), (-qb + root) / (2 * qa)


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


def _rel(ends: tuple[float, float, int]) -> float:
    """An interval's relative half-width."""
    return (ends[1] - ends[0]) / (ends[1] + ends[0])


def _tidy(x: float) -> float:
    """A probe value rounded to 6 significant digits (readable --set values)."""
    return float(f"{x:.6g}")


def _spread(ia: Interval, ib: Interval, xa: float, xb: float, c: float) -> float:
    """The replications' standard deviation interpolated at `c`."""
    sa = ia.std if math.isfinite(ia.std) else ib.std
    sb = ib.std if math.isfinite(ib.std) else sa
    w = min(max((c - xa) / (xb - xa), 0.0), 1.0)
    return (1 - w) * sa + w * sb
