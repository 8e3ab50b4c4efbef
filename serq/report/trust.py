"""Figures of a report that cannot be trusted, said in plain words.

The text report ends with one `warning:` line per finding:

* **too few samples** — the series with fewer than 40 samples after the
  warm-up, which have no interval at all (the report prints `–`), in one line;
* **correlated batches** — the 20 batch means of a series are strongly
  correlated from one batch to the next (lag-1 autocorrelation above 0.5,
  about two standard errors for 20 batches): the batches are too short to be
  independent, so the interval is too narrow; a longer run (or a longer
  warm-up) helps;
* **growth through the run** — the batch means rise steadily from the first
  batch to the last (Mann–Kendall trend statistic z > 3.5, and the last batch
  mean at least 1.5 times the first): the system does not settle, typically
  because work arrives faster than a stage can serve it; the stage with the
  highest utilization is named;
* **a stage with no completions** — its throughput, wait and service time
  are undefined.

These are heuristics on the samples the report already holds; they cost
nothing during the run and never change a figure.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

from ..stats.summary import MIN_SAMPLES, batch_means

if TYPE_CHECKING:  # read, never built, here: `model` reaches this module through the text report
    from .model import Report, Series

#: Lag-1 autocorrelation of the batch means above which batches are too short.
CORRELATION_LIMIT = 0.5
#: Mann–Kendall z above which the batch means are said to grow.
TREND_Z = 3.5
#: ... and the ratio of the last batch mean to the first that must come with it.
TREND_RATIO = 1.5


def lag1_correlation(means: Sequence[float]) -> float:
    """The lag-1 autocorrelation of `means` (NaN when they do not vary)."""
    n = len(means)
    centre = math.fsum(means) / n
    dev = [m - centre for m in means]
    denom = math.fsum(d * d for d in dev)
    if denom == 0.0:
        return math.nan
    return math.fsum(dev[i] * dev[i + 1] for i in range(n - 1)) / denom


def trend_z(means: Sequence[float]) -> float:
    """The Mann–Kendall trend statistic of `means` as a standard normal z:
    Kendall's tau of the means against their order, its two-sided asymptotic
    p-value (`scipy.stats.kendalltau`, ties corrected) turned back into |z|,
    signed as tau. 0 when the means do not vary. `scipy.stats` is imported
    here, on a report that may grow (`growth`), never on a settled one."""
    from scipy.special import ndtri
    from scipy.stats import kendalltau
    res = kendalltau(range(len(means)), means, method="asymptotic")
    tau, p = float(res.statistic), float(res.pvalue)
    if not tau == tau or tau == 0.0:
        return 0.0
    return math.copysign(-float(ndtri(p / 2.0)), tau)


def growth(values: Sequence[float]) -> Optional[tuple[float, float]]:
    """`(first, last)` batch means when the series grows through the run — the
    last batch mean at least `TREND_RATIO` times the first (checked first: it
    costs nothing) and a Mann–Kendall z above `TREND_Z` — else None."""
    if len(values) < MIN_SAMPLES:
        return None
    return _grows(batch_means(values))


def _grows(means: Sequence[float]) -> Optional[tuple[float, float]]:
    first, last = means[0], means[-1]
    if first > 0 and last >= TREND_RATIO * first and trend_z(means) > TREND_Z:
        return first, last
    return None


def _busiest(report: Report) -> Optional[str]:
    stages = [s for s in report.stages if s.utilization == s.utilization]
    if not stages:
        return None
    top = max(stages, key=lambda s: s.utilization)
    return f"stage `{top.label}` is busy {100 * top.utilization:.1f}% of the time"


def _series_warnings(kind: str, name: str, series: Series,
                     report: Report) -> Iterator[str]:
    values = series.values
    n = len(values)
    if n < MIN_SAMPLES:
        return  # said once for all such series (`findings`)
    means = batch_means(values)
    grown = _grows(means)
    if grown is not None:
        first, last = grown
        busy = _busiest(report)
        yield (f"{kind} `{name}` grows through the run (batch means from {first:.4g} to "
               f"{last:.4g}): the system does not settle, so its mean and interval describe "
               f"no steady state; work may arrive faster than it is served"
               + (f" ({busy})" if busy else ""))
        return
    r = lag1_correlation(means)
    if r > CORRELATION_LIMIT:
        yield (f"{kind} `{name}`: its batch means are correlated (lag-1 {r:.2f}), so the "
               f"interval is too narrow; run longer")


def _series_groups(report: Report) -> list[tuple[str, dict[str, Series]]]:
    groups = [("observe", report.observes)]
    if report.has_client_samples():
        groups.append(("client", report.client))
    return groups


def growing_series(report: Report) -> list[str]:
    """The series that grow through the run (`growth`), as `observe `name``."""
    return [f"{kind} `{name}`" for kind, group in _series_groups(report)
            for name, series in group.items() if growth(series.values) is not None]


def findings(report: Report) -> list[str]:
    """The report's untrustworthy figures, one sentence each, in report order."""
    out: list[str] = []
    few: list[str] = []
    for kind, group in _series_groups(report):
        for name, series in group.items():
            if 0 < len(series.values) < MIN_SAMPLES:
                few.append(f"{kind} `{name}` ({len(series.values)})")
            out += _series_warnings(kind, name, series, report)
    if few:
        out.insert(0, f"too few samples after the warm-up for an interval (it needs "
                      f"{MIN_SAMPLES}): {', '.join(few)}; run longer")
    for s in report.stages:
        if s.completed == 0:
            if s.mean_number > 0 or s.utilization > 0:
                out.append(f"stage `{s.label}` held work but completed none after the "
                           f"warm-up: its throughput, wait and service are undefined")
            else:
                out.append(f"stage `{s.label}` served nothing after the warm-up")
    return out
