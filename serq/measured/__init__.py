"""Measured runs: importers of request logs into one tidy frame per run
(`serq.measured.frame`), and the replay trace of a run (`trace_rows`).

Formats (`read_run(path, kind=None)` detects them):

* `rounds`: serQ's replay records (`*_rounds.jsonl`);
* `llmservingsim`: LLMServingSim's recorded vLLM runs (`requests.jsonl`,
  `meta.json` beside it; the directory may be given);
* `vllm-bench`: vLLM's `benchmark_serving` saved results (`.json`);
* `csv`: serq-simpy's own CSV (`serq.measured.csv_run`).

A run may be given as `PATH@A:B`: every request is replayed, but only those
from fraction A to fraction B of the run's requests, by arrival, are
scored (`PATH@0:0.5` the first half, `PATH@0.5:1` the second).

Only pandas is needed (imported when a run is read).

May import: `serq.core` (the error types and positions); pandas when a
frame is made.
"""
from __future__ import annotations

import json
import os
from typing import Optional

from .errors import MeasuredError, measured_error
from .frame import COLUMNS, METRICS, MeasuredRun

__all__ = ["COLUMNS", "KINDS", "METRICS", "MeasuredError", "MeasuredRun", "read_run",
           "split_selection"]

#: The formats `read_run` reads.
KINDS = ("rounds", "llmservingsim", "vllm-bench", "csv")


def split_selection(spec: str) -> tuple[str, Optional[tuple[float, float]]]:
    """`PATH@A:B` -> (PATH, (A, B)); a spec without a selection -> (PATH, None)."""
    path, at, sel = spec.rpartition("@")
    if not at or os.path.exists(spec):
        return spec, None
    lo, colon, hi = sel.partition(":")
    try:
        a, b = float(lo), float(hi)
    except ValueError:
        a = b = -1.0
    if not colon or not 0 <= a < b <= 1:
        raise measured_error(path, f"the selection `@{sel}` is not A:B with 0 <= A < B <= 1",
                             help="`RUN@0:0.5` scores the first half of the requests by "
                             "arrival, `RUN@0.5:1` the second")
    return path, (a, b)


def detect(path: str) -> str:
    """The format of the log at `path` (see the module text)."""
    if os.path.isdir(path):
        if os.path.exists(os.path.join(path, "requests.jsonl")):
            return "llmservingsim"
        raise measured_error(path, "a directory holds a run as requests.jsonl (LLMServingSim)",
                             help="name the log file itself")
    if path.endswith(".csv"):
        return "csv"
    from .jsonl import read_text
    text = read_text(path)
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    try:
        obj = json.loads(first)
    except json.JSONDecodeError:
        obj = None
    if isinstance(obj, dict):
        from . import llmservingsim, rounds
        if all(k in obj for k in rounds.SIGNATURE):
            return "rounds"
        if all(k in obj for k in llmservingsim.SIGNATURE):
            return "llmservingsim"
    if text.lstrip().startswith("{") and '"ttfts"' in text:
        return "vllm-bench"
    raise measured_error(path, "not a measured log serq-simpy reads", line=1, text=text,
                         help="the formats are " + ", ".join(KINDS)
                         + " (--format names one)")


def read_run(spec: str, kind: Optional[str] = None) -> MeasuredRun:
    """Read the measured run `spec` (`PATH` or `PATH@A:B`) into a
    `MeasuredRun`; `kind` forces a format of `KINDS`. Raises `MeasuredError`
    (file, line, what is wrong) and returns nothing on a malformed log."""
    path, selection = split_selection(spec)
    if not os.path.exists(path):
        raise measured_error(path, "no such file or directory",
                             help="give the path of a measured log")
    kind = kind or detect(path)
    meta: dict = {}
    if kind == "rounds":
        from .rounds import read_rounds
        frame = read_rounds(path)
    elif kind == "llmservingsim":
        from .llmservingsim import read_requests
        frame, meta = read_requests(path)
    elif kind == "vllm-bench":
        from .vllm_bench import read_bench
        frame = read_bench(path)
    elif kind == "csv":
        from .csv_run import read_csv_run
        frame = read_csv_run(path)
    else:
        raise ValueError(f"format {kind!r}: one of {', '.join(KINDS)}")
    return MeasuredRun(path=path, kind=kind, frame=frame, meta=meta, selection=selection)
