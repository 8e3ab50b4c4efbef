"""Tutorial step 8: a small study by hand — a sweep with replications.

Runs the M/M/1 program of step 1 at several arrival rates, each with five
independent replications (seeds 1-5), and prints the mean response time
over the replications with a 95 % Student-t interval next to the closed
form 1 / (1 - lam). The study tools (docs/guide/studies.md) automate this:
replications, warm-up detection, a target precision, sweeps and plots.

    python examples/tutorial/08_study.py
"""
from __future__ import annotations

import os
import statistics

from scipy.stats import t as student_t

import serq

RATES = (0.3, 0.5, 0.7)
SEEDS = range(1, 6)


def replicate(path: str, lam: float, horizon: float = 5000) -> list[float]:
    """Mean response of each replication of the program at rate `lam`."""
    program = serq.load(path, sets={"lam": lam})
    return [serq.run(program, seed=s, horizon=horizon, warmup=horizon / 10)
            .observe("response").mean for s in SEEDS]


def main() -> None:
    """The sweep: one line per arrival rate."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "01_mm1.sq")
    print(f"{'lam':>5} {'mean':>8} {'± 95%':>8} {'exact':>8}")
    for lam in RATES:
        means = replicate(path, lam)
        half = student_t.ppf(0.975, len(means) - 1) * statistics.stdev(means) / len(means) ** 0.5
        print(f"{lam:5.2f} {statistics.mean(means):8.3f} {half:8.3f} {1 / (1 - lam):8.3f}")


if __name__ == "__main__":
    main()
