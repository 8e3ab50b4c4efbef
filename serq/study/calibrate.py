"""Fitting a program's constants to a measured run, with 95% intervals
carried into prediction intervals.

The fit. The named `let` (or `args`) constants are fitted, within their
bounds, by replaying the run's trace (`serq.study.replay`) and matching,
for each `objective` metric, the simulated mean and `QUANTILES` to the
measured ones over the scored requests (each difference over the measured
mean, so TTFT and TPOT weigh alike; a request the replay never finished
counts as `PENALTY` times that mean). Statistics, not requests, are
matched: a replay's per-request times jump as the constants move requests
past each other in a queue, while its statistics move smoothly.
`match="requests"` fits request by request instead (ordinary least
squares on (simulated − measured) / mean: unbiased when the measurements
are the model plus zero-mean noise, and the model is smooth at the load). The
optimizer is SciPy's bounded trust-region least squares
(`scipy.optimize.least_squares`, method "trf") on the constants rescaled
to [0, 1]; its Jacobian is taken by finite differences (a step of `STEP`
of each range), one replay per constant, submitted together to the study
executors (local processes or Dask).

The intervals. A bootstrap over sessions, linearised at the fit: each of
`bootstrap` resamples draws the run's sessions with replacement (measured
and simulated requests together), recomputes the residual statistics and
takes the Gauss-Newton step from the fitted constants (recentred on the
full sample's own step), clipped to the bounds; the 2.5% and 97.5%
quantiles of each constant are its 95% interval. Sessions are resampled,
not requests, because a session's requests share its load and context.

The prediction intervals. A held-out run (and the calibration run itself)
is replayed with the fitted constants and with `draws` of the bootstrap's
constant vectors; each replay's requests are resampled `PERTURBATIONS`
times by sessions, and the 2.5% and 97.5% quantiles of each statistic over
all of them form its 95% prediction interval: the constants' uncertainty
plus the statistic's sampling spread over sessions, under the model.
Another part of the calibration run (`RUN@0.5:1` held out from a fit on
`RUN@0:0.5`) replays the same trace, so its replays are the fit's.
"""
from __future__ import annotations

import math
import re
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from .replay import Replay, make_replay, matched, simulate, write_trace_file
from .validate import STATS, Validation, statistic, validation_of

#: The finite-difference step of the Jacobian, as a fraction of each range.
STEP = 0.01
#: The residual of a scored request the replay never finished.
PENALTY = 10.0
#: The percentiles the fit matches (with the mean) for each metric.
QUANTILES = (10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99)
#: Residual perturbations per constant draw in a prediction interval.
PERTURBATIONS = 25


@dataclass(frozen=True)
class FitParam:
    """A constant to fit: its name and bounds."""

    name: str
    lo: float
    hi: float


def parse_fit(text: str) -> FitParam:
    """`NAME=LO:HI` -> `FitParam` (ValueError with the reason otherwise)."""
    name, eq, rng = text.partition("=")
    lo, colon, hi = rng.partition(":")
    try:
        a, b = float(lo), float(hi)
    except ValueError:
        a = b = math.nan
    if not eq or not colon or not name.strip() or not (a < b) or not math.isfinite(b - a):
        raise ValueError(f"--fit {text}: expected NAME=LO:HI with LO < HI (aP=5e-5:3e-4)")
    return FitParam(name.strip(), a, b)


def start_values(text: str, fits: Sequence[FitParam], sets: dict) -> list[float]:
    """Where the fit starts: a `--set` value, else the program's `let NAME =
    NUMBER;`, else the middle of the range; clipped into the range."""
    out = []
    for p in fits:
        v: Optional[float] = None
        if p.name in sets:
            try:
                v = float(sets[p.name])
            except (TypeError, ValueError):
                v = None
        if v is None:
            m = re.search(rf"^\s*let\s+{re.escape(p.name)}\s*=\s*([-+0-9.eE]+)\s*;", text, re.M)
            if m:
                try:
                    v = float(m.group(1))
                except ValueError:
                    v = None
        if v is None or not math.isfinite(v):
            v = (p.lo + p.hi) / 2
        out.append(min(max(v, p.lo), p.hi))
    return out


class Replays:
    """Replays of one program at many constant vectors, run on an executor
    (`serq.study.executors.resolve`) and remembered."""

    def __init__(self, replay: Replay, fits: Sequence[FitParam], executor: Any = None,
                 jobs: Optional[int] = None,
                 progress: Optional[Callable[[str], None]] = None) -> None:
        from .executors import resolve
        self.replay, self.fits = replay, list(fits)
        self.executor = resolve(executor, jobs, tasks=len(fits) + 1)
        self.cache: dict[tuple, dict] = {}
        self.progress = progress
        self.runs = 0

    def sets(self, theta: Sequence[float]) -> dict[str, float]:
        """The `--set` values of `theta`."""
        return {p.name: float(v) for p, v in zip(self.fits, theta)}

    def many(self, thetas: Sequence[Sequence[float]], replay: Optional[Replay] = None
             ) -> list[dict]:
        """The simulated requests at each constant vector (in parallel)."""
        base = replay or self.replay
        keys = [(base, tuple(float(x) for x in t)) for t in thetas]
        todo = {k: self.executor.submit(simulate, base.with_sets(self.sets(k[1])))
                for k in dict.fromkeys(keys) if k not in self.cache}
        for fut in self.executor.as_completed(list(todo.values())):
            fut.result()
        for k, fut in todo.items():
            self.cache[k] = fut.result()
            self.runs += 1
        return [self.cache[k] for k in keys]

    def close(self) -> None:
        """Stop the executor's workers (when it owns them)."""
        self.executor.close()


def aligned(run: Any, sim: dict, metrics: Sequence[str], scales: dict[str, float]
            ) -> dict[str, tuple[Any, Any, Any]]:
    """metric -> (measured, simulated, sessions) over the scored requests with
    a measured value; a request the replay never finished is simulated as
    `PENALTY` times the metric's scale."""
    import numpy as np
    pairs = matched(run, sim)
    out = {}
    for m in metrics:
        meas = pairs[f"meas_{m}"].to_numpy(float)
        keep = ~np.isnan(meas)
        sv = pairs[f"sim_{m}"].to_numpy(float)[keep]
        sv[np.isnan(sv)] = PENALTY * scales[m]
        out[m] = (meas[keep], sv, pairs["session"].to_numpy()[keep])
    return out


def distance(data: dict[str, tuple[Any, Any, Any]], scales: dict[str, float],
             index: Optional[dict[str, Any]] = None, match: str = "quantiles") -> Any:
    """The residual vector. `match="quantiles"`: for each metric, the
    simulated minus the measured mean and `QUANTILES`, over the metric's
    scale; `match="requests"`: each request's simulated minus measured value
    over the scale. `index`: the rows of a resample, per metric."""
    import numpy as np
    out = []
    for m, (meas, sim, _sess) in data.items():
        if index is not None:
            meas, sim = meas[index[m]], sim[index[m]]
        if match == "requests":
            out.extend((sim - meas) / scales[m])
            continue
        out.append((sim.mean() - meas.mean()) / scales[m])
        out.extend((np.percentile(sim, QUANTILES) - np.percentile(meas, QUANTILES)) / scales[m])
    return np.array(out)


def _rows(data: dict, index: dict) -> Any:
    """The rows of the residual vector (match="requests") a resample picks."""
    import numpy as np
    out, base = [], 0
    for m, (meas, _sim, _sess) in data.items():
        out.append(base + index[m])
        base += len(meas)
    return np.concatenate(out)


@dataclass
class ParamEstimate:
    """A fitted constant: the estimate, its 95% interval, where the fit
    started and the bounds."""

    name: str
    estimate: float
    low: float
    high: float
    start: float
    bounds: tuple[float, float]

    @property
    def at_bound(self) -> bool:
        """Whether the estimate sits on a bound (the bound may be too tight)."""
        lo, hi = self.bounds
        return min(self.estimate - lo, hi - self.estimate) <= 1e-6 * (hi - lo)

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {"estimate": self.estimate, "interval95": [self.low, self.high],
                "start": self.start, "bounds": list(self.bounds), "at_bound": self.at_bound}


@dataclass
class Calibration:
    """What `calibrate` returns: the constants, the fitted program against the
    calibration run and against each held-out run (with 95% prediction
    intervals), the optimizer's outcome and, given probes, their direct fit."""

    program: str
    run: str
    params: list[ParamEstimate]
    fitted: Validation
    holdouts: list[Validation] = field(default_factory=list)
    objective: tuple[str, ...] = ()
    cost: float = math.nan
    replays: int = 0
    message: str = ""
    probe: Any = None
    match: str = "quantiles"

    def values(self) -> dict[str, float]:
        """The fitted constants by name."""
        return {p.name: p.estimate for p in self.params}

    def to_dict(self) -> dict:
        """JSON-ready."""
        d = {"program": self.program, "measured": self.run, "objective": list(self.objective),
             "match": self.match,
             "cost": self.cost, "replays": self.replays, "optimizer": self.message,
             "params": {p.name: p.to_dict() for p in self.params},
             "fitted": self.fitted.to_dict(),
             "holdouts": [h.to_dict() for h in self.holdouts]}
        if self.probe is not None:
            d["probe"] = self.probe.to_dict()
        return d

    def text(self) -> str:
        """The human-readable report."""
        from ..report.text_report import table
        lines = [f"{self.program} calibrated on {self.run} "
                 f"(objective {', '.join(self.objective)}, matching {self.match}; "
                 f"{self.replays} replays; "
                 f"{self.message})"]
        rows = [[p.name, f"{p.estimate:.6g}", f"{p.low:.6g} .. {p.high:.6g}",
                 f"{p.start:.6g}", f"{p.bounds[0]:g} .. {p.bounds[1]:g}",
                 "yes" if p.at_bound else ""] for p in self.params]
        lines += table(["constant", "fitted", "95% interval", "start", "bounds", "at bound"],
                       rows)
        out = "\n".join(lines) + "\n"
        if self.probe is not None:
            out += "\n" + self.probe.text()
        out += "\nThe fitted program on the calibration run:\n" + self.fitted.text()
        for h in self.holdouts:
            out += "\nHeld out:\n" + h.text()
        return out


def bootstrap_draws(J: Any, data: dict, scales: dict[str, float], theta: Any, lo: Any,
                    hi: Any, count: int, seed: int, match: str = "quantiles") -> Any:
    """`count` constant vectors of the linearised session bootstrap (see the
    module text); `J` is the Jacobian of `distance` in the constants' units."""
    import numpy as np
    rng = np.random.default_rng(seed)
    sessions = np.unique(np.concatenate([d[2] for d in data.values()]))
    rows = {m: {s: np.flatnonzero(d[2] == s) for s in sessions} for m, d in data.items()}

    def step(index: Optional[dict]) -> Any:
        r = distance(data, scales, index, match)
        A = J if match != "requests" or index is None else J[_rows(data, index)]
        return -np.linalg.lstsq(A, r, rcond=None)[0]

    d0 = step(None)
    out = np.empty((count, len(theta)))
    for b in range(count):
        pick = sessions[rng.integers(0, len(sessions), len(sessions))]
        index = {m: np.concatenate([rows[m][s] for s in pick]) for m in data}
        out[b] = np.clip(theta + step(index) - d0, lo, hi)
    return out


def prediction_intervals(run: Any, sims: Sequence[dict], seed: int
                         ) -> dict[str, dict[str, tuple[float, float]]]:
    """For each metric and statistic, the 95% interval over the constant
    draws' `sims`, each resampled `PERTURBATIONS` times by sessions (the
    statistic's sampling spread over the run's sessions)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    values: dict[str, dict[str, list[float]]] = {}
    for sim in sims:
        pairs = matched(run, sim)
        sessions = pairs["session"].to_numpy()
        uniq = np.unique(sessions)
        rows = {s: np.flatnonzero(sessions == s) for s in uniq}
        picks = [np.concatenate([rows[s] for s in uniq[rng.integers(0, len(uniq), len(uniq))]])
                 for _ in range(PERTURBATIONS)]
        for m in ("ttft", "tpot", "e2e"):
            v = pairs[f"sim_{m}"].to_numpy(float)
            ok = ~np.isnan(v) & ~pairs[f"meas_{m}"].isna().to_numpy()
            for idx in picks:
                w = v[idx][ok[idx]]
                if w.size:
                    for st in STATS:
                        values.setdefault(m, {}).setdefault(st, []).append(statistic(w, st))
    return {m: {st: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5)))
                for st, v in d.items()} for m, d in values.items()}


def calibrate(program: str, run: Any, fits: Sequence[FitParam], *,
              holdouts: Sequence[Any] = (), holdout_sets: Optional[dict] = None,
              objective: Sequence[str] = ("ttft", "tpot"), match: str = "quantiles",
              sets: Optional[dict] = None,
              defs: Optional[dict] = None, seed: Optional[int] = None,
              horizon: Optional[float] = None, observes: Optional[dict] = None,
              bootstrap: int = 1000, draws: int = 20, max_evals: int = 30,
              executor: Any = None, jobs: Optional[int] = None, probe: Optional[str] = None,
              progress: Optional[Callable[[str], None]] = None) -> Calibration:
    """Fit `fits` of `program` (a path) to the measured `run` (a `MeasuredRun`
    or `RUN[@A:B]`) and validate on `holdouts` (replayed with the program's
    `sets` plus `holdout_sets`); see the module text for the method."""
    import numpy as np
    from scipy.optimize import least_squares

    from ..measured import read_run
    run = read_run(run) if isinstance(run, str) else run
    holdouts = [read_run(h) if isinstance(h, str) else h for h in holdouts]
    if not fits:
        raise ValueError("nothing to fit: give at least one --fit NAME=LO:HI")
    if match not in ("quantiles", "requests"):
        raise ValueError(f"match={match!r}: 'quantiles' or 'requests'")
    probe_fit = None
    if probe is not None:  # first: a malformed probe file stops before any replay
        from .probe_fit import fit_probe
        probe_fit = fit_probe(probe)
    sets = dict(sets or {})
    with open(program, encoding="utf-8") as fh:
        text = fh.read()
    theta0 = start_values(text, fits, sets)
    base_sets = {k: v for k, v in sets.items() if k not in {p.name for p in fits}}
    tmp = tempfile.TemporaryDirectory(prefix="serq-replay-")
    trace = write_trace_file(run, tmp.name)
    replay = make_replay(program, trace, sets=base_sets, defs=defs,
                         seed=seed, horizon=horizon, observes=observes)
    lo = np.array([p.lo for p in fits])
    hi = np.array([p.hi for p in fits])
    span = hi - lo
    f = run.scored
    scales = {m: float(np.nanmean(f[m].to_numpy(float))) for m in ("ttft", "tpot", "e2e")}
    for m in objective:
        if not scales[m] > 0:
            raise ValueError(f"the measured run has no {m} to fit")
    reps = Replays(replay, fits, executor, jobs, progress)
    say = progress or (lambda msg: None)
    try:
        def theta_of(u: Any) -> Any:
            return lo + np.clip(u, 0.0, 1.0) * span

        def fun(u: Any) -> Any:
            return distance(aligned(run, reps.many([theta_of(u)])[0], objective, scales),
                            scales, match=match)

        def jac(u: Any) -> Any:
            us = []
            for j in range(len(fits)):
                v = np.array(u, dtype=float)
                v[j] = v[j] + STEP if v[j] + STEP <= 1.0 else v[j] - STEP
                us.append(v)
            sims = reps.many([theta_of(u)] + [theta_of(v) for v in us])
            r0 = distance(aligned(run, sims[0], objective, scales), scales, match=match)
            cols = [(distance(aligned(run, s, objective, scales), scales, match=match) - r0)
                    / (v[j] - u[j])
                    for j, (s, v) in enumerate(zip(sims[1:], us))]
            cost = 0.5 * float(r0 @ r0)
            say(f"calibrate: {', '.join(f'{p.name}={t:.6g}' for p, t in zip(fits, theta_of(u)))}"
                f"  cost {cost:.6g}")
            return np.column_stack(cols)

        u0 = (np.array(theta0) - lo) / span
        sol = least_squares(fun, u0, jac=jac, bounds=(0.0, 1.0), method="trf",
                            max_nfev=max_evals, xtol=1e-4, ftol=1e-6)
        theta = theta_of(sol.x)
        J = jac(sol.x) / span
        data = aligned(run, reps.many([theta])[0], objective, scales)
        boot = bootstrap_draws(J, data, scales, theta, lo, hi, bootstrap, replay.seed, match)
        params = [ParamEstimate(p.name, float(theta[k]), float(np.percentile(boot[:, k], 2.5)),
                                float(np.percentile(boot[:, k], 97.5)), float(theta0[k]),
                                (p.lo, p.hi)) for k, p in enumerate(fits)]
        fitted_sets = {**base_sets, **reps.sets(theta)}
        draw_thetas = [theta] + [boot[b] for b in range(min(draws, len(boot)))]
        sim_fit = reps.many([theta])[0]
        say(f"calibrate: prediction intervals, {len(draw_thetas)} replays per run")
        fitted = validation_of(run, sim_fit, program, _numeric(fitted_sets))
        _attach(fitted, run, reps.many(draw_thetas), replay.seed)
        outs = []
        for k, h in enumerate(holdouts):
            hsets = {**base_sets, **(holdout_sets or {})}
            htrace = write_trace_file(h, tmp.name, f"holdout{k}.csv")
            if hsets == base_sets and _same_file(htrace, trace):
                hrep = replay  # another part of the same run: its replays are the fit's
            else:
                hrep = make_replay(program, htrace, sets=hsets, defs=defs, seed=seed,
                                   horizon=horizon, observes=observes)
            hsims = reps.many(draw_thetas, hrep)
            v = validation_of(h, hsims[0], program, _numeric({**fitted_sets, **hsets}))
            _attach(v, h, hsims, replay.seed)
            outs.append(v)
    finally:
        reps.close()
        tmp.cleanup()
    return Calibration(program=program, run=run.label, params=params, fitted=fitted,
                       holdouts=outs, objective=tuple(objective), cost=float(sol.cost),
                       replays=reps.runs, message=str(sol.message), probe=probe_fit,
                       match=match)


def _same_file(a: str, b: str) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def _attach(v: Validation, run: Any, sims: Sequence[dict], seed: int) -> None:
    for m, iv in prediction_intervals(run, sims, seed).items():
        if m in v.metrics:
            v.metrics[m].interval = iv


def _numeric(sets: dict) -> dict[str, float]:
    out = {}
    for k, v in sets.items():
        try:
            out[k] = float(v)
        except (TypeError, ValueError):
            continue
    return out
