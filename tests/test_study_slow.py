"""Slow statistical checks of the study layer (`pytest -m slow tests/test_study_slow.py`)."""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import pytest

import serq.study as study

MG1 = "examples/single-turn/mg1.sq"
#: Exact mean response time of M/M/1 with lam = 0.8, mu = 1: W = 1/(mu - lam) = 5
#: (Kleinrock 1975, sec. 3.2; the header of examples/single-turn/mg1.sq).
EXACT_W = 5.0
STUDIES = 200
REPLICATIONS = 30


def _covers(j: int) -> bool:
    # study j: base seed 1 + 30 j, so no two studies share a replication
    s = study.replicate(MG1, REPLICATIONS, seed=1 + REPLICATIONS * j, jobs=1,
                        horizon=3000, warmup=1000)
    iv = s.interval("observe", "response")
    return abs(iv.mean - EXACT_W) <= iv.half_width


@pytest.mark.slow
def test_replications_cover_the_exact_mm1_mean():
    """200 studies of 30 replications (warm-up 1000 ≫ the relaxation time
    1/(1-√ρ)² ≈ 89 of M/M/1 at ρ = 0.8; horizon 3000): the Student-t 95 %
    interval covers W = 5 in 93–97 % of them."""
    with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        hits = sum(pool.map(_covers, range(STUDIES)))
    print(f"coverage: {hits} of {STUDIES} studies")
    assert 0.93 * STUDIES <= hits <= 0.97 * STUDIES, hits
