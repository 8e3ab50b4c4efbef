"""Holds on their own (`serq/runtime/resources/holds.py`, spec Part 03 §4–§7):
small programs, each aimed at one rule of the session-side operations on
pools, written for the mutation run of issue 27 (the module's other tests
reach these rules only through whole examples). Every expected number is
worked out by hand in the test's docstring from the spec section it
names, and each program gives the same observations and pool rows under
pyserq 0.1.3 (seed 1; the differential test at the end, run where the
reference is installed). The programs are in hold_programs.py."""
from __future__ import annotations

from pathlib import Path

import pytest

import serq
from serq.report.json_report import to_dict

from oracle import assert_fields_match, requires, run_reference
from hold_programs import (
    CACHE_NOTHING, COVERED, END_INSIDE, FRACTIONS, JOINS, JOINS_WITHIN, JOIN_FORMS,
    LEASE_RELEASED, LOAD_PAST, NEGATIVE, NEGATIVE_LEASE, NESTED_RELEASE, NESTED_VICTIM,
    NOTHING_KEPT, NOT_A_RESIDENT, OVERHANG_GROW_0, PREEMPTED_WHILE_WAITING,
    PREEMPTED_WHILE_WAITING_2, PREEMPTING_ITERATION, REJECTED_ON_REQUEUE,
    RELEASE_BESIDE_A_LEASE, REQUEUE, REUSE_ALL, SAME_INSTANT_DEAD, SPILL_AGE, SPILL_FREE,
    SPILL_NONE, SPILL_YOUNG, STUCK, THREE_LEASES, TWO_DEAD, TWO_GROWERS, TWO_LEASES,
    TWO_POOLS_WAIT, join)


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
    # §4.2 step 6: the scope end resets the session's `computed` to 0
    assert samples(rep, "comp") == [(0, 2.0, 0.0)]


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
    free). 0 ends at 5 (8 free): 1 grows. grown = 4 (0), 5 (1); used
    after each growth: 8 + 3 = 11, then 3 + 1 = 4 (the granted growth is
    allocated)."""
    rep = run_samples(TWO_GROWERS)
    assert samples(rep, "grown") == [(0, 4.0, 4.0), (1, 5.0, 5.0)]
    assert samples(rep, "u") == [(0, 4.0, 11.0), (1, 5.0, 4.0)]
    assert samples(rep, "done") == [(2, 3.0, 3.0), (3, 4.0, 4.0), (0, 5.0, 5.0), (1, 6.0, 6.0)]


@pytest.mark.parametrize("policy", ["preempt lifo;", "preempt by (-admission) requeue head;"])
def test_a_preempted_hold_reenters_the_queue_at_its_head(policy):
    """§7.3 (`preempt lifo` is `preempt by (-admission) requeue head`), §4.4:
    on cap 10 session 0 holds 6 and 1 holds 4; sessions 2 and 3 ask 7 at
    0.5 and 0.6 and wait. At 1 session 0 grows by 4: the victim is 1
    (admitted last), its 4 go to 0 and it re-enters ahead of 2 and 3. 0
    ends at 2: 1 is admitted (4 of 10) and runs its 5 again (done 7); 2 (7)
    does not fit beside it until 7 (done 8), then 3 (done 9)."""
    rep = run_samples(REQUEUE.replace("PREEMPT", policy))
    assert [(k, t) for k, t, _ in samples(rep, "adm")] == [
        (0, 0.0), (1, 0.0), (1, 2.0), (2, 7.0), (3, 8.0)]
    assert [(k, t) for k, t, _ in samples(rep, "done")] == [(0, 2.0), (1, 7.0), (2, 8.0), (3, 9.0)]


def test_a_preempted_hold_requeued_at_the_tail_waits_behind_the_queue():
    """§7.3 `requeue tail`: the same run as above, but session 1 re-enters
    behind 2 and 3: at 2, 2 (7) is admitted and done at 3, then 3 (done
    4); then 1 (4) is admitted at 4 and runs its 5 (done 9)."""
    rep = run_samples(REQUEUE.replace("PREEMPT", "preempt by (-admission) requeue tail;"))
    assert [(k, t) for k, t, _ in samples(rep, "adm")] == [
        (0, 0.0), (1, 0.0), (2, 2.0), (3, 3.0), (1, 4.0)]
    assert [(k, t) for k, t, _ in samples(rep, "done")] == [(0, 2.0), (2, 3.0), (3, 4.0), (1, 9.0)]


def test_amounts_below_one_unit_are_amounts():
    """§5, §4.2: an amount is any number >= 0, so 0.5 is a hold's units,
    reservation, growth, load and reuse (no block: no rounding). The hold
    has 0.5 + 0.5 = 1 allocated (used 1) and a position of 0.5 after the
    load: `cache (10)` keeps rd(min(10, 0.5)) = 0.5 (§4.5); the next hold
    reuses min(0.5, 0.5): cached = 0.5."""
    rep = run_samples(FRACTIONS)
    assert samples(rep, "a") == [(0, 0.0, 1.0)]
    assert samples(rep, "kept") == [(0, 1.0, 0.5)]
    assert samples(rep, "c") == [(0, 1.0, 0.5)]


@pytest.mark.parametrize("units, grow, message", [
    ("g", "1", "run-time error at t=0: `hold m (g)`: the amount is -0.5"),
    ("1", "g", "run-time error at t=1: `grow m (g)`: the amount is -0.5")])
def test_a_computed_negative_amount_is_a_run_time_error(units, grow, message):
    """Part 01 §7.4, Part 03 §5: a computed amount below 0 (here -0.5, a
    hold's units or a growth) is a run-time error naming the statement."""
    from serq.core.errors import SimulationError
    with pytest.raises(SimulationError) as info:
        run_samples(NEGATIVE.replace("UNITS", units).replace("GROW", grow))
    assert message in str(info.value)


def test_lru_orders_entries_of_one_instant_by_release_sequence():
    """§4.5, §8 (LRU: least (last, rseq) first). Sessions 0 and 1 release
    at t = 1: 0 caches 8 (rseq 1), then 1 caches 4 (rseq 2). At 3 session 0
    holds 10 with `reuse (2)`: 6 of its 8 become a dead entry keeping (last
    1, rseq 1), put after session 1's. At 4 session 2 asks 6: 10 + 10 + 6 =
    26 > 20; the dead entry (1, 1) goes before session 1's (1, 2), and its 6
    suffice: evicted_units 6, evicted_entries 1."""
    row = run(SAME_INSTANT_DEAD)["pools"][0]
    assert (row["evicted_units"], row["evicted_entries"]) == (6, 1)


def test_a_growth_by_nothing_does_nothing_even_over_the_cap():
    """§5 `grow P (d)`: if need = ru(a + d) - a <= 0, nothing happens: no
    room is made. At 5 the pool holds used 8 + cached 3 > cap 10 (the
    overhang of test_pool_overhang.py); session 1's `grow kv (0)` evicts
    none of session 0's 3 cached units, so the run is that program's run:
    mean_cached 2.4, nothing evicted, session 0's hold finds 3 cached at 11
    (pyserq 0.1.3 agrees: the reference test below)."""
    row = run(OVERHANG_GROW_0)["pools"][0]
    assert row["mean_cached"] == pytest.approx(2.4, rel=1e-12)
    assert (row["evicted_entries"], row["evicted_units"]) == (0, 0)
    assert samples(run_samples(OVERHANG_GROW_0), "hit") == [(0, 1.0, 3.0), (0, 11.0, 3.0)]


def test_a_step_engines_memory_preempts_residents_only():
    """§7.3: on a pool that is a step engine's memory the candidates are the
    holders that are residents of the engine. Sessions 0 and 1 hold 1 of kv
    each and prefill 8 and 1 tokens; session 2, admitted last, holds 4 in a
    delay stage. The first iteration (t = 0, budget 8) gives session 0 its 8
    tokens: it grows by 7, 1 + 1 + 4 + 7 = 13 > 12, and under `lifo` the
    victim is the resident admitted last, session 1 (session 2 is no
    resident). After the iteration (cost 1) session 0 ends at 1 and session
    1 is admitted again, done at 2; session 2 is untouched (done at 10).
    pyserq 0.1.3 (seed 1) agrees (reference test below)."""
    rep = run_samples(NOT_A_RESIDENT)
    assert samples(rep, "adm") == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 1.0, 1.0)]
    assert samples(rep, "done") == [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 10.0, 10.0)]
    assert to_dict(rep)["pools"][0]["preemptions"] == 1


def test_a_hold_of_two_pools_waits_in_its_first_pools_queue():
    """§4.2 step 2: a hold waits in the queue of its first pool. Session 1's
    `hold a (1), b (1)` waits for session 0's `a` from 0 to 2: a's
    mean_queue 2/10 = 0.2 and mean_wait (0 + 2)/2 = 1; b has no queue and,
    never a first pool, no wait (null)."""
    rep = run(TWO_POOLS_WAIT)
    a, b = rep["pools"]
    assert (a["mean_queue"], a["mean_wait"]) == (pytest.approx(0.2, rel=1e-12), 1.0)
    assert b["mean_queue"] == 0 and b["mean_wait"] is None
    assert samples(run_samples(TWO_POOLS_WAIT), "adm") == [(1, 2.0, 2.0)]


def test_a_spill_of_no_work_puts_no_job_on_the_link():
    """§9: the 6 cached units of session 0 are evicted at 2 block by block
    (3 pieces of 2, each spilled: spills 3, host holds 6 at 6). With work
    0 no job starts on the link: link completed 0 (pyserq 0.1.3 agrees;
    §9 step 4 starts a job of work w, which the reference does only for
    w > 0)."""
    rep = run(SPILL_FREE)
    kv, host = rep["pools"]
    link = next(st for st in rep["stages"] if st["name"] == "link")
    assert (kv["spills"], kv["evicted_units"]) == (3, 6)
    assert link["completed"] == 0 and link["mean_number"] == 0
    assert samples(run_samples(SPILL_FREE), "in_host") == [(0, 6.0, 6.0)]


@pytest.mark.parametrize("units", ["8", "1"])
def test_an_engine_growth_that_fits_preempts_nobody(units):
    """Part 04 §7, Part 03 §7.1: session 0's kv (8) covers its 4 + 3 tokens,
    so no growth happens; kv (1) grows at every iteration, and it fits (cap
    64). Either way nobody is preempted, and an iteration that preempted
    nobody admits. Session 0: prefill 4 in [0, 1), decode 3 in [1, 4), done
    4. Session 1 arrives at 0.5 and is admitted by the iteration at 1
    (budget 8 - 1 left), prefill [1, 2), decode [2, 5): done 5."""
    rep = run_samples(COVERED.replace("kv (8)", f"kv ({units})"))
    assert samples(rep, "adm") == [(0, 0.0, 0.0), (1, 1.0, 1.0)]
    assert samples(rep, "done") == [(0, 4.0, 4.0), (1, 5.0, 5.0)]


def test_a_spills_work_reads_the_age_of_the_evicted_entry():
    """§9 step 2, §10 (Evict moment: `age` = now - last): session 0's entry
    (last 1) is evicted at 2 in 3 pieces, each putting work age = 1 on the
    fifo(1) link: they complete at 3, 4 and 5 (mean_service 1, mean_wait
    (0 + 1 + 2)/3 = 1)."""
    rep = run(SPILL_AGE)
    link = next(st for st in rep["stages"] if st["name"] == "link")
    assert (link["completed"], link["mean_service"], link["mean_wait"]) == (3, 1.0, 1.0)


def test_a_spill_whose_condition_is_false_writes_nothing():
    """§9 step 1: `when (size > 2)` is 0 for every piece (one block of 2):
    nothing is spilled, the host stays empty, the link idle."""
    rep = run(SPILL_NONE)
    kv, host = rep["pools"]
    link = next(st for st in rep["stages"] if st["name"] == "link")
    assert (kv["spills"], kv["evicted_units"], host["mean_cached"], link["completed"]) == (0, 6, 0, 0)


def test_a_spills_condition_reads_the_age_of_the_evicted_entry():
    """§9 step 1, §10: `when (age < 2)`: session 0's entry (last 1) is
    evicted at 2, age 1 < 2: its 3 pieces are spilled (spills 3) and the
    host holds 6 at 6."""
    rep = run(SPILL_YOUNG)
    kv, host = rep["pools"]
    assert kv["spills"] == 3
    assert samples(run_samples(SPILL_YOUNG), "in_host") == [(0, 6.0, 6.0)]


def test_a_preempted_holds_overhang_is_what_it_put_back_beyond_its_allocation():
    """The checker's allowance (`Pool.check`, tests/test_pool_overhang.py):
    at 2 session 0's preempted hold frees its 1 allocated unit and caches
    its position 3, so the pool may exceed its cap by 3 - 1 = 2 and no
    more; at 5 it does (used 8 + cached 3 = 11 > 10), by 1."""
    from serq.runtime.sim.simulation import Simulation
    prog = serq.load(str(Path(__file__).parent / "data" / "preempted_prefix_overhang.sq"),
                     horizon=5)
    sim = Simulation(prog, check_invariants=True)
    sim.run()
    kv, = sim.pool_list
    assert (kv.used, kv.cached, kv.overhang) == (8.0, 3.0, 2.0)


@pytest.mark.parametrize("amount, rejected",
                         [("10", 0), ("10.0000000009", 0), ("10.000000001", 0),
                          ("10.000000002", 1)])
@pytest.mark.parametrize("units, reserve", JOIN_FORMS)
def test_the_join_check_rejects_an_amount_above_the_cap(amount, rejected, units, reserve):
    """§4.2 step 1 with Part 03's convention that a comparison against a
    capacity allows 1e-9: units or a reservation that read no deployment
    state and need more than cap + 1e-9 never fit, and the session is
    rejected at the join. On cap 10, 10, 10.0000000009 and 10.000000001
    (cap + 1e-9 to the last bit) are admitted and 10.000000002 is rejected.
    (pyserq 0.1.3, seed 1, rejects 10.0000000009 as well: a departure,
    pinned below.)"""
    row = run(join(amount, units, reserve))["pools"][0]
    assert (row["rejected"], row["admissions"]) == (rejected, 1 - rejected)


def test_a_constant_amount_above_the_cap_beyond_the_tolerance_does_not_link():
    """§4.2 step 1, §13: a constant above cap + 1e-9 is a link error (the
    message is pyserq 0.1.3's for the same program); within the tolerance
    it links and is admitted."""
    from serq.core.errors import LinkError
    with pytest.raises(LinkError) as info:
        serq.load(source=join("1", "10.000000002", ""))
    assert "a hold on pool `p` waits for 10.000000002 units, more than its cap 10" in str(info.value)
    row = run(join("1", "10.0000000009", ""))["pools"][0]
    assert (row["rejected"], row["admissions"]) == (0, 1)


@requires("0.1.3")
@pytest.mark.oracle
@pytest.mark.parametrize("source", JOINS_WITHIN)
def test_a_join_amount_within_the_tolerance_is_a_departure(source):
    """The departure as the reference shows it: pyserq 0.1.3 (seed 1)
    rejects 10.0000000009 units (or reservation) on cap 10 at the join,
    where Part 03's tolerance admits them."""
    ref = run_reference(source, version="0.1.3")["pools"][0]
    ours = run(source)["pools"][0]
    assert (ref["rejected"], ref["admissions"]) == (1, 0)
    assert (ours["rejected"], ours["admissions"]) == (0, 1)


def test_a_lease_of_negative_duration_ends_at_the_scope_end():
    """§6: a lease ends when its duration has elapsed; a duration below 0
    elapses at once, at the scope end (t = 1), not before it: used 2 over
    [0, 1), mean_used 2/10 = 0.2, mean_holders 0.1. The session, going on at
    1, still sees the 2 units (the expiry is an event of that instant);
    at 2 they are gone. pyserq 0.1.3 agrees."""
    rep = run_samples(NEGATIVE_LEASE)
    assert samples(rep, "at_end") == [(0, 1.0, 2.0)]
    assert samples(rep, "later") == [(0, 2.0, 0.0)]
    row = to_dict(rep)["pools"][0]
    assert (row["mean_used"], row["mean_holders"]) == (pytest.approx(0.2), pytest.approx(0.1))
    # the run's events: the two runs' completions and the expiry (pyserq 0.1.3: 3)
    assert to_dict(rep)["events"] == 3


def test_end_ends_the_leases_in_the_order_they_began():
    """Part 03 §5 `end`, §6: the session's two leases of p (3 units, then
    5) end at its `end` (t = 2), in the order they began; each caches its
    clause under the session's one entry, so the second's 5 replace the
    first's 3: cached 5 over [2, 10), mean_cached 40/10 = 4; used 3 over
    [0, 2) and 5 over [1, 2): mean_used 11/10 = 1.1. pyserq 0.1.3 agrees."""
    row = run(TWO_LEASES)["pools"][0]
    assert (row["mean_cached"], row["mean_used"]) == (pytest.approx(4.0), pytest.approx(1.1))


def test_an_engine_iteration_that_preempts_admits_nobody():
    """Part 04 §7 (no admission in an iteration that preempted), Part 03
    §7.3. kv: 12, session 2 holds 4 outside the engine. Sessions 0 and 1
    (reqs 1, kv 1) prefill 1 token at 0 and then decode 1 token an
    iteration, growing by 1 each: after the iteration at j each holds j + 1.
    At 4 both need 5: session 0 grows (4 + 5 + 4 = 13 > 12) by preempting
    session 1 (admitted later), which re-enters behind session 3 (`requeue
    tail`). That iteration admits nobody, so session 3 is admitted at 5
    (done 6), session 1 at 6 when 3 leaves (prefill [6, 7), decode 6:
    done 13); session 0's decode of 6 ends at 7. pyserq 0.1.3 agrees."""
    rep = run_samples(PREEMPTING_ITERATION)
    assert samples(rep, "adm") == [(0, 0.0, 0.0), (1, 0.0, 0.0), (3, 5.0, 5.0), (1, 6.0, 6.0)]
    assert samples(rep, "done") == [(3, 6.0, 6.0), (0, 7.0, 7.0), (1, 13.0, 13.0), (2, 20.0, 20.0)]


def test_end_inside_a_hold_releases_it():
    """Part 03 §5 `end`: every open hold releases. Session 0 ends inside
    its hold of 3 at 1; session 1 (8 of cap 10) is admitted then: adm 1;
    mean_used (3·1 + 8·1)/10 = 1.1. pyserq 0.1.3 agrees."""
    rep = run_samples(END_INSIDE)
    assert samples(rep, "adm") == [(1, 1.0, 1.0)]
    assert to_dict(rep)["pools"][0]["mean_used"] == pytest.approx(1.1, rel=1e-12)


def test_release_outside_a_hold_ends_one_lease():
    """§5 `release P` outside a hold of P ends a lease of P (one: the
    first). Leases of 1, 2 and 4 units begin at 1, 2 and 3; `release p` at
    3 ends the first: used 6; the other two end at the session's end at 4.
    mean_used (1 + 3 + 7 + 6)/10 = 1.7. pyserq 0.1.3 agrees."""
    rep = run_samples(THREE_LEASES)
    assert samples(rep, "u") == [(0, 3.0, 6.0)]
    assert to_dict(rep)["pools"][0]["mean_used"] == pytest.approx(1.7, rel=1e-12)


def test_a_reuse_of_the_whole_entry_leaves_no_dead_entry():
    """§4.2 step 4: only the part of the entry above `reuse` becomes a dead
    entry; with reuse (8) = the entry (8) there is none. Session 0 caches 8
    at 1, consumes all 8 at 1 (cached = 8) and caches 4 at 2. At 3 session
    1 needs 12 of cap 12: the one entry (4) is evicted: evicted_entries 1,
    mean_cached 4·1/10. pyserq 0.1.3 agrees."""
    rep = run_samples(REUSE_ALL)
    assert samples(rep, "c") == [(0, 1.0, 8.0)]
    row = to_dict(rep)["pools"][0]
    assert (row["evicted_entries"], row["evicted_units"]) == (1, 4)
    assert row["mean_cached"] == pytest.approx(0.4, rel=1e-12)


@pytest.mark.parametrize("source", [PREEMPTED_WHILE_WAITING, PREEMPTED_WHILE_WAITING_2],
                         ids=["one-pool", "two-pools"])
def test_a_session_preempted_while_it_waits_leaves_the_queue(source):
    """§7.3 step 4 (the victim's waits are cancelled): session 1 holds 4 of
    m and waits for q (session 2 holds it from 0 to 5); the second program
    waits for `q (1), r (1)`, in q's queue (its first pool). At 1 session
    0's growth preempts session 1: its wait ends (it leaves q's queue) and
    its hold of m is re-queued; it comes back at 2 (session 0 ends) and
    waits for q again until 5: got 5, done 6. q's mean_queue (1 + 3)/10 =
    0.4, m's 1/10 (session 1 waiting [1, 2]). pyserq 0.1.3 agrees."""
    rep = run_samples(source)
    assert samples(rep, "got") == [(1, 5.0, 5.0)]
    assert samples(rep, "done") == [(0, 2.0, 2.0), (2, 5.0, 5.0), (1, 6.0, 6.0)]
    m, q = to_dict(rep)["pools"][:2]
    assert (m["mean_queue"], q["mean_queue"]) == (pytest.approx(0.1), pytest.approx(0.4))
    assert (m["preemptions"], q["admissions"]) == (1, 2)


def test_a_preemption_unwinds_the_holds_down_to_the_victims_only():
    """§7.3 step 5: the victim's frames are unwound from the innermost down
    to the preempted hold, not further. Session 1 holds 2 of q and, inside,
    4 of m; session 0's growth at 1 preempts the hold of m only: q stays
    held (2) while the hold of m waits and comes back at 2 (session 0
    ends); it runs its 5 again: done 7. q is held over [0, 7]: mean_used
    1.4. pyserq 0.1.3 agrees."""
    rep = run_samples(NESTED_VICTIM)
    assert samples(rep, "adm") == [(1, 0.0, 0.0), (1, 2.0, 2.0)]
    assert samples(rep, "qu") == [(1, 0.0, 2.0), (1, 2.0, 2.0)]
    assert samples(rep, "done") == [(0, 2.0, 2.0), (1, 7.0, 7.0)]
    m, q = to_dict(rep)["pools"]
    assert q["mean_used"] == pytest.approx(1.4, rel=1e-12) and q["admissions"] == 1


def test_a_load_must_fit_the_allocation():
    """§5 `load P (n)`: the position advances by n within the allocation.
    After `load m (3)` on an allocation of 4, `load m (1)` fits (4 <= 4),
    and so does `load m (1.000000001)` (within the 1e-9 of the conventions;
    pyserq 0.1.3 runs it too); `load m (2)` (5 > 4) is the run-time error
    "a load must fit the allocation (grow first)", at t = 1."""
    from serq.core.errors import SimulationError
    run_samples(LOAD_PAST.replace("SECOND", "1"))
    run_samples(LOAD_PAST.replace("SECOND", "1.000000001"))
    with pytest.raises(SimulationError) as info:
        run_samples(LOAD_PAST.replace("SECOND", "2"))
    assert "run-time error at t=1" in str(info.value)
    assert "the hold has 4 allocated and 3 computed; a load must fit the allocation" in str(info.value)


def test_a_lease_released_early_does_not_end_again_when_its_time_is_up():
    """§6: a lease ends at the first of `release P` and its duration. The
    lease of 2 units (5 time units from 1) is released at 2: used 0; its
    expiry at 6 finds it ended and does nothing; the session runs on to
    12. mean_used 2·2/20 = 0.2; events: the three runs and the expiry, 4
    (pyserq 0.1.3: 4)."""
    rep = run_samples(LEASE_RELEASED)
    assert samples(rep, "u") == [(0, 2.0, 0.0)]
    assert samples(rep, "done") == [(0, 12.0, 12.0)]
    d = to_dict(rep)
    assert (d["pools"][0]["mean_used"], d["events"]) == (pytest.approx(0.2), 4)


def test_a_grower_program_keeps_the_fleet_index_exact():
    """The invariant checker (`check_invariants`) compares the fleet index
    of pools with growers or waiting holds against a full scan at every
    event: TWO_GROWERS (two stalled growers, both granted) passes it, with
    the report of the unchecked run."""
    from serq.runtime.sim.simulation import Simulation
    checked = to_dict(Simulation(serq.load(source=TWO_GROWERS), check_invariants=True).run())
    assert checked["observes"] == run(TWO_GROWERS)["observes"]


def test_a_release_that_keeps_nothing_leaves_no_entry():
    """§4.5: nothing is cached when the kept amount is 0 (no entry, not an
    entry of 0). At 2 session 1 needs 10 of cap 10 beside session 0's 4
    cached units: LRU evicts that one entry: evicted_entries 1; mean_cached
    4·1/10 = 0.4. pyserq 0.1.3 agrees."""
    row = run(NOTHING_KEPT)["pools"][0]
    assert (row["evicted_entries"], row["evicted_units"]) == (1, 4)
    assert row["mean_cached"] == pytest.approx(0.4, rel=1e-12)


def test_a_preempted_hold_that_no_longer_fits_the_cap_is_rejected():
    """§7.3 (the re-queued hold passes the join check again, §4.2 step 1):
    session 1's units read `u`, which its body sets to 20 before session
    0's growth preempts it at 1: 20 > cap 10 can never fit, the session is
    rejected (rejected 1) and ends there: no `after`, done only for
    session 0 (at 2). pyserq 0.1.3 agrees."""
    rep = run_samples(REJECTED_ON_REQUEUE)
    assert samples(rep, "done") == [(0, 2.0, 2.0)]
    assert samples(rep, "after") == []
    row = to_dict(rep)["pools"][0]
    assert (row["rejected"], row["preemptions"]) == (1, 1)


def test_dead_entries_of_two_sessions_are_two_entries():
    """§4.2 step 4: each session's excess over `reuse` is a dead entry of its
    own. Both sessions cache 8 at 1 and, at once, hold 10 with `reuse (2)`:
    each consumes 2 (cached = 2) and leaves a dead entry of 6, so 12 units
    stay cached over [1, 10] (the second holds keep nothing): mean_cached
    12·9/10 = 10.8. pyserq 0.1.3 agrees."""
    rep = run_samples(TWO_DEAD)
    assert samples(rep, "c") == [(0, 1.0, 2.0), (1, 1.0, 2.0)]
    assert run(TWO_DEAD)["pools"][0]["mean_cached"] == pytest.approx(10.8, rel=1e-12)


@pytest.mark.parametrize("load, stuck", [("0.000000001", 1), ("0.000000002", 0)])
def test_a_victim_preempted_again_without_progress_is_stuck(load, stuck):
    """§7.3 step 2, with the 1e-9 tolerance of the conventions: session 2
    (4 units) is preempted at 1 by session 1's growth at position 0; it
    comes back at 2, loads LOAD and is preempted at 3 by session 0's
    growth (lifo: admitted last). A position of 1e-9 is not greater than
    0 (stuck 1); 2e-9 is progress (stuck 0). pyserq 0.1.3 gives the same
    (stuck, preemptions 2) for both."""
    row = run(STUCK.replace("LOAD", load))["pools"][0]
    assert (row["stuck"], row["preemptions"]) == (stuck, 2)


#: (program, pool fields not compared). After a `release P` the reference
#: stops counting the session as a holder of P although an enclosing hold
#: (NESTED_RELEASE) or a lease (RELEASE_BESIDE_A_LEASE) still holds units of
#: P (pyserq 0.1.3 mean_holders 0 and 0.1 against our 0.2): Part 03 §1 and
#: Part 06's `mean_holders` count the sessions with an allocation, leases
#: included, which serq-simpy follows (a scope end already agrees: the
#: NESTED program of test_pool_edges.py). Likewise the reference counts a
#: session with a lease and a hold of P twice (TWO_LEASES: 0.3 against our
#: 0.2; THREE_LEASES: 0.6 against 0.4), though three nested holds once.
PROGRAMS = [(NESTED_RELEASE, {"mean_holders"}), (RELEASE_BESIDE_A_LEASE, {"mean_holders"}),
            (CACHE_NOTHING, set()), (TWO_GROWERS, set()), (FRACTIONS, set()),
            (OVERHANG_GROW_0, set()), (SAME_INSTANT_DEAD, set()),
            (NOT_A_RESIDENT, set()), (TWO_POOLS_WAIT, set()),
            (SPILL_FREE, set()), (SPILL_AGE, set()), (SPILL_NONE, set()), (SPILL_YOUNG, set()), (COVERED, set()),
            (COVERED.replace("kv (8)", "kv (1)"), set()), (NEGATIVE_LEASE, set()),
            (PREEMPTING_ITERATION, set()), (TWO_LEASES, {"mean_holders"}),
            (END_INSIDE, set()), (THREE_LEASES, {"mean_holders"}), (REUSE_ALL, set()),
            (PREEMPTED_WHILE_WAITING, set()), (PREEMPTED_WHILE_WAITING_2, set()),
            (LEASE_RELEASED, set()), (NESTED_VICTIM, set()), (NOTHING_KEPT, set()),
            (REJECTED_ON_REQUEUE, set()), (TWO_DEAD, set()),
            (LOAD_PAST.replace("SECOND", "1.000000001"), set())] + [
    (j, set()) for j in JOINS] + [
    (REQUEUE.replace("PREEMPT", p), set()) for p in (
        "preempt lifo;", "preempt by (-admission) requeue head;",
        "preempt by (-admission) requeue tail;")] + [
    (STUCK.replace("LOAD", x), set()) for x in ("0.000000001", "0.000000002")]


@requires("0.1.3")
@pytest.mark.oracle
@pytest.mark.parametrize("source, differs", PROGRAMS)
def test_holds_programs_against_the_reference(source, differs):
    """The same programs under pyserq 0.1.3 (seed 1): every observe's
    count, mean, min and max, and every pool field the reference reports
    (but those `differs` names)."""
    assert_fields_match(run(source), run_reference(source, version="0.1.3"), "pools", differs)


class _Spinner:
    """A stand-in session for the readiness count: its serial, no process."""

    serial = 3.0
    proc = None


def test_a_session_made_ready_more_than_1000_times_at_one_instant_stops_the_run():
    """Part 02 §10.5: a session that becomes ready more than 1,000 times at
    one instant (here: preempted and admitted again) stops the run; 1,000
    times do not, and the count starts again at the next instant."""
    from serq.core.errors import SPIN_LIMIT, SimulationError
    from serq.runtime.sim.simulation import Simulation
    sim = Simulation(serq.load(source=NESTED_RELEASE))
    holds, s = sim.holds, _Spinner()
    for _ in range(SPIN_LIMIT):
        holds._count_spin(s)
    sim.env.now = 0.5
    for _ in range(SPIN_LIMIT):
        holds._count_spin(s)
    with pytest.raises(SimulationError, match=r"the instant t = 0\.5 does not settle: session 3 "
                       r"became ready 1001 times"):
        holds._count_spin(s)


SELF_PREEMPTION_COUNTED = """
stage E : step { budget 16; cost 1 + p; state p = 0;
  iteration { serve; admit while (!preempted); set p = preempted; } }
pool reqs { cap 4; preempt by (position); admit via E; }
workload { arrive batch(1); session { request; } }
server { hold reqs (2) { grow reqs (3); } }
run { horizon 10; }
"""


def test_a_preemption_caused_by_an_admission_counts_once_in_preempted():
    """Part 04 §9 (`preempted`: the residents this attempt has preempted)
    with a preemption the admitted session causes itself (its `grow`, run
    at once in the admission, preempts its own hold): `preempted` is 1, so
    each attempt is a preempt-only iteration of cost 1 + 1 = 2, started at
    0, 2, 4, 6, 8 and 10: 6 iterations and 6 preemptions, as in pyserq
    0.1.3 (seed 1). A count of 2 would make them cost 3: 4 and 4."""
    rep = run(SELF_PREEMPTION_COUNTED)
    assert (rep["stages"][0]["iterations"], rep["pools"][0]["preemptions"]) == (6, 6)
