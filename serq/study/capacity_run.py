"""`serq.capacity`: the largest value of one `--set` parameter (an arrival
rate, or any input that loads the system) at which every SLO holds, with a
95 % confidence interval, for one configuration or for each point of a
configuration grid (with the cheapest one that carries a target load).

The search is `serq.study.capacity_search`; the runs go through the study
executors (this process, local processes or Dask) and, with `out`, each
finished run is written at once to a results directory laid out as a
sweep's (`serq.study.store`), so that an interrupted search rerun computes
only the runs it does not find there. Replication `i` of every probe runs
with seed `seed + i` (common random numbers; of a final batch, `seed +
first_seed + i`, a block of seeds no other probe ran), which makes the
answer the same on every executor.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from .capacity_report import CapacityResult, ConfigCapacity, parse_cost, parse_load
from .capacity_search import Probe, Search
from .executors import resolve
from .grid import normalize, points
from .slo import SLO, check_series, parse_slos
from .spec import ProgramSpec, replication_seed
from .worker import Outcome, compiled, run_outcome

#: Defaults of the search's budget.
DEFAULT_PRECISION = 0.02
DEFAULT_FIRST = 4
DEFAULT_MOST = 200
DEFAULT_MAX_RUNS = 4000
#: The error text of a run stopped because its population grew without bound.
OVERLOAD_TEXT = "the population grows without bound"


class Runner:
    """Runs the replications a search asks for: looks each run up in the
    store, computes the missing ones on the executor in one batch, writes
    each as it finishes, and keeps the totals (runs, events, computed,
    reused)."""

    def __init__(self, spec: ProgramSpec, vary: str, slos: Sequence[SLO], base: int,
                 executor: Any, store: Any, progress: Optional[Callable[[int, int], None]]):
        self.spec, self.vary, self.slos, self.base = spec, vary, tuple(slos), base
        self.executor, self.store, self.progress = executor, store, progress
        self.computed = self.reused = 0
        self.planned = 0

    def probes_for(self, config: Mapping[str, Any]) -> tuple[dict[float, Probe], Callable]:
        """The probes of one configuration and the `evaluate` a `Search` calls."""
        probes: dict[float, Probe] = {}

        def evaluate(pairs: Sequence[tuple[Probe, int]]) -> None:
            tasks = []
            for p, n in pairs:
                spec = self.spec.with_sets({**config, self.vary: p.x})
                tasks.extend((p, spec, i) for i in range(p.n, n))
            self._run(config, tasks)
        return probes, evaluate

    def _run(self, config: Mapping[str, Any], tasks: list) -> None:
        results: dict[int, Any] = {}
        todo = []
        for j, (p, spec, i) in enumerate(tasks):
            frame = self._stored(spec, replication_seed(self.base, p.first_seed + i))
            if frame is not None:
                results[j] = frame
            else:
                todo.append(j)
        self.reused += len(results)
        self.planned += len(tasks)
        self._tick()
        if todo:
            from .sweeps import run_frame
            futures = {self.executor.submit(run_outcome, tasks[j][1],
                                            replication_seed(self.base, tasks[j][0].first_seed
                                                             + tasks[j][2]),
                                            self.slos): j for j in todo}
            for fut in self.executor.as_completed(list(futures)):
                j = futures[fut]
                p, spec, i = tasks[j]
                outcome: Outcome = fut.result()
                frame = run_frame(outcome, {**config, self.vary: p.x})
                if self.store is not None:
                    self.store.write_run(outcome.key, frame)
                results[j] = frame
                self.computed += 1
                self._tick()
        for j in sorted(results, key=lambda j: (id(tasks[j][0]), tasks[j][2])):
            self._add(tasks[j][0], tasks[j][2], results[j])

    def _tick(self) -> None:
        if self.progress is not None:
            self.progress(self.computed + self.reused, self.planned)

    def _stored(self, spec: ProgramSpec, seed: int) -> Any:
        if self.store is None:
            return None
        path = self.store.find(spec.key(seed))
        if path is None:
            return None
        frame = self.store.read_run(path)
        if _error(frame):
            return frame if OVERLOAD_TEXT in _error(frame) else None
        have = set(frame.loc[frame["section"] == "slo", "name"])
        return frame if all(s.canonical in have for s in self.slos) else None

    def _add(self, p: Probe, i: int, frame: Any) -> None:
        if i != p.n:
            raise AssertionError(f"replication {i} of probe {p.x} out of order")
        err = _error(frame)
        cells = _cells(frame)
        if err:
            if OVERLOAD_TEXT not in err:
                raise RuntimeError(f"the run at {self.vary}={p.x!r}, seed "
                                   f"{replication_seed(self.base, p.first_seed + i)} "
                                   f"failed:\n{err}")
            p.overloaded = True
            k = len(self.slos)
            p.values.append([math.nan] * k)
            p.margins.append([math.inf] * k)
            p.events.append(cells.get(("run", "run", "events"), math.nan))
            p.goodput.append(math.nan)
            p.throughput.append(math.nan)
            return
        vals = [cells.get(("slo", s.canonical, "value"), math.nan) for s in self.slos]
        p.values.append(vals)
        p.margins.append([s.margin(v) for s, v in zip(self.slos, vals)])
        p.events.append(cells.get(("run", "run", "events"), math.nan))
        p.goodput.append(cells.get(("capacity", "goodput", "value"), math.nan))
        p.throughput.append(cells.get(("capacity", "throughput", "value"), math.nan))


def _error(frame: Any) -> Optional[str]:
    errs = [e for e in frame["error"] if isinstance(e, str) and e]
    return errs[0] if errs else None


def _cells(frame: Any) -> dict[tuple[str, str, str], float]:
    """A run frame's values by (section, name, statistic), the first of each."""
    cells: dict[tuple[str, str, str], float] = {}
    for key in zip(frame["section"], frame["name"], frame["statistic"], frame["value"]):
        cells.setdefault(key[:3], float(key[3]))
    return cells


def capacity(program: Any = None, vary: Optional[str] = None,
             slos: Union[str, Sequence[Any]] = (), *, start: Optional[float] = None,
             precision: float = DEFAULT_PRECISION, replications: int = DEFAULT_FIRST,
             max_replications: int = DEFAULT_MOST, max_runs: int = DEFAULT_MAX_RUNS,
             grid: Union[Mapping[str, Any], Sequence[str], None] = None,
             cost: Optional[str] = None, load: Union[str, tuple, None] = None,
             seed: Optional[int] = None, executor: Any = None, jobs: Optional[int] = None,
             out: Optional[str] = None, source: Optional[str] = None,
             sets: Optional[dict[str, Any]] = None, defs: Optional[dict[str, str]] = None,
             policies: Optional[dict[str, Any]] = None, horizon: Optional[float] = None,
             warmup: Optional[float] = None, arrivals: Optional[int] = None,
             workload: Optional[str] = None, trace: Optional[str] = None,
             progress: Optional[Callable[[int, int], None]] = None) -> CapacityResult:
    """The capacity of `program` (a path, a `ProgramSpec` or `source=` text):
    the largest value of the `--set` parameter `vary` at which every SLO of
    `slos` (`"ttft:p99<=0.5"`, `"tpot:mean<=0.05"`, `"ttft<=0.2 for 90%"`)
    holds, with a 95 % interval from a final batch of replications sized
    so that its relative half-width is about `precision` (85 % of it
    expected; it is reported as it comes out, and the status is
    "imprecise" when `max_runs` runs or `max_replications` per probe run
    out before the planned batch).

    `start`: the first probe (default: the parameter's value in the program,
    or the `load`). `replications`: the first count at a probe (4); seeds
    `seed + i` at every probe (a final batch: `seed + first_seed + i`,
    seeds no other probe ran). `grid` (`{"max_seqs": [8, 16]}` or `--grid`
    texts): search each configuration; `cost` (an expression of the grid
    names, `"replicas * 2"`) and `load` (`"lam=2.0"`) pick the cheapest
    that carries the load. `executor`, `jobs` as for `serq.sweep`; `out`
    keeps every finished run (a rerun computes only what is missing).
    `progress(done, planned)` is called as runs finish."""
    slo_list = parse_slos(slos)
    target = parse_load(load) if load is not None else None
    if target is not None:
        if vary is not None and vary != target[0]:
            raise ValueError(f"--load {target[0]}=…: the load is a value of the varied "
                             f"parameter ({vary})")
        vary = target[0]
    if not vary:
        raise ValueError("say which --set parameter carries the load: --vary NAME "
                         "(or --load NAME=VALUE)")
    if not 0 < precision < 1:
        raise ValueError(f"precision {precision}: a relative half-width between 0 and 1")
    if replications < 2:
        raise ValueError("a probe needs at least 2 replications for its interval")
    axes = normalize(grid) if grid else {}
    if vary in axes:
        raise ValueError(f"{vary} is the varied parameter and cannot also be a --grid axis")
    configs = points(axes) if axes else [{}]
    cost_fn = parse_cost(cost, list(axes)) if cost else None
    spec = ProgramSpec.make(program, source=source, sets=sets, defs=defs, policies=policies,
                            horizon=horizon, warmup=warmup, arrivals=arrivals,
                            workload=workload, trace=trace)
    first = _start(start, target, spec, vary)
    prog = compiled(spec.with_sets({**configs[0], vary: first}))  # names checked here
    check_series(slo_list, prog)
    base = int(prog.settings.seed) if seed is None else int(seed)
    store = None
    if out is not None:
        from .store import Store
        store = Store(out)
        store.write_manifest({
            "program": spec.path, "vary": vary, "slos": [s.text for s in slo_list],
            "grid": axes, "cost": cost, "load": list(target) if target else None,
            "precision": precision, "replications": replications, "base_seed": base,
            "seed_rule": "replication i of a probe runs with seed base_seed + i; of a "
                         "final batch, base_seed + first_seed + i (seeds no other "
                         "probe ran)",
            "sets": dict(spec.sets), "horizon": spec.horizon, "warmup": spec.warmup},
            name="capacity.json")
    ex = resolve(executor, jobs, 2)
    runner = Runner(spec, vary, slo_list, base, ex, store, progress)
    results = []
    try:
        for config in configs:
            probes, evaluate = runner.probes_for(config)
            outcome = Search(evaluate, probes, start=first, precision=precision,
                             first=replications, most=max_replications,
                             max_runs=max_runs).run()
            results.append(ConfigCapacity.make(config, outcome, slo_list,
                                               cost_fn(config) if cost_fn else None))
    finally:
        ex.close()
    return CapacityResult(vary=vary, slos=slo_list, configs=results, precision=precision,
                          load=target, cost=cost, base_seed=base, computed=runner.computed,
                          reused=runner.reused, out=out, grid=axes)


def _start(start: Optional[float], target: Optional[tuple[str, float]],
           spec: ProgramSpec, vary: str) -> float:
    if start is not None:
        return float(start)
    if target is not None and target[1] > 0:
        return float(target[1])
    value = _program_value(spec, vary)
    if value is None or not (value > 0 and math.isfinite(value)):
        raise ValueError(f"--vary {vary}: the program has no positive `let {vary}` to start "
                         f"from; give the first value to try with --start")
    return value


def _program_value(spec: ProgramSpec, name: str) -> Optional[float]:
    """The number a program's `let NAME = NUMBER;` (or the `--set` already
    given) assigns, if it is a plain number."""
    given = dict(spec.sets).get(name)
    if given is not None:
        try:
            return float(given)
        except ValueError:
            return None
    from serq.frontend.syntax import tree as S
    from serq.frontend.parse.build import parse_file_text
    for item in parse_file_text(spec.text, spec.path or "<program>").items:
        if isinstance(item, S.ILet) and name in (item.name, item.ext) \
                and isinstance(item.value, S.ENum):
            return float(item.value.value)
    return None
