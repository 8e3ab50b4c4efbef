"""Figures of studies and sweeps (matplotlib, drawn off-screen): a sweep's
response curves. The figures of one report are `serq.report.figures`'s
(re-exported here for a study's code).

Every function returns a `matplotlib.figure.Figure` (no pyplot, no global
state, no display needed) and, given `path`, saves it there (PNG, SVG or
PDF by the file's suffix). Tests read the figures' data: lines, labels,
limits.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from .table import parse_statistic
from ..report.figures import (ecdf_figure, gauges_figure, histogram_figure, new_figure,
                              report_figure, running_interval, save_figure, series_figure)

__all__ = ["ecdf_figure", "gauges_figure", "histogram_figure", "parse_statistic",
           "report_figure", "running_interval", "series_figure", "sweep_figure"]


def _point_rows(frame: Any, params: Sequence[str]) -> list[tuple]:
    return list(zip(*[list(frame[p]) for p in params]))


def sweep_figure(summary: Any, params: Sequence[str], y: str, *, x: Optional[str] = None,
                 by: Optional[str] = None, path: Optional[str] = None) -> Any:
    """A sweep's response curves: statistic `y`'s across-replication mean
    over grid parameter `x` with Student-t bars, one line per value of `by`
    (default: the other grid parameters). A bar stops at 0 when every mean
    drawn is at least 0 (a p99, a time, a utilization cannot be negative);
    the points that do not settle are crossed out in red; the y axis names
    the statistic's unit (`serq.study.table.unit`)."""
    params = list(params)
    x = x or params[0]
    if x not in params:
        raise ValueError(f"--x {x}: not a grid parameter ({', '.join(params)})")
    others = [by] if by else [p for p in params if p != x]
    for p in others:
        if p not in params or p == x:
            raise ValueError(f"--by {p}: another grid parameter than x ({', '.join(params)})")
    from .table import axis_label, resolve, unsettled_points
    section, name, stat = resolve(summary, y)
    sel = summary[(summary["section"] == section) & (summary["name"] == name)
                  & (summary["statistic"] == stat)]
    if sel.empty:
        raise ValueError(f"no statistic {stat!r} of {section} {name} in the results")
    unsettled = unsettled_points(summary, params)
    floor = 0.0 if (sel["mean"].dropna() >= 0).all() else -math.inf
    fig, ax = new_figure()
    groups = sel.groupby(others, sort=True) if others else [((), sel)]
    marked = False
    for key, g in groups:
        g = g.sort_values(x)
        hw = [h if math.isfinite(h) else 0.0 for h in g["half_width"]]
        means = list(g["mean"])
        low = [min(h, m - floor) if m == m else 0.0 for h, m in zip(hw, means)]
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(f"{p}={v}" for p, v in zip(others, key)) or name
        ax.errorbar(list(g[x]), means, yerr=[low, hw], marker="o", capsize=3, label=label)
        bad = [(xv, m) for xv, m, pt in zip(g[x], means, _point_rows(g, params))
               if pt in unsettled]
        if bad:
            ax.plot([b[0] for b in bad], [b[1] for b in bad], "x", color="C3", markersize=10,
                    markeredgewidth=2, zorder=5,
                    label=None if marked else "does not settle (a series grows)")
            marked = True
    ax.set_xlabel(x)
    ax.set_ylabel(axis_label(section, name, stat))
    ax.set_title(f"{name} {stat} over {x} (mean, 95% t interval)")
    ax.legend(fontsize="small")
    return save_figure(fig, path)
