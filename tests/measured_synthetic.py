"""Synthetic truth for the calibration tests: "measured" runs made by
serq-simpy from tests/data/measured/synthetic.sq with known constants and a
random term in its costs (the time outside the engine is h times a uniform
factor 1 ± NOISE), written as serq-simpy's measured CSV."""
from __future__ import annotations

import os
from typing import Optional

DATA = os.path.join(os.path.dirname(__file__), "data", "measured")
PROGRAM = os.path.join(DATA, "synthetic.sq")
TRACE = os.path.join(DATA, "synthetic_trace.csv")
#: The constants the synthetic runs are made with (the program's lets).
TRUTH = {"a": 1e-4, "c": 0.01}
#: The relative half-width of the random factor on `h`.
NOISE = 0.8


def measured_csv(seed: int, directory: str, sets: Optional[dict] = None) -> str:
    """A noisy synthetic run (seed `seed`) as a measured CSV in `directory`."""
    from serq.study.replay import make_replay, simulate
    rows = [line.split(",") for line in open(TRACE).read().splitlines()[1:]]
    arrival = {int(r[0]): float(r[4]) for r in rows if r[1] == "0"}
    tokens = {int(r[0]): (r[2], r[3]) for r in rows if r[1] == "1"}
    sim = simulate(make_replay(PROGRAM, TRACE, sets={"noise": NOISE, **(sets or {})},
                               seed=seed))
    out = ["session,turn,arrival,prompt_tokens,output_tokens,ttft,e2e"]
    for s, t, ttft, e2e in zip(sim["session"], sim["turn"], sim["ttft"], sim["e2e"]):
        new, o = tokens[int(s)]
        out.append(f"{s},{t},{arrival[int(s)]!r},{new},{o},{float(ttft)!r},{float(e2e)!r}")
    path = os.path.join(directory, f"synthetic_{seed}.csv")
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")
    return path
