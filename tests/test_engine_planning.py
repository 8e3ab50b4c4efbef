"""The step engine's planning on its own (`serq/runtime/resources/engine.py`,
spec Part 04 §5–§9, §12): small programs, each aimed at one rule of the
iteration (budget, chunk, the wants, serve order, admission, preemption,
the cost and the statistics), written for the mutation run of issue 27
(the worked scenarios SE-1 … SE-18 of test_p04_engine.py reach some rules
only through whole examples, others not at all). Every expected number is
worked out by hand in the test's docstring from the spec section it names
(`cost 1` unless stated: iteration i runs over [i - 1, i)), and each
program gives the same observations and stage rows under pyserq 0.1.3
(seed 1; the differential test at the end, run where the reference is
installed). The programs are in `engine_planning_programs.py`."""
from __future__ import annotations

import pytest

import serq
from serq.core.errors import SimulationError
from serq.policies import StepStage
from serq.report.json_report import to_dict
from serq.runtime.sim.simulation import Simulation

from oracle import assert_fields_match, requires, run_reference
from engine_planning_programs import (
    ATTENTION_IN_ORDER, BETWEEN_ENDS, BUDGET_FROM_KV, BUDGET_GIVEN_BACK,
    BUDGET_LEFT_CHUNKED, BUDGET_LEFT_OUTSIDE, COMPUTED_WITHIN_ALLOCATION,
    DECODERS_WITH_MEMORY, DECODE_FRACTION, DECODE_REQUEST, DECODING_WEIGHED,
    DROPPED_ATTENTION, EXCLUSIVE_ADMISSION, EXCLUSIVE_NO_BUDGET, FIRST_EXCLUDED,
    FREE_PREEMPTION, GRANULE_WAIT, GROW_STATEMENT_VICTIM, JOIN_BY_ADMISSION,
    KV_JOINED_AFTER_THE_PASS, KV_LEASED, KV_NESTED, KV_OTHER_GROWN,
    KV_PREEMPTED_IN_THE_PASS, KV_SOLE, KV_SOLE_ADMITTED, LEFT_WITH_TOL,
    LEG_BEFORE_ZERO_WORK, LEG_IN_ADMISSION, NOT_ADMITTED, NO_MEMORY, ONE_LONG_GAP,
    PREEMPTED_WHILE_RUNNING, PREEMPTIONS_ADDED_UP, PREFILL_PREEMPTED,
    PREFILL_PREEMPTED_DECODED, PROGRAMS, REGISTER_RESTORED, RELEASED_IN_ADMISSION,
    SAME_TIME_AS_AN_END, SE1_CUT, SE1_WARMUP, SERVED_BEFORE, SHORT_COST, SMALL_GRANULE,
    STALLED_FIRST, THREE_GROWERS, TWO_A_TIME, TWO_DECODERS, VICTIMS_THEN_STALL, ZERO_COST,
    ZERO_WORK_AFTER_ADMISSION, ZERO_WORK_IN_ADMISSION)


def run(source: str, **kw):
    """The report of a program text."""
    return serq.run(serq.load(None, source=source), **kw)


def samples(rep, name: str) -> list[tuple[int, float, float]]:
    """(session, time, value) of every sample of observation `name`."""
    s = rep.observes[name]
    return [(int(k), t, v) for v, t, k in zip(s.values, s.times, s.sessions)]


def stage(rep, name: str = "engine") -> dict:
    """The stage's row of the JSON report."""
    return next(s for s in to_dict(rep)["stages"] if s["name"] == name)


# ---------------------------------------------------------------- residents


def test_a_run_joins_after_the_residents_admitted_before_it():
    """§5 (a new job is inserted after every resident with an admission
    number ≤ its own): sessions 0, 1, 2 are admitted at 0 in that order;
    0 and 2 decode 3 tokens from 0, 1 joins at 1, between them. Budget 2:
    [0,1) serves 0, 2; [1,2) and [2,3) serve 0, 1 (0 done at 3); [3,4)
    serves 1, 2 (1 done at 4); [4,5) serves 2 (done 5)."""
    rep = run(JOIN_BY_ADMISSION.replace("LATE", "serial == 1"))
    assert samples(rep, "done") == [(0, 3.0, 3.0), (1, 4.0, 4.0), (2, 5.0, 5.0)]


def test_runs_join_ahead_of_a_resident_admitted_after_them():
    """§5 as above with sessions 0 and 1 joining at 1, ahead of session 2
    (admitted last): [0,1) serves 2 alone; [1,4) serves 0 and 1 (done at
    4); [4,6) serves 2 (done 6)."""
    rep = run(JOIN_BY_ADMISSION.replace("LATE", "serial < 2"))
    assert samples(rep, "done") == [(0, 4.0, 4.0), (1, 4.0, 4.0), (2, 6.0, 6.0)]


def test_a_resident_preempted_while_its_iteration_runs_gets_none_of_its_tokens():
    """§6 (an iteration's tokens are committed; the removal of a resident
    takes its tokens out) and §7 step 9 (each scheduled resident *still
    present*): sessions 1 and 2 hold 4 of kv and decode 3 each from 0;
    at 0.5 session 0 grows its 2 by 4 with 10 used: lifo preempts session
    2 (admitted last). At 1 only session 1's token counts; session 2 is
    admitted again at 1.5, when session 0 releases its 6, and joins the
    engine during [1,2): its tokens end at 3, 4, 5; session 1's at 1, 2,
    3. Row: 5 iterations; residents 2 over [0, 0.5), 1 over [0.5, 1.5),
    2 over [1.5, 3), 1 over [3, 5): mean_number (1 + 1 + 3 + 2)/20."""
    rep = run(PREEMPTED_WHILE_RUNNING)
    assert samples(rep, "adm") == [(1, 0.0, 0.0), (2, 0.0, 0.0), (2, 1.5, 1.5)]
    assert samples(rep, "done") == [(1, 3.0, 3.0), (2, 5.0, 5.0)]
    row = stage(rep)
    assert (row["iterations"], row["completed"]) == (5, 2)
    assert row["mean_number"] == pytest.approx(7 / 20, rel=1e-12)
    # §12: every gap 1 (session 2's token at 1 was dropped with it)
    assert (row["mean_itl"], row["itl_p99"]) == (1.0, 1.0)


def test_a_session_between_two_iteration_ends_sees_the_running_iteration():
    """§6 (the iteration's end is an event at now + cost; nothing applies
    its tokens before) and §7 step 9: two decoders of 5 tokens, `cost 0.3`:
    at 0.45 the iteration [0.3, 0.6) runs both (`busy` 2) and each has one
    token applied (`work` 4 + 4 = 8). Session 2 joins then and is first
    served at 0.6: its 2 tokens end at 0.9 and 1.2; the decoders' 5 end at
    0.3, …, 1.5."""
    rep = run(BETWEEN_ENDS)
    assert samples(rep, "w") == [(2, 0.45, 8.0)]
    assert samples(rep, "b") == [(2, 0.45, 2.0)]
    assert samples(rep, "done") == [(2, 1.2, 1.2), (0, 1.5, 1.5), (1, 1.5, 1.5)]
    # §12 mean_decodes: 2 decodes over [0, 0.6) and [1.2, 1.5), 3 over [0.6, 1.2)
    assert stage(rep)["mean_decodes"] == pytest.approx((2 * 0.9 + 3 * 0.6) / 20, rel=1e-12)


def test_the_phase_fractions_are_measured_from_the_warmup():
    """§12 (time averages over [warmup, end]): SE-1 (prefill [0, 3),
    decodes [3, 6)) with warm-up 1.5 and horizon 20: prefill_only
    1.5/18.5, decode_only 3/18.5, mixed 0, mean_decodes 3/18.5 (one
    decode at a time), mean_number 4.5/18.5."""
    row = stage(run(SE1_WARMUP))
    assert row["prefill_only"] == pytest.approx(1.5 / 18.5, rel=1e-12)
    assert row["decode_only"] == pytest.approx(3 / 18.5, rel=1e-12)
    assert row["mixed"] == 0.0
    assert row["mean_decodes"] == pytest.approx(3 / 18.5, rel=1e-12)
    assert row["mean_number"] == pytest.approx(4.5 / 18.5, rel=1e-12)
    assert row["idle_with_work"] is False  # done at 6: nothing left


def test_a_run_that_completes_at_the_warmup_counts():
    """§12 (`completed` counts after warm-up, from it on): SE-1 with
    warm-up 3, when its prefill completes: completed 2 (the prefill at 3
    and the decode at 6)."""
    assert stage(run(SE1_WARMUP.replace("warmup 1.5", "warmup 3")))["completed"] == 2


def test_a_stalled_resident_is_passed_over_in_admission_order():
    """Part 03 §7.2 and Part 04 §7 step 3 (a resident stalled in a growth
    gets nothing; the pass goes on): kv (cap 8, preempt none) holds 4 + 4.
    At 1 session 0's decode needs a fifth unit and stalls; session 1's
    decodes go on at [1, 2) and [2, 3) (done 3), its release lets the
    growth through and session 0 decodes at [3, 6) (done 6)."""
    assert samples(run(STALLED_FIRST), "done") == [(1, 3.0, 3.0), (0, 6.0, 6.0)]


def test_a_never_admitted_owner_has_the_largest_admission_number():
    """§5 (a job whose owner was never admitted by a hold sorts after all
    admitted ones) with pyserq 0.1.3's number for it, 2**64 (found while
    writing this test: serq-simpy had 2**62, which `serve only (admission
    == 18446744073709551616)` told apart): the run is served, [0, 2)."""
    assert samples(run(NOT_ADMITTED), "done") == [(0, 2.0, 2.0)]


def test_an_engine_cut_by_the_horizon_mid_iteration_is_not_idle():
    """§12 (`idle_with_work`: residents and the last attempt scheduled
    nothing): SE-1 at horizon 2.5 has its resident in the iteration [2, 3):
    not idle; 3 iterations started, prefill_only 1."""
    rep = run(SE1_CUT)
    row = stage(rep)
    assert row["idle_with_work"] is False
    assert (row["iterations"], row["prefill_only"]) == (3, 1.0)
    assert rep.events == 2  # the iteration ends at 1 and 2 (3 is past the horizon)


def test_an_event_scheduled_before_an_iteration_end_at_the_same_time_comes_first():
    """§6 (same-time events in the order they were scheduled; tokens are
    applied at the iteration's end): session 1's delay end at 2 was
    scheduled at 0, the end of the iteration [1, 2) at 1: the delay end
    comes first and sees one token applied (work 5 − 1 = 4)."""
    assert samples(run(SAME_TIME_AS_AN_END), "w") == [(1, 2.0, 4.0)]


# ---------------------------------------------------------------- budget and wants


def test_budget_left_outside_an_admission_subtracts_the_residents_wants():
    """§7.1: read in a session statement at 0.5, `budget_left(engine)` is
    max(0, B − Σ want) = 4 − 1 (one decoding resident wants one token)."""
    assert samples(run(BUDGET_LEFT_OUTSIDE), "bl") == [(1, 0.5, 3.0)]


def test_the_attention_of_a_run_that_does_not_grow_starts_at_zero():
    """§7 step 4 (K is 0 for a run that does not grow), under `serve by`
    (the serving pass of §8.2): a prefill of 6 with budget 4 takes 4 then 2
    tokens, attention 4·(0 + 4/2) = 8 then 2·(0 + 2/2) = 2; with `cost
    attention` the prefill ends at 8 + 2 = 10."""
    assert samples(run(ATTENTION_IN_ORDER), "ttft") == [(0, 10.0, 10.0)]


def test_an_iteration_may_last_less_than_one_time_unit():
    """§7 step 7 (the cost is the iteration's duration; any positive value):
    `cost 0.25`, a prefill of 6 at budget 4 takes two iterations (ttft
    0.5); a decode of 1.5 tokens takes min(1, 1.5) = 1 then 0.5 (§7 step
    3): done at 1.0."""
    rep = run(SHORT_COST)
    assert samples(rep, "ttft") == [(0, 0.5, 0.5)]
    assert samples(rep, "done") == [(0, 1.0, 1.0)]
    assert stage(rep)["iterations"] == 4


@pytest.mark.parametrize("checked", [False, True])
def test_a_decode_takes_one_token_then_what_is_left(checked):
    """§7 step 3 (a decode's tokens: min(1, remaining)): a decode of 2.5
    tokens under `cost tokens` takes 1, 1 and 0.5 tokens, iterations
    [0, 1), [1, 2), [2, 2.5): done at 2.5 after 3 iterations. Planned by the
    engine's closed runs (`checked` False) and by `attempt` at every
    iteration (the invariant checker turns the fast paths off)."""
    prog = serq.load(None, source=DECODE_FRACTION)
    rep = Simulation(prog, check_invariants=True).run() if checked else serq.run(prog)
    assert samples(rep, "done") == [(0, 2.5, 2.5)]
    assert stage(rep)["iterations"] == 3


def test_a_preempt_only_iteration_may_cost_nothing():
    """§7 step 7 (an iteration that only preempted may cost 0): SE-18 with
    `cost tokens > 0 ? 1 : 0`. At 0 both are admitted (kv 4 + 5 = 9) and
    prefill in [0, 1). At 1 B (served first) grows 5 → 6 in the full pool
    and preempts itself: a preempt-only iteration [1, 1). The next one, at
    1, serves A, whose growth 4 → 5 fits (used 4); B (5 more) does not
    fit until A's release at 4: A's decodes end at 2, 3, 4; B, admitted
    again at 4, prefills [4, 5) and decodes to 8."""
    rep = run(FREE_PREEMPTION)
    assert samples(rep, "adm") == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 4.0, 4.0)]
    assert samples(rep, "done") == [(0, 4.0, 4.0), (1, 8.0, 8.0)]


def test_a_preempt_only_iteration_of_negative_cost_lasts_nothing():
    """As above with `cost tokens > 0 ? 1 : -1`: the preempt-only
    iteration's −1 is read as 0 (an iteration does not end before it
    starts): the same times (pyserq 0.1.3 gives them too)."""
    rep = run(FREE_PREEMPTION.replace("1 : 0;", "1 : -1;"))
    assert samples(rep, "done") == [(0, 4.0, 4.0), (1, 8.0, 8.0)]


def test_an_iteration_that_schedules_a_token_must_take_time():
    """§7 step 7 (the cost must be > 0 when tokens > 0: run-time error "an
    iteration that schedules tokens lasts a positive time"): `cost 0` with
    one decode token."""
    with pytest.raises(SimulationError, match="lasts a positive time"):
        run(ZERO_COST)


def test_a_preemption_in_the_serving_pass_skips_only_the_victim():
    """§7 steps 2–4 (the next resident not served is picked from the
    residents as they stand): three 4-unit holds fill kv (cap 12), prefill
    4 each in [0, 1). At 1 A's growth 4 → 5 preempts C (lifo: the latest
    admission); B is still served (grows to 5, used 10). At 3 A's growth
    6 → 7 preempts B; A is done at 4. B and C come back at 4 (cache 0:
    A's 7 released); at 7 B's growth preempts C again: B done at 8, C,
    admitted at 8, at 12."""
    rep = run(THREE_GROWERS)
    assert samples(rep, "done") == [(0, 4.0, 4.0), (1, 8.0, 8.0), (2, 12.0, 12.0)]
    assert [t for _k, t, _v in samples(rep, "adm")] == [0.0, 0.0, 0.0, 4.0, 4.0, 8.0]
    # §12: decode iterations [1,2) 2, [2,3) 2, [3,4) 1, [5,6) 2, [6,7) 2, [7,8) 1,
    # then C alone [9,12): 13 decodes in 9 iterations
    row = stage(rep)
    assert row["mean_decode_batch"] == pytest.approx(13 / 9, rel=1e-12)
    assert row["mean_decodes"] == pytest.approx(13 / 30, rel=1e-12)


def test_a_prefill_waiting_for_its_granule_holds_back_admission():
    """§8.7 (a grant of 0 means the run waits, and the iteration admits no
    further request once this happens): session 0 decodes 3, session 1
    prefills 6 with `granule 4`, budget 4. Until 3 session 1's grant is
    min(6, 4 − 1) = 3, rounded down to 0: it waits, and session 2 (queued
    at 0.5) is not admitted. At 3 session 1 gets 4 (left 0: no admission),
    at 4 its last 2 (all it has left), and session 2 is admitted with the 2
    left over: both end at 5."""
    rep = run(GRANULE_WAIT)
    assert samples(rep, "adm") == [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 4.0, 4.0)]
    assert samples(rep, "done") == [(0, 3.0, 3.0), (1, 5.0, 5.0), (2, 5.0, 5.0)]


def test_serve_only_passes_over_an_excluded_resident():
    """§8.5 (a resident `p` excludes gets no token; the next one in order is
    considered): session 0 (3 tokens, first in admission order) is
    excluded while session 1 (2) is present; 1 decodes at [0, 2), then 0
    alone (residents 1) at [2, 5)."""
    assert samples(run(FIRST_EXCLUDED), "done") == [(1, 2.0, 2.0), (0, 5.0, 5.0)]


def test_an_admit_while_reads_the_admissions_of_the_attempt():
    """§9 (`admitted`: sessions this attempt has admitted so far): `admit
    while (admitted < 2)` admits two at 0 (both served at once, done at 1)
    and the third at 1 (done at 2)."""
    rep = run(TWO_A_TIME)
    assert samples(rep, "adm") == [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 1.0, 1.0)]
    assert samples(rep, "done") == [(0, 1.0, 1.0), (1, 1.0, 1.0), (2, 2.0, 2.0)]


@pytest.mark.parametrize("chunk, left, ttft", [("1", 3.0, 6.0), ("0.5", 3.5, 12.0),
                                              ("0", 0.0, 2.0)])
def test_budget_left_counts_a_prefills_want_up_to_the_chunk(chunk, left, ttft):
    """§7.1 with §7 step 3 (a prefill wants its remaining tokens, capped by
    `chunk` when `chunk > 0`): one resident prefilling 6 at 0.5, budget 4:
    chunk 1 → 4 − 1; chunk 0.5 → 4 − 0.5; no cap → max(0, 4 − 6) = 0. The
    prefill itself takes 6 iterations of 1, 12 of 0.5, or 4 then 2."""
    rep = run(BUDGET_LEFT_CHUNKED.replace("CHUNK", chunk))
    assert samples(rep, "bl") == [(1, 0.5, left)]
    assert samples(rep, "ttft") == [(0, ttft, ttft)]


def test_the_kv_totals_are_zero_without_memory():
    """§7 step 1 (`kv_decode`, `kv_prefill`: 0 without `memory`): `budget
    2 + kv_prefill + kv_decode` is 2: a prefill of 6 takes [0, 3)."""
    assert samples(run(NO_MEMORY), "ttft") == [(0, 3.0, 3.0)]


def test_a_preempted_prefill_gives_back_its_attention():
    """§7 step 7 (the cost counts the scheduled residents only) with the
    "growth preempting a served resident" consequence of §7: `serve by
    (-admission)`, chunk 4, `cost 1 + attention`. At 0 session 1 (served
    first) prefills 4 of 8, attention 4·(0 + 2) = 8 (it does not grow: K
    0), session 0 its 4 (allocation 4, K 0): 8 more, cost 17: ttft 17
    for session 0. At 17 session 1 takes its last 4 (attention 8), then
    session 0's decode grows 4 → 5 in the full pool (cap 9) and preempts
    session 1 (lifo), whose tokens and attention are dropped: cost 1 + 0.
    Session 0 decodes at [17, 20) (done 20); session 1, admitted again at
    20, prefills 8 in two iterations of cost 9: ttft and done 38."""
    rep = run(DROPPED_ATTENTION)
    assert samples(rep, "ttft") == [(0, 17.0, 17.0), (1, 38.0, 38.0)]
    assert samples(rep, "done") == [(0, 20.0, 20.0), (1, 38.0, 38.0)]


@pytest.mark.parametrize("cost, ttft, done", [("1 + prefilled", 22.0, 12.0),
                                              ("1 + tokens", 25.0, 15.0)])
def test_a_preempted_prefill_gives_back_its_tokens(cost, ttft, done):
    """As above with the cost reading `prefilled` or `tokens` (§7 step 7,
    the scheduled residents only). `1 + prefilled`: [0, 9) prefills 8
    (session 0's ttft 9); at 9 session 1's 4 are dropped with it: cost 1,
    session 0 decodes to 12; session 1, back at 12, prefills 4 + 4 at cost
    5 each: 22. `1 + tokens`: [0, 9); at 9 one token is left: cost 2,
    decodes to 15; session 1 from 15: 25."""
    rep = run(DROPPED_ATTENTION.replace("cost 1 + attention;", f"cost {cost};"))
    assert samples(rep, "ttft") == [(0, 9.0, 9.0), (1, ttft, ttft)]
    assert samples(rep, "done") == [(0, done, done), (1, ttft, ttft)]


def test_an_exclusive_prefill_with_no_budget_waits():
    """§8.4 step 2 (the prefill gets min(want, B) tokens) and §7 step 6 (an
    attempt that schedules nothing is no iteration): with budget 0 the
    prefill never runs: no iteration, the stage idle with work."""
    rep = run(EXCLUSIVE_NO_BUDGET)
    row = stage(rep)
    assert (row["iterations"], row["idle_with_work"]) == (0, True)
    assert samples(rep, "done") == []


def test_a_prefill_grant_below_one_token_is_a_multiple_of_a_small_granule():
    """§8.7 (a grant smaller than the remaining work is rounded down to a
    multiple of g): budget 1, granule 0.5: a prefill of 3 gets
    ⌊1/0.5⌋·0.5 = 1 token an iteration: ttft 3. `busy` read before the
    first attempt is 0 (no iteration runs)."""
    rep = run(SMALL_GRANULE)
    assert samples(rep, "b0") == [(0, 0.0, 0.0)]
    assert samples(rep, "ttft") == [(0, 3.0, 3.0)]


def test_an_exclusive_prefill_admission_reads_the_full_budget():
    """§8.4 step 4 (admission with `budget_left = B`, the full budget) and
    §7.1: session 0, admitted at 0 with 8 left, takes kv (8) and decodes
    3. At 1 session 1 (queued at 0.5) is admitted after session 0's
    tentative decode: budget_left is still 8 (not 7): used(kv) 16. Its
    prefill displaces the decode: [1, 2) prefills 2 (done 2); session 0
    decodes at [2, 4) (done 4)."""
    rep = run(EXCLUSIVE_ADMISSION)
    assert samples(rep, "u") == [(0, 0.0, 8.0), (1, 1.0, 16.0)]
    assert samples(rep, "done") == [(1, 2.0, 2.0), (0, 4.0, 4.0)]


def test_an_attempt_that_admits_nobody_undoes_its_register_assignments():
    """§9 (registers): `set k = k + 1` each attempt, `cost 1 + k`. At 0 the
    attempt admits session 0 (k 1; it schedules nothing, but admitted: k
    kept). At 1 session 2's end is an attempt that admits nobody (reqs
    full): k back to 1. At 2 session 0 joins: k 2, [2, 5) (done 5); at 5
    session 1 is admitted and served at once: k 3, [5, 9) (done 9)."""
    assert samples(run(REGISTER_RESTORED), "done") == [(2, 1.0, 1.0), (0, 5.0, 5.0),
                                                       (1, 9.0, 9.0)]


def test_a_run_of_zero_work_does_not_stop_an_admission():
    """§7 step 5: the admitted session's statements run at once "until it
    blocks"; a run of zero work (§2: it completes at once, behind the
    sessions already ready) only puts it behind what the admission made
    ready, which runs before the admission ends. REGISTER_RESTORED with
    session 0's `run d (2)` made three runs of zero work: the attempt at 0
    admits session 0, which passes them and joins the engine in that
    admission: k 1, [0, 2) (done 2). At 1 session 2 ends
    (done 1); at 2 session 1 is admitted and served at once: k 2, [2, 5)
    (done 5). pyserq 0.1.3 gives these; before the fix session 0 joined at
    the next attempt and ended at 5."""
    rep = run(ZERO_WORK_IN_ADMISSION)
    assert samples(rep, "mid") == [(0, 0.0, 0.0)]
    assert samples(rep, "done") == [(2, 1.0, 1.0), (0, 2.0, 2.0), (1, 5.0, 5.0)]


def test_a_run_of_zero_work_after_an_admission_lets_the_ready_sessions_go_first():
    """§2 (zero work completes at once, behind the sessions already ready)
    once the admission of §7 step 5 is over: session 0 is admitted by the
    engine at 0 and decodes [0, 1) (done 1); its release of Q at 1 admits
    sessions 1 and 2, in that order. Session 1's run of zero work puts it
    behind session 2, which takes P first: [1, 2) (done 2), then session 1
    [2, 3) (done 3). pyserq 0.1.3 gives these."""
    assert samples(run(ZERO_WORK_AFTER_ADMISSION), "done") == [(0, 1.0, 1.0), (2, 2.0, 2.0),
                                                               (1, 3.0, 3.0)]


def test_decoding_is_one_for_a_decode_in_the_serve_key():
    """§8.2 (`serve by`: `decoding` is 1 for a decode run, else 0):
    session 0 (admitted first, prefill 3) has key admission, session 1
    (admitted next, decode 2) admission + 1 - 0.75, so session 0 goes first
    and, with budget 1, takes every iteration until its prompt is done:
    [0, 3) (done 3), then session 1 decodes [3, 5) (done 5). (A `decoding`
    of 2 would put session 1 first.)"""
    assert samples(run(DECODING_WEIGHED), "done") == [(0, 3.0, 3.0), (1, 5.0, 5.0)]


def test_decoders_are_counted_when_the_memory_is_read():
    """§7 step 7 (`decoders` over the scheduled residents, with `memory`):
    one decoder, `cost 1 + decoders / 2`: two iterations of 1.5, done 3."""
    assert samples(run(DECODERS_WITH_MEMORY), "done") == [(0, 3.0, 3.0)]


def test_a_grower_that_preempts_itself_counts_one_preemption():
    """§9 (`preempted`: residents this attempt has preempted so far) on
    SE-18: `set p = p + preempted`, `cost 1 + p`. [0, 1) prefills both
    (p 0). At 1 B preempts itself (p 1): a preempt-only iteration [1, 3).
    A's decodes then cost 2 each: [3, 9) (done 9); B, admitted again at 9,
    prefills [9, 11) and decodes to 17."""
    rep = run(PREEMPTIONS_ADDED_UP)
    assert samples(rep, "done") == [(0, 9.0, 9.0), (1, 17.0, 17.0)]


def test_a_preempted_residents_tokens_go_back_to_the_budget():
    """§7 (a resident preempted after it was served: its recorded tokens
    are dropped) and step 4 (`left −= t` for those recorded): budget 6,
    chunk 3, newest first. At 0 session 2 takes 3, session 1 one decode,
    session 0 the 2 left. At 1 session 2 takes 3 (left 3), then session
    1's growth 1 → 2 in the full pool (cap 6) preempts it (lifo): left 6
    again; session 1 takes 1, session 0 3 (of 6 left). At 2 session 0 its
    last 3 (ttft 3: 2 + 3 + 3) and session 1 its third token (done 3).
    Session 2, admitted again at 3, prefills 3, 3, 2: ttft 6."""
    rep = run(BUDGET_GIVEN_BACK)
    assert samples(rep, "ttft") == [(0, 3.0, 3.0), (2, 6.0, 6.0)]


def test_the_victim_of_a_grow_statement_does_not_give_its_tokens_back():
    """§7 (a served resident preempted: its recorded tokens are dropped),
    when the preemption comes from a `grow` statement an admitted session
    runs (§7 step 5), not from the iteration's own growth: the four
    sessions reach `kv` at 10. [10, 11.138): session 0 prefills 6. At 11.138
    sessions 1 and 2 are admitted (8 units each after their `grow`) and
    take 6 each (4 of the budget of 16 left); session 3's hold (4) fills the
    pool and its `grow` preempts session 2 (lifo). The budget stays at 4:
    session 3 takes 4, and the cost is 1 + 0.02 * 10 + 0.001 * 26 (done 1
    at 12.364); session 3 takes its last 2 with session 2's 6 (admitted
    again), both done at 13.552. pyserq 0.1.3 and 0.1.4, seed 1. Before:
    the 6 went back, session 3 took 6, and sessions 1 and 3 were done at
    12.414."""
    rep = run(GROW_STATEMENT_VICTIM)
    assert [(s, round(t, 9)) for s, t, _v in samples(rep, "done")] == [
        (0, 11.138), (1, 12.364), (3, 13.552), (2, 13.552)]


def test_a_growth_that_preempts_and_then_stalls_is_an_iteration():
    """§7 step 6: an attempt that preempts somebody is an iteration, even
    when the growth that preempted ends up waiting. At 0 both sessions hold
    4 of `kv` (cap 8), which is engine F's memory; session 1's run on
    `engine` grows `kv` for 16 tokens: it preempts F's resident, session 0
    (the candidates are F's residents, Part 03 §7.3), and still does not
    fit, so it stalls. The attempt only preempted: an iteration of cost 1
    (pyserq 0.1.3, seed 1: 1 iteration, 3 events). Before: the victim was
    not counted when the growth stalled, and the attempt was no iteration
    (0 iterations, 2 events)."""
    rep = run(VICTIMS_THEN_STALL)
    assert stage(rep)["iterations"] == 1
    assert rep.events == 3
    assert [(p.name, p.preemptions) for p in rep.pools] == [("kv", 1)]


def test_a_victims_computed_is_its_position_within_its_allocation():
    """§7 step 8 (the positions of scheduled growing holds advance by their
    tokens) and Part 03 §7.3 (a victim's `computed` is its position): at
    [0, 1) session 1 prefills 4 within its allocation of 8 (no growth);
    at 1 session 0's growth 2 → 3 in the full pool (cap 10) preempts it
    (lifo) at position 4. Session 0 decodes to 3; session 1, admitted
    again at 3 with computed 4, prefills [3, 4) and decodes to 6."""
    rep = run(COMPUTED_WITHIN_ALLOCATION)
    assert samples(rep, "comp") == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 3.0, 4.0)]
    assert samples(rep, "done") == [(0, 3.0, 3.0), (1, 6.0, 6.0)]


# ---------------------------------------------------------------- policies


def test_an_engine_policy_that_reverses_the_serve_order_is_asked():
    """A `serving_order` override (docs/policies.md) replaces admission
    order (§8.1) even where the built-in planning would take its in-order
    shortcut: JOIN_BY_ADMISSION's residents served newest first. Budget 2:
    [0,1) serves 2, 0; [1,2) serves 2, 1 (2 has 1 left: [2, 1, 0]);
    [2,3) serves 2, 1 (2 done at 3); [3,4) serves 1, 0 (1 done at 4);
    [4,5) serves 0 (done 5)."""

    class NewestFirst(StepStage):
        def serving_order(self, keys):
            return list(reversed(self.residents))

    rep = run(JOIN_BY_ADMISSION.replace("LATE", "serial == 1"), policies={"engine": NewestFirst})
    assert samples(rep, "done") == [(2, 3.0, 3.0), (1, 4.0, 4.0), (0, 5.0, 5.0)]


# ---------------------------------------------------------------- statistics


def test_itl_p99_is_a_quantile_not_the_largest_gap():
    """§12 (`itl_p99` from upstream's logarithmic histogram, Part 06 §6.2):
    a decode of 200 tokens alone at `cost 1 + prefilled`, except the
    iteration [51, 55) that also prefills session 1's 3 tokens: 198 gaps
    of 1 and one of 4: mean_itl 202/199, itl_p50 and itl_p99 1 (the 99th
    percentile of 199 gaps is a gap of 1)."""
    rep = run(ONE_LONG_GAP)
    assert samples(rep, "done") == [(1, 55.0, 55.0), (0, 203.0, 203.0)]
    row = stage(rep)
    assert row["mean_itl"] == pytest.approx(202 / 199, rel=1e-12)
    assert (row["itl_p50"], row["itl_p99"]) == (1.0, 1.0)


def test_an_iteration_claim_reads_the_tokens_served_before_it():
    """Part 06 §8.2 (`served`: tokens the stage scheduled in its earlier
    iterations): SE-1's iterations at 0, 1, …, 5 schedule 4, 4, 2, 1, 1, 1:
    `served` is 0, 4, 8, 10, 11, 12 (4 · now before 3)."""
    claims = {c["name"]: c for c in to_dict(run(SERVED_BEFORE))["claims"]}
    assert (claims["fresh"]["result"], claims["fresh"]["first"]) == ("witnessed", 0.0)
    assert (claims["ten"]["result"], claims["ten"]["first"]) == ("witnessed", 3.0)
    assert (claims["before"]["result"], claims["before"]["checked"]) == ("holds", 6)


def test_a_request_without_a_prefill_has_no_prompt_tokens():
    """The request table's `prompt_tokens` (serq.report.requests: the tokens
    of the request's first `prefill` run, 0 without one): a request that
    only decodes 3 tokens at [0, 3) has 0 prompt and 3 output tokens; its
    first token ends at 1 (ttft 1), the next two 1 apart (tpot 1)."""
    row = run(DECODE_REQUEST).requests()[0]
    assert (row.prompt_tokens, row.output_tokens) == (0.0, 3)
    assert (row.ttft, row.tpot, row.e2e) == (1.0, 1.0, 3.0)


def test_an_iteration_starting_at_the_warmup_is_in_the_decode_batch_means():
    """§12 (`mean_decode_batch` over iterations started after warm-up, from
    it on): decodes of 1 and 3 tokens from 0, warm-up 0: batches of 2, 1, 1
    (the first starts at the warm-up): mean 4/3, each lasting 1."""
    row = stage(run(TWO_DECODERS))
    assert row["mean_decode_batch"] == pytest.approx(4 / 3, rel=1e-12)
    assert (row["mean_decode_step"], row["iterations"]) == (1.0, 3)


def test_kv_decode_adds_every_hold_on_the_memory_pool():
    """§7.1 (`kv_decode`: the units each decoding resident's session holds
    in the engine's `memory`, over all its holds): the session holds kv (3)
    and, inside, kv (2), whose position its decode of 2 grows (0 -> 1 -> 2,
    within the 2 allocated): each iteration costs 3 + 2 = 5, so the run is
    done at 10. A lease on kv (3) instead of the outer hold is not a hold:
    each iteration costs 2, done at 4. One hold on kv (3) and kv2 (2) whose
    run grows kv2: the 3 units in kv count, done at 6. (pyserq 0.1.3 at seed
    1: 10, 4 and 6.)"""
    assert samples(run(KV_NESTED), "done") == [(0, 10.0, 10.0)]
    assert samples(run(KV_LEASED), "done") == [(0, 4.0, 4.0)]
    assert samples(run(KV_OTHER_GROWN), "done") == [(0, 6.0, 6.0)]


def test_kv_decode_reads_the_allocation_the_serving_pass_leaves():
    """§7.1 (`kv_decode`, as the iteration starts) with the serving pass's
    growth (§7 step 4): the session's only hold on kv has 2 units, and its
    decode of 3 grows it. [0, 2) and [2, 4) cost 2 (positions 0 -> 1 -> 2,
    within the allocation); the third token grows the hold to 3 first, so
    [4, 7) costs 3: done at 7 after 3 iterations. The same when the engine
    admits the hold (`admit via engine`): the run joins the first iteration
    in its admission. (pyserq 0.1.3 at seed 1: 7 and 7.)"""
    for source in (KV_SOLE, KV_SOLE_ADMITTED):
        rep = run(source)
        assert samples(rep, "done") == [(0, 7.0, 7.0)]
        assert stage(rep)["iterations"] == 3


def test_kv_decode_leaves_out_a_resident_preempted_after_it_was_served():
    """§7 step 4 and Part 03 §7.3: sessions 0 and 1 hold 3 and 1 of kv's 4
    units. [0, 4) costs 3 + 1. At 4 session 0's token fits and is served;
    session 1's needs a unit, and `preempt by (admission)` takes session 0's
    3 (the first admitted), which leaves the iteration: [4, 6) costs session
    1's 2 units, and session 1 is done at 6. Session 0, admitted again at 6,
    decodes its 2 tokens at 3 a token: done at 12, after 4 iterations in
    all. (pyserq 0.1.3 at seed 1: 6 and 12, 4 iterations.)"""
    rep = run(KV_PREEMPTED_IN_THE_PASS)
    assert sorted(samples(rep, "done")) == [(0, 12.0, 12.0), (1, 6.0, 6.0)]
    assert stage(rep)["iterations"] == 4


def test_kv_prefill_counts_a_run_admitted_after_the_serving_pass():
    """§7 steps 3-5 and §7.1 (`kv_prefill` over the iteration's runs, the
    admitted ones included): prefills of 4 in chunks of 1, each session
    holding kv (2) and growing it. [0, 2): session 0 alone (2). At 2 the
    serving pass serves session 0's chunk, then the admission brings
    session 1, whose chunk joins: 2 + 2, [2, 6). Then both grow a unit an
    iteration: 3 + 2 for [6, 11) and 4 + 3 for [11, 18), when session 0 is
    done; session 1's last chunk, 4, ends at 22. Five iterations (pyserq
    0.1.3 at seed 1: 18 and 22, five iterations)."""
    rep = run(KV_JOINED_AFTER_THE_PASS)
    assert sorted(samples(rep, "done")) == [(0, 18.0, 18.0), (1, 22.0, 22.0)]
    assert stage(rep)["iterations"] == 5


def test_a_run_left_with_the_tolerance_is_done():
    """Part 04's conventions (§7: a run whose remaining work is at most
    1e-9 completes): 2e-9 - 1e-9 is exactly 1e-9 in binary floating point
    (2e-9 is twice 1e-9, exactly), so the prefill is done at the end of its
    first iteration, at 1 (pyserq 0.1.3 at seed 1: 1, one iteration)."""
    rep = run(LEFT_WITH_TOL)
    assert samples(rep, "done") == [(0, 1.0, 1.0)]
    assert stage(rep)["iterations"] == 1


def test_after_a_preemption_one_prefill_end_continues_the_sequence():
    """Part 06 §4 and §6.2 (a prefill end continues the sequence after a
    decode token or after a preemption on the previous token's stage
    since; otherwise it starts it afresh): session 1 holds kv (4) from 0.1;
    its first prefill ends at 2.1 (the first token). At 2.5 session 0's
    growth preempts it in its second prefill; admitted again at 3.5, its
    hold's body runs again, and its prefills end at 5.5 and 7.5. The end at
    5.5 continues the sequence (the preemption on the engine since 2.1: a
    gap of 3.4, the engine's only one); the end at 7.5 follows a prefill end
    with no decode token or preemption between them, so it starts the
    sequence afresh: the request's first token is at 7.5 (ttft 7.5, no
    tpot). With two decode tokens after it (at 8.5 and 9.5), the gaps are
    3.4, 1 and 1 (mean 1.8) and tpot (9.5 - 7.5) / 2 = 1. pyserq 0.1.3 at
    seed 1 gives the engine's gaps (mean_itl 3.4 and 1.8) and the times;
    before, the end at 7.5 continued the sequence too (mean_itl 2.7)."""
    rep = run(PREFILL_PREEMPTED)
    row, client = stage(rep), to_dict(rep)["client"]
    assert (row["mean_itl"], row["itl_p50"], row["itl_p99"]) == (3.4, 3.4, 3.4)
    assert (client["ttft"]["count"], client["ttft"]["mean"], client["tpot"]["count"]) == (1, 7.5, 0)
    assert samples(rep, "done") == [(0, 3.5, 3.5), (1, 7.5, 7.5)]
    rep = run(PREFILL_PREEMPTED_DECODED)
    row, client = stage(rep), to_dict(rep)["client"]
    assert row["mean_itl"] == pytest.approx(1.8, rel=1e-12)
    assert (client["ttft"]["mean"], client["tpot"]["mean"]) == (7.5, 1.0)


def test_a_budget_reads_the_kv_of_a_resident_not_yet_served():
    """§7 step 1 (`kv_prefill` over the residents when the budget is
    evaluated): at 0 the prefill of 8 has not grown its hold yet, and holds
    4 units: the budget is 4, so [0, 1) schedules 4 tokens (within the 4
    allocated) and [1, 2) the other 4 (the hold grows to 8, and the budget
    read 4 again): ttft 2, two iterations (pyserq 0.1.3 at seed 1: the
    same)."""
    rep = run(BUDGET_FROM_KV)
    assert samples(rep, "ttft") == [(0, 2.0, 2.0)]
    assert stage(rep)["iterations"] == 2


def test_a_leg_forked_in_an_admission_joins_that_iteration():
    """§7 step 5: the admitted session runs at once until it blocks, and
    what it made ready runs in the admission too. Session 0, admitted at 0,
    forks a leg and runs decode (2) (it observes x = 2 first); then the leg
    runs (x = 1) and its decode (1) joins: both are newcomers of the
    iteration [0, 1), so the leg is done at 1 and session 0 at 2; session
    1 is admitted at 2 and done at 4 (mean 3). pyserq 0.1.3 at seed 1 gives
    these, and the order of the two x samples; before, the leg started after
    the admission and joined at 1 (done at 2)."""
    rep = run(LEG_IN_ADMISSION)
    assert samples(rep, "leg") == [(0, 1.0, 1.0)]
    assert [v for _k, _t, v in samples(rep, "x")] == [2.0, 1.0, 2.0]
    assert sorted(t for _k, t, _v in samples(rep, "done")) == [2.0, 4.0]


def test_zero_work_in_an_admission_goes_on_behind_a_leg_made_ready():
    """§2 and §7 step 5, together: in the admission session 0 forks the leg
    (ready), then runs zero work, which puts it behind the leg: the leg
    observes x = 1 first, then the session x = 2; both runs still join the
    iteration [0, 1), so the leg is done at 1 and the session at 2 (pyserq
    0.1.3 at seed 1: x 1 then 2, and these times; a session that went
    straight on past its zero work observed 2 first)."""
    rep = run(LEG_BEFORE_ZERO_WORK)
    assert [v for _k, _t, v in samples(rep, "x")] == [1.0, 2.0, 2.0]
    assert samples(rep, "leg") == [(0, 1.0, 1.0)]
    assert sorted(t for _k, t, _v in samples(rep, "done")) == [2.0, 4.0]


def test_a_session_released_in_an_admission_joins_that_iteration():
    """§7 step 5, as above: session 0 holds p, and at 1 the engine admits
    its request, whose first statement releases p; session 1, waiting for p,
    is let through and runs in the admission, so its decode (1) joins the
    iteration [1, 2) beside session 0's: both done at 2, one iteration
    (pyserq 0.1.3 at seed 1: the same, 2 events; before, session 1 joined
    the next iteration and was done at 3)."""
    rep = run(RELEASED_IN_ADMISSION)
    assert samples(rep, "s0") == [(0, 2.0, 2.0)]
    assert samples(rep, "s1") == [(1, 2.0, 2.0)]
    assert stage(rep)["iterations"] == 1


# ---------------------------------------------------------------- the reference


@requires("0.1.3")
@pytest.mark.oracle
@pytest.mark.parametrize("source", PROGRAMS)
def test_planning_programs_against_the_reference(source):
    """The same programs under pyserq 0.1.3 (seed 1): every observe's
    count, mean, min and max, every stage field the reference reports and
    the count of events."""
    ours, ref = to_dict(run(source)), run_reference(source, version="0.1.3")
    assert_fields_match(ours, ref, "stages")
    assert ours["events"] == ref["events"]
