"""Coverage, precision and cost of the capacity search on M/M/1 (μ = 1, FCFS).

The response time of M/M/1 is exponential with rate μ − λ, so "p99 of the
response time ≤ X" holds exactly for λ ≤ λ* = μ − ln(100)/X (Kleinrock,
Queueing Systems Vol. 1, 1975, §3.2). With X = 2 ln 100, λ* = 0.5.

    python scripts/capacity_check.py --searches 100 [--jobs 2] [--out FILE]

runs that many independent searches (search j: base seed 1 + 1000 j) and
prints how many 95 % intervals cover λ*, the median relative half-width,
the events the searches used, and the events a uniform grid of replicated
points would need for the same interval width: the grid spans the
bracketing stage's bracket with points one interval width apart and the
search's final replication count at every point; its events are the
events per run the search measured, scaled with λ (a run's events are
proportional to its arrivals).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MG1 = os.path.join(ROOT, "examples", "single-turn", "mg1.sq")
X = 2 * math.log(100)          # the p99 limit
LAM_STAR = 1 - math.log(100) / X  # = 0.5
HORIZON = 16000.0
WARMUP = 100.0
PRECISION = 0.02


def one(j: int) -> dict:
    """Search `j` and the figures the check needs."""
    sys.path.insert(0, ROOT)
    import serq
    t0 = time.perf_counter()
    r = serq.capacity(MG1, "lam", [f"response:p99<={X!r}"], horizon=HORIZON, warmup=WARMUP,
                      precision=PRECISION, seed=1 + 1000 * j, jobs=1)
    c = r.configs[0]
    return {"search": j, "low": c.low, "high": c.high, "estimate": c.estimate,
            "status": c.status, "rel": c.relative_half_width, "runs": c.runs,
            "events": c.events, "m": c.replications, "grid_events": grid_events(c),
            "seconds": time.perf_counter() - t0}


def grid_events(c) -> float:
    """Events of the uniform replicated grid of equal interval width (see the module text)."""
    runs = [(p["x"], p["events"] / p["replications"]) for p in c.probes if not p["overloaded"]]
    per_lam = sum(e for _, e in runs) / sum(x for x, _ in runs)   # events per run per unit λ
    lo, hi = c.bracket
    step = c.high - c.low
    points = [lo + i * step for i in range(int((hi - lo) / step) + 1)]
    return sum(c.replications * per_lam * x for x in points)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--searches", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", help="append one JSON line per search here")
    a = ap.parse_args()
    rows = []
    with ProcessPoolExecutor(a.jobs) as pool:
        for row in pool.map(one, range(a.searches)):
            rows.append(row)
            if a.out:
                with open(a.out, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")
    print(summary(rows))
    return 0


def summary(rows: list[dict]) -> str:
    """The figures, as text."""
    cover = sum(r["low"] <= LAM_STAR <= r["high"] for r in rows)
    ratio = [r["events"] / r["grid_events"] for r in rows]
    return "\n".join([
        f"searches {len(rows)}: the 95% interval covers lam* = {LAM_STAR} in {cover}",
        f"median relative half-width {100 * statistics.median(r['rel'] for r in rows):.2f}%",
        f"median events: search {statistics.median(r['events'] for r in rows):.0f}, "
        f"uniform grid {statistics.median(r['grid_events'] for r in rows):.0f} "
        f"(median ratio {statistics.median(ratio):.3f}, largest {max(ratio):.3f})",
        f"median runs {statistics.median(r['runs'] for r in rows):.0f}, "
        f"median seconds per search {statistics.median(r['seconds'] for r in rows):.1f}"])


if __name__ == "__main__":
    sys.exit(main())
