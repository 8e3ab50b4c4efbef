"""Why the capacity search reports its final batch whatever its width: a
normal-theory simulation of the final stage (docs/guide/capacity.md, "The
method"; serq/study/capacity_search.py's module text).

A pilot of 16 replications gives the spread S0; the final batch is the
fewest m with t(m−1)·S0/√m ≤ 0.85·d (d, the precision, set so that m ≈ 80
when S0 = σ); its 95 % t interval covers the true mean (0) or not. Two
rules: "keep" reports the first final batch always; "replace" runs a second
fresh batch, sized on the first's spread, whenever the first is wider than
d, and reports that one. Runs are normal or gamma(2) (skewness 1.4, like a
p99 of a run with the occasional long busy period).

    python scripts/capacity_final_batch_sim.py [--trials 20000]
"""
from __future__ import annotations

import argparse

import numpy as np
from scipy.stats import t as student

PILOT, AIM = 16, 0.85


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20000)
    n = ap.parse_args().trials
    tq = np.array([np.inf, np.inf] + [student.ppf(0.975, m - 1) for m in range(2, 1001)])
    ms = np.arange(1001)
    d = student.ppf(0.975, 79) / np.sqrt(80) / AIM

    def size(s: float) -> int:
        ok = np.nonzero((tq * s / np.sqrt(np.maximum(ms, 1)) <= AIM * d) & (ms >= 2))[0]
        return int(ok[0]) if len(ok) else 1000

    for name, draw in (("normal", lambda r, k: r.normal(0, 1, k)),
                       ("gamma(2)", lambda r, k: (r.gamma(2.0, 1, k) - 2.0) / np.sqrt(2))):
        rng = np.random.default_rng(20261202)
        keep = replace = second = 0
        widths = []
        for _ in range(n):
            m = size(draw(rng, PILOT).std(ddof=1))
            x = draw(rng, m)
            hw = tq[m] * x.std(ddof=1) / np.sqrt(m)
            keep += abs(x.mean()) <= hw
            widths.append(hw / d)
            if hw > d:
                second += 1
                m = size(x.std(ddof=1))
                x = draw(rng, m)
                hw = tq[m] * x.std(ddof=1) / np.sqrt(m)
            replace += abs(x.mean()) <= hw
        w = np.array(widths)
        print(f"{name}: coverage keep {keep / n:.4f}, replace {replace / n:.4f} "
              f"(second batches {second / n:.3f}); kept batch: median half-width "
              f"{np.median(w):.3f} of the precision, wider than it {np.mean(w > 1):.3f}")


if __name__ == "__main__":
    main()
