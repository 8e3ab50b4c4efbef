"""A report as statistic rows, and across-replication summaries
(mean and Student-t interval).

A row is `(section, name, statistic, value)`: `run` rows (arrivals, ended,
turns, mean_live, events), `observe` and `client` rows (count, mean, p99,
cv2, then the report's other percentiles: p50, p90, p95 by default), `stage` and `pool` rows (every numeric column of the report's
table), `gauge` rows (mean, min, max).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Iterable, Sequence

from ..stats.summary import percentile_key

Row = tuple[str, str, str, float]

#: The confidence level of every across-replication interval.
CONFIDENCE = 0.95

_RUN = ("arrivals", "ended", "turns", "mean_live", "events")
_SERIES = ("count", "mean", "p99", "cv2")
_GAUGE = ("mean", "min", "max")


def _numeric(row: Any) -> list[tuple[str, float]]:
    out = []
    for f in fields(row):
        v = getattr(row, f.name)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and f.name != "index":
            out.append((f.name, float(v)))
    return out


def report_rows(report: Any) -> list[Row]:
    """Every statistic of a single-run report, in report order."""
    rows: list[Row] = [("run", "run", s, float(getattr(report, s))) for s in _RUN]
    for section, group in (("observe", report.observes), ("client", report.client)):
        for name, series in group.items():
            summ = series.summary(report.percentiles)
            rows.extend((section, name, s, float(getattr(summ, s))) for s in _SERIES)
            rows.extend((section, name, percentile_key(q), float(v))
                        for q, v in summ.percentiles if q != 99.0)
    for st in report.stages:
        rows.extend(("stage", st.label, s, v) for s, v in _numeric(st))
    for pool in report.pools:
        rows.extend(("pool", pool.label, s, v) for s, v in _numeric(pool))
    for name, g in report.gauges.items():
        rows.extend(("gauge", name, s, float(getattr(g, s))) for s in _GAUGE)
    return rows


def t_quantile(df: int, confidence: float = CONFIDENCE) -> float:
    """The two-sided Student-t quantile for `df` degrees of freedom
    (`scipy.special.stdtrit`, imported here: it is light, `scipy.stats` is not)."""
    from scipy.special import stdtrit
    return float(stdtrit(df, 0.5 + confidence / 2.0))


@dataclass(frozen=True)
class Interval:
    """Across-replication mean, Student-t half-width and n (finite values only)."""

    mean: float
    half_width: float
    n: int
    std: float

    @property
    def relative(self) -> float:
        """Half-width over |mean| (inf when the mean is 0 or undefined)."""
        if not math.isfinite(self.mean) or self.mean == 0:
            return math.inf
        return self.half_width / abs(self.mean)


def interval(values: Iterable[float], confidence: float = CONFIDENCE) -> Interval:
    """Mean and Student-t half-width of the finite `values` (NaN mean
    without any, infinite half-width with fewer than two)."""
    xs = [float(v) for v in values if v is not None and math.isfinite(v)]
    n = len(xs)
    if n == 0:
        return Interval(math.nan, math.inf, 0, math.nan)
    mean = math.fsum(xs) / n
    if n == 1:
        return Interval(mean, math.inf, 1, math.nan)
    var = math.fsum((x - mean) ** 2 for x in xs) / (n - 1)
    std = math.sqrt(var)
    return Interval(mean, t_quantile(n - 1, confidence) * std / math.sqrt(n), n, std)


def across(reports_rows: Sequence[Sequence[Row]]) -> dict[tuple[str, str, str], Interval]:
    """Per statistic (in first-seen order) the interval across replications."""
    values: dict[tuple[str, str, str], list[float]] = {}
    for rows in reports_rows:
        for section, name, stat, v in rows:
            values.setdefault((section, name, stat), []).append(v)
    return {k: interval(vs) for k, vs in values.items()}
