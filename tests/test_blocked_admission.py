"""An admission known to fail is not tried again (serq/runtime/fast/blocked.py).

After an engine's attempt admitted nothing, `blocked_head` records the head
it tried when nothing but room coming back in one of its pools can change
that; while the record stands, `Burst.admit_one` answers "nothing admitted"
without evaluating the head's amounts again. The expected reports are the
runs without the record (`blocked_head` returning None): they must be the
same, byte for byte, on random engine programs (tests/engine_programs.py,
whose holds read attributes only) and on `replica.sq`, whose KV amount
reads `budget_left(eng)` beside a reserve of attributes (`compile.bounds`).
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

import serq
from serq.core import ir
from serq.report.json_report import to_dict
from serq.runtime.compile.bounds import bounds
from serq.runtime.fast import burst as burst_mod
from serq.runtime.resources.engine import StepStage
from serq.runtime.sim.simulation import Simulation

from engine_programs import program

ROOT = Path(__file__).resolve().parent.parent
INF = math.inf


def _runs(monkeypatch, prog) -> tuple[str, str, int]:
    """The report with the records and without, and how many attempts the
    records answered."""
    answered = [0]
    admits_now = burst_mod.admits_now

    def counting(st):
        now = admits_now(st)
        answered[0] += not now
        return now

    monkeypatch.setattr(burst_mod, "admits_now", counting)
    fast = json.dumps(to_dict(Simulation(prog).run()), sort_keys=True)
    with monkeypatch.context() as m:
        m.setattr(burst_mod, "blocked_head", lambda st, plan: None)
        plain = json.dumps(to_dict(Simulation(prog).run()), sort_keys=True)
    return fast, plain, answered[0]


def test_random_engine_programs_report_the_same_without_the_retries(monkeypatch, tmp_path):
    answered = engaged = 0
    for seed in range(120):
        path = tmp_path / f"p{seed}.sq"
        path.write_text(program(seed))
        fast, plain, n = _runs(monkeypatch, serq.load(str(path)))
        assert fast == plain, f"engine program {seed}"
        answered += n
        engaged += n > 0
    assert engaged >= 4 and answered >= 2000  # (measured here: 6 programs, 3,929 attempts)


def test_replica_reports_the_same_without_the_retries(monkeypatch):
    prog = serq.load(str(ROOT / "examples/multi-turn/replica.sq"), sets={"R": 2, "Lambda": 0.8},
                     structural=True)
    prog.settings.horizon, prog.settings.warmup = 250.0, 50.0
    fast, plain, n = _runs(monkeypatch, prog)
    assert fast == plain
    assert n > 5000  # (measured here: 14,870; the KV head waits for many iterations)


def _attr(name):
    return ir.Attr(name)


def _obs(fn):
    return ir.Observable(fn, ir.Ref("pool", "kv"))


def _interval(e, **values):
    return bounds(e, {k: k for k in values})(SimpleNamespace(**values))


def test_bounds_of_the_vllm_kv_amount():
    # `min(known, hit + budget_left(eng))` (examples/lib/vllm.sq): between the
    # hit and the prompt, whatever the budget left
    e = ir.Call("min", [_attr("known"), ir.Binary("+", _attr("hit"), _obs("budget_left"))])
    assert _interval(e, known=100.0, hit=20.0) == (20.0, 100.0)
    assert _interval(e, known=100.0, hit=-5.0) == (-5.0, 100.0)  # may be negative: no record


def test_bounds_of_other_forms():
    n = _attr("n")
    used = _obs("queued")
    assert _interval(ir.Binary("-", n, used), n=8.0) == (-INF, 8.0)
    assert _interval(ir.Call("max", [ir.Binary("-", n, used), ir.Num(0.0)]), n=8.0) == (0.0, 8.0)
    assert _interval(ir.Binary("/", ir.Binary("+", n, used), ir.Num(4.0)), n=8.0) == (2.0, INF)
    assert _interval(ir.Binary("*", n, used), n=2.0) == (0.0, INF)
    assert _interval(ir.Binary("*", n, used), n=-2.0) == (-INF, 0.0)
    assert _interval(ir.Cond(used, n, ir.Num(3.0)), n=8.0) == (3.0, 8.0)
    assert _interval(ir.Call("floor", [ir.Binary("/", n, ir.Num(3.0))]), n=8.0) == (2.0, 2.0)
    # unknown: a context variable, a division by live state, a NaN attribute,
    # `used` and `free` (sums of fractions: a hair below 0 is possible)
    assert _interval(ir.Ctx("tokens"), n=1.0) == (-INF, INF)
    assert _interval(ir.Binary("/", n, used), n=1.0) == (-INF, INF)
    assert _interval(n, n=math.nan) == (-INF, INF)
    assert _interval(ir.Binary("-", n, n), n=INF) == (-INF, INF)
    assert _interval(_obs("free"), n=1.0) == (-INF, INF)
    assert _interval(_obs("used"), n=1.0) == (-INF, INF)


def _engine(heads: list, reserve: float = 4.0, units_bound=None):
    """A fake engine admitting from two pools, the second's head waiting:
    units of attributes in the first pool of its hold, and in the second
    units of live state (bounded by `units_bound`) beside a reserve."""
    spec = SimpleNamespace(static=[(True, False), (False, True)],
                           bounds=[None, (lambda s: units_bound)],
                           reserve=[None, (lambda s: reserve)])
    pools = [SimpleNamespace(plain_room=True, freed=0) for _ in range(2)]
    frame = SimpleNamespace(spec=spec, session=None, pools=pools)
    ahead = SimpleNamespace(queue=[])
    served = SimpleNamespace(queue=[frame] + heads, plain_select=True,
                             spec=SimpleNamespace(queue_keys=None))
    st = SimpleNamespace(sim=SimpleNamespace(legs=None), served_pools=[ahead, served],
                         served_queues=[ahead.queue, served.queue], blocked=None)
    st.admission_pool = lambda plan: StepStage.admission_pool(st, plan)  # (the built-in)
    return st, frame, ahead, served


def test_a_record_stands_until_room_comes_back_or_the_head_changes():
    from serq.runtime.fast.blocked import admits_now, blocked_head
    st, frame, ahead, served = _engine([], units_bound=(1.0, 4.0))
    st.blocked = blocked_head(st, None)
    assert st.blocked is not None and not admits_now(st)
    frame.pools[1].freed += 1  # room came back in the head's second pool
    assert admits_now(st) and st.blocked is None
    st.blocked = blocked_head(st, None)
    served.queue.insert(0, SimpleNamespace())  # a preempted hold goes to the front
    assert admits_now(st)
    served.queue.pop(0)
    st.blocked = blocked_head(st, None)
    ahead.queue.append(SimpleNamespace())  # a hold waits in a pool tried first
    assert admits_now(st)
    ahead.queue.clear()
    served.queue.clear()
    assert not admits_now(st)  # nothing waits: nothing to admit


@pytest.mark.parametrize("bound", [(-1.0, 4.0), (0.0, 4.5), (-INF, INF)])
def test_no_record_when_the_amount_may_fail_or_need_more(bound):
    """Units that may be negative (the attempt would raise) or exceed the
    reserve (the need would change) are evaluated at every attempt."""
    from serq.runtime.fast.blocked import blocked_head
    st, *_ = _engine([], units_bound=bound)
    assert blocked_head(st, None) is None


def _pool_and_frame():
    pool = SimpleNamespace(frames=[], freed=0, touch=lambda: None, used=5.0,
                           remove_holder=lambda s: None)
    frame = SimpleNamespace(pools=[pool], cells=[SimpleNamespace(alloc=2.0, pos=2.0)],
                            grown=False,
                            lease_pool=pool, spec=SimpleNamespace(cache=None))
    pool.frames.append(frame)
    return pool, frame


def test_units_given_back_count():
    """Every path that gives units back (a scope's end, `release`, a
    preemption, a session's end, a lease's end) goes through
    `_release_units`, which counts it."""
    from serq.runtime.resources.holds import HoldManager
    pool, _frame = _pool_and_frame()
    HoldManager._release_units(SimpleNamespace(), None, pool, 2.0, 2.0, None)
    assert (pool.used, pool.freed) == (3.0, 1)


def test_a_lease_counts_its_reservation_gone():
    """A scope ending in a lease keeps its units but not its reservation
    (`reserve held`): that room comes back, and it counts too."""
    from serq.runtime.resources.holds import HoldManager
    pool, frame = _pool_and_frame()
    s = SimpleNamespace(holds=[frame], preempt_pos={}, computed=0.0)
    fake = SimpleNamespace(_lease=lambda *a: None, pool_pass=lambda: None)
    HoldManager.end(fake, s, frame)
    assert (pool.used, pool.freed, pool.frames) == (5.0, 1, [])
