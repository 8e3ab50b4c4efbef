"""The SimPy seam (issue 21, docs/guide/simpy.md): a program built but not
run, the user's own SimPy processes beside its sessions, and the checked
changes they make. Each process is tested against a closed form.
"""
from __future__ import annotations

import math

import pytest

import serq
from serq.runtime.sim.model import ChangeError

from closed_forms import mmc_mean_response

MMC = """
let lam = 1.5;
stage svc : fifo(2);
workload { arrive poisson(lam); }
session { turn; set t0 = now; run svc (~exp(1)); observe response = now - t0; }
run { horizon 40000; }
"""

DD1 = """
stage svc : fifo(1);
workload { arrive renewal(1); }
session { turn; set t0 = now; run svc (0.5); observe response = now - t0; }
run { horizon 200; }
"""


def test_an_autoscaler_changes_the_servers_at_a_known_time():
    # M/M/c, lam = 1.5, mu = 1: two servers (rho = 0.75) until t = 1000, then
    # three (rho = 0.5). Measured after the change (warm-up 2000), the mean
    # response is M/M/3's: W = C(3, 1.5) / (3 - 1.5) + 1 (Erlang C,
    # Kleinrock vol. 1 §3.5) = 1.1579; M/M/2's would be 2.2857.
    model = serq.build(serq.load(source=MMC), seed=1, warmup=2000)
    svc = model.stage("svc")

    def autoscaler(env):
        yield env.timeout(1000)
        svc.servers = 3

    model.process(autoscaler(model.env))
    report = model.run()
    assert svc.servers == 3
    w3, w2 = mmc_mean_response(1.5, 1.0, 3), mmc_mean_response(1.5, 1.0, 2)
    assert round(w3, 4) == 1.1579 and round(w2, 4) == 2.2857
    r = report.observe("response")
    assert abs(r.mean - w3) < 3 * r.ci, (r.mean, r.ci, w3)
    assert abs(r.mean - w2) > 10 * r.ci


def _dd1_outage(start: float, length: float, horizon: float) -> list[float]:
    """Response times of D/D/1 (arrivals at 1, 2, …, service 0.5) whose
    server takes no new job in [start, start + length): Lindley's recursion,
    a job starting when both it and the server are there."""
    out, free = [], 0.0
    for k in range(1, int(horizon) + 1):
        t = float(k)
        begin = max(t, free)
        if start <= begin < start + length:
            begin = start + length
        free = begin + 0.5
        if free <= horizon:
            out.append(free - t)
    return out


def test_a_failure_injector_takes_the_server_out_for_ten_seconds():
    model = serq.build(serq.load(source=DD1))
    svc = model.stage("svc")

    def failure(env):
        yield env.timeout(100.25)
        with svc.request() as req:  # SimPy's protocol: the server leaves service
            yield req
            yield env.timeout(10)

    model.process(failure(model.env))
    report = model.run()
    expected = _dd1_outage(100.25, 10.0, 200.0)
    r = report.observe("response")
    assert r.count == len(expected)
    assert r.mean == pytest.approx(math.fsum(expected) / len(expected), rel=1e-12)
    # the job arriving at 101 waits longest: it starts when the server is
    # back, at 110.25, and leaves at 110.75
    assert max(r.samples) == max(expected) == 9.75
    assert svc.servers == 1  # released at the end of the `with` block


def test_without_a_process_a_built_model_runs_as_run_does():
    program = serq.load(source=DD1)
    assert serq.build(program, seed=3).run().json() == serq.run(program, seed=3).json()


@pytest.mark.parametrize("value", [-1, 1.5, "2", True])
def test_a_change_against_its_rule_stops_the_run(value):
    model = serq.build(serq.load(source=DD1))
    svc = model.stage("svc")

    def bad(env):
        yield env.timeout(5)
        svc.servers = value

    model.process(bad(model.env))
    with pytest.raises(ChangeError) as info:
        model.run()
    assert info.value.resource == "svc" and info.value.change == "servers"
    assert "whole number of servers" in info.value.rule
    assert info.value.time == 5


POOLED = """
pool slots { cap 1; }
stage svc : delay;
workload { arrive batch(2); }
session { turn; set t0 = now; hold slots (1) { run svc (10); } observe done = now - t0; }
run { horizon 100; }
"""


def _capacity_at(time: float, units: float):
    """The report of POOLED with the pool's capacity set to `units` at `time`."""
    model = serq.build(serq.load(source=POOLED))
    slots = model.pool("slots")

    def change(env):
        yield env.timeout(time)
        slots.capacity = units

    model.process(change(model.env))
    return model.run()


def test_a_pool_grows_at_a_known_time_and_admits_the_waiting_hold():
    # two sessions at 0, one slot: the second waits for the first (done at
    # 10, 20) unless the capacity becomes 2 at 4 (done at 10, 14)
    plain = serq.run(serq.load(source=POOLED)).observe("done")
    assert sorted(plain.samples) == [10, 20]
    assert sorted(_capacity_at(4, 2).observe("done").samples) == [10, 14]
    with pytest.raises(ChangeError, match="at least the units held"):
        _capacity_at(1, 0.5)  # one unit is held at 1


# -- a failure injector pauses a step engine ---------------------------------------------
# Spec Part 04 SE-1's engine (`budget 4; cost 1`: one iteration a time unit, 4
# tokens each; pyserq 0.1.3): one request of n prompt tokens and o output
# tokens runs ceil(n/4) prefill iterations, then o - 1 decode iterations of
# one token, back to back from 0: ttft = ceil(n/4), response = ttft + o - 1.
ENGINE = """
stage engine : step {{ budget 4; cost 1; }}
workload {{ arrive batch(1); init {{ set n = {n}; set o = {o}; }} session {{ request; }} }}
server {{ run engine prefill (n); observe ttft = now; run engine decode (o - 1);
         observe response = now; }}
run {{ horizon 400; }}
"""


def _paused(n: int, o: int, at: float, length: float, overlap: bool = False):
    """The report of ENGINE with the engine paused at `at` for `length` (and,
    with `overlap`, a second pause from `at + 1` to `at + length / 2`, inside
    the first: it changes nothing)."""
    model = serq.build(serq.load(source=ENGINE.format(n=n, o=o)))
    engine = model.stage("engine")

    def failure(env):
        yield env.timeout(at)
        with engine.pause() as p:  # SimPy's protocol: the engine stops iterating
            yield p
            yield env.timeout(length)

    def inner(env):
        yield env.timeout(at + 1)
        with engine.pause() as p:
            yield p
            yield env.timeout(length / 2 - 1)

    model.process(failure(model.env))
    if overlap:
        model.process(inner(model.env))
    return model.run()


@pytest.mark.parametrize("overlap", [False, True])
def test_a_failure_injector_pauses_a_step_engine(overlap):
    # n = 10, o = 4: prefills [0,1) [1,2) [2,3), decodes end at 4, 5, 6 (SE-1).
    # Paused at 1.5 for 10: the iteration [1,2) finishes, none starts until
    # 11.5; the last prefill is [11.5,12.5): ttft 12.5, response 12.5 + 3 = 15.5
    # (SE-1's 3 and 6 shifted by 11.5 - 2 = 9.5, the time the engine stood)
    report = _paused(10, 4, 1.5, 10.0, overlap)
    assert report.observe("ttft").samples == [12.5]
    assert report.observe("response").samples == [15.5]


def test_a_pause_stops_an_engine_that_runs_its_iterations_alone():
    # n = 40, o = 100: 10 prefill iterations (ttft 10) and 99 decodes
    # (response 109) run by the engine's fast paths, iteration after
    # iteration with nothing else on the calendar; paused at 50.5 for 10, the
    # iteration [50,51) finishes and the 58 left run from 60.5: 118.5
    plain = _paused(40, 100, 1000.0, 1.0)  # (the pause comes after the end)
    assert plain.observe("response").samples == [109.0]
    report = _paused(40, 100, 50.5, 10.0)
    assert report.observe("ttft").samples == [10.0]
    assert report.observe("response").samples == [118.5]


def test_only_a_step_engine_pauses():
    model = serq.build(serq.load(source=DD1))
    svc = model.stage("svc")

    def bad(env):
        yield env.timeout(5)
        yield svc.pause()

    model.process(bad(model.env))
    with pytest.raises(ChangeError) as info:
        model.run()
    assert info.value.resource == "svc" and info.value.change == "pause"
    assert "step engine" in info.value.rule and info.value.time == 5
