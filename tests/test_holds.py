"""Holds on their own (`serq/runtime/resources/holds.py`, spec Part 03 §4–§7):
small programs, each aimed at one rule of the session-side operations on
pools, written for the mutation run of issue 27 (the module's other tests
reach these rules only through whole examples). Every expected number is
worked out by hand in the test's docstring from the spec section it
names, and each program gives the same observations and pool rows under
pyserq 0.1.3 (seed 1; the differential test at the end, run where the
reference is installed)."""
from __future__ import annotations

import pytest

import serq
from serq.report.json_report import to_dict

from oracle import requires, run_reference

NESTED_RELEASE = """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { turn;
  hold p (3) { hold p (4) { observe both = used(p); release p; observe inner = used(p); run d (1); }
               observe outer = used(p); run d (1); }
  observe after = used(p); }
run { horizon 10; warmup 0; seed 1; }
"""

RELEASE_BESIDE_A_LEASE = """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { turn;
  hold p (2) { run d (1); } lease p (100);
  hold p (3) { release p; observe in_hold = used(p); run d (1); }
  observe after = used(p); release p; observe lease_ended = used(p); }
run { horizon 10; warmup 0; seed 1; }
"""

CACHE_NOTHING = """
pool kv { cap 100; }
stage d : delay;
workload { arrive batch(1); }
session { turn;
  hold kv (10) { run d (1); } cache (0); observe zero = cachedin(kv);
  hold kv (10) { run d (1); } cache (-3); observe negative = cachedin(kv);
  hold kv (10) { run d (1); } cache (0.5); observe half = cachedin(kv); }
run { horizon 10; warmup 0; seed 1; }
"""

TWO_GROWERS = """
pool m { cap 11; preempt none; }
stage d : delay;
workload { arrive batch(4);
  init { set u = serial == 0 ? 4 : serial == 1 ? 3 : serial == 2 ? 3 : 1; } }
session { turn;
  hold m (u) {
    branch (serial == 0) { run d (1); grow m (4); observe grown = now; run d (1); }
    else { branch (serial == 1) { run d (2); grow m (1); observe grown = now; run d (1); }
           else { run d (serial == 2 ? 3 : 4); } }
  }
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""


def run(source):
    return to_dict(serq.run(serq.load(source=source)))


def samples(report, name):
    """`(session, time, value)` of every sample of `name`, in recording order."""
    s = report.observes[name]
    return [(int(k), t, v) for v, t, k in zip(s.values, s.times, s.sessions)]


def run_samples(source):
    return serq.run(serq.load(source=source))


def test_release_gives_back_the_innermost_hold_only():
    """§5 `release P`: the innermost hold on P releases now (used 3 + 4 = 7
    -> 3), the enclosing hold keeps its 3 until its scope ends at t = 2."""
    rep = run_samples(NESTED_RELEASE)
    assert samples(rep, "both") == [(0, 0.0, 7.0)]
    assert samples(rep, "inner") == [(0, 0.0, 3.0)]
    assert samples(rep, "outer") == [(0, 1.0, 3.0)]
    assert samples(rep, "after") == [(0, 2.0, 0.0)]


def test_release_inside_a_hold_leaves_the_sessions_lease_alone():
    """§5: `release P` inside a hold of P releases that hold, not the lease
    of P the session also has (§6: a lease ends by `release P` only outside
    a hold of P): the lease's 2 stay until the last `release p`."""
    rep = run_samples(RELEASE_BESIDE_A_LEASE)
    assert samples(rep, "in_hold") == [(0, 1.0, 2.0)]
    assert samples(rep, "after") == [(0, 2.0, 2.0)]
    assert samples(rep, "lease_ended") == [(0, 2.0, 0.0)]


def test_a_cache_clause_of_nothing_keeps_nothing():
    """§4.5: what is kept is rd(min(max(l, 0), computed)): `cache (0)` and
    `cache (-3)` keep 0 units (no entry), `cache (0.5)` keeps 0.5 (no block:
    rd is the identity)."""
    rep = run_samples(CACHE_NOTHING)
    assert samples(rep, "zero") == [(0, 1.0, 0.0)]
    assert samples(rep, "negative") == [(0, 2.0, 0.0)]
    assert samples(rep, "half") == [(0, 3.0, 0.5)]


def test_stalled_growers_are_retried_from_the_front_and_the_first_misfit_stops():
    """§7.2 on cap 11, holds 4 + 3 + 3 + 1 = 11. Session 0 grows by 4 at
    t = 1 and session 1 by 1 at t = 2: both stall, 0 first. Session 2 ends
    at 3 (3 free): 0 needs 4 and stops the retries, so 1 (needing 1) waits
    behind it. Session 3 ends at 4 (4 free): 0 grows; 1 still misfits (0
    free). 0 ends at 5 (8 free): 1 grows. grown = 4 (0), 5 (1)."""
    rep = run_samples(TWO_GROWERS)
    assert samples(rep, "grown") == [(0, 4.0, 4.0), (1, 5.0, 5.0)]
    assert samples(rep, "done") == [(2, 3.0, 3.0), (3, 4.0, 4.0), (0, 5.0, 5.0), (1, 6.0, 6.0)]


#: (program, pool fields not compared). After a `release P` the reference
#: stops counting the session as a holder of P although an enclosing hold
#: (NESTED_RELEASE) or a lease (RELEASE_BESIDE_A_LEASE) still holds units of
#: P (pyserq 0.1.3 mean_holders 0 and 0.1 against our 0.2): Part 03 §1 and
#: Part 06's `mean_holders` count the sessions with an allocation, leases
#: included, which serq-simpy follows (a scope end already agrees: the
#: NESTED program of test_pool_edges.py).
PROGRAMS = [(NESTED_RELEASE, {"mean_holders"}), (RELEASE_BESIDE_A_LEASE, {"mean_holders"}),
            (CACHE_NOTHING, set()), (TWO_GROWERS, set())]


@requires("0.1.3")
@pytest.mark.oracle
@pytest.mark.parametrize("source, differs", PROGRAMS)
def test_holds_programs_against_the_reference(source, differs):
    """The same programs under pyserq 0.1.3 (seed 1): every observe's
    count, mean, min and max, and every pool field the reference reports
    (but those `differs` names)."""
    ours = run(source)
    ref = run_reference(source, version="0.1.3")
    assert ours["observes"].keys() == ref["observes"].keys()
    for name, theirs in ref["observes"].items():
        mine = ours["observes"][name]
        for key in ("count", "mean", "min", "max"):
            if key in theirs:
                assert mine[key] == pytest.approx(theirs[key], rel=1e-12, abs=0), (name, key)
    for mine, theirs in zip(ours["pools"], ref["pools"]):
        for key, value in theirs.items():
            if key in differs:
                continue
            if isinstance(value, float):
                value = pytest.approx(value, rel=1e-12, abs=0)
            assert mine[key] == value, key
