"""Figures of a `Validation`: simulated against measured per request (one
panel a metric, log axes, the diagonal drawn) and the two ECDFs overlaid.
Drawn off-screen with matplotlib, as `serq.study.plots` draws."""
from __future__ import annotations

from typing import Any

from ..report.figures import save_figure as _save
from .validate import METRIC_NAMES


def _figure(panels: int) -> tuple[Any, list]:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise RuntimeError("plots need matplotlib: `pip install matplotlib` (in a clone of "
                           "serq-simpy: `pip install -e '.[plot]'`)") from None
    fig = Figure(figsize=(4.0 * panels, 3.8), layout="constrained")
    return fig, [fig.add_subplot(1, panels, k + 1) for k in range(panels)]


def _pairs(validation: Any, metric: str) -> tuple[Any, Any]:
    p = validation.pairs
    both = p[f"meas_{metric}"].notna() & p[f"sim_{metric}"].notna()
    return p.loc[both, f"meas_{metric}"].to_numpy(float), p.loc[both, f"sim_{metric}"].to_numpy(float)


def requests_figure(validation: Any, path: str = None) -> Any:
    """Simulated vs measured, one point a request, per metric."""
    metrics = list(validation.metrics)
    fig, axes = _figure(len(metrics))
    for ax, m in zip(axes, metrics):
        meas, sim = _pairs(validation, m)
        ax.scatter(meas, sim, s=6, alpha=0.5)
        if meas.size:
            lo = max(min(meas.min(), sim.min()), 1e-6)
            hi = max(meas.max(), sim.max())
            ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8)
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlabel(f"measured {METRIC_NAMES[m]} (s)")
        ax.set_ylabel(f"simulated {METRIC_NAMES[m]} (s)")
        ax.set_title(f"{METRIC_NAMES[m]}: r = {validation.metrics[m].pearson_r:.3f}")
    return _save(fig, path)


def ecdf_figure(validation: Any, path: str = None) -> Any:
    """The measured and simulated ECDFs of each metric, overlaid."""
    import numpy as np
    metrics = list(validation.metrics)
    fig, axes = _figure(len(metrics))
    for ax, m in zip(axes, metrics):
        meas, sim = _pairs(validation, m)
        for values, label in ((meas, "measured"), (sim, "simulated")):
            v = np.sort(values)
            ax.step(v, np.arange(1, v.size + 1) / max(v.size, 1), where="post", label=label)
        ax.set_xlabel(f"{METRIC_NAMES[m]} (s)")
        ax.set_ylabel("fraction of requests")
        ax.legend(loc="lower right")
    return _save(fig, path)


def draw(validation: Any, prefix: str) -> list[str]:
    """Write PREFIX_requests.png and PREFIX_ecdf.png; return their paths."""
    paths = [f"{prefix}_requests.png", f"{prefix}_ecdf.png"]
    requests_figure(validation, paths[0])
    ecdf_figure(validation, paths[1])
    return paths
