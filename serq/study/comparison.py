"""`serq.compare`: two programs, two policies or two settings compared over
paired replications with common random numbers.

Replication `i` of both sides runs with the same seed (`base + i`): the
runtime keeps the workload's draws (arrivals, prompts, think times) apart
from what the deployment and its policies draw, so both sides see the same
requests. For every statistic of the single-run report (`serq.study.stats`)
the paired differences `d_i = B_i − A_i` give a Student-t interval
`mean(d) ± t(n−1)·sd(d)/√n`; a difference is significant when the interval
does not contain 0. Pairing removes the variance the two sides share,
which is most of it: the intervals are far narrower than those of two
independent studies.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from .executors import resolve
from .replications import run_batch
from .report import StudyReport
from .spec import ProgramSpec, replication_seed
from .stats import CONFIDENCE
from .warmup import choose
from .worker import compiled, run_report

Key = tuple[str, str, str]

#: The statistics the text table and the plot show by default (the JSON and
#: `to_pandas()` have them all): percentiles beside the means.
SHOWN: dict[str, tuple[str, ...]] = {
    "observe": ("mean", "p50", "p90", "p99"),
    "client": ("mean", "p50", "p90", "p99"),
    "stage": ("utilization", "request_throughput", "mean_wait"),
    "pool": ("mean_used", "mean_queue", "mean_wait", "preemptions"),
    "gauge": ("mean",),
}


@dataclass(frozen=True)
class Difference:
    """One statistic on both sides: the means over the paired replications,
    the mean of the differences B − A, its Student-t half-width and p-value."""

    section: str
    name: str
    statistic: str
    a: float
    b: float
    diff: float
    half_width: float
    p_value: float
    n: int

    @property
    def significant(self) -> bool:
        """Whether the interval of B − A excludes 0."""
        return math.isfinite(self.half_width) and abs(self.diff) > self.half_width

    @property
    def key(self) -> Key:
        """(section, name, statistic)."""
        return (self.section, self.name, self.statistic)


def paired_difference(key: Key, a: Sequence[float], b: Sequence[float],
                      confidence: float = CONFIDENCE) -> Difference:
    """The `Difference` of paired values (pairs with a non-finite side are left out)."""
    from scipy import special
    pairs = [(x, y) for x, y in zip(a, b) if math.isfinite(x) and math.isfinite(y)]
    n = len(pairs)
    if n == 0:
        return Difference(*key, math.nan, math.nan, math.nan, math.inf, math.nan, 0)
    ma = math.fsum(x for x, _ in pairs) / n
    mb = math.fsum(y for _, y in pairs) / n
    d = [y - x for x, y in pairs]
    mean = math.fsum(d) / n
    if n < 2:
        return Difference(*key, ma, mb, mean, math.inf, math.nan, n)
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in d) / (n - 1))
    se = sd / math.sqrt(n)
    half = float(special.stdtrit(n - 1, 0.5 + confidence / 2.0)) * se
    if se > 0:
        p = float(2.0 * special.stdtr(n - 1, -abs(mean) / se))
    else:
        p = 1.0 if mean == 0 else 0.0
    return Difference(*key, ma, mb, mean, half, p, n)


@dataclass
class Comparison:
    """Side A and side B (each a `StudyReport` over the same seeds) and the
    paired differences of every statistic."""

    a: StudyReport
    b: StudyReport
    labels: tuple[str, str] = ("A", "B")
    confidence: float = CONFIDENCE

    @property
    def replications(self) -> int:
        """Pairs of replications."""
        return min(self.a.replications, self.b.replications)

    def differences(self) -> list[Difference]:
        """Every statistic both sides report, in A's report order."""
        values_b: dict[Key, list[float]] = {}
        for rows in self.b.rows():
            for s, n, st, v in rows:
                values_b.setdefault((s, n, st), []).append(v)
        values_a: dict[Key, list[float]] = {}
        for rows in self.a.rows():
            for s, n, st, v in rows:
                values_a.setdefault((s, n, st), []).append(v)
        return [paired_difference(k, va, values_b[k], self.confidence)
                for k, va in values_a.items() if k in values_b]

    def difference(self, section: str, name: str, statistic: str = "mean") -> Difference:
        """One statistic's difference (KeyError if a side lacks it)."""
        for d in self.differences():
            if d.key == (section, name, statistic):
                return d
        raise KeyError((section, name, statistic))

    def shown(self, every: bool = False) -> list[Difference]:
        """The differences the table shows: `SHOWN`'s statistics with a value
        on both sides (every statistic with `every`)."""
        picked = [d for d in self.differences() if d.n and (
            every or d.statistic in SHOWN.get(d.section, ()))]
        if every:
            return picked
        place = {k: i for i, k in enumerate(dict.fromkeys((d.section, d.name) for d in picked))}
        return sorted(picked, key=lambda d: (place[(d.section, d.name)],
                                             SHOWN[d.section].index(d.statistic)))

    def significant(self) -> list[Difference]:
        """The differences whose interval excludes 0."""
        return [d for d in self.differences() if d.significant]

    # -- renderings ------------------------------------------------------------------------
    def text(self, every: bool = False) -> str:
        """The comparison table; `*` marks a significant difference."""
        from .compare_view import comparison_text
        return comparison_text(self, every)

    def to_dict(self) -> dict[str, Any]:
        """The comparison as JSON-ready objects (every statistic)."""
        from ..report.json_report import finite_or_none as f
        first = self.a.reports[0]
        return {
            "comparison": {"labels": list(self.labels), "replications": self.replications,
                           "seeds": list(self.a.seeds[:self.replications]),
                           "confidence": self.confidence, "interval": "paired student-t",
                           "horizon": f(first.horizon), "warmup": f(first.warmup),
                           "sets_a": dict(self.a.spec.sets), "sets_b": dict(self.b.spec.sets),
                           "policies_a": dict(self.a.spec.policies),
                           "policies_b": dict(self.b.spec.policies)},
            "differences": [{"section": d.section, "name": d.name, "statistic": d.statistic,
                             "a": f(d.a), "b": f(d.b), "diff": f(d.diff),
                             "half_width": f(d.half_width), "p_value": f(d.p_value),
                             "n": d.n, "significant": d.significant}
                            for d in self.differences()],
        }

    def json(self) -> str:
        """`to_dict()` on one line."""
        from ..report.json_report import dumps
        return dumps(self.to_dict())

    def to_pandas(self) -> Any:
        """One row per statistic: section, name, statistic, a, b, diff,
        half_width, p_value, n, significant."""
        import pandas as pd
        rows = [(d.section, d.name, d.statistic, d.a, d.b, d.diff, d.half_width, d.p_value,
                 d.n, d.significant) for d in self.differences()]
        return pd.DataFrame(rows, columns=["section", "name", "statistic", "a", "b", "diff",
                                           "half_width", "p_value", "n", "significant"])

    def plot(self, statistics: Optional[Sequence[str]] = None, *, path: Optional[str] = None):
        """A figure of the differences B − A with their intervals, one panel
        row per statistic (`statistics`: `section.name:statistic` texts, e.g.
        `client.ttft:p99`; default the table's); saved to `path` when given."""
        from .compare_view import comparison_figure
        return comparison_figure(self, statistics, path=path)

    def __repr__(self) -> str:
        from .compare_view import short_repr
        return short_repr(self)

    def _repr_html_(self) -> str:
        from .compare_view import comparison_html
        return comparison_html(self)


def compare(a: Any = None, b: Any = None, replications: int = 10, *,
            seed: Optional[int] = None, executor: Any = None, jobs: Optional[int] = None,
            sets: Optional[dict[str, Any]] = None, sets_b: Optional[dict[str, Any]] = None,
            policies: Optional[dict[str, Any]] = None,
            policies_b: Optional[dict[str, Any]] = None,
            defs: Optional[dict[str, str]] = None, source: Optional[str] = None,
            source_b: Optional[str] = None, horizon: Optional[float] = None,
            warmup: Any = None, arrivals: Optional[int] = None,
            workload: Optional[str] = None, trace: Optional[str] = None,
            labels: Optional[tuple[str, str]] = None, confidence: float = CONFIDENCE,
            progress: Optional[Callable[[int, int], None]] = None) -> Comparison:
    """Compare program `a` with program `b` over `replications` paired
    replications (seeds `seed + i` on both sides).

    `a`, `b`: paths or `ProgramSpec`s (or `source=`, `source_b=` texts);
    without `b`, side B is `a` again, changed by `sets_b` (`--set` values
    for B only) and `policies_b` (policies bound on B only). `sets`,
    `policies`, `defs` and the settings apply to both sides. `warmup="auto"`
    chooses a warm-up by MSER-5 on a pilot run of each side and uses the
    later one on both. `executor`/`jobs` as `serq.replicate`."""
    if replications < 2:
        raise ValueError("a comparison needs at least 2 paired replications")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence}: between 0 and 1")
    auto = isinstance(warmup, str)
    if auto and warmup != "auto":
        raise ValueError(f"warmup={warmup!r}: a number or 'auto'")
    common = dict(sets=sets, defs=defs, policies=policies, horizon=horizon,
                  warmup=None if auto else warmup, arrivals=arrivals, workload=workload,
                  trace=trace)
    spec_a = ProgramSpec.make(a, source=source, **common)
    if b is None and source_b is None:
        spec_b = spec_a
    else:
        spec_b = ProgramSpec.make(b, source=source_b, **common)
    spec_b = ProgramSpec.make(spec_b, sets=sets_b, policies=policies_b)
    import serq.api
    specs, seeds = [], []
    for spec in (spec_a, spec_b):  # each side's own horizon unless one is given
        own = serq.api.settings_for(compiled(spec), horizon=spec.horizon,
                                    warmup=spec.warmup, arrivals=spec.arrivals)
        specs.append(ProgramSpec.make(spec, horizon=own.horizon))
        seeds.append(own.seed)
    base = seeds[0] if seed is None else int(seed)
    choice = None
    if auto:
        choices = [choose(run_report(s, replication_seed(base, 0), warmup=0.0), None)
                   for s in specs]
        choice = max(choices, key=lambda c: c.time)
        specs = [ProgramSpec.make(s, warmup=choice.time) for s in specs]
    ex = resolve(executor, jobs, 2 * replications)
    total = 2 * replications
    try:
        done = [0]

        def tick(_d: int, _t: int) -> None:
            done[0] += 1
            if progress is not None:
                progress(done[0], total)
        sides = [run_batch(ex, s, base, 0, replications, tick, total) for s in specs]
    finally:
        ex.close()
    seeds = [replication_seed(base, i) for i in range(replications)]
    studies = [StudyReport(s, base, seeds, reports, warmup_choice=choice)
               for s, reports in zip(specs, sides)]
    return Comparison(studies[0], studies[1], labels or _labels(specs), confidence)


def _labels(specs: Sequence[ProgramSpec]) -> tuple[str, str]:
    """Short names of the two sides: their files, and what B changes."""
    import os
    a, b = specs
    name_a = os.path.basename(a.path) if a.path else "A"
    name_b = os.path.basename(b.path) if b.path else "B"
    changed = [f"{k}={v}" for k, v in b.sets if dict(a.sets).get(k) != v]
    changed += [f"{k}={v.rsplit(':', 1)[-1]}" for k, v in b.policies
                if dict(a.policies).get(k) != v]
    if name_a == name_b and not changed:
        return name_a, name_b + " (again)"
    if name_a == name_b:
        return name_a, ", ".join(changed)
    return name_a, " ".join([name_b] + changed)
