"""A measured run as a replay trace in the language's trace format
(spec Part 02 §4.1: `session,turn,new,out,think,forced`).

The language's trace carries no arrival times, so each corpus session
starts with an **arrival row**, turn 0: `new` and `out` 0 and `think` the
seconds from the run's first arrival to the session's first request. Then
one row per request, in arrival order: `new` the prompt's tokens (the whole
prompt, as serQ's replay traces have it), `out` the tokens generated,
`think` the seconds from this request's last token to the session's next
send (0 after the last request), `forced` 0. Corpus session `s` is the
run's session `s`, so with `trace … ordered` and `arrive batch(N)` session
`serial` replays it; a program replays the measured arrivals with

    session { turn; run gate (think); turn;
              loop { request; branch (more) { run tool (think); turn; } else { end; } } }

(see examples/measured/). Numbers are written in shortest round-trip form.
"""
from __future__ import annotations

import math
from typing import Any

from ..core.errors import shortest
from .errors import measured_error

#: The trace's header line.
HEADER = "session,turn,new,out,think,forced"


def trace_rows(run: Any) -> list[tuple[int, int, int, int, float, int]]:
    """(session, turn, new, out, think, forced) rows of `run`'s replay trace."""
    f = run.frame
    if f["arrival"].isna().any():
        raise measured_error(run.path, "the log has no arrival times: it cannot be replayed",
                             help="a benchmark_serving result needs `start_times`; "
                             "compare it with a program that makes its own arrivals")
    rows = []
    for s, g in f.groupby("session", sort=True):
        g = g.sort_values("turn")
        rows.append((int(s), 0, 0, 0, float(g["arrival"].iloc[0]), 0))
        arr, e2e = g["arrival"].to_numpy(), g["e2e"].to_numpy()
        for k in range(len(g)):
            think = 0.0
            if k + 1 < len(g):
                if math.isnan(e2e[k]):
                    raise measured_error(run.path, f"request {g['request'].iloc[k]} failed but "
                                         "its session goes on: no think time to the next "
                                         "turn", line=int(g["line"].iloc[k]),
                                         help="remove the session's later requests or the "
                                         "failed one")
                think = max(0.0, float(arr[k + 1] - arr[k] - e2e[k]))
            rows.append((int(s), k + 1, int(g["prompt_tokens"].iloc[k]),
                         int(g["output_tokens"].iloc[k]), think, 0))
    return rows


def trace_text(run: Any) -> str:
    """The replay trace of `run` as CSV text (header first)."""
    lines = [HEADER]
    for s, t, new, out, think, forced in trace_rows(run):
        lines.append(f"{s},{t},{new},{out},{shortest(round(think, 6))},{forced}")
    return "\n".join(lines) + "\n"


def write_trace(run: Any, path: str) -> None:
    """Write `run`'s replay trace to `path`."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(trace_text(run))
