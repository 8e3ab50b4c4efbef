"""A step engine's bursts change nothing (serq/runtime/fast/burst.py).

Between events of the rest of the model an engine handles its own quiet
iterations (settles itself, ends iterations inline, replays a steady decode
batch). The event loop turns bursts off when it must see every event: with
the invariant checker on (`Simulation(…, check_invariants=True)`), every
iteration end is a calendar entry and every settle goes through the loop.
The expected report of each case below is therefore the run without bursts;
the two must be identical key for key (the reports hold every statistic,
sample and counter, `events` included).
"""
from __future__ import annotations

import json

import pytest

import serq
from serq.report.json_report import to_dict
from serq.runtime.sim.simulation import Simulation

from oracle import UNCOMPARED, compare_reports, requires, run_reference

CASES = [
    # (program, sets, seed, horizon, warmup, arrivals)
    ("examples/multi-turn/vllm.sq", {}, 1, 60.0, 5.0, None),
    ("examples/multi-turn/vllm.sq", {"Lambda": 3.0}, 2, 40.0, 5.0, None),
    # few KV blocks: growth stalls, LRU eviction and preemption in the batch
    ("examples/multi-turn/vllm.sq", {"blocks": 400, "Lambda": 2.0}, 3, 40.0, 5.0, None),
    ("examples/multi-turn/vllm.sq", {"max_seqs": 2, "Lambda": 2.0}, 4, 40.0, 0.0, None),
    # a run that drains: the burst must stop where the loop would
    ("examples/single-turn/vllm_single_turn.sq", {}, 5, 500.0, 1.0, 300),
    ("examples/single-turn/vllm_single_turn.sq", {}, 1, 80.0, 10.0, None),
    ("examples/multi-turn/replica.sq", {}, 1, 40.0, 5.0, None),
    ("examples/multi-turn/prefix_cache.sq", {}, 1, 100.0, 10.0, None),
    ("examples/papers/fastertransformer.sq", {}, 1, 40.0, 5.0, None),
    ("examples/papers/vllm_exclusive.sq", {}, 1, 40.0, 5.0, None),
    ("examples/papers/orca.sq", {}, 1, 40.0, 5.0, None),
    ("examples/papers/sarathi.sq", {}, 1, 40.0, 5.0, None),
    # claims over iterations read every iteration's start (Part 06 §8)
    ("source:claims", {}, 1, 200.0, 10.0, None),
    # gauges record the settled values of every instant the clock leaves (§7)
    ("source:gauges", {}, 1, 150.0, 10.0, None),
    ("source:gauges", {"lam": 8}, 2, 60.0, 0.0, None),
    # an attempt that preempts the session it admitted (differential seed 51139)
    ("source:preempted", {}, 1, 30.0, 0.0, None),
]

# session 1's growth in the engine never fits beside session 0's (kv is no
# engine's memory: the grower is the only candidate, and preempts itself)
PREEMPTED = """
stage E : step { cost 1 + 0.01 * kv_decode; }
stage s0 : fifo;
pool kv { cap 20; preempt by (-admission) requeue head; }
pool reqs { admit via E; }
workload { arrive batch(2); session { request; } }
server {
  hold kv (2) reuse (2) {
    observe a = now;
    hold reqs (3) { run E prefill (9) growing kv; run E decode (3) growing kv; run s0 (0.75); }
  } cache (3) lease kv (1);
  run s0 (1);
}
run { horizon 30; }
"""

GAUGES = """
let lam = 3;
pool reqs { cap 4; admit via E; }
pool kv { cap 4096; block 16; evict lru; preempt lifo; }
stage E : step { budget 512; cost 0.002 + 0.0001 * tokens + 1e-8 * kv_decode; memory kv; }
stage fe : fifo;
gauge admitting = queued(reqs);
gauge kv_used = used(kv);
gauge front = queue(fe);
gauge in_flight = busy(E);
workload {
  arrive poisson(lam);
  hidden o;
  turn { set n = floor(~uniform(50, 600)); set o = 1 + floor(~exp(40)); }
  session { turn; request; end; }
}
server {
  set t0 = now;
  run fe (~exp(0.05));
  hold reqs (1), kv (n) {
    run E prefill (n) growing kv;
    observe ttft = now - t0;
    run E decode (o - 1) growing kv;
  } cache (n + o);
  observe response = now - t0;
}
run { horizon 100; }
"""

CLAIMS = """
stage E : step { budget 8; cost 0.01 + 0.001 * tokens; }
workload { arrive poisson(2); init { set big = ~bernoulli(0.5); } session { request; end; } }
server { prefill (8 + 4 * big); decode (30); observe done = now; }
claim cap_ok: every iteration of E (tokens <= 8);
claim some_full: some iteration of E (tokens == 8);
claim small_only given (big == 0): every iteration of E (tokens <= 8);
run { horizon 100; }
"""


def _report(path, sets, seed, horizon, warmup, arrivals, check):
    sources = {"source:claims": CLAIMS, "source:gauges": GAUGES, "source:preempted": PREEMPTED}
    prog = (serq.load(source=sources[path], sets=sets) if path in sources
            else serq.load(path, sets=sets))
    prog.settings = serq.api.settings_for(prog, seed=seed, horizon=horizon, warmup=warmup,
                                          arrivals=arrivals)
    sim = Simulation(prog, check_invariants=check)
    return json.dumps(to_dict(sim.run()), sort_keys=True), sim


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].split('/')[-1]}-{c[2]}")
def test_bursts_give_the_loops_report(case):
    with_bursts, sim = _report(*case, check=False)
    without, _ = _report(*case, check=True)
    assert with_bursts == without
    assert all(st.burst for st in sim.step_list)
    if case[0] == "source:gauges":
        assert len(json.loads(with_bursts)["gauges"]) == 4


def test_no_pool_pass_follows_an_attempt():
    """Part 02 §10.3: an engine's attempt is the instant's last step, and no
    pool pass follows it. At 5 (session 0 has left kv, keeping 14 units as a
    lease until 5.75) the attempt admits session 1's hold of reqs; its
    prefill's growth preempts it, and its hold queues again at kv, where
    its 2 units fit. The next pass is the next event's, at 5.75 (the lease
    ends): session 1's kv admissions are at 0, 3, 4, 4.75 and 5.75 (it was
    preempted at 2, 3, 4 and 5), and kv's mean_wait, timed from each
    re-queue, is (0 + 0 + 1 + 1 + 0.75 + 0.75) / 6 = 3.5 / 6, as pyserq 0.1.3
    gives them (seed 1: `a` mean 2.9167, max 5.75; kv mean_wait 0.5833). A
    burst that handed its attempt back to the loop let the loop's pass admit
    it at 5 (mean_wait 2.75 / 6)."""
    rep = serq.run(serq.load(source=PREEMPTED))
    s = rep.observes["a"]
    assert [(int(k), t) for t, k in zip(s.times, s.sessions)] == [
        (0, 0.0), (1, 0.0), (1, 3.0), (1, 4.0), (1, 4.75), (1, 5.75)]
    assert to_dict(rep)["pools"][0]["mean_wait"] == pytest.approx(3.5 / 6, rel=1e-12)


@requires("0.1.3")
@pytest.mark.oracle
def test_no_pool_pass_follows_an_attempt_against_0_1_3():
    ours, ref = to_dict(serq.run(serq.load(source=PREEMPTED))), run_reference(PREEMPTED, "0.1.3")
    assert not compare_reports(ours, ref, ignore=UNCOMPARED)


def test_bursts_with_a_progress_line():
    """A progress line (a terminal's `run`) changes nothing in the report."""
    seen = []
    prog = serq.load("examples/multi-turn/vllm.sq")
    prog.settings = serq.api.settings_for(prog, seed=1, horizon=40.0, warmup=5.0)
    with_progress = Simulation(prog, progress=seen.append).run()
    plain = Simulation(prog).run()
    assert json.dumps(to_dict(with_progress)) == json.dumps(to_dict(plain))


def test_bursts_handle_most_iterations(monkeypatch):
    """Most iterations of the benchmark's program never reach the calendar:
    their ends are handled inline (without bursts every one is an entry)."""
    import serq.runtime.resources.engine as engine_mod
    calls = {"n": 0}
    push = engine_mod.heappush

    def counting(queue, entry):
        calls["n"] += 1  # an iteration's end put on the calendar
        return push(queue, entry)

    monkeypatch.setattr(engine_mod, "heappush", counting)
    prog = serq.load("examples/multi-turn/vllm.sq")
    prog.settings = serq.api.settings_for(prog, seed=1, horizon=60.0, warmup=0.0)
    rep = Simulation(prog).run()
    iterations = next(st for st in rep.stages if st.name == "engine").iterations
    assert iterations > 10_000
    assert calls["n"] < iterations / 10
