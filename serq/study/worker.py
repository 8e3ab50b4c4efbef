"""What runs on a worker (a local process or a Dask worker): compile a
`ProgramSpec` once per worker, run it with a seed, return the report or
its statistic rows.

Only `serq.load`, `serq.run` and the `Report` are used, as a user's script
would use them.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Optional

from .spec import ProgramSpec

#: Compiled programs of this worker, by everything that shapes the program
#: (not the seed or the run's settings): each is compiled once per worker.
_COMPILED: dict[tuple, Any] = {}
_CACHE_SIZE = 64


def _compile_key(spec: ProgramSpec) -> tuple:
    return (spec.text, spec.path, spec.sets, spec.defs, spec.workload, spec.trace,
            spec.structural, spec.reads)


def compiled(spec: ProgramSpec) -> Any:
    """The linked program of `spec` (compiled on this worker's first use)."""
    key = _compile_key(spec)
    prog = _COMPILED.get(key)
    if prog is None:
        prog = load_spec(spec)
        if len(_COMPILED) >= _CACHE_SIZE:
            _COMPILED.clear()
        _COMPILED[key] = prog
    return prog


def load_spec(spec: ProgramSpec) -> Any:
    """Load `spec`'s program afresh: from its file when that still holds
    its text (its `use` paths are relative to it), else from the text."""
    import serq
    kw: dict[str, Any] = dict(sets=dict(spec.sets), defs=dict(spec.defs),
                              workload=spec.workload, trace=spec.trace,
                              structural=spec.structural)
    if spec.path is not None and _same_text(spec.path, spec.text):
        return serq.load(spec.path, **kw)
    from serq.frontend import load as front_load
    return front_load(source=spec.text, file_label=spec.path, need_horizon=False, **kw)


def compile_count() -> int:
    """How many programs this worker holds compiled (tests read it)."""
    return len(_COMPILED)


def _same_text(path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read() == text
    except OSError:
        return False


def run_report(spec: ProgramSpec, seed: int, warmup: Optional[float] = None) -> Any:
    """Run `spec` with `seed` (and `warmup` when given) and return its `Report`."""
    from .. import api
    prog = compiled(spec)
    return api.run(prog, seed=seed, horizon=spec.horizon,
                    warmup=spec.warmup if warmup is None else warmup,
                    arrivals=spec.arrivals, policies=dict(spec.policies) or None)


@dataclass
class Outcome:
    """One run's result as plain data: statistic rows, or the error that
    stopped it (`error` is the message a user would see on the CLI)."""

    key: str
    seed: int
    rows: list[tuple[str, str, str, float]] = field(default_factory=list)
    error: Optional[str] = None
    warmup: Optional[float] = None


def run_outcome(spec: ProgramSpec, seed: int, slos: Optional[tuple] = None) -> Outcome:
    """Run `spec` with `seed`; a load or run error becomes `Outcome.error`.
    With `slos` (`serq.study.slo.SLO`s) the rows end with their statistics,
    goodput and throughput (`serq.study.slo.slo_rows`)."""
    from serq.core.errors import SerqError, UsageError
    from .stats import report_rows
    key = spec.key(seed)
    try:
        report = run_report(spec, seed)
    except SerqError as exc:
        return Outcome(key, seed, error=exc.format(spec.path or "<program>"))
    except (UsageError, OSError, ValueError) as exc:
        return Outcome(key, seed, error=f"{type(exc).__name__}: {exc}")
    stuck = [p.label for p in report.pools if p.stuck]
    if stuck:
        return Outcome(key, seed, error="the run ended with stuck sessions in pool "
                                        + ", ".join(stuck))
    rows = report_rows(report) + [settle_row(report)]
    if slos:
        from .slo import slo_rows
        try:
            rows += slo_rows(report, slos)
        except ValueError as exc:
            return Outcome(key, seed, error=str(exc))
    return Outcome(key, seed, rows=rows, warmup=report.warmup)


def settle_row(report: Any) -> tuple[str, str, str, float]:
    """The sweep's `run.unsettled` row: 1 when a series of the run grows
    through it (the text report's warning), else 0."""
    from serq.report.trust import growing_series
    from .table import UNSETTLED
    return (*UNSETTLED, 1.0 if growing_series(report) else 0.0)


def worker_pid() -> int:
    """This worker's process id (tests check that work left the client)."""
    return os.getpid()
