"""Automatic warm-up: the MSER-5 truncation rule (White, 1997).

The samples of a series, in recording order, are grouped into batches of
five; `k` batch means Z_1 … Z_k. For each candidate `d` (0 ≤ d ≤ k/2) the
rule computes

    MSER(d) = Σ_{j>d} (Z_j − mean(Z_{d+1..k}))² / (k − d)²

and truncates the 5·d* first samples, d* the smallest minimiser. The
truncation *time* is the midpoint between the last dropped sample's time
and the first kept one's (so no sample sits exactly on the boundary).
On every observation at once, the latest time wins.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

#: Samples per MSER batch.
BATCH = 5
#: The method's name, as printed and stored.
METHOD = "MSER-5"
#: Fewest samples a series needs for MSER-5 (two batches at least).
MIN_SAMPLES = 2 * BATCH


def mser5(values: Sequence[float]) -> int:
    """The number of leading samples MSER-5 drops (a multiple of 5)."""
    import numpy as np
    k = len(values) // BATCH
    if k < 2:
        return 0
    z = np.asarray(values[:k * BATCH], dtype=float).reshape(k, BATCH).mean(axis=1)
    # suffix sums of Z and Z² give every candidate's statistic in one pass;
    # shifted by the last batch mean (the steady state the tails share), so
    # that Σ Z² − (Σ Z)²/m does not cancel catastrophically: a constant
    # series gives exactly 0 for every d, and d* = 0, as the rule says
    z = z - z[-1]
    s1 = np.cumsum(z[::-1])[::-1]
    s2 = np.cumsum((z * z)[::-1])[::-1]
    m = np.arange(k, 0, -1, dtype=float)  # k − d for d = 0 … k−1
    sse = np.maximum(s2 - s1 * s1 / m, 0.0)
    stat = sse / (m * m)
    last = k // 2
    d = int(np.argmin(stat[:last + 1]))
    return d * BATCH


def truncation_time(times: Sequence[float], dropped: int) -> float:
    """The warm-up time that drops the first `dropped` samples."""
    if dropped <= 0:
        return 0.0
    return (float(times[dropped - 1]) + float(times[dropped])) / 2.0


@dataclass
class WarmupChoice:
    """The warm-up a study chose: the time, the method, the deciding series."""

    time: float
    observation: Optional[str]
    method: str = METHOD
    dropped: int = 0
    #: Every series looked at → its truncation time.
    candidates: dict[str, float] = field(default_factory=dict)

    def describe(self) -> str:
        """One line for the text report."""
        from serq.report.json_report import number_text
        on = f"on {self.observation}" if self.observation else "no series with enough samples"
        return (f"warm-up {number_text(self.time)} chosen by {self.method} ({on}, "
                f"{self.dropped} samples dropped)")

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the choice."""
        return {"method": self.method, "time": self.time, "observation": self.observation,
                "dropped": self.dropped, "candidates": dict(self.candidates)}


def _series(report: Any, name: Optional[str]) -> dict[str, Any]:
    if name is not None:
        s = report.observes.get(name) or report.client.get(name)
        if s is None:
            names = ", ".join([*report.observes, *report.client])
            raise ValueError(f"--observe {name}: no observation or client series of that "
                             f"name (the run has {names})")
        return {name: s}
    out = dict(report.observes)
    out.update({k: v for k, v in report.client.items() if k not in out})
    return out


def choose(report: Any, name: Optional[str] = None) -> WarmupChoice:
    """MSER-5 on `report`'s series `name` (or on every series, the latest
    time winning); `report` should come from a run with warm-up 0."""
    best = WarmupChoice(0.0, None)
    for label, series in _series(report, name).items():
        if len(series.values) < MIN_SAMPLES:
            continue
        dropped = mser5(series.values)
        t = truncation_time(series.times, dropped)
        best.candidates[label] = t
        if best.observation is None or t > best.time:
            best.time, best.observation, best.dropped = t, label, dropped
    return best
