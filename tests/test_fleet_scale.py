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
  engines' own).
"""
from __future__ import annotations

import os

import serq
from serq.report.json_report import to_json
from serq.runtime.fast import closed
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


def _plans_per_event(monkeypatch, r: int) -> float:
    count = [0]
    plan = closed.ClosedRuns._plan_closed

    def counted(self):
        count[0] += 1
        return plan(self)

    monkeypatch.setattr(closed.ClosedRuns, "_plan_closed", counted)
    rep = serq.run(_fleet(r, 25.0))
    monkeypatch.setattr(closed.ClosedRuns, "_plan_closed", plan)
    return count[0] / rep.events


def test_planning_per_event_does_not_grow_with_the_fleet(monkeypatch):
    small = _plans_per_event(monkeypatch, 4)
    large = _plans_per_event(monkeypatch, 24)
    assert large <= 1.3 * small, (small, large)
