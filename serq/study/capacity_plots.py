"""Figures of a capacity result (matplotlib, off-screen, as `serq.study.plots`).

`search_figure`: per SLO, the statistic at every probe (across-replication
mean with its 95 % interval; filled: settled, open: not; a green diamond:
the final batch the interval comes from), the threshold as
a horizontal line, the capacity interval shaded and its estimate as a
vertical line. `configs_figure`: per configuration the capacity with its
interval (and the load as a vertical line, the cost in the labels).
"""
from __future__ import annotations

import math
from typing import Any, Optional

from .capacity_text import config_name
from ..report.figures import new_figure as _figure, save_figure as _save


def search_figure(result: Any, config: int = 0, *, path: Optional[str] = None) -> Any:
    """The search of configuration `config` (index into `result.configs`)."""
    c = result.configs[config]
    n = len(result.slos)
    fig, first = _figure(7.0, 3.2 * n)
    axes = [first]
    if n > 1:
        fig.clear()
        axes = list(fig.subplots(n, 1, sharex=True))
    for k, (ax, slo) in enumerate(zip(axes, result.slos)):
        for kind, label in (("settled", "probe, settled (95% CI)"),
                            ("open", "probe, not settled"),
                            ("final", "final batch, fresh seeds (95% CI)")):
            pts = [(p["x"], p["statistics"][k]) for p in c.probes
                   if not p["overloaded"] and _kind(p) == kind
                   and math.isfinite(p["statistics"][k]["mean"])]
            if not pts:
                continue
            xs = [x for x, _ in pts]
            ys = [s["mean"] for _, s in pts]
            hw = [s["half_width"] if math.isfinite(s["half_width"]) else 0.0 for _, s in pts]
            ax.errorbar(xs, ys, yerr=hw, fmt="D" if kind == "final" else "o", capsize=3,
                        color="C2" if kind == "final" else "C0",
                        markerfacecolor="white" if kind == "open" else None, label=label)
        over = [p["x"] for p in c.probes if p["overloaded"]]
        if over:
            ax.plot(over, [slo.threshold] * len(over), "x", color="C3", markersize=9,
                    label="plainly overloaded (stopped early)")
        ax.axhline(slo.threshold, color="C3", linestyle="--",
                   label=f"threshold {slo.threshold:.4g}")
        if c.status in ("found", "imprecise"):
            ax.axvspan(c.low, c.high, color="C2", alpha=0.25,
                       label=f"capacity 95% CI [{c.low:.4g}, {c.high:.4g}]")
            ax.axvline(c.estimate, color="C2", linewidth=1.5)
        ax.set_ylabel(slo.statistic_label)
        ax.set_title(slo.text, fontsize="medium")
        ax.legend(fontsize="x-small")
    axes[-1].set_xlabel(result.vary)
    name = config_name(c.config)
    fig.suptitle(f"capacity search over {result.vary}" + (f" ({name})" if name != "-" else ""))
    return _save(fig, path)


def _kind(p: dict) -> str:
    """"final" (a batch on fresh seeds), "settled" or "open"."""
    if p.get("first_seed", 0) > 0:
        return "final"
    return "open" if p["verdict"] == "open" else "settled"


def configs_figure(result: Any, *, path: Optional[str] = None) -> Any:
    """Capacity per configuration with its 95 % interval."""
    fig, ax = _figure(7.0, 1.0 + 0.5 * len(result.configs))
    labels, best = [], result.cheapest()
    for i, c in enumerate(result.configs):
        label = config_name(c.config)
        if c.cost is not None:
            label += f" (cost {c.cost:.4g})"
        labels.append(label)
        if c.status == "unbounded":
            ax.plot([c.low], [i], ">", color="C0")
            continue
        if c.status == "none":
            ax.plot([c.high], [i], "<", color="C3")
            continue
        color = "C2" if c is best else "C0"
        ax.errorbar([c.estimate], [i], xerr=[[c.estimate - c.low], [c.high - c.estimate]],
                    fmt="o", capsize=4, color=color)
    if result.load is not None:
        ax.axvline(result.load[1], color="C3", linestyle="--",
                   label=f"load {result.load[0]}={result.load[1]:.4g}")
        ax.legend(fontsize="small")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel(f"capacity in {result.vary} (95% interval)")
    ax.set_title("capacity per configuration" + (" (green: cheapest that carries the load)"
                                                 if best is not None else ""))
    return _save(fig, path)
