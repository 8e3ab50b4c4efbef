"""The hand-written SimPy models that scripts/bench.py times serq-simpy against.

scripts/handwritten_prefix_cache.py is prefix_cache.sq written by hand; these
tests check its pool, its processor-sharing server and the whole model
against the spec's examples, closed cases and a named reference run, so the
benchmark's floor is a model doing the same work, not a cheaper one.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys

import simpy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "handwritten_prefix_cache.py")


def _load():
    spec = importlib.util.spec_from_file_location("handwritten_prefix_cache", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


hand = _load()


def test_pool_evicts_lru_a_block_at_a_time():
    """Spec Part 03 example P-5 (cap 20, block 2, evict lru): A, B, C each
    release 6 cached units at 1, 2, 3; D's 10 units evict all of A and one
    block of B (evicted_entries 1, evicted_units 8); later A finds 0, B 4,
    C 6."""
    pool = hand.KVPool(simpy.Environment(), 20, 2)
    for sid in (0, 1, 2):
        assert pool.admit_now(sid, 6) == 0
        pool.release(sid, 6, 6)
    assert pool.admit_now(3, 10) == 0
    assert pool.entries == {1: 4, 2: 6}
    assert (pool.evicted_entries, pool.evicted_units) == (1, 8)
    assert pool.used + pool.cached == 20  # the invariant used + cached <= cap, tight here
    pool.release(3, 10, 0)  # D's hold has no cache clause: keeps nothing
    assert [pool.admit_now(sid, 6) for sid in (0, 1, 2)] == [0, 4, 6]
    assert pool.cached == 0


def test_pool_queue_is_fifo_with_head_of_line_blocking():
    """Spec Part 03 §4.2: a hold that does not fit waits; the queue is tried
    from its head only, so a small later hold waits behind a large one; a
    release admits the heads that fit, in order, each with its own prefix."""
    pool = hand.KVPool(simpy.Environment(), 10, 1)
    assert pool.admit_now(0, 8) == 0
    first = pool.wait(1, 5) if pool.admit_now(1, 5) is None else None
    assert first is not None
    assert pool.admit_now(2, 1) is None  # it would fit, but the head waits
    second = pool.wait(2, 1)
    pool.release(0, 8, 3)  # session 0 keeps 3 cached
    assert first.triggered and second.triggered
    assert (first.value, second.value) == (0, 0)
    assert pool.used == 6 and pool.cached == 3


def _finish_times(phi: float, jobs: list[tuple[float, float]]) -> list[float]:
    """Completion times of jobs (arrival, work) on a PS server of rate phi."""
    env = simpy.Environment()
    ps = hand.PS(env, phi)
    done = [math.nan] * len(jobs)

    def job(i: int, at: float, work: float):
        yield env.timeout(at)
        yield ps.submit(work)
        done[i] = env.now

    for i, (at, work) in enumerate(jobs):
        env.process(job(i, at, work))
    env.run()
    return done


def test_ps_shares_its_rate_among_the_jobs_present():
    """Spec Part 04 §14: `ps(1)`, works 1, 2, 3 at 0 finish at 3, 5, 6.
    A lone job of work 4 on `ps(4)` finishes at 1 (pyserq 0.1.3, seed 1, a
    one-job program): the rate is 4/n, a job alone gets all of it."""
    assert _finish_times(1.0, [(0, 1), (0, 2), (0, 3)]) == [3.0, 5.0, 6.0]
    assert _finish_times(4.0, [(0, 4)]) == [1.0]
    # A later arrival slows the first job down (closed form: A has 1 of
    # work 2 left at 1, then both run at rate 1/2 until B's 1 is done at 3).
    assert _finish_times(1.0, [(0, 2), (1, 1)]) == [3.0, 3.0]


def test_model_matches_the_reference_run():
    """pyserq 0.1.3, examples/multi-turn/prefix_cache.sq, seed 1 (its own
    horizon 20000): hit 0.6735 ±0.0106, response 1.626 ±0.087 (95%). The
    hand-written model draws from another stream, so it agrees within about
    three half-widths, not exactly."""
    res = hand.run(horizon=20000.0, seed=1)
    assert abs(res["hit"] - 0.6735) < 0.03
    assert abs(res["response"] - 1.626) < 0.25
    assert res["rejected"] == 0 and res["evicted_units"] > 0
    # the reference's calendar handled 7575 events and 1002 arrivals
    assert 900 < res["arrivals"] < 1100 and 7000 < res["events"] < 8500


def test_model_matches_the_reference_run_with_a_small_pool():
    """pyserq 0.1.3, the same program with `let kv_cap = 4096;`, seed 1:
    hit 0.3813 ±0.0297, response 1.603 ±0.083, 78 sessions rejected (their
    context outgrew the pool). Eviction now costs many hits; agreement within
    about three half-widths again."""
    res = hand.run(horizon=20000.0, seed=1, kv_cap=4096)
    assert abs(res["hit"] - 0.3813) < 0.09
    assert abs(res["response"] - 1.603) < 0.25
    assert 40 < res["rejected"] < 130


def test_unbounded_pool_finds_the_whole_context():
    """With no cap and no blocks nothing is evicted and every turn after the
    first finds its whole context cached (Part 03 §4.5: it kept
    min(ctx + new + out, allocation)): each hit is 0 or exactly 1."""
    res = hand.run(horizon=2000.0, seed=3, kv_cap=math.inf, block=1)
    assert res["evicted_units"] == 0
    hits = res["hit"] * res["turns"]
    assert abs(hits - round(hits)) < 1e-6
    assert 0 < res["hit"] < 1  # first turns find nothing, later ones everything


def test_one_block_pool_never_hits():
    """A pool of one 65536-token block: every request takes the whole pool
    (one at a time, the others queue) and keeps rd(units) = 0 tokens
    (Part 03 §3), so no turn finds anything cached."""
    res = hand.run(horizon=2000.0, seed=1, kv_cap=65536, block=65536)
    assert res["turns"] > 0 and res["hit"] == 0.0
    assert res["response"] > 0 and res["evicted_units"] == 0


def test_a_pool_below_every_demand_rejects_every_session():
    """The smallest demand is ru(100 + 50) = 160 tokens: a 100-token pool
    rejects every session at its first hold (Part 03 §4.2 step 1)."""
    res = hand.run(horizon=500.0, seed=1, kv_cap=100)
    assert res["arrivals"] > 0 and res["rejected"] == res["arrivals"]
    assert res["turns"] == 0 and res["hit"] is None


def test_script_prints_its_result():
    out = subprocess.run([sys.executable, SCRIPT, "--horizon", "300", "--seed", "2"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["horizon"] == 300 and res["seed"] == 2 and res["response"] > 0
