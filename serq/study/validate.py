"""How far a program's replay is from a measured run.

Per metric (TTFT, TPOT, E2E) over the scored requests: the measured and
simulated mean, p50, p90, p99 and their relative error
(simulated − measured) / measured; and over the requests matched by session
and turn: MAPE (mean |sim − meas| / meas), Pearson's r, the bias (mean of
log(sim / meas): negative when the program is fast) and the mean |log
ratio|. Percentiles are numpy's (linear interpolation). A request counts
for a metric when both sides have it (TPOT needs two output tokens);
requests the simulation never finished are counted as `missing`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

#: The statistics of each metric, in table order.
STATS = ("mean", "p50", "p90", "p99")
#: The metrics, in table order, with their display names.
METRIC_NAMES = {"ttft": "TTFT", "tpot": "TPOT", "e2e": "E2E"}


def statistic(values: Any, stat: str) -> float:
    """`mean` or `pNN` of `values` (NaN when empty)."""
    import numpy as np
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return math.nan
    if stat == "mean":
        return float(v.mean())
    return float(np.percentile(v, float(stat[1:])))


def _error(sim: float, meas: float) -> float:
    return (sim - meas) / meas if meas else math.nan


@dataclass
class MetricComparison:
    """One metric: the statistics measured and simulated, the per-request
    agreement, and (after a calibration) prediction intervals."""

    metric: str
    count: int
    missing: int
    measured: dict[str, float]
    simulated: dict[str, float]
    mape: float
    pearson_r: float
    bias: float
    mean_abs_log_ratio: float
    interval: dict[str, tuple[float, float]] = field(default_factory=dict)

    def error(self, stat: str) -> float:
        """The relative error of `stat`."""
        return _error(self.simulated[stat], self.measured[stat])

    def covered(self, stat: str) -> Optional[bool]:
        """Whether the measured `stat` lies in its prediction interval (None: no interval)."""
        if stat not in self.interval:
            return None
        lo, hi = self.interval[stat]
        return lo <= self.measured[stat] <= hi

    def to_dict(self) -> dict:
        """JSON-ready."""
        d = {"count": self.count, "missing": self.missing,
             "measured": self.measured, "simulated": self.simulated,
             "error": {s: self.error(s) for s in STATS},
             "mape": self.mape, "pearson_r": self.pearson_r, "bias": self.bias,
             "mean_abs_log_ratio": self.mean_abs_log_ratio}
        if self.interval:
            d["prediction_interval"] = {s: list(v) for s, v in self.interval.items()}
            d["covered"] = {s: self.covered(s) for s in self.interval}
        return d


def compare_metric(pairs: Any, metric: str) -> MetricComparison:
    """The comparison of one metric from the `matched` frame `pairs`."""
    import numpy as np
    meas, sim = pairs[f"meas_{metric}"].to_numpy(float), pairs[f"sim_{metric}"].to_numpy(float)
    has_meas = ~np.isnan(meas)
    both = has_meas & ~np.isnan(sim)
    m, s = meas[both], sim[both]
    ratio = s[(m > 0) & (s > 0)] / m[(m > 0) & (s > 0)]
    logr = np.log(ratio) if ratio.size else np.array([math.nan])
    r = float(np.corrcoef(m, s)[0, 1]) if m.size > 1 and m.std() > 0 and s.std() > 0 \
        else math.nan
    pos = m > 0
    return MetricComparison(
        metric=metric, count=int(both.sum()),
        missing=int((has_meas & np.isnan(sim) & pairs["sim_e2e"].isna().to_numpy()).sum()),
        measured={st: statistic(meas[has_meas], st) for st in STATS},
        simulated={st: statistic(s, st) for st in STATS},
        mape=float(np.mean(np.abs(s[pos] - m[pos]) / m[pos])) if pos.any() else math.nan,
        pearson_r=r, bias=float(np.mean(logr)), mean_abs_log_ratio=float(np.mean(np.abs(logr))))


@dataclass
class Validation:
    """A program against a measured run: one `MetricComparison` a metric."""

    program: str
    run: str
    sets: dict[str, float]
    metrics: dict[str, MetricComparison]
    requests: int
    pairs: Any = None

    def to_dict(self) -> dict:
        """JSON-ready (the per-request pairs are left out)."""
        return {"program": self.program, "measured": self.run, "sets": self.sets,
                "requests": self.requests,
                "metrics": {k: v.to_dict() for k, v in self.metrics.items()}}

    def text(self) -> str:
        """The human-readable tables."""
        from ..report.text_report import fixed, table
        lines = [f"{self.program} against {self.run}: {self.requests} requests scored"]
        if self.sets:
            lines.append("with " + ", ".join(f"{k} = {v:.6g}" for k, v in self.sets.items()))
        has_pi = any(c.interval for c in self.metrics.values())
        head = ["metric", "stat", "measured", "simulated", "error"] + (
            ["95% prediction", "in"] if has_pi else [])
        rows = []
        for c in self.metrics.values():
            for st in STATS:
                row = [METRIC_NAMES[c.metric], st, fixed(c.measured[st], 4),
                       fixed(c.simulated[st], 4), f"{100 * c.error(st):+.1f}%"]
                if has_pi:
                    iv = c.interval.get(st)
                    row += ([f"{fixed(iv[0], 4)} .. {fixed(iv[1], 4)}",
                             "yes" if c.covered(st) else "no"] if iv else ["", ""])
                rows.append(row)
        lines += table(head, rows)
        rows = [[METRIC_NAMES[c.metric], str(c.count), str(c.missing),
                 f"{100 * c.mape:.1f}%", fixed(c.pearson_r, 3), f"{c.bias:+.3f}",
                 fixed(c.mean_abs_log_ratio, 3)] for c in self.metrics.values()]
        lines += table(["per request", "matched", "missing", "MAPE", "Pearson r",
                        "bias (mean log ratio)", "mean |log ratio|"], rows)
        return "\n".join(lines) + "\n"


def validation_of(run: Any, sim: Any, program: str, sets: Optional[dict] = None,
                  metrics: Sequence[str] = ("ttft", "tpot", "e2e")) -> Validation:
    """The `Validation` of the simulated requests `sim` (`replay.simulate`'s
    result) against `run`'s scored requests."""
    from .replay import matched
    pairs = matched(run, sim)
    return Validation(program=program, run=run.label, sets=dict(sets or {}),
                      metrics={m: compare_metric(pairs, m) for m in metrics},
                      requests=len(pairs), pairs=pairs)


def validate(program: Any, run: Any, *, sets: Optional[dict] = None,
             defs: Optional[dict] = None, seed: Optional[int] = None,
             horizon: Optional[float] = None, observes: Optional[dict] = None
             ) -> Validation:
    """Replay `run` (a `MeasuredRun` or a path `RUN[@A:B]`) with `program`
    and compare. Raises `MeasuredError` for a malformed log."""
    import tempfile

    from ..measured import read_run
    from .replay import make_replay, simulate, write_trace_file
    if isinstance(run, str):
        run = read_run(run)
    with tempfile.TemporaryDirectory(prefix="serq-replay-") as tmp:
        replay = make_replay(program, write_trace_file(run, tmp), sets=sets, defs=defs,
                             seed=seed, horizon=horizon, observes=observes)
        sim = simulate(replay)
    label = program if isinstance(program, str) else (program.path or "<program>")
    return validation_of(run, sim, label, {k: float(v) for k, v in
                                                        (sets or {}).items()
                                                        if _is_number(v)})


def _is_number(v: Any) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False
