"""Which hold a preemption takes (spec Part 03 §7.3, §4.9): the victim is
chosen among the candidates (on a pool that is no engine's memory, the
sessions holding it, in the order the pool admitted them; on an engine's
memory, the engine's residents), and the victim loses its innermost hold
on the pool, the one its runs and growths act on. A session is one
candidate, however many holds of the pool it nests: its innermost hold,
whose position the key `position` reads, ranked at the session's earliest
listing left in the pool's admission listing (once per admission; each
release takes out the earliest). A candidate's `decoding` key is 1 when
its session is a decoding resident of a step stage.

Found by the differential campaign (generator seed 59521 against pyserq
0.1.3 and 0.1.4: a session with two nested holds of an engine's memory lost
its outer hold; drawing program 1069260 against 0.1.5: a session's outer
hold was a candidate of its own, with its own position and rank; drawing
program 1074607 against 0.1.5: a session whose inner hold had ended kept
its outer hold's rank). Every number below is worked out in the docstring
and is what pyserq 0.1.3 (or, for the programs in the `fn main` dialect,
0.1.5) gives at seed 1 (the differential tests, run where the reference is
installed); the code before each rule gave the other answer, as each
docstring says."""
from __future__ import annotations

import pytest

import serq
from serq.api import settings_for
from serq.core.errors import SimulationError
from serq.report.json_report import to_dict
from serq.runtime.resources.pools import Pool
from serq.runtime.sim.simulation import Simulation

from differential_fuzz import emulated_differences
from fuzz_departures import holders_listed
from oracle import UNCOMPARED, compare_reports, requires, run_reference

# session 0 holds p twice, nested; session 1's growth at 2 needs room
PLAIN = """
pool p { cap 10; preempt by (admission); }
stage d : delay;
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { hold p (2) { observe o1 = now; hold p (2) { observe i1 = now; run d (5); } run d (1); } }
  else { run d (1); hold p (3) { run d (1); grow p (5); observe g = now; } } }
run { horizon 20; }
"""

# the inner hold's growth in the engine can never fit beside the outer one
ENGINE = """
pool kv { cap 10; preempt by (admission) requeue tail; }
stage E : step { cost 1; memory kv; }
workload { arrive batch(1); }
session { turn;
  hold kv (3) { observe o1 = now; hold kv (2) { observe i1 = now; run E prefill (9) growing kv; } }
}
run { horizon 10; }
"""


def times(rep, name: str) -> list[float]:
    return list(rep.observes[name].times)


def test_a_victim_on_a_plain_pool_loses_its_innermost_hold():
    """Session 0 holds 2 + 2 from 0 (its outer and inner holds, admitted
    in that order); session 1 holds 3 from 1 and at 2 grows by 5: 12 > 10.
    `preempt by (admission)` chooses the candidate admitted first, session
    0's outer hold, so session 0 is the victim, and it gives back its inner
    hold (2 units): 10 fits, session 1 grows at 2 and its hold ends there;
    session 0's inner hold is admitted again at 2. So `o1` is observed once
    (at 0) and `i1` twice (0 and 2). Before: session 0 lost its outer hold
    with the inner one inside it, and observed `o1` at 0 and 2."""
    rep = serq.run(serq.load(source=PLAIN))
    assert (times(rep, "o1"), times(rep, "i1"), times(rep, "g")) == ([0.0], [0.0, 2.0], [2.0])


def test_a_resident_victim_loses_the_hold_its_run_grows():
    """Session 0's inner hold (2, beside the outer 3) is admitted at 0, and
    E's attempt grows it to 9: 3 + 9 > 10. The only candidate is session 0,
    E's resident, and it loses the inner hold, the one its prefill grows
    (computed 0); the attempt only preempted, an iteration of cost 1, and
    at its end the inner hold (5 <= 10) is admitted again, to be preempted
    again (at position 0, no progress: `stuck` 1): at 0, 1, ..., 10. The
    outer hold stays: `o1` once. Before: session 0 lost its outer hold (the
    candidate admitted first) and observed `o1` at every re-admission."""
    rep = serq.run(serq.load(source=ENGINE))
    assert times(rep, "o1") == [0.0]
    assert times(rep, "i1") == [float(k) for k in range(11)]
    kv = to_dict(rep)["pools"][0]
    assert (kv["preemptions"], kv["stuck"], kv["admissions"]) == (11, 1, 12)


# session 0's inner hold ends at 1, its outer hold holds on; session 1's
# growth at 2.5 needs a victim
AFTER_AN_INNER_HOLD = """
pool p { cap 3; preempt by (admission) requeue tail; }
stage d : delay;
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { hold p (1) { observe o = now; hold p (1) { run d (1); } run d (10); } }
  else { run d (0.5); hold p (1) { observe a = now; run d (2); grow p (2); observe g = now; run d (1); } } }
run { horizon 20; }
"""


def test_a_holder_whose_inner_hold_ended_is_still_a_candidate():
    """Part 03 §7.3: the candidates are the holders, in the order the pool
    admitted them. Session 0 holds p from 0 (its inner hold from 0 to 1);
    session 1 from 0.5, and at 2.5 it grows by 2: 1 + 1 + 2 > 3. Session 0,
    admitted first, is the victim and loses its innermost hold, now the
    outer one; session 1 grows at 2.5 and its hold ends at 3.5, where
    session 0's hold is admitted again (`o` at 0 and 3.5). pyserq 0.1.3
    drops every listing of session 0 when its inner hold ends, so session 1
    is its only candidate and preempts itself every 2 until session 0's
    hold ends at 11 (`a` at 0.5, 2.5, ..., 10.5; `g` at 12.5; 5
    preemptions): the departure "holders counted as sessions", which the
    runner's emulation reproduces."""
    rep = serq.run(serq.load(source=AFTER_AN_INNER_HOLD))
    assert (times(rep, "o"), times(rep, "a"), times(rep, "g")) == ([0.0, 3.5], [0.5], [2.5])
    with holders_listed():
        rep = serq.run(serq.load(source=AFTER_AN_INNER_HOLD))
    assert (times(rep, "o"), times(rep, "g")) == ([0.0], [12.5])
    assert times(rep, "a") == [0.5 + 2 * k for k in range(6)]


@requires("0.1.3")
def test_a_holder_whose_inner_hold_ended_against_0_1_3():
    assert not emulated_differences(AFTER_AN_INNER_HOLD, holders_listed)


# session 0 decodes on E while it holds p (no engine's memory); session 1
# grows p at 3
DECODING = """
pool p { cap 4; preempt by (-decoding) requeue tail; }
stage E : step { cost 1; }
stage d : delay;
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { hold p (2) { run E decode (10); observe done = now; } }
  else { hold p (1) { run d (3); grow p (2); observe g = now; } } }
run { horizon 30; }
"""


def test_decoding_is_one_for_a_decoding_resident():
    """Part 03 §7.3: `decoding` is 1 for a candidate that is a decoding
    resident, also on a pool that is no engine's memory. At 3 session 1
    grows p: 2 + 1 + 2 > 4; session 0 decodes on E (3 of its 10 tokens
    done), so its key -1 is the smallest: it loses its hold (and its run),
    session 1 grows at once (`g` 3) and its hold ends, and session 0,
    admitted again at 3, decodes its 10 tokens from the start: done at 13.
    pyserq 0.1.3 (seed 1): the same. Before, `decoding` was always 0: a
    tie, which went to session 1 (admitted last), preempting itself until
    session 0 was done at 10 (`g` 12; differential seed 70651)."""
    rep = serq.run(serq.load(source=DECODING))
    assert (times(rep, "done"), times(rep, "g")) == ([13.0], [3.0])
    assert to_dict(rep)["pools"][0]["preemptions"] == 1


@requires("0.1.3")
@pytest.mark.oracle
@pytest.mark.parametrize("source", [PLAIN, ENGINE, DECODING], ids=["plain pool", "engine memory",
                                                                "decoding"])
def test_preemption_victims_against_0_1_3(source):
    """Every field but `mean_holders`, which the reference counts per
    admission (the departure "holders counted as sessions")."""
    ours = to_dict(serq.run(serq.load(source=source)))
    ref = run_reference(source, "0.1.3")
    diffs = compare_reports(ours, ref, ignore=UNCOMPARED)
    assert all(".mean_holders:" in d for d in diffs), diffs


# 0.1.5's dialect (`if` needs it): session 0 nests two holds of p, session
# 1 holds one, and session 2's growth at 1 (or 2) needs a victim
def three_sessions(cap: int, first: str, second: str, third: str) -> str:
    """A program in which sessions 0, 1 and 2 run `first`, `second` and `third`."""
    return f"""
fn main() {{
  stage d : delay;
  pool p {{ cap {cap}; preempt by (position) requeue tail; }}
  workload {{ arrive batch(3); }}
  server {{
    if (serial == 0) {{ {first} }}
    else {{ if (serial == 1) {{ {second} }} else {{ run d (cost(d, 1)); {third} }} }}
  }}
}}
"""


NESTED_POSITION = three_sessions(
    12,
    "hold p (cost(p, 2)) { hold p (cost(p, 3)) { load p (cost(p, 3)); run d (cost(d, 20)); } "
    "observe o = now; }",
    "hold p (cost(p, 2)) { load p (cost(p, 1)); run d (cost(d, 20)); observe s1 = now; }",
    "hold p (cost(p, 4)) { load p (cost(p, 2)); grow p (cost(p, 3)); observe g = now; "
    "run d (cost(d, 1)); }")

NESTED_RANK = three_sessions(
    4,
    "hold p (cost(p, 1)) { run d (cost(d, 1)); hold p (cost(p, 1)) { run d (cost(d, 20)); "
    "observe i = now; } }",
    "hold p (cost(p, 1)) { run d (cost(d, 20)); observe s1 = now; }",
    "run d (cost(d, 1)); hold p (cost(p, 1)) { load p (cost(p, 1)); grow p (cost(p, 1)); "
    "observe g = now; run d (cost(d, 1)); }")


def test_a_session_with_nested_holds_is_one_candidate_at_its_innermost_position():
    """Part 03 §7.3, `position`: the position the candidate's hold has
    computed, the hold a preemption takes. At 0 session 0 holds 2 + 3 (its
    inner hold loads 3: position 3) and session 1 holds 2 (loads 1); at 1
    session 2 holds 4, loads 2 and grows by 3: 14 > 12. The candidates are
    session 0 (position 3), 1 (1) and 2 (2): session 1 is the victim, and
    its 2 units make room (`g` 1). Session 2's hold ends at 2, where session
    1's hold is admitted again: `s1` 22, session 0's `o` 20. Before, session
    0's outer hold (position 0) was a candidate of its own, and the victim:
    session 0 lost its inner hold, `o` 22 and `s1` 20."""
    rep = serq.run(serq.load(source=NESTED_POSITION), horizon=30)
    assert (times(rep, "o"), times(rep, "s1"), times(rep, "g")) == ([20.0], [22.0], [1.0])


def test_a_session_with_nested_holds_ranks_at_its_first_admission():
    """Ties go to the candidate admitted last (Part 03 §7.3). At 0 session
    0 holds 1 and session 1 holds 1; at 1 session 0's inner hold takes 1
    more; at 2 session 2 holds 1, loads 1 and grows by 1: 5 > 4. Sessions 0
    and 1 are at position 0, and session 0 ranks where p first admitted it
    (at 0, before session 1): session 1, admitted last, is the victim
    (`g` 2), admitted again at 3 when session 2's hold ends: `s1` 23, `i`
    21. Before, session 0's inner hold was a candidate admitted after
    session 1, and lost its 1 unit: `i` 23, `s1` 20."""
    rep = serq.run(serq.load(source=NESTED_RANK), horizon=30)
    assert (times(rep, "i"), times(rep, "s1"), times(rep, "g")) == ([21.0], [23.0], [2.0])


@requires("0.1.5")
@pytest.mark.parametrize("source", [NESTED_POSITION, NESTED_RANK], ids=["position", "rank"])
def test_nested_holds_as_one_candidate_against_0_1_5(source):
    ours = to_dict(serq.run(serq.load(source=source), horizon=30))
    ref = run_reference(source, "0.1.5", horizon=30)
    assert not compare_reports(ours, ref, ignore=UNCOMPARED)


# 0.1.5's dialect: how a holder ranks once one of its allocations is given
# back. The pool lists a holder once per admission, and a release takes
# out the holder's *first* listing, whichever allocation it gives back
# (Part 03 §1 "holders, in admission order"; pyserq 0.1.5, drawing program
# 1074607, where a session whose inner hold had ended was no longer the
# first admitted and another session was the victim)
def two_or_three(sessions: int, cap: int, first: str, second: str, third: str = "") -> str:
    """Sessions 0, 1 (and 2) run `first`, `second` (and `third`)."""
    rest = f"if (serial == 1) {{ {second} }} else {{ {third} }}" if third else second
    return f"""
fn main() {{
  pool p {{ cap {cap}; preempt by (admission) requeue tail; }}
  stage d : delay;
  workload {{ arrive batch({sessions}); }}
  server {{
    if (serial == 0) {{ {first} }}
    else {{ {rest} }}
  }}
}}
"""


INNER_ENDED = two_or_three(
    2, 3,
    "hold p (cost(p, 1)) { observe o = now; run d (cost(d, 1)); hold p (cost(p, 1)) { "
    "observe i = now; run d (cost(d, 1)); } grow p (cost(p, 2)); observe g = now; "
    "run d (cost(d, 10)); }",
    "run d (cost(d, 0.5)); hold p (cost(p, 1)) { observe a = now; run d (cost(d, 5)); "
    "observe e = now; }")

INNER_PREEMPTED = two_or_three(
    3, 4,
    "hold p (cost(p, 1)) { observe o = now; run d (cost(d, 1)); hold p (cost(p, 1)) { "
    "observe i = now; run d (cost(d, 20)); } observe oe = now; }",
    "run d (cost(d, 0.5)); hold p (cost(p, 1)) { observe a = now; run d (cost(d, 20)); "
    "observe e = now; }",
    "run d (cost(d, 2)); hold p (cost(p, 1)) { grow p (cost(p, 2)); observe g = now; "
    "run d (cost(d, 1)); }")

LEASE_LISTED = two_or_three(
    2, 4,
    "hold p (cost(p, 1)) { observe o = now; run d (cost(d, 0.1)); } lease p (100); "
    "run d (cost(d, 1)); hold p (cost(p, 1)) { observe h = now; run d (cost(d, 1)); "
    "grow p (cost(p, 2)); observe g = now; run d (cost(d, 10)); }",
    "run d (cost(d, 0.5)); hold p (cost(p, 1)) { observe a = now; run d (cost(d, 5)); "
    "observe e = now; }")

# session 0's first hold is its leg's, whose lease passes to session 0 when
# the leg ends (at 0.1): the lease keeps the leg's listing
LEG_LEASE_LISTED = LEASE_LISTED.replace(
    "hold p (cost(p, 1)) { observe o = now; run d (cost(d, 0.1)); } lease p (100);",
    "fork { hold p (cost(p, 1)) { observe o = now; run d (cost(d, 0.1)); } lease p (100); } "
    "join;", 1)


def test_a_session_whose_inner_hold_ended_ranks_where_that_hold_was_admitted():
    """Cap 3. p admits session 0 at 0 (its outer hold), session 1 at 0.5
    and session 0's inner hold at 1: listed 0, 1, 0. The inner hold ends at
    2 and takes out session 0's first listing: 1, 0. Session 0 then grows
    by 2 (4 > 3): session 1 ranks first and is the victim (`g` 2), admitted
    again at 12 when session 0's hold ends (`a` 0.5 and 12, `e` 17).
    Before, session 0 ranked where its outer hold was admitted and
    preempted itself: `o` 0 and 2, `g` 4, `a` 0.5 and 14."""
    rep = serq.run(serq.load(source=INNER_ENDED), horizon=30)
    assert (times(rep, "o"), times(rep, "i"), times(rep, "g")) == ([0.0], [1.0], [2.0])
    assert (times(rep, "a"), times(rep, "e")) == ([0.5, 12.0], [17.0])


def test_a_preempted_inner_hold_takes_out_the_first_listing():
    """Cap 4. p admits session 0 at 0, session 1 at 0.5, session 0's inner
    hold at 1 and session 2 at 2, which grows by 2 (6 > 4). Session 0 ranks
    first: it loses its inner hold (1 unit), and that release takes out its
    first listing, so it now ranks at 1, after session 1. 5 > 4 still:
    session 1 is the second victim, and session 2 grows at 2. At 3 session
    2's hold ends and the two queued holds are admitted again: `i` 1 and 3,
    `a` 0.5 and 3, and `pool.stuck` stays 0. Before, session 0 was the
    second victim too (its outer hold, at the position it had been
    preempted at: `stuck` 1), `o` 0 and 3."""
    rep = serq.run(serq.load(source=INNER_PREEMPTED), horizon=40)
    assert (times(rep, "o"), times(rep, "i"), times(rep, "oe")) == ([0.0], [1.0, 3.0], [23.0])
    assert (times(rep, "a"), times(rep, "e"), times(rep, "g")) == ([0.5, 3.0], [23.0], [2.0])
    assert rep.pools[0].stuck == 0


def test_a_lease_keeps_its_listing():
    """Cap 4. Session 0's first hold, admitted at 0, becomes a lease at 0.1
    (listed still); session 1 is admitted at 0.5, session 0's second hold
    at 1.1: listed 0, 1, 0. At 2.1 session 0 grows by 2 (5 > 4) and ranks
    first, by its lease's listing: it preempts itself (`h` 1.1 and 2.1),
    and that release takes out the lease's listing. At 3.1 it grows again:
    session 1 now ranks first and is the victim (`g` 3.1; `a` 0.5 and
    13.1). Before, session 0 ranked at its live hold's admission (1.1) and
    session 1 was the victim at 2.1: `h` 1.1 only, `g` 2.1."""
    rep = serq.run(serq.load(source=LEASE_LISTED), horizon=30)
    assert (times(rep, "h"), times(rep, "g")) == ([1.1, 2.1], [3.1])
    assert (times(rep, "a"), times(rep, "e")) == ([0.5, 13.1], [18.1])


def test_a_lease_a_leg_leaves_keeps_the_legs_listing():
    """As `test_a_lease_keeps_its_listing`, the first hold being a leg's
    (`fork`): when the leg ends at 0.1 its lease passes to session 0 and
    keeps the listing of the leg's admission at 0 (`Pool.pass_holder`), so
    session 0 ranks first at 2.1 and preempts itself, as before: `h` 1.1
    and 2.1, `g` 3.1. Were the listing left under the leg, session 0
    would rank at 1.1, after session 1: `h` 1.1 only, `g` 2.1."""
    assert LEG_LEASE_LISTED != LEASE_LISTED
    rep = serq.run(serq.load(source=LEG_LEASE_LISTED), horizon=30)
    assert (times(rep, "h"), times(rep, "g")) == ([1.1, 2.1], [3.1])
    assert (times(rep, "a"), times(rep, "e")) == ([0.5, 13.1], [18.1])


@requires("0.1.5")
@pytest.mark.parametrize("source, horizon", [(INNER_ENDED, 30), (INNER_PREEMPTED, 40),
                                             (LEASE_LISTED, 30), (LEG_LEASE_LISTED, 30)],
                         ids=["inner-ended", "inner-preempted", "lease", "leg-lease"])
def test_the_admission_listing_against_0_1_5(source, horizon):
    ours = to_dict(serq.run(serq.load(source=source), horizon=horizon))
    ref = run_reference(source, "0.1.5", horizon=horizon)
    assert not compare_reports(ours, ref, ignore=UNCOMPARED)


def _checked(source: str, horizon: float):
    """A run with the invariant checker on (`Pool.check` after every event)."""
    prog = serq.load(source=source)
    prog.settings = settings_for(prog, horizon=horizon)
    return Simulation(prog, check_invariants=True).run()


@pytest.mark.parametrize("source, horizon", [(INNER_ENDED, 30), (INNER_PREEMPTED, 40),
                                             (LEASE_LISTED, 30), (LEG_LEASE_LISTED, 30),
                                             (NESTED_RANK, 30)],
                         ids=["inner-ended", "inner-preempted", "lease", "leg-lease", "nested"])
def test_the_listing_lists_each_holder_once_per_allocation(source, horizon):
    """The invariant checker holds the listing to the holders: a holder is
    listed once per allocation it holds (hold or lease). The checked runs
    give the unchecked runs' reports."""
    assert to_dict(_checked(source, horizon)) == to_dict(
        serq.run(serq.load(source=source), horizon=horizon))


def test_a_listing_out_of_step_with_the_holders_stops_a_checked_run(monkeypatch):
    """A release that left the listing as it was (as if `remove_holder`
    forgot it) is an invariant the checker reports, with the pool's name."""
    remove = Pool.remove_holder

    def forgetful(self, session):
        listing, self.listing = self.listing, None
        try:
            remove(self, session)
        finally:
            self.listing = listing
    monkeypatch.setattr(Pool, "remove_holder", forgetful)
    with pytest.raises(SimulationError,
                       match="invariant broken at pool `p`: its admission listing"):
        _checked(INNER_ENDED, 30)
