"""How a `Comparison` is shown: the text table, the HTML table, the figure.

The table has one row per statistic: both sides' means over the paired
replications, the mean difference B − A with its Student-t half-width, the
p-value, and `*` where the interval excludes 0 (a significant difference).
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from ..report.numbers import mean_cells, sig


def _cells(d: Any) -> list[str]:
    diff, half = mean_cells(d.diff, d.half_width)
    p = "–" if math.isnan(d.p_value) else f"{d.p_value:.2g}"
    return [d.section, d.name, d.statistic, sig(d.a), sig(d.b), diff, half, p,
            "*" if d.significant else ""]


def _header(c: Any) -> list[str]:
    return ["section", "name", "statistic", c.labels[0], c.labels[1], "B − A",
            f"{100 * c.confidence:g}% t", "p", "sig"]


def _headline(c: Any) -> str:
    first = c.a.reports[0]
    seeds = c.a.seeds[:c.replications]
    return (f"comparison: A = {c.labels[0]}, B = {c.labels[1]}; {c.replications} paired "
            f"replications, seeds {seeds[0]}…{seeds[-1]} on both sides (common random "
            f"numbers), horizon {first.horizon:g}, warmup {first.warmup:g}")


def comparison_text(c: Any, every: bool = False) -> str:
    """The text table (`SHOWN` statistics, or `every` one)."""
    from ..report.text_report import table
    shown = c.shown(every)
    lines = [_headline(c)]
    lines += table(_header(c), [_cells(d) for d in shown])
    n = sum(d.significant for d in shown)
    lines += ["", f"* the {100 * c.confidence:g}% interval of B − A excludes 0: "
                  f"{n} of {len(shown)} statistics differ significantly"]
    return "\n".join(lines) + "\n"


def comparison_html(c: Any) -> str:
    """The table as HTML."""
    from html import escape
    from ..report.html import rows_table
    return (f"<div><p>{escape(_headline(c))}</p>"
            + rows_table(_header(c), [_cells(d) for d in c.shown()]) + "</div>")


def short_repr(c: Any) -> str:
    """A few lines: the significant differences among the shown statistics."""
    shown = c.shown()
    lines = [f"<Comparison {c.labels[0]} vs {c.labels[1]}: {c.replications} paired "
             f"replications, {sum(d.significant for d in shown)} of {len(shown)} "
             f"shown statistics differ significantly"]
    for d in [d for d in shown if d.significant][:15]:
        diff, half = mean_cells(d.diff, d.half_width)
        lines.append(f"  {d.section} {d.name} {d.statistic}: B − A = {diff} {half}")
    return "\n".join(lines) + "\n  (.text(), .differences(), .to_pandas(), .plot())>"


def _pick(c: Any, statistics: Optional[Sequence[str]]) -> list[Any]:
    if not statistics:
        return [d for d in c.shown() if math.isfinite(d.half_width)]
    from .plots import parse_statistic
    sections = [(d.section, d.name) for d in c.differences()]
    out = []
    for text in statistics:
        section, name, stat = parse_statistic(text, list(dict.fromkeys(sections)))
        out.append(c.difference(section, name, stat))
    return out


def comparison_figure(c: Any, statistics: Optional[Sequence[str]] = None, *,
                      path: Optional[str] = None) -> Any:
    """Each difference B − A as a point with its interval, relative to A's
    mean (so statistics of different units share the axis), 0 marked."""
    from ..report.figures import new_figure as _figure, save_figure as _save
    picked = _pick(c, statistics)
    fig, ax = _figure(7.0, max(2.5, 0.35 * len(picked) + 1.2))
    ys = list(range(len(picked)))[::-1]
    for y, d in zip(ys, picked):
        scale = abs(d.a) if d.a and math.isfinite(d.a) else 1.0
        colour = "tab:red" if d.significant else "tab:grey"
        half = d.half_width / scale if math.isfinite(d.half_width) else 0.0
        ax.errorbar([100 * d.diff / scale], [y], xerr=[100 * half], fmt="o", color=colour,
                    capsize=3)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{d.section}.{d.name}:{d.statistic}" for d in picked])
    ax.set_xlabel(f"B − A, % of A's mean ({100 * c.confidence:g}% paired t-interval; "
                  "red: significant)")
    ax.set_title(f"{c.labels[1]} vs {c.labels[0]}, {c.replications} paired replications")
    return _save(fig, path)
