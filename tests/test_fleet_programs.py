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

Their deterministic forms (`fleet_programs.deterministic`: no draw) are
compared with pyserq 0.1.3 as the differential runner compares generated
programs: every difference must be a departure of docs/departures.md.
"""
from __future__ import annotations

from collections import Counter

import pytest

import serq
from serq.runtime.fast import burst
from serq.runtime.fast.burst import Burst
from serq.runtime.sim.simulation import Simulation

from fleet_programs import against_reference, compare, pd_program, program
from oracle import requires


@pytest.mark.parametrize("family,seed", [("replica", s) for s in range(16)]
                         + [("pd", s) for s in range(8)] + [("mixed", s) for s in range(8)])
def test_fleet_programs_report_as_the_event_loop(family, seed):
    assert compare(seed, family) == "equal"


# CI's slow step runs 112 more; `python tests/fleet_programs.py --family F
# --start S --count N --jobs 2` runs any others by hand. Cut from 568 (and
# the comparison with 0.1.3 below from 600) on 2026-12-07: CI's slow step
# took 58-62 minutes on a machine three times slower than the fast one, and
# the programs dropped (here 120-299 of replica, 60-149 of pd and mixed;
# below 150-299, 60-99 and 100-199) had passed in every run. Cut again, from
# 208 and 310, the same day: a clean clone's `.ci/run` took 60.5 minutes
# on that machine, this file and test_closed_runs.py's slow tests 221 s of
# it on two workers; the programs dropped then (here 72-119 of replica,
# 36-59 of pd and mixed; below 80-149, 40-59 and 50-99) had passed in every
# run too.
@pytest.mark.slow
@pytest.mark.parametrize("family,seed", [("replica", s) for s in range(16, 72)]
                         + [("pd", s) for s in range(8, 36)]
                         + [("mixed", s) for s in range(8, 36)])
def test_more_fleet_programs_report_as_the_event_loop(family, seed):
    assert compare(seed, family) == "equal"


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
    for source in [program(seed) for seed in range(16)] + [pd_program(seed) for seed in range(8)]:
        before = seen["leapfrog ends"]
        Simulation(serq.load(source=source)).run()
        programs += seen["leapfrog ends"] > before
    # replica programs 0 to 15 and pd programs 0 to 7 (each at its seed 1):
    # the loop over engines handles 10,209 ends in 11 of them, relays launch
    # 15,777 iterations and leave 6,282 times, and 450 heads are recorded
    # (when this test was written)
    assert programs >= 6, (programs, seen)
    assert seen["leapfrog ends"] > 2000 and seen["relays launched"] > 3000, seen
    assert seen["relays left"] > 500 and seen["heads recorded"] > 150, seen


@requires("0.1.3")
def test_fleet_programs_10_and_28_are_departures():
    """The first programs that showed "over_cap's need before rounding"
    (10) and "a pool pass at a session's end" inside an engine's attempt
    (28; before the loop's fix for the process end it leaves, no emulation
    explained it) against pyserq 0.1.3."""
    assert [cls for _s, cls, _d in against_reference([10, 28])] == [
        "departure: over_cap's need before rounding", "departure: a pool pass at a session's end"]


#: the mixed programs that were open findings until the emulation of "a
#: replacement made in an engine's attempt" followed pyserq's ready list
#: (closed populations with `reserve (known)`; docs/departures.md)
REPLACED_IN_ATTEMPTS = [320, 708, 1143, 1179, 1582, 1650, 2004, 2227]


@requires("0.1.3")
def test_mixed_programs_with_a_replacement_in_an_attempt_are_departures():
    rows = against_reference(REPLACED_IN_ATTEMPTS, "mixed")
    assert all(cls.startswith("departure:") and "a replacement made in an engine's attempt"
               in cls for _s, cls, _d in rows), [(s, cls) for s, cls, _d in rows]


@requires("0.1.3")
def test_mixed_program_6629_is_a_departure():
    """The mixed program whose fork leg of session 16 holds `kv[0]` while
    the session's lease of it ends: pyserq 0.1.3 keeps the leg among the
    candidates of a preemption at t = 28.103 (a leg is listed as itself
    while it runs), and under the emulation of that listing serq-simpy
    gives its report but for the holders. When the emulation listed a leg
    as its session, the lease's end took the leg out, another resident was
    preempted, and the program was a finding: the runs parted from there
    (docs/departures.md, "Holders counted as sessions")."""
    [(_seed, cls, _diffs)] = against_reference([6629], "mixed")
    assert cls == "departure: holders counted as sessions"


@pytest.mark.slow
@requires("0.1.3")
@pytest.mark.parametrize("family,count", [("replica", 80), ("pd", 40), ("mixed", 50)])
def test_deterministic_fleet_programs_against_0_1_3(family, count):
    rows = against_reference(list(range(count)), family)
    findings = [(s, cls, d[:3]) for s, cls, d in rows if cls.startswith("finding")]
    assert not findings
    # most are compared: equal, or a departure told apart by its field or emulation
    assert sum(cls == "equal" for _s, cls, _d in rows) > count // 8
