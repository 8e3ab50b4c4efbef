"""The Python API: `load` a program, `run` it, get a `Report`.

Names follow the reference's Python package (pyserq) where it has them:
`compile` is pyserq's name for `load`, and the `Report` has pyserq's
attributes and methods (`observes`, `client`, `gauges`, `stages`, `pools`,
`observe(name)`, `stage(name)`, `pools_named(name)`, `json()`, …). Beyond
pyserq: `run` takes the settings and `policies` (user subclasses of the
runtime's resource classes, see `serq.policies` and docs/policies.md), and
`Report.to_pandas()` gives tidy frames.
"""
from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

from .core import ir
from .core.errors import LinkError

if TYPE_CHECKING:  # the report (and numpy) is imported by `run` only
    from .report.model import Report


def load(path: Optional[str] = None, *, source: Optional[str] = None,
         sets: Optional[dict[str, Any]] = None, defs: Optional[dict[str, str]] = None,
         workload: Optional[str] = None, trace: Optional[str] = None,
         horizon: Optional[float] = None, warmup: Optional[float] = None,
         seed: Optional[int] = None, arrivals: Optional[int] = None,
         need_horizon: bool = False, structural: bool = False) -> ir.Program:
    """Parse, rewrite and link a program (a file `path`, or `source` text).

    `sets` replace `let` constants and `args.number` inputs, `defs` the
    bodies of expression definitions; the settings override the program's
    `run { … }` block (`run` may still override them). `workload` is a
    workload file merged into the program (Part 01 §2.8).

    `structural=True` lets `sets` change a constant that sizes a stage or
    pool array (`let R = 4; stage engine[R] …` with `sets={"R": 16}`): the
    program is built again with the new size, as if the file said so. An
    extension (the language, `run --set` and the reference refuse such an
    override, Part 01 §2.4); studies use it to vary a fleet's size.
    Raises `ParseError` or `LinkError`."""
    from .frontend import load as front_load
    return front_load(path, source=source, sets=sets, defs=defs, workload=workload,
                      trace=trace, horizon=horizon, warmup=warmup, seed=seed,
                      arrivals=arrivals, need_horizon=need_horizon, structural=structural)


def compile(path: Optional[str] = None, *, source: Optional[str] = None,
            sets: Optional[dict[str, Any]] = None, defs: Optional[dict[str, str]] = None,
            seed: Optional[int] = None, horizon: Optional[float] = None,
            warmup: Optional[float] = None, arrivals: Optional[int] = None,
            trace: Optional[str] = None, workload: Optional[str] = None) -> ir.Program:
    """pyserq's name for `load`, with its signature: a program file or text
    to a linked program, settings applied (`serq.run(program)` then runs it)."""
    return load(path, source=source, sets=sets, defs=defs, workload=workload, trace=trace,
                horizon=horizon, warmup=warmup, seed=seed, arrivals=arrivals)


def settings_for(program: ir.Program, *, seed: Optional[int] = None,
                 horizon: Optional[float] = None, warmup: Optional[float] = None,
                 arrivals: Optional[int] = None) -> ir.Settings:
    """The program's settings with run-time overrides applied and checked."""
    st = copy.copy(program.settings)
    if horizon is not None:
        st.horizon = float(horizon)
    if warmup is not None:
        st.warmup = float(warmup)
    if seed is not None:
        st.seed = int(seed)
    if arrivals is not None:
        st.arrivals = int(arrivals)
    if st.horizon is None:
        raise LinkError("no horizon (run { horizon T; })",
                        help="give the run a horizon: `run { horizon T; }` or --horizon T")
    if not (0 < st.horizon < math.inf):
        raise LinkError(f"the horizon is {st.horizon}: a horizon is a finite number above 0")
    if not (0 <= st.warmup < st.horizon):
        raise LinkError("warmup must be below the horizon",
                        help="a warm-up is a number with 0 ≤ warmup < horizon")
    if st.arrivals is not None and program.workload.arrival not in ("poisson", "renewal"):
        raise LinkError("arrivals applies only to poisson or renewal workloads")
    return st


def run(program: ir.Program, *, seed: Optional[int] = None, horizon: Optional[float] = None,
        warmup: Optional[float] = None, arrivals: Optional[int] = None,
        policies: Optional[Mapping[str, Union[type, str]]] = None, scheme: str = "0.1.5",
        progress: Any = None, max_live: Optional[int] = None,
        max_memory: Optional[int] = None) -> Report:
    """Simulate `program` and return its `Report`.

    `seed`, `horizon`, `warmup`, `arrivals` override the program's settings
    (`LinkError` when they are invalid). `policies` maps a declared stage or
    pool name to a subclass of its built-in class in `serq.policies` (or a
    `"package.module:Class"` string): `{"engine": MyEngine, "kv": MyPool}`;
    a name the program does not declare or a class of the wrong kind raises
    `PolicyBindingError` before the run starts. `scheme` selects the
    per-session streams ("0.1.5", or "0.1.3" for pyserq 0.1.3's reports);
    `progress(now)` (or `progress(now, events)`) is called from a helper
    thread about four times a second of wall time, and once at the end. Raises
    `SimulationError` when the run stops, `PolicyError` when a policy broke
    a rule of the runtime. The same program, settings and policies give the
    same report (common random numbers across policies).

    Limits (docs/guide/limits.md): more than `max_live` live sessions
    (default 100 000) stop the run with a `SimulationError` naming the
    arrival rate and the stage that cannot keep up; past `max_memory` bytes
    in use (default: no limit) the run stops with `RunStopped`, whose
    `.report` covers the time simulated so far. A zero-time cycle or a clock
    that cannot advance stops it with a `SimulationError` within about a
    second of wall time."""
    from .runtime.sim.simulation import Simulation
    prog = copy.copy(program)
    prog.settings = settings_for(program, seed=seed, horizon=horizon, warmup=warmup,
                                 arrivals=arrivals)
    from .core.deep import call_deep
    from .core.errors import SerqError
    sim = None
    try:
        sim = call_deep(Simulation, prog, policies=policies, scheme=scheme, progress=progress,
                        max_live=max_live, max_memory=max_memory)
        report = sim.run()
    except SerqError:
        raise
    except Exception as exc:
        from .runtime.policy.policy_failure import policy_failure  # (imports traceback, inspect)
        err = policy_failure(exc, policies, sim.env.now if sim is not None else 0.0)
        if err is None:
            raise
        raise err from None
    report.name_series()
    return report


def build(program: ir.Program, *, seed: Optional[int] = None,
          horizon: Optional[float] = None, warmup: Optional[float] = None,
          arrivals: Optional[int] = None,
          policies: Optional[Mapping[str, Union[type, str]]] = None,
          scheme: str = "0.1.5") -> Any:
    """The simulation of `program`, built but not run: a `Model`
    (docs/guide/simpy.md). `model.env` is its `simpy.Environment`,
    `model.stage(name)` and `model.pool(name)` its resources as a SimPy
    process meets them, `model.process(gen)` adds a process beside the
    sessions and `model.run()` simulates and returns the `Report`. The
    arguments are `run`'s."""
    from .core.deep import call_deep
    from .runtime.sim.model import Model
    from .runtime.sim.simulation import Simulation
    prog = copy.copy(program)
    prog.settings = settings_for(program, seed=seed, horizon=horizon, warmup=warmup,
                                 arrivals=arrivals)
    return Model(call_deep(Simulation, prog, policies=policies, scheme=scheme))
