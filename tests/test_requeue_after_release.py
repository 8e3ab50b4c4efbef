"""A preempted hold whose body has released one of its pools is queued
again with its whole header (spec Part 03 §7.3 step 7: the hold statement
is queued again, its header evaluated afresh, and re-executes from the top
of its body).

Found by the differential campaign (generator seed 137043 against pyserq
0.1.3 and 0.1.4): serq-simpy queued the hold again with the pools it still
held, so the released pool was not admitted again; and when the released
pool was the header's first, the hold waited in the wrong queue and the
next pool was given the released pool's amount. Every number below is
pyserq 0.1.3's at seed 1.
"""
from __future__ import annotations

import pytest

import serq
from serq.api import settings_for
from serq.report.json_report import to_dict
from serq.runtime.sim.simulation import Simulation

from oracle import UNCOMPARED, compare_reports, requires, run_reference

# Two sessions hold p0 (10 each: full) and p1 (1); each releases p1 at 1,
# inside a nested hold. At 5 session 0 grows p0: session 1, admitted last,
# is preempted (`preempt lifo`) and queued again; at 6 session 0 ends and
# session 1 is admitted again with both pools, releases p1 at 7 and ends at
# 18 (p0 11.7 units on average over 20; p1 1 unit for 3 seconds: 0.15;
# three admissions of each). Before: session 1 was admitted again to p0
# only (p1: two admissions, 0.1).
RELEASED = """\
stage d : delay;
pool p0 { cap 20; block 2; preempt lifo; }
pool p1 { cap 10; }
pool q { cap 10; }
workload { arrive batch(2); session { request; } }
server {
  hold HEADER {
    hold q (1) { run d (1); release p1; }
    run d (serial == 0 ? 4 : 10);
    grow p0 (2);
    run d (1);
  }
}
run { horizon 20; }
"""
# the same with p1 first in the header: before, the hold was queued at p0
# and admitted to it with p1's amount (p0: 6.9 on average, not 11.7)
SOURCES = {"second": RELEASED.replace("HEADER", "p0 (10), p1 (1)"),
           "first": RELEASED.replace("HEADER", "p1 (1), p0 (10)")}


def _pools(source: str) -> dict:
    rep = to_dict(serq.run(serq.load(source=source)))
    return {p["name"]: (p["admissions"], p["mean_used"], p["preemptions"]) for p in rep["pools"]}


@pytest.mark.parametrize("name", list(SOURCES))
def test_a_preempted_hold_is_queued_again_with_the_pool_it_released(name):
    assert _pools(SOURCES[name]) == {"p0": (3, 11.7, 1), "p1": (3, 0.15, 0),
                                     "q": (3, 0.15, 0)}


@pytest.mark.parametrize("name", list(SOURCES))
def test_the_invariant_checker_holds(name):
    prog = serq.load(source=SOURCES[name])
    prog.settings = settings_for(prog)
    Simulation(prog, check_invariants=True).run()


@requires("0.1.3")
@pytest.mark.parametrize("name", list(SOURCES))
def test_against_0_1_3(name):
    ours = to_dict(serq.run(serq.load(source=SOURCES[name])))
    assert not compare_reports(ours, run_reference(SOURCES[name], "0.1.3"), ignore=UNCOMPARED)
