"""Random fleets (tests/fleet_programs.py) report as the event loop does.

A fleet of step engines reaches fast paths that a single engine does not:
the relay from one engine's iteration end to the next (`Burst._relay_kept`),
the loop over engines whose ends interleave (`fast/leapfrog.py`), the index
of engines idle with work (`sim/fleet.py`) and, per replica, the records of
admissions known to fail (`fast/blocked.py`). Each program is run with them
and event by event (the invariant checker's run turns bursts off); the two
reports must be the same byte for byte. The last test checks that the
programs do reach those paths, so that the comparisons cannot pass by
leaving them out.
"""
from __future__ import annotations

from collections import Counter

import pytest

import serq
from serq.runtime.fast import burst
from serq.runtime.fast.burst import Burst
from serq.runtime.sim.simulation import Simulation

from fleet_programs import compare, program


@pytest.mark.parametrize("seed", range(16))
def test_fleet_programs_report_as_the_event_loop(seed):
    assert compare(seed) == "equal"


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(16, 400))
def test_more_fleet_programs_report_as_the_event_loop(seed):
    assert compare(seed) == "equal"


def test_fleet_programs_reach_the_fleet_fast_paths(monkeypatch):
    seen: Counter = Counter()
    frog, relay, head = burst.leapfrog, Burst._relay_kept, burst.blocked_head

    def counting_frog(b):
        before = b.sim.events
        out = frog(b)
        if out is not None:
            seen["leapfrog ends"] += b.sim.events - before
        return out

    def counting_relay(self, kept):
        step = relay(self, kept)
        seen["relays launched" if step > 0 else "relays left"] += 1
        return step

    def counting_head(st, plan):
        out = head(st, plan)
        seen["heads recorded"] += out is not None
        return out

    monkeypatch.setattr(burst, "leapfrog", counting_frog)
    monkeypatch.setattr(Burst, "_relay_kept", counting_relay)
    monkeypatch.setattr(burst, "blocked_head", counting_head)
    programs = 0
    for seed in range(16):
        before = seen["leapfrog ends"]
        Simulation(serq.load(source=program(seed))).run()
        programs += seen["leapfrog ends"] > before
    # programs 0 to 15 (each at its seed 1): the loop over engines handles
    # 9,349 ends in 8 of them, relays launch 15,043 iterations and leave
    # 5,129 times, and 91 heads are recorded (when this test was written)
    assert programs >= 5, (programs, seen)
    assert seen["leapfrog ends"] > 2000 and seen["relays launched"] > 3000, seen
    assert seen["relays left"] > 500 and seen["heads recorded"] > 40, seen
