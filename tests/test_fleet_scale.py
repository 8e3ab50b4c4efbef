"""Fleet scale (issue 28): the work of an event does not grow with the number
of replicas, and the fast paths change no result.

* The fleet index (serq/runtime/sim/fleet.py) is checked against full scans
  after every event by the invariant checker, and the run with the checker
  (no bursts, no leapfrog) gives the report of the run without it, byte for
  byte: the loop's answer is the scan's.
* The number of iterations an engine plans afresh per event stays the same
  from 4 to 24 replicas at the same load per replica: another replica's
  events leave an engine's kept plan standing when the plan reads only the
  engine's residents (`ClosedRuns._plan_stamp`). Without that, every other
  replica's event made every engine plan again, and the planning per event
  grew with the fleet (measured at horizon 25: 0.14 plans per event at
  R = 4 and 0.52 at R = 24 with the global stamp; 0.058 and 0.052 with the
  engines' own). The same holds for the leapfrog's setup of an engine,
  kept across its calls while the engine's plan stands.
* All the calls of an event (cProfile's count while the loop runs) grow
  from 4 to 24 replicas by less than asking every engine a question (a
  method call each) wherever the loop asks about the other engines adds.
"""
from __future__ import annotations

import cProfile
import os
import pstats

import serq
from serq.report.json_report import to_json
from serq.runtime.fast import closed, leapfrog
from serq.runtime.sim.simulation import Simulation

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLICA = os.path.join(ROOT, "examples", "multi-turn", "replica.sq")


def _fleet(r: int, horizon: float):
    """replica.sq with R replicas and 0.4·R sessions per second (as issue 28
    measured it), at `horizon`."""
    prog = serq.load(REPLICA, sets={"R": r, "Lambda": 0.4 * r}, structural=True,
                     horizon=horizon, warmup=horizon / 4)
    return prog


def test_index_is_the_full_scan_at_every_event():
    prog = _fleet(8, 12.0)
    checked = Simulation(prog, check_invariants=True).run()  # fleet.check after every event
    fast = Simulation(prog).run()
    assert to_json(checked) == to_json(fast)


def _per_event(monkeypatch, r: int) -> tuple[float, float]:
    """Plans made (`_plan_closed`) and leapfrog sides made afresh
    (`leapfrog._new_side`) per event, at R replicas."""
    count = {"plans": 0, "sides": 0}

    def counted(target, name, key):
        real = getattr(target, name)

        def f(*args):
            count[key] += 1
            return real(*args)
        monkeypatch.setattr(target, name, f)

    counted(closed.ClosedRuns, "_plan_closed", "plans")
    counted(leapfrog, "_new_side", "sides")
    rep = serq.run(_fleet(r, 25.0))
    monkeypatch.undo()
    return count["plans"] / rep.events, count["sides"] / rep.events


def test_planning_per_event_does_not_grow_with_the_fleet(monkeypatch):
    """Planning, and the leapfrog's setup of an engine (`_new_side`), per
    event stay the same from 4 to 24 replicas. The leapfrog keeps an
    engine's side across calls while its plan stands (`_plain_side`);
    built afresh at every call, the sides per event grew with the fleet,
    as each call took more engines for one end each (measured at horizon
    25: 0.23 at R = 4 and 0.73 at R = 24; kept: 0.10 and 0.10)."""
    plans4, sides4 = _per_event(monkeypatch, 4)
    plans24, sides24 = _per_event(monkeypatch, 24)
    assert plans24 <= 1.3 * plans4, (plans4, plans24)
    assert sides24 <= 1.3 * sides4, (sides4, sides24)


def _calls_per_event(monkeypatch, r: int) -> float:
    """Python calls (functions and built-ins, counted by cProfile) per event
    while the event loop runs, at R replicas (horizon 25)."""
    real = Simulation._loop
    box = {}

    def counted(self):
        prof = cProfile.Profile()
        prof.enable()
        try:
            return real(self)
        finally:
            prof.disable()
            box["calls"] = sum(v[1] for v in pstats.Stats(prof).stats.values())

    monkeypatch.setattr(Simulation, "_loop", counted)
    rep = serq.run(_fleet(r, 25.0))
    monkeypatch.undo()
    return box["calls"] / rep.events


def test_calls_per_event_do_not_scan_the_fleet(monkeypatch):
    """All the work of an event, counted as Python calls, grows little from
    R = 4 to R = 24: 26.7 and 34.1 calls per event when this test was
    written (a difference of 7.4, the leapfrog's setup of engines it takes
    for one end each: docs/guide/performance.md). Asking every engine
    whether it is idle with work wherever the loop asks about the others
    (`FleetIndex.idle_other` as the full scan it replaced, a method call per
    engine) makes them 28.7 and 44.1, a difference of 15.4. Once the
    replicas saturate (the issue's load from t = 50 on) the calls per event
    are the same at any R: 95.9, 96.1 and 99.4 at R = 4, 64 and 256 between
    t = 50 and 150, the last with the routing's R keys per new session."""
    small = _calls_per_event(monkeypatch, 4)
    large = _calls_per_event(monkeypatch, 24)
    assert large - small < 10.0, (small, large)
