"""`serq.replicate`: independent replications of one program, with an
automatic warm-up (MSER-5) and a precision target.

Precision: with two or more replications, replications are added until
the target statistic's Student-t half-width over |mean| is at most the
target, or `budget` replications have run. With one replication the
horizon grows instead (each run restarts from time 0 with the same seed,
which simulates the same path further) until the batch-means interval of
the observation's mean meets the target or the horizon reaches
`max_horizon`.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Callable, Optional

from .executors import resolve
from .report import PrecisionOutcome, StudyReport
from .spec import MAX_RUNS, ProgramSpec, replication_seed
from .warmup import WarmupChoice, choose
from .worker import compiled, run_report

#: Replications a precision target may use at most, unless `budget` says.
DEFAULT_BUDGET = 100
#: How far the horizon may grow for a single-run precision target (× the first).
DEFAULT_HORIZON_FACTOR = 64.0

Progress = Optional[Callable[[int, int], None]]


def replicate(program: Any = None, replications: int = 10, *, seed: Optional[int] = None,
              executor: Any = None, jobs: Optional[int] = None,
              source: Optional[str] = None, sets: Optional[dict[str, Any]] = None,
              defs: Optional[dict[str, str]] = None,
              policies: Optional[dict[str, Any]] = None, horizon: Optional[float] = None,
              warmup: Any = None, arrivals: Optional[int] = None,
              workload: Optional[str] = None, trace: Optional[str] = None,
              observe: Optional[str] = None, precision: Optional[float] = None,
              budget: Optional[int] = None, max_horizon: Optional[float] = None,
              progress: Progress = None) -> StudyReport:
    """Run `replications` independent replications of `program` (a path, a
    `ProgramSpec`, or `source=` text) and return a `StudyReport`.

    Replication `i` uses seed `seed + i` (`seed` defaults to the program's).
    `executor`: None (local processes, `jobs` of them, default the cores),
    a job count, a `concurrent.futures.Executor`, a `distributed.Client` or
    a scheduler address. `warmup="auto"` chooses the warm-up by MSER-5 on
    `observe` (or on every series, the latest point winning) from a pilot
    run of the first seed with warm-up 0. `precision` (a relative
    half-width, e.g. 0.02) on `observe` (`NAME` for its mean, `NAME:p99`)
    adds replications up to `budget`, or with one replication extends the
    horizon up to `max_horizon`. `progress(done, total)` is called as
    replications finish."""
    if replications < 1:
        raise ValueError("replications must be at least 1")
    if max(replications, budget or 0) > MAX_RUNS:
        raise ValueError(f"{max(replications, budget or 0)} replications: at most {MAX_RUNS}")
    auto = isinstance(warmup, str)
    if auto and warmup != "auto":
        raise ValueError(f"warmup={warmup!r}: a number or 'auto'")
    spec = ProgramSpec.make(program, source=source, sets=sets, defs=defs, policies=policies,
                            horizon=horizon, warmup=None if auto else warmup,
                            arrivals=arrivals, workload=workload, trace=trace)
    target = _target(observe, precision)
    prog = compiled(spec)
    import serq.api
    settings = serq.api.settings_for(prog, horizon=spec.horizon, warmup=spec.warmup,
                                     arrivals=spec.arrivals)
    base = settings.seed if seed is None else int(seed)
    if spec.horizon is None:
        spec = replace(spec, horizon=settings.horizon)
    choice: Optional[WarmupChoice] = None
    if auto:
        pilot = run_report(spec, replication_seed(base, 0), warmup=0.0)
        choice = choose(pilot, target[0] if target else observe)
        spec = replace(spec, warmup=choice.time)
    most = replications if precision is None else max(replications, budget or DEFAULT_BUDGET)
    ex = resolve(executor, jobs, most)
    if target is not None and replications == 1:
        ex.close()
        return _extend_horizon(spec, base, choice, target, precision, max_horizon)
    try:
        reports = run_batch(ex, spec, base, 0, replications, progress, replications)
        outcome = None
        if target is not None:
            reports, outcome = _add_replications(ex, spec, base, reports, target, precision,
                                                 budget or DEFAULT_BUDGET, progress)
    except BaseException:  # an interrupt: end the workers at once
        ex.close(abort=True)
        raise
    ex.close()
    return StudyReport(spec, base, [replication_seed(base, i) for i in range(len(reports))],
                       reports, warmup_choice=choice, precision=outcome)


def _target(observe: Optional[str], precision: Optional[float]):
    if precision is None:
        return None
    if not observe:
        raise ValueError("a precision target needs the observation it applies to "
                         "(observe=NAME, --observe NAME)")
    if not (0 < precision < 1):
        raise ValueError(f"precision {precision}: a relative half-width between 0 and 1")
    name, _, stat = observe.partition(":")
    stat = stat or "mean"
    if stat not in ("mean", "p99"):
        raise ValueError(f"--observe {observe}: the statistic is mean or p99")
    return name, stat


def run_batch(ex: Any, spec: ProgramSpec, base: int, start: int, count: int,
           progress: Progress, total: int) -> list[Any]:
    futures = {ex.submit(run_report, spec, replication_seed(base, i)): i
               for i in range(start, start + count)}
    out: dict[int, Any] = {}
    for fut in ex.as_completed(list(futures)):
        out[futures[fut]] = fut.result()
        if progress is not None:
            progress(start + len(out), total)
    return [out[i] for i in sorted(out)]


def _section(report: Any, name: str) -> str:
    if name in report.observes:
        return "observe"
    if name in report.client:
        return "client"
    names = ", ".join([*report.observes, *report.client])
    raise ValueError(f"--observe {name}: no observation or client series of that name "
                     f"(the run has {names})")


def _add_replications(ex: Any, spec: ProgramSpec, base: int, reports: list[Any],
                      target: tuple[str, str], precision: float, budget: int,
                      progress: Progress) -> tuple[list[Any], PrecisionOutcome]:
    from .stats import interval
    name, stat = target
    section = _section(reports[0], name)
    while True:
        values = [getattr(getattr(r, "observes" if section == "observe" else "client")[name]
                          .summary(), stat) for r in reports]
        iv = interval(values)
        n = len(reports)
        if iv.relative <= precision or n >= budget:
            break
        # the usual sequential estimate: n grows with (achieved / target)²
        want = math.ceil(n * (iv.relative / precision) ** 2) if math.isfinite(
            iv.relative) else 2 * n
        more = max(1, min(budget, want) - n)
        reports = reports + run_batch(ex, spec, base, n, more, progress, n + more)
    return reports, PrecisionOutcome(precision, name, stat, iv.relative,
                                     iv.relative <= precision, "replications", len(reports),
                                     float(spec.horizon), float(budget))


def _extend_horizon(spec: ProgramSpec, base: int, choice: Optional[WarmupChoice],
                    target: tuple[str, str], precision: float,
                    max_horizon: Optional[float]) -> StudyReport:
    name, stat = target
    if stat != "mean":
        raise ValueError("a single run's precision applies to a mean (its batch-means "
                         "interval); use two or more replications for p99")
    limit = float(max_horizon or DEFAULT_HORIZON_FACTOR * spec.horizon)
    seed = replication_seed(base, 0)
    while True:
        report = run_report(spec, seed)
        group = report.observes if _section(report, name) == "observe" else report.client
        s = group[name].summary()
        rel = s.ci / abs(s.mean) if s.mean and math.isfinite(s.mean) else math.inf
        if rel <= precision or spec.horizon >= limit:
            break
        grow = (rel / precision) ** 2 if math.isfinite(rel) else 4.0
        spec = replace(spec, horizon=min(limit, spec.horizon * max(1.5, min(grow, 16.0))))
    outcome = PrecisionOutcome(precision, name, stat, rel, rel <= precision, "horizon", 1,
                               float(spec.horizon), limit)
    return StudyReport(spec, base, [seed], [report], warmup_choice=choice, precision=outcome)
