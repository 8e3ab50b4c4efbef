"""Benchmark: R replications of a program sequentially (--jobs 1) and on
local worker processes (--jobs N), whole `serq-simpy run` processes timed
by wall clock, alternating the contenders; prints the best time of each and
their ratio.

    python scripts/bench_replications.py examples/multi-turn/vllm.sq \
        --replications 8 --jobs 2 --rounds 3 [--horizon 400]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def _time(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("program")
    ap.add_argument("--replications", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--horizon")
    a = ap.parse_args()
    base = [sys.executable, "-m", "serq.cli", "run", a.program, "--quiet",
            "--replications", str(a.replications)]
    if a.horizon:
        base += ["--horizon", a.horizon]
    best = {1: float("inf"), a.jobs: float("inf")}
    for r in range(a.rounds):
        for jobs in (1, a.jobs):
            t = _time(base + ["--jobs", str(jobs)])
            best[jobs] = min(best[jobs], t)
            print(f"round {r + 1}: --jobs {jobs}: {t:.2f} s (load {os.getloadavg()[0]:.1f})",
                  flush=True)
    print(f"best: --jobs 1 {best[1]:.2f} s, --jobs {a.jobs} {best[a.jobs]:.2f} s, "
          f"ratio {best[a.jobs] / best[1]:.2f}")


if __name__ == "__main__":
    main()
