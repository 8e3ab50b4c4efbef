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
