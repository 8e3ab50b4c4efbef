"""Figures of a report (matplotlib, drawn off-screen): `Report.plot` and
`serq-simpy plot`.

Every function returns a `matplotlib.figure.Figure` (no pyplot, no global
state, no display needed) and, given `path`, saves it there (PNG, SVG or
PDF by the file's suffix). Tests read the figures' data: lines, labels,
limits.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from ..stats.summary import BATCHES, MIN_SAMPLES

#: Points at which a series' running interval is evaluated.
CHECKPOINTS = 120
#: Most sample points a series figure draws (beyond, every k-th sample).
MAX_POINTS = 5000


def new_figure(width: float = 7.0, height: float = 4.0):
    """A figure with one axes (`Figure`, no pyplot); needs matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise RuntimeError("plots need matplotlib: `pip install matplotlib` (in a clone of "
                           "serq-simpy: `pip install -e '.[plot]'`)") from None
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def save_figure(fig: Any, path: Optional[str]) -> Any:
    """`fig`, saved to `path` first when given (.png, .svg or .pdf)."""
    if path is not None:
        suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
        if suffix not in ("png", "svg", "pdf"):
            raise ValueError(f"{path}: a figure is written as .png, .svg or .pdf")
        fig.savefig(path, dpi=110)
    return fig


def _series(report: Any, name: Optional[str]) -> Any:
    if name is None:
        candidates = [s for s in [*report.observes.values(), *report.client.values()]
                      if s.values]
        if not candidates:
            raise ValueError("the report has no series with samples to plot")
        return candidates[0]
    s = report.observes.get(name) or report.client.get(name)
    if s is None:
        names = ", ".join([*report.observes, *report.client])
        raise ValueError(f"no observation or client series {name!r} (the report has {names})")
    if not s.values:
        raise ValueError(f"the series {name!r} has no samples")
    return s


def running_interval(values: Sequence[float], t95: float) -> tuple[list[int], list[float],
                                                                  list[float]]:
    """At `CHECKPOINTS` prefix lengths: the prefix's mean and its batch-means
    half-width (20 batches; NaN below 40 samples)."""
    import numpy as np
    v = np.asarray(values, dtype=float)
    n = len(v)
    ms = sorted({int(m) for m in np.linspace(1, n, min(CHECKPOINTS, n))})
    csum = np.cumsum(v)
    means, hws = [], []
    for m in ms:
        means.append(float(csum[m - 1] / m))
        b = m // BATCHES
        if m < MIN_SAMPLES:
            hws.append(math.nan)
            continue
        z = v[:b * BATCHES].reshape(BATCHES, b).mean(axis=1)
        hws.append(float(t95 * z.std(ddof=1) / math.sqrt(BATCHES)))
    return ms, means, hws


def series_figure(report: Any, name: Optional[str] = None, *, warmup: Optional[float] = None,
                  method: Optional[str] = None, path: Optional[str] = None) -> Any:
    """An observation's samples over simulated time (at most `MAX_POINTS`
    of them drawn), its running mean and the running batch-means 95 % band
    (over all samples); the warm-up as a vertical line."""
    from serq.stats.summary import T95
    s = _series(report, name)
    fig, ax = new_figure()
    step = max(1, math.ceil(len(s.values) / MAX_POINTS))
    ax.plot(s.times[::step], s.values[::step], ".", markersize=2, alpha=0.35, color="0.5",
            label="samples" if step == 1 else f"samples (1 in {step})")
    ms, means, hws = running_interval(s.values, T95)
    t = [s.times[m - 1] for m in ms]
    ax.plot(t, means, color="C0", linewidth=2, label="running mean")
    lo = [m - h for m, h in zip(means, hws)]
    hi = [m + h for m, h in zip(means, hws)]
    ax.fill_between(t, lo, hi, color="C0", alpha=0.25, label="95% CI (batch means)")
    w = report.warmup if warmup is None else warmup
    if w > 0:
        ax.axvline(w, color="C3", linestyle="--",
                   label=f"warm-up {w:.4g}" + (f" ({method})" if method else ""))
    finite = [x for x in s.values if math.isfinite(x)]
    if finite:
        top = sorted(finite)[max(0, math.ceil(0.995 * len(finite)) - 1)]
        ax.set_ylim(min(0.0, min(finite)), top * 1.05 if top > 0 else 1.0)
    ax.set_xlim(0, report.end)
    ax.set_xlabel("simulated time")
    ax.set_ylabel(s.name)
    ax.set_title(f"{s.name}: samples and running mean")
    ax.legend(loc="upper right", fontsize="small")
    return save_figure(fig, path)


def _quantile_lines(ax: Any, s: Any) -> None:
    from serq.stats.summary import nearest_rank
    for q, style in ((0.5, ":"), (0.99, "--")):
        v = nearest_rank(s.values, q)
        ax.axvline(v, color="C3", linestyle=style, label=f"p{round(100 * q)} = {v:.4g}")


def histogram_figure(report: Any, name: Optional[str] = None, *, bins: int = 50,
                     path: Optional[str] = None) -> Any:
    """A histogram of an observation's samples with p50 and p99 marked."""
    s = _series(report, name)
    fig, ax = new_figure()
    ax.hist(s.values, bins=bins, color="C0", alpha=0.8, label=f"{s.name} ({len(s.values)})")
    _quantile_lines(ax, s)
    ax.set_xlabel(s.name)
    ax.set_ylabel("samples")
    ax.set_title(f"{s.name}: histogram")
    ax.legend(fontsize="small")
    return save_figure(fig, path)


def ecdf_figure(report: Any, name: Optional[str] = None, *,
                path: Optional[str] = None) -> Any:
    """The empirical distribution function of an observation, p50/p99 marked."""
    s = _series(report, name)
    xs = sorted(s.values)
    n = len(xs)
    fig, ax = new_figure()
    ax.step(xs, [(i + 1) / n for i in range(n)], where="post", color="C0", label="ECDF")
    _quantile_lines(ax, s)
    ax.set_ylim(0, 1.0)
    ax.set_xlabel(s.name)
    ax.set_ylabel("fraction of samples ≤ x")
    ax.set_title(f"{s.name}: empirical CDF")
    ax.legend(fontsize="small", loc="lower right")
    return save_figure(fig, path)


def gauges_figure(report: Any, names: Optional[Sequence[str]] = None, *,
                  path: Optional[str] = None) -> Any:
    """Gauges over simulated time (stage utilization, pool occupancy, …) as
    step lines from their change points; the warm-up marked."""
    chosen = list(report.gauges) if not names else list(names)
    if not chosen:
        raise ValueError("the report has no gauges: declare `gauge NAME = EXPR;` "
                         "(e.g. busy(stage) or used(pool)) to plot one over time")
    fig, ax = new_figure()
    for name in chosen:
        g = report.gauges.get(name)
        if g is None:
            raise ValueError(f"no gauge {name!r} (the report has {', '.join(report.gauges)})")
        ts, vs = g.times, g.values
        if ts and ts[-1] < report.end:
            ts, vs = ts + [report.end], vs + [vs[-1]]
        ax.step(ts, vs, where="post", label=f"{name} (mean {g.mean:.4g})")
    if report.warmup > 0:
        ax.axvline(report.warmup, color="C3", linestyle="--", label="warm-up")
    ax.set_xlim(0, report.end)
    ax.set_xlabel("simulated time")
    ax.set_ylabel("value")
    ax.set_title("gauges over time")
    ax.legend(fontsize="small")
    return save_figure(fig, path)


def report_figure(report: Any, kind: str = "series", name: Optional[str] = None, *,
                  path: Optional[str] = None, warmup_choice: Any = None) -> Any:
    """`kind`: series, hist, ecdf or gauges (a figure of one report)."""
    if kind == "series":
        return series_figure(report, name, path=path,
                             warmup=warmup_choice.time if warmup_choice else None,
                             method=warmup_choice.method if warmup_choice else None)
    if kind == "hist":
        return histogram_figure(report, name, path=path)
    if kind == "ecdf":
        return ecdf_figure(report, name, path=path)
    if kind == "gauges":
        return gauges_figure(report, [name] if name else None, path=path)
    raise ValueError(f"plot kind {kind!r}: one of series, hist, ecdf, gauges")
