"""`serq.sweep`: a program run over a grid of `--set` values, replicated,
on local processes or a Dask cluster, with results kept on disk point by
point (see `serq.study.store`)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Mapping, Optional, Union

from .executors import resolve
from .grid import normalize, points
from .inputs import with_reads
from .spec import MAX_RUNS, ProgramSpec, replication_seed
from .stats import interval
from .worker import Outcome, run_outcome

TIDY = ["replication", "seed", "section", "name", "statistic", "value"]
SUMMARY = ["section", "name", "statistic", "mean", "half_width", "n"]


@dataclass
class SweepResult:
    """A finished sweep. `tidy`: one row per point × replication × statistic;
    `summary`: per point and statistic the across-replication mean,
    Student-t half-width and n; `errors`: the runs that failed, with their
    message. `computed`/`reused`: runs done now / read back from `out`.
    Unpacks as `tidy, summary = serq.sweep(…)`."""

    grid: dict[str, list]
    tidy: Any
    summary: Any
    errors: Any
    computed: int = 0
    reused: int = 0
    out: Optional[str] = None
    paths: dict[str, str] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.tidy, self.summary))

    def table(self) -> tuple[list[str], list[list[Any]]]:
        """One row per grid point: its parameters, then the across-replication
        mean of the study report's statistics (`TEXT_STATS`, observations
        and client series first) that vary or are non-zero."""
        from .report import TEXT_STATS
        params = list(self.grid)
        s = self.summary
        if s is None or not len(s):
            return params, []
        keep = s[[st in TEXT_STATS.get(sec, ()) for sec, st in zip(s["section"],
                                                                     s["statistic"])]]
        keep = keep.assign(column=keep["section"] + "." + keep["name"] + ":"
                           + keep["statistic"])
        wide = keep.pivot_table(index=params, columns="column", values="mean", sort=False)
        wide = wide.loc[:, (wide.fillna(0) != 0).any()]
        header = params + [str(c) for c in wide.columns]
        rows = [(list(i) if isinstance(i, tuple) else [i]) + list(v)
                for i, v in zip(wide.index, wide.to_numpy().tolist())]
        return header, rows

    def __repr__(self) -> str:
        """A few lines (never the tidy rows): see `table()`, `summary`."""
        points = 1
        for values in self.grid.values():
            points *= len(values)
        grid = ", ".join(f"{k}={v}" for k, v in self.grid.items())
        return (f"<SweepResult {points} points ({grid}): {self.computed} runs computed, "
                f"{self.reused} read back, {len(self.errors)} failed "
                "(.summary, .tidy, .errors, .plot(y))>")

    def _repr_html_(self) -> str:
        """The per-point table as HTML (what a notebook shows)."""
        from html import escape
        from ..report.html import rows_table
        header, rows = self.table()
        return (f"<div><p>{escape(repr(self)[1:-1])}</p>" + rows_table(header, rows)
                + "</div>")

    def plot(self, y: str, x: Optional[str] = None, by: Optional[str] = None,
             path: Optional[str] = None):
        """Response curves of statistic `y` (`ttft:p99`, `observe.response:mean`,
        `stage.engine:utilization`) over grid parameter `x`, one line per value
        of `by` (see `serq.study.plots.sweep_figure`)."""
        from .plots import sweep_figure
        return sweep_figure(self.summary, list(self.grid), y, x=x, by=by, path=path)


def sweep(program: Any = None, grid: Union[Mapping[str, Any], list[str], None] = None, *,
          replications: int = 1, seed: Optional[int] = None, executor: Any = None,
          jobs: Optional[int] = None, out: Optional[str] = None,
          source: Optional[str] = None, sets: Optional[dict[str, Any]] = None,
          defs: Optional[dict[str, str]] = None, policies: Optional[dict[str, Any]] = None,
          horizon: Optional[float] = None, warmup: Optional[float] = None,
          arrivals: Optional[int] = None, workload: Optional[str] = None,
          trace: Optional[str] = None, retry_failed: bool = False,
          progress: Optional[Callable[[int, int], None]] = None,
          store_mode: Optional[str] = None,
          warn: Optional[Callable[[str], None]] = None) -> SweepResult:
    """Run `program` (a path, a `ProgramSpec` or `source=` text) at every
    point of `grid` (`{"lam": "0.5:0.9:0.1", "max_seqs": [8, 16, 32]}`, or
    `--grid` texts), `replications` times each (seeds `seed + i`, the same
    at every point). With `out`, every finished run is written there at
    once and a run already there is read back instead of computed (a failed
    one too, unless `retry_failed`). `executor` as for `serq.replicate`.
    `progress(done, total)` is called as runs finish.

    A run is keyed by everything it reads (program, libraries, trace,
    workload, policy sources, settings, seed). One sweep at a time writes
    `out`; an `out` holding another sweep is refused unless `store_mode` is
    "extend" or "replace". A damaged run file there is recomputed, and
    `warn(text)` (default: a `StoreWarning`) names it."""
    if grid is None:
        raise ValueError("a sweep needs a grid")
    if isinstance(warmup, str):
        raise ValueError("a sweep takes a numeric warm-up; choose one with "
                         "`serq-simpy run MODEL --warmup auto` at the most loaded point")
    if replications < 1:
        raise ValueError("replications must be at least 1")
    if store_mode not in (None, "extend", "replace"):
        raise ValueError(f"store_mode={store_mode!r}: None, 'extend' or 'replace'")
    axes = normalize(grid)
    planned = math.prod(len(v) for v in axes.values()) * replications
    if planned > MAX_RUNS:
        raise ValueError(f"the sweep plans {planned} runs (points × replications), more "
                         f"than {MAX_RUNS}: take fewer grid values or replications")
    clash = set(axes) & set(TIDY + SUMMARY + ["error"])
    if clash:
        raise ValueError(f"grid parameter {sorted(clash)[0]} has the name of a result column")
    base_spec = ProgramSpec.make(program, source=source, sets=sets, defs=defs,
                                 policies=policies, horizon=horizon, warmup=warmup,
                                 arrivals=arrivals, workload=workload, trace=trace)
    # a point may size the arrays (`R` of `stage engine[R]`): each is built again
    base_spec = replace(base_spec, structural=True)
    pts = points(axes)
    base_spec = with_reads(base_spec, pts[0])
    check_names(base_spec, axes, pts[0])
    base = _base_seed(base_spec, pts) if seed is None else int(seed)
    specs = [base_spec.with_sets(pt) for pt in pts]  # one per point, shared by its runs
    tasks = [(p, r, specs[p], replication_seed(base, r))
             for p in range(len(pts)) for r in range(replications)]
    store = None
    if out is not None:
        from .store import Store
        store = Store(out, warn=warn or _store_warning)
        store.lock()
    try:
        return _run_tasks(store, axes, pts, tasks, base_spec, replications, base, executor,
                          jobs, out, retry_failed, progress, store_mode)
    finally:
        if store is not None:
            store.unlock()


def _run_tasks(store: Any, axes: dict, pts: list[dict], tasks: list, base_spec: ProgramSpec,
               replications: int, base: int, executor: Any, jobs: Optional[int],
               out: Optional[str], retry_failed: bool,
               progress: Optional[Callable[[int, int], None]],
               store_mode: Optional[str]) -> SweepResult:
    """Read back what `store` holds, compute the rest, assemble."""
    if store is not None:
        store.prepare(_manifest(base_spec, axes, replications, base), store_mode)
    frames: dict[int, Any] = {}
    todo = []
    for i, (p, r, spec, s) in enumerate(tasks):
        found = store.find(spec.key(s)) if store is not None else None
        if found is not None:
            frame = store.read_run(found)
            if frame is not None and not (retry_failed and _failed(frame)):
                frames[i] = frame
                continue
        todo.append(i)
    reused = len(frames)
    if progress is not None and reused:
        progress(reused, len(tasks))
    if todo:
        ex = resolve(executor, jobs, len(todo))
        try:
            futures = {ex.submit(run_outcome, tasks[i][2], tasks[i][3]): i for i in todo}
            for fut in ex.as_completed(list(futures)):
                i = futures[fut]
                frame = run_frame(fut.result(), pts[tasks[i][0]])
                if store is not None:
                    store.write_run(tasks[i][2].key(tasks[i][3]), frame)
                frames[i] = frame
                if progress is not None:
                    progress(len(frames), len(tasks))
        except BaseException:  # an interrupt: the finished runs are kept; end the workers
            ex.close(abort=True)
            raise
        ex.close()
    result = _assemble(axes, pts, tasks, frames, reused, out)
    if store is not None:
        result.paths = {"results": store.write_frame("results", result.tidy),
                        "summary": store.write_frame("summary", result.summary)}
        if len(result.errors):
            import os
            path = os.path.join(out, "errors.csv")
            result.errors.to_csv(path, index=False)
            result.paths["errors"] = path
    return result


def check_names(spec: ProgramSpec, axes: dict, point: dict) -> None:
    """Refuse, before any run starts, a grid parameter (or `--set` name) that
    is no `let` of the program: compiling the first point names it, with a
    "did you mean". Any other error of that point is left to its run."""
    from serq.core.errors import SerqError
    from serq.frontend.link.consts import UnknownOverride
    from .worker import compiled
    try:
        compiled(spec.with_sets(point))
    except UnknownOverride as exc:
        from serq.frontend.syntax.hints import did_you_mean
        flag = "--grid" if exc.name in axes else "--set"
        near = did_you_mean(exc.name, exc.available)
        raise ValueError(f"{flag} {exc.name}: {spec.path or 'the program'} has no constant "
                         f"`{exc.name}`" + (f"; {near}" if near else "")
                         + f" (its constants: {', '.join(exc.available) or 'none'})") from None
    except SerqError:
        pass


class StoreWarning(UserWarning):
    """A damaged run file in a sweep's store (it is recomputed)."""


def _store_warning(text: str) -> None:
    import warnings
    warnings.warn(text, StoreWarning, stacklevel=3)


def _base_seed(spec: ProgramSpec, pts: list[dict]) -> int:
    from serq.core.errors import SerqError
    from .worker import compiled
    for pt in pts[:3]:
        try:
            return int(compiled(spec.with_sets(pt)).settings.seed)
        except SerqError:
            continue
    return 1


def _manifest(spec: ProgramSpec, axes: dict, replications: int, base: int) -> dict:
    return {"program": spec.path, "grid": axes, "replications": replications,
            "base_seed": base, "seed_rule": "replication i runs with seed base_seed + i",
            "sets": dict(spec.sets), "horizon": spec.horizon, "warmup": spec.warmup,
            "arrivals": spec.arrivals}


def run_frame(outcome: Outcome, point: dict) -> Any:
    """One run's rows (or its error) as a frame: grid values, then the run columns."""
    import pandas as pd
    if outcome.error is not None:
        rows = [(outcome.key, outcome.seed, None, None, None, math.nan, outcome.error)]
    else:
        rows = [(outcome.key, outcome.seed, s, n, st, v, None) for s, n, st, v in outcome.rows]
    frame = pd.DataFrame(rows, columns=["key", "seed", "section", "name", "statistic",
                                        "value", "error"])
    for j, (name, value) in enumerate(point.items()):
        frame.insert(j, name, [value] * len(frame))
    frame["value"] = frame["value"].astype(float)
    frame["error"] = frame["error"].astype(object)
    return frame


def _failed(frame: Any) -> bool:
    err = frame["error"]
    return bool(err.notna().any()) and any(isinstance(e, str) and e for e in err)


def _assemble(axes: dict, pts: list[dict], tasks: list, frames: dict[int, Any],
              reused: int, out: Optional[str]) -> SweepResult:
    import pandas as pd
    names = list(axes)
    tidy_rows: list[tuple] = []
    err_rows: list[tuple] = []
    for i, (p, r, _spec, s) in enumerate(tasks):
        frame = frames[i]
        vals = tuple(pts[p][n] for n in names)
        if _failed(frame):
            err_rows.append((*vals, r, s, str(frame["error"].iloc[0])))
            continue
        for sec, nm, st, v in zip(frame["section"], frame["name"], frame["statistic"],
                                  frame["value"]):
            tidy_rows.append((*vals, r, s, sec, nm, st, float(v)))
    tidy = pd.DataFrame(tidy_rows, columns=names + TIDY)
    groups: dict[tuple, list[float]] = {}
    for row in tidy_rows:
        groups.setdefault(row[:len(names)] + row[len(names) + 2:len(names) + 5], []).append(
            row[-1])
    summ_rows = []
    for k, vs in groups.items():
        iv = interval(vs)
        summ_rows.append((*k, iv.mean, iv.half_width, iv.n))
    summary = pd.DataFrame(summ_rows, columns=names + SUMMARY)
    errors = pd.DataFrame(err_rows, columns=names + ["replication", "seed", "error"])
    return SweepResult(axes, tidy, summary, errors, computed=len(tasks) - reused,
                       reused=reused, out=out)
