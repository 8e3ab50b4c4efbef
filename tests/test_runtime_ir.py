"""The runtime on hand-built kernel IR (no parser involved).

Expected numbers are the worked examples of the spec, each named."""
from __future__ import annotations

import pytest

from serq.core import ir
from serq.runtime.sim.simulation import Simulation


def _prog(stages, session, *, arrival="batch", count=2, horizon=10.0, warmup=0.0,
          observations=(), attributes=(), **wl):
    p = ir.Program(file="t.sq", stages=stages,
                   workload=ir.Workload(arrival=arrival, count=count, **wl),
                   session=session, observations=list(observations),
                   attributes=list(attributes))
    p.settings = ir.Settings(horizon=horizon, warmup=warmup)
    return p


def _stage_ref(name):
    return ir.Ref("stage", name)


def test_p02_w1_two_sessions_on_one_server():
    # Part 02 W-1: response 2 (t=2) and 4 (t=4); mean_live 0.6; svc util 0.4
    svc = ir.Stage("svc", "fifo")
    body = [ir.Turn(), ir.Set("t0", ir.Now()),
            ir.Run([_stage_ref("svc")], ir.Num(2.0)),
            ir.Observe("response", ir.Binary("-", ir.Now(), ir.Attr("t0")))]
    rep = Simulation(_prog([svc], body, observations=["response"],
                           attributes=["t0"])).run()
    s = rep.observes["response"]
    assert s.values == [2.0, 4.0] and s.times == [2.0, 4.0]
    assert (rep.arrivals, rep.ended, rep.turns) == (2, 2, 2)
    assert rep.mean_live == pytest.approx(0.6, rel=1e-12)
    row = rep.stages[0]
    assert row.mean_number == pytest.approx(0.6) and row.utilization == pytest.approx(0.4)
    assert row.completed == 2 and row.throughput == pytest.approx(0.2)
    assert row.mean_wait == 1 and row.mean_service == 2


def test_p01_e3_queue_observables_at_one_instant():
    # Part 01 E-3 (first rows): q,b,w at t=0 are (0,0,0) (1,1,2) (2,1,4);
    # q2,w2 at 2,4,6 are (2,4) (1,2) (0,0)
    svc = ir.Stage("svc", "fifo")
    ref = _stage_ref("svc")
    body = [ir.Turn(),
            ir.Observe("q", ir.Observable("queue", ref)),
            ir.Observe("b", ir.Observable("busy", ref)),
            ir.Observe("w", ir.Observable("work", ref)),
            ir.Run([ref], ir.Num(2.0)),
            ir.Observe("q2", ir.Observable("queue", ref)),
            ir.Observe("w2", ir.Observable("work", ref))]
    rep = Simulation(_prog([svc], body, count=3, horizon=20,
                           observations=["q", "b", "w", "q2", "w2"])).run()
    o = rep.observes
    assert o["q"].values == [0, 1, 2] and o["b"].values == [0, 1, 1]
    assert o["w"].values == [0, 2, 4]
    assert o["q2"].values == [2, 1, 0] and o["w2"].values == [4, 2, 0]


def test_generated_locals_do_not_shadow_bound_stages():
    """A `choose` over a stage array followed by an aggregate over its members: the
    generated function's temporaries once took the names of the bound stage
    globals (`_st7`) and the run raised UnboundLocalError."""
    import serq
    src = """
    let N = 3; stage s[3] : fifo; workload { arrive batch(4); }
    session { turn; choose j in N by (queue(s[j]), -j);
      observe total = sum k in N (queue(s[k])); run s[j] (1); }
    run { horizon 10; }
    """
    report = serq.run(serq.load(source=src))
    # the four sessions start at time 0 in order and each joins a queue before the
    # next one observes: the totals read 0, 1, 2, 3
    assert report.observe("total").values == [0.0, 1.0, 2.0, 3.0]
