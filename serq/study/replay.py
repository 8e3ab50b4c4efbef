"""Replaying a measured run: a program run on the run's trace, its requests
matched to the measured ones by session and turn.

The program replays the trace `serq.measured.trace` writes (`trace …
ordered;`, one session per corpus session). A simulated request is
identified by its session's serial and its place among the session's
requests (1, 2, … by `turn_no`), so a program may spend turns on the
trace's arrival row. By default the metrics are the client series
(`ttft`, `tpot`, and `response` as E2E, spec Part 06 §4); `observes`
names a program observation instead (`{"ttft": "my_ttft"}`).

`simulate` runs on a worker (a local process or a Dask worker) and returns
plain arrays, never a report.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Mapping, Optional

from .spec import ProgramSpec

#: Where each metric comes from by default: (section, series).
DEFAULT_SOURCES = {"ttft": ("client", "ttft"), "tpot": ("client", "tpot"),
                   "e2e": ("client", "response")}


def sources(observes: Optional[Mapping[str, str]] = None) -> tuple[tuple[str, str, str], ...]:
    """(metric, section, series) for the three metrics, `observes` overriding."""
    out = []
    for metric, (section, name) in DEFAULT_SOURCES.items():
        if observes and metric in observes:
            section, name = "observe", observes[metric]
        out.append((metric, section, name))
    return tuple(out)


@dataclass(frozen=True)
class Replay:
    """A program set up to replay a measured run: the spec (with the trace
    file), the seed, and where the metrics come from."""

    spec: ProgramSpec
    seed: int
    sources: tuple[tuple[str, str, str], ...]

    def with_sets(self, sets: Mapping[str, float]) -> "Replay":
        """The same replay with more `--set` values."""
        return replace(self, spec=self.spec.with_sets(dict(sets)))


def write_trace_file(run: Any, directory: str, name: str = "trace.csv") -> str:
    """Write `run`'s replay trace as `directory/name` and return its path."""
    from ..measured.trace import write_trace
    path = os.path.join(directory, name)
    write_trace(run, path)
    return path


def make_replay(program: Any, trace: str, *, sets: Optional[dict] = None,
                defs: Optional[dict] = None, seed: Optional[int] = None,
                horizon: Optional[float] = None,
                observes: Optional[Mapping[str, str]] = None) -> Replay:
    """A `Replay` of `program` (a path or a `ProgramSpec`) on the trace file
    `trace`; the seed defaults to the program's (else 1)."""
    spec = ProgramSpec.make(program, sets=sets, defs=defs, trace=trace, horizon=horizon,
                            warmup=0.0)
    if seed is None:
        from .worker import compiled
        seed = compiled(spec).settings.seed
    return Replay(spec, int(seed), sources(observes))


def simulate(replay: Replay) -> dict[str, Any]:
    """Run the replay; per simulated request `session`, `turn` (its place in
    the session) and the three metrics (NaN where a request has none).
    A series the program lacks is an error naming the series."""
    import numpy as np

    from .worker import run_report
    report = run_report(replay.spec, replay.seed, warmup=0.0)
    series = {}
    for metric, section, name in replay.sources:
        s = (report.client if section == "client" else report.observes).get(name)
        if s is None:
            have = ", ".join(report.observes) or "none"
            raise ValueError(f"the program has no observation `{name}` for {metric} "
                             f"(its observations: {have})")
        series[metric] = s
    # every request records E2E: its (session, turn_no) pairs give the places
    e2e = series["e2e"]
    keys = sorted(set(zip(e2e.sessions, e2e.turns)))
    place: dict[tuple[int, int], int] = {}
    count: dict[int, int] = {}
    for sess, turn in keys:
        count[sess] = count.get(sess, 0) + 1
        place[(sess, turn)] = count[sess]
    index = {k: i for i, k in enumerate(keys)}
    out = {"session": np.array([k[0] for k in keys], dtype=np.int64),
           "turn": np.array([place[k] for k in keys], dtype=np.int64)}
    for metric, s in series.items():
        v = np.full(len(keys), np.nan)
        for sess, turn, val in zip(s.sessions, s.turns, s.values):
            i = index.get((sess, turn))
            if i is not None:
                v[i] = val
        out[metric] = v
    out["stuck"] = [p.label for p in report.pools if p.stuck]
    out["end"] = report.end
    return out


def matched(run: Any, sim: Mapping[str, Any]) -> Any:
    """The scored measured requests joined with their simulated twins by
    session and turn: columns `session`, `turn`, `arrival`, and for each
    metric `meas_M` and `sim_M` (NaN where the simulation has no request)."""
    import pandas as pd
    f = run.scored
    s = pd.DataFrame({k: sim[k] for k in ("session", "turn", "ttft", "tpot", "e2e")})
    m = f[["session", "turn", "arrival", "prompt_tokens", "output_tokens", "ttft", "tpot",
           "e2e"]].merge(s, on=["session", "turn"], how="left", suffixes=("_meas", "_sim"))
    return m.rename(columns={f"{k}_meas": f"meas_{k}" for k in ("ttft", "tpot", "e2e")}
                    | {f"{k}_sim": f"sim_{k}" for k in ("ttft", "tpot", "e2e")})
