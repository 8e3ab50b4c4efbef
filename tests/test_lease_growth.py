"""`grow P` in a hold that has released `P`: the session's lease of `P` grows
(Part 03 §5; pyserq 0.1.5).

Part 03 §4.9 has `grow` act on the innermost enclosing hold that lists the
pool; after `release P` the hold no longer holds it, and the spec says no
more. pyserq 0.1.5 then grows the session's lease of `P` -- with room, by
preempting another holder's hold, or by waiting for room like any growth
-- and stops the run only when the session holds no `P` and leases none;
pyserq 0.1.4 stopped in every such case, as serq-simpy did (found by the
differential runner: drawing program 1101344 against 0.1.5). An enclosing
hold that still holds `P` grows first. Every number below is pyserq
0.1.5's at seed 1.
"""
from __future__ import annotations

import pytest

import serq
from serq.api import settings_for
from serq.core.errors import SimulationError
from serq.report.json_report import to_dict
from serq.runtime.sim.simulation import Simulation

from oracle import UNCOMPARED, assert_reports_match, assert_samples_match, requires, \
    run_reference

def _program(pool: str, server: str, sessions: int = 2) -> str:
    """A `fn main` program: pool `p0 { pool }`, a delay `d`, `sessions`
    sessions at 0 running `server` (its lines)."""
    return ("fn main() {\n  pool p0 { " + pool + " }\n  stage d : delay;\n"
            f"  workload {{ arrive batch({sessions}); }}\n  server {{\n" + server + "  }\n}\n")


# A leg leases 2 units (ru(1)); the session's hold takes 4 (ru(3)), releases
# them (`used` 2) and grows by 2: the lease now has 4, after the hold too.
GROWS_THE_LEASE = _program("cap 10; block 2;", """\
    fork { hold p0 (cost(p0, 1)) { } lease p0 (inf) }
    join;
    hold p0 (cost(p0, 3)) { release p0; observe u1 = used(p0); grow p0 (cost(p0, 2)); observe u2 = used(p0); }
    observe u3 = used(p0);
""", sessions=1)

# Two sessions at 0, each leasing 2 of 6 units through a leg: session 0's
# hold (2) fills the pool; it releases it, session 1's hold is admitted (6
# again), and session 0's lease growth (2 -> 4) waits; session 1 releases its
# hold, session 0's growth is granted (6), and session 1's waits until
# session 0's lease ends at 1 (`release p0` outside any hold of `p0`).
WAITS_FOR_ROOM = _program("cap 6; block 2;", """\
    fork { hold p0 (cost(p0, 1)) { } lease p0 (inf) }
    join;
    hold p0 (cost(p0, 1)) { release p0; observe u1 = used(p0); grow p0 (cost(p0, 2)); observe u2 = used(p0); run d (cost(d, 1)); }
    observe u3 = used(p0);
    release p0;
    observe u4 = used(p0);
""")

# Session 1 holds 4 of 8 from 0; session 0 leases 2 and holds 2 (8), gives
# the hold back, and at 1 grows its lease by 4: 10 > 8, so session 1's hold
# is preempted (`preempt lifo`; a lease is never a candidate) and waits
# until session 0 ends at 2.
PREEMPTS_A_HOLD = _program("cap 8; block 2; preempt lifo;", """\
    if (serial == 0) {
      fork { hold p0 (cost(p0, 2)) { } lease p0 (inf) }
      join;
      hold p0 (cost(p0, 2)) { release p0; run d (cost(d, 1)); observe u1 = used(p0); grow p0 (cost(p0, 4)); observe u2 = used(p0); run d (cost(d, 1)); }
      observe u3 = used(p0);
    } else {
      hold p0 (cost(p0, 4)) { observe a1 = now; run d (cost(d, 5)); observe b1 = now; }
    }
""")

# Nested holds: the inner one releases `p0` and grows; the outer hold, which
# still holds `p0`, grows (4 -> 6), not the lease: `used` 6, 8, 8 inside,
# 2 once the outer hold has ended (the lease alone), 0 after its release.
GROWS_THE_OUTER_HOLD = _program("cap 20; block 2;", """\
    fork { hold p0 (cost(p0, 2)) { } lease p0 (inf) }
    join;
    hold p0 (cost(p0, 4)) {
      hold p0 (cost(p0, 2)) { release p0; observe u1 = used(p0); grow p0 (cost(p0, 2)); observe u2 = used(p0); }
      observe u3 = used(p0);
    }
    observe u4 = used(p0);
    release p0;
    observe u5 = used(p0);
""", sessions=1)

CASES = {"grows_the_lease": GROWS_THE_LEASE, "waits_for_room": WAITS_FOR_ROOM,
         "preempts_a_hold": PREEMPTS_A_HOLD, "grows_the_outer_hold": GROWS_THE_OUTER_HOLD}
HORIZON = 10.0


def _samples(source: str) -> dict[str, list[tuple[int, float, float]]]:
    rep = serq.run(serq.load(source=source), horizon=HORIZON)
    return {name: [(int(k), t, v) for k, t, v in zip(s.sessions, s.times, s.values)]
            for name, s in rep.observes.items()}


def test_a_released_hold_grows_the_lease():
    assert _samples(GROWS_THE_LEASE) == {
        "u1": [(0, 0.0, 2.0)], "u2": [(0, 0.0, 4.0)], "u3": [(0, 0.0, 4.0)]}


def test_an_enclosing_hold_that_still_holds_the_pool_grows_before_the_lease():
    assert _samples(GROWS_THE_OUTER_HOLD) == {
        "u1": [(0, 0.0, 6.0)], "u2": [(0, 0.0, 8.0)], "u3": [(0, 0.0, 8.0)],
        "u4": [(0, 0.0, 2.0)], "u5": [(0, 0.0, 0.0)]}


def test_a_lease_growth_waits_for_room_and_is_granted_in_order():
    assert _samples(WAITS_FOR_ROOM) == {
        "u1": [(0, 0.0, 6.0), (1, 0.0, 6.0)], "u2": [(0, 0.0, 6.0), (1, 1.0, 4.0)],
        "u3": [(0, 1.0, 6.0), (1, 2.0, 4.0)], "u4": [(0, 1.0, 4.0), (1, 2.0, 0.0)]}


def test_a_lease_growth_preempts_another_holders_hold():
    got = _samples(PREEMPTS_A_HOLD)
    assert got == {"u1": [(0, 1.0, 6.0)], "u2": [(0, 1.0, 6.0)], "u3": [(0, 2.0, 6.0)],
                   "a1": [(1, 0.0, 0.0), (1, 2.0, 2.0)], "b1": [(1, 7.0, 7.0)]}
    rep = to_dict(serq.run(serq.load(source=PREEMPTS_A_HOLD), horizon=HORIZON))
    assert rep["pools"][0]["preemptions"] == 1


def test_without_a_lease_the_run_stops():
    """The same release and growth with no leg: no lease to grow (pyserq
    0.1.5: "`grow p0`: the session holds no `p0` and leases none")."""
    source = GROWS_THE_LEASE.replace(
        "    fork { hold p0 (cost(p0, 1)) { } lease p0 (inf) }\n    join;\n", "")
    with pytest.raises(SimulationError, match="the session holds no `p0` and leases none"):
        serq.run(serq.load(source=source), horizon=HORIZON)


# `load P` in a hold that has released `P`, beside a lease of `P`
LOADS_AFTER_RELEASE = GROWS_THE_LEASE.replace("grow p0 (cost(p0, 2))", "load p0 (cost(p0, 2))")


def test_a_load_in_a_released_hold_does_not_load_the_lease():
    """Only `grow` falls back to the lease: `load P` after `release P` stops
    the run though the session leases `P` (pyserq 0.1.5, seed 1: "`load p0`
    outside a hold of `p0`")."""
    with pytest.raises(SimulationError, match="`load p0` outside a hold of `p0`"):
        serq.run(serq.load(source=LOADS_AFTER_RELEASE), horizon=HORIZON)


@requires("0.1.5")
def test_a_load_in_a_released_hold_against_0_1_5():
    from oracle import OracleError
    with pytest.raises(OracleError, match="`load p0` outside a hold of `p0`"):
        run_reference(LOADS_AFTER_RELEASE, "0.1.5", horizon=HORIZON)


def test_a_lease_that_expires_while_its_growth_waits_stops_the_run():
    """Session 0's lease (2 units, 0.5 s) must grow by 4 while session 1's
    hold fills the pool; it expires at 0.5 with the growth still waiting.
    Granting the growth to an ended lease would leave its units in use for
    ever; the run stops instead (pyserq 0.1.5 panics: "a growing session
    holds or leases the pool")."""
    source = _program("cap 6; block 2;", """\
    if (serial == 0) {
      fork { hold p0 (cost(p0, 2)) { } lease p0 (0.5) }
      join;
      hold p0 (cost(p0, 2)) { release p0; grow p0 (cost(p0, 4)); run d (cost(d, 1)); }
    } else {
      hold p0 (cost(p0, 2)) { run d (cost(d, 2)); }
    }
""")
    with pytest.raises(SimulationError, match=r"at t=0\.5: the lease of `p0` that session 0's "
                                              r"`grow p0` waits to grow expired"):
        serq.run(serq.load(source=source), horizon=HORIZON)


@pytest.mark.parametrize("name", list(CASES))
def test_the_invariant_checker_holds_the_grown_lease_to_the_pool(name):
    prog = serq.load(source=CASES[name], horizon=HORIZON)
    prog.settings = settings_for(prog, horizon=HORIZON)
    Simulation(prog, check_invariants=True).run()


@requires("0.1.5")
@pytest.mark.parametrize("name", list(CASES))
def test_against_0_1_5(name):
    """Every field of the report and every sample, as pyserq 0.1.5 gives them."""
    ref = run_reference(CASES[name], "0.1.5", samples=True, horizon=HORIZON)
    rep = serq.run(serq.load(source=CASES[name]), horizon=HORIZON)
    assert_reports_match(to_dict(rep), ref, ignore=UNCOMPARED)
    assert_samples_match(rep, ref["_samples"])


# GROWS_THE_LEASE in the flat layout of pyserq 0.1.3
GROWS_THE_LEASE_013 = """\
pool p0 { cap 10; block 2; }
workload { arrive batch(1); session { request; } }
server {
  fork { hold p0 (1) { } lease p0 (inf) }
  join;
  hold p0 (3) { release p0; observe u1 = used(p0); grow p0 (2); observe u2 = used(p0); }
  observe u3 = used(p0);
}
run { horizon 10; }
"""


@requires("0.1.3")
def test_a_lease_grown_in_a_released_hold_is_a_departure_of_0_1_3():
    """pyserq 0.1.3 stops the run ("grow outside a hold of pool `p0`"); the
    runner puts the difference down to the departure, for 0.1.3 only."""
    from differential_fuzz import classify, job_of, rerun, run_ours, run_reference_batch
    job = job_of(GROWS_THE_LEASE_013, "0.1.3")
    (ref,) = run_reference_batch("0.1.3", [job])
    assert ref.status == "stopped" and "grow outside a hold of pool `p0`" in ref.message
    ours = run_ours(GROWS_THE_LEASE_013, job["horizon"], job["trace"], job["warmup"])
    assert ours.status == "report"
    again = rerun(GROWS_THE_LEASE_013, job)
    assert classify(ours, ref, GROWS_THE_LEASE_013, again, version="0.1.3")[0] == \
        "departure: a lease grown in a hold that released its pool"
    assert classify(ours, ref, GROWS_THE_LEASE_013, again, version="0.1.5")[0].startswith(
        "finding")
