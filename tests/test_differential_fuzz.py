"""Equivalence with the reference by differential fuzzing (issue 22).

* The two programs of issue 22 (a run after an admission through a step
  engine; two prefill ends after a decode token), pinned to pyserq 0.1.3's
  numbers (seed 1) and, where the reference is installed, compared with it;
  more findings pinned the same way (the departures at a session's end, in
  replacements, over-cap needs, spill tiers and holds that preempt each
  other are in tests/test_differential_departures.py).
* The kept cases of tests/differential_cases/<version>/: programs the fuzzer
  found and shrank, each with the reference's report, run without it.
* Generated programs (tests/program_gen.py) against every installed
  reference version (tests/differential_fuzz.py): a few dozen in the
  default suite, at least 5 000 in the slow one; every difference must be
  one of docs/departures.md.
* The generator covers every construct kind of the language reference.
"""
from __future__ import annotations

import glob
import json
import os

import pytest

import serq
from serq.core.errors import SimulationError
from serq.report.json_report import to_dict

from differential_fuzz import (CASES, Campaign, campaign, classify, coverage_table,
                               emulated_differences, job_of, rerun, run_ours, Outcome)
from fuzz_departures import DEPARTURES, retried_growth_advances, stalled_prefills_hold_decodes
from oracle import UNCOMPARED, available, compare_reports, requires, run_reference
from program_gen import KINDS, generate, kinds

# ------------------------------------------------------------ issue 22, program 1

# pull-mode prefill/decode reduced: session 0's `run link` starts right after
# its admission through the engine D (at t = 0), not when session 1 arrives
ADMIT_VIA = """\
pool reqsD { cap 4; admit via D; }
pool kvD { cap 100000; block 16; admit via D; }
stage D : step { budget 8192; cost 0.024 + 1e-4 * prefilled; memory kvD; }
stage link : ps(1);
stage gate : delay;
workload { arrive batch(2); session { run gate (serial * 3); request; end; } }
server { set t0 = now;
  hold kvD (100) reserve (100), reqsD (0) reserve (1) {
    observe t_adm = now - t0;
    run link (0.03);
    observe t_link = now - t0;
    hold reqsD (1) { run D prefill (1) growing kvD; run D decode (3) growing kvD; }
  }
  observe dt = now - t0; }
run { horizon 20; warmup 0; seed 1; }
"""

ADMIT_VIA_MAIN = """\
fn main() {
  pool reqsD { cap 4; admit via D; }
  pool kvD { cap 100000; block 16; admit via D; }
  stage D : step { budget 8192; cost 0.024 + 1e-4 * prefilled; memory kvD; }
  stage link : ps(1);
  stage gate : delay;
  workload { arrive batch(2); session { run gate (cost(gate, serial * 3)); turn; end; } }
  server { set t0 = now;
    hold kvD (cost(kvD, 100)) reserve (cost(kvD, 100)), reqsD (cost(reqsD, 0)) reserve (cost(reqsD, 1)) {
      observe t_adm = now - t0;
      run link (cost(link, 0.03));
      observe t_link = now - t0;
      hold reqsD (cost(reqsD, 1)) { run D prefill (cost(D, 1)) growing kvD; run D decode (cost(D, 3)) growing kvD; }
    }
    observe dt = now - t0; }
}
"""


def _report(source: str, **kw) -> dict:
    return to_dict(serq.run(serq.load(source=source, **kw)))


def _same(source: str, ref: dict, **kw) -> None:
    """Our report equals the reference's, but for the departures of
    docs/departures.md (here: `mean_holders` with nested holds of a pool)."""
    cls, diffs = classify(Outcome("report", _report(source, **kw)), Outcome("report", ref), source)
    assert cls == "equal" or cls.startswith("departure"), (cls, diffs)


def test_a_run_after_an_admission_via_an_engine_starts_at_once():
    rep = serq.run(serq.load(source=ADMIT_VIA))
    # pyserq 0.1.3, seed 1: t_link 0.03 for both sessions (count 2, p99 0.03),
    # dt 0.1261 for both (the run used to wait for session 1's arrival at 3)
    assert [round(v, 12) for v in rep.observes["t_link"].values] == [0.03, 0.03]
    assert [round(v, 12) for v in rep.observes["dt"].values] == [0.1261, 0.1261]
    d = to_dict(rep)
    assert d["observes"]["t_link"]["mean"] == pytest.approx(0.029999999999999902, rel=1e-9)
    assert d["observes"]["dt"]["mean"] == pytest.approx(0.12609999999999982, rel=1e-9)
    # pyserq 0.1.3, seed 1: D completes 4 runs in 8 iterations
    assert (d["stages"][0]["completed"], d["stages"][0]["iterations"]) == (4, 8)


def test_a_run_after_an_admission_starts_at_once_in_the_main_dialect():
    rep = serq.run(serq.load(source=ADMIT_VIA_MAIN, horizon=20))
    # pyserq 0.1.4, seed 1: as in 0.1.3, t_link 0.03 for both sessions
    assert [round(v, 12) for v in rep.observes["t_link"].values] == [0.03, 0.03]


@requires("0.1.3")
def test_admission_via_an_engine_against_0_1_3():
    _same(ADMIT_VIA, run_reference(ADMIT_VIA, "0.1.3"))


@requires("0.1.4")
def test_admission_via_an_engine_against_0_1_4():
    _same(ADMIT_VIA_MAIN, run_reference(ADMIT_VIA_MAIN, "0.1.4", horizon=20), horizon=20)


# the departure of docs/departures.md: the `ps` stage declared before the
# engine whose admission starts its job. pyserq 0.1.3 visits the stages once,
# in declaration order, so `link`'s job waits for the next event (session
# 1's arrival at t = 3: t_link 3.03 for session 0); serq-simpy settles the
# instant until nothing changes, so the job starts at once (Part 02 §10.3)
LINK_FIRST = "stage link : ps(1);\n" + ADMIT_VIA.replace("stage link : ps(1);\n", "")


def test_a_stage_declared_before_the_admitting_engine_does_not_wait():
    rep = serq.run(serq.load(source=LINK_FIRST))
    assert [round(v, 12) for v in rep.observes["t_link"].values] == [0.03, 0.03]


# ------------------------------------------------------------ issue 22, program 2

# a decode token, then two prefill ends: one token sequence (pyserq 0.1.3)
TWO_PREFILLS = """\
stage E : step { budget 8; cost 1; }
workload { arrive batch(1); }
session { turn; run E decode (1); run E prefill (4); run E prefill (4); }
run { horizon 20; }
"""

# the same with unequal gaps: decode at 1, prefill ends at 2.4, 3.6, 5.2
UNEQUAL = """\
stage E : step { budget 8; cost 1 + 0.1 * prefilled; }
workload { arrive batch(1); }
session { turn; run E decode (1); run E prefill (4); run E prefill (2); run E prefill (6); }
run { horizon 50; }
"""


def test_two_prefills_after_a_decode_keep_the_token_sequence():
    s = _report(TWO_PREFILLS)["stages"][0]
    # pyserq 0.1.3, seed 1: mean_itl, itl_p50 and itl_p99 are 1 (they were null)
    assert (s["mean_itl"], s["itl_p50"], s["itl_p99"]) == (1, 1, 1)


def test_prefill_ends_after_a_decode_continue_the_sequence():
    s = _report(UNEQUAL)["stages"][0]
    # pyserq 0.1.3, seed 1: gaps 1.4, 1.2, 1.6 -> mean 1.4, p50 1.4, p99 1.6
    assert s["mean_itl"] == pytest.approx(1.3999999999999997, rel=1e-9)
    assert s["itl_p50"] == pytest.approx(1.4, rel=1e-9)
    assert s["itl_p99"] == pytest.approx(1.5999999999999996, rel=1e-9)


@requires("0.1.3")
@pytest.mark.parametrize("source", [TWO_PREFILLS, UNEQUAL], ids=["equal", "unequal"])
def test_token_sequences_against_0_1_3(source):
    ref = run_reference(source, "0.1.3")
    assert not compare_reports(_report(source), ref, ignore=UNCOMPARED)


# found by the fuzzer (0.1.3 seed 14, shrunk): a leg's tokens are a sequence
# of their own, apart from its session's
LEG_TOKENS = """\
stage E : step { cost 1 + 0.02 * residents; }
workload { arrive batch(2); session { turn; request; end; } }
server { decode (2); fork { decode (2); } join; decode (1); }
run { horizon 30; }
"""


def test_a_legs_tokens_are_a_sequence_of_their_own():
    s = _report(LEG_TOKENS)["stages"][0]
    # pyserq 0.1.3 and 0.1.4, seed 1: per session the gaps 1.04 (its decodes),
    # 1.04 (the leg's), 3.12 (its last decode after the join): mean 5.2 / 3
    assert s["mean_itl"] == pytest.approx(1.7333333333333334, rel=1e-9)
    assert s["itl_p99"] == pytest.approx(3.12, rel=1e-9)


@requires("0.1.3")
def test_leg_tokens_against_0_1_3():
    _same(LEG_TOKENS, run_reference(LEG_TOKENS, "0.1.3"))


# docs/departures.md, "a stage declared before the admitting engine" (0.1.3
# seed 164, shrunk): `s0` is declared above `E`, so pyserq 0.1.3 never starts
# the admitted session's `run s0 (3)` (its report: events 0, ended 0);
# serq-simpy runs it and the session goes on to a `load` past its allocation,
# Part 03 §5's run-time error (which pyserq raises too for such a load)
LOAD_PAST = """\
stage s0 : ps(min(present, 2));
pool p0 { cap 20; }
pool reqs { cap 6; preempt none; admit via E; }
stage E : step { budget 16; cost 1 + 0.01 * tokens + 0.005 * kv_prefill; iteration { serve; admit; } }
workload { arrive batch(1); session { turn; request; end; } }
server {
  hold reqs (1) at admission (known = computed + 1) { run s0 (3); run s0 (3); }
  hold p0 (2) reuse (2) { prefill (2); decode (3); } cache (2)
  hold p0 (1) reuse (2) { run s0 (2); load p0 (1); } cache (2);
  run s0 (3);
}
run { horizon 20; }
"""


def test_a_run_before_the_admitting_engine_is_not_left_waiting():
    with pytest.raises(SimulationError, match="a load must fit the allocation"):
        serq.run(serq.load(source=LOAD_PAST))


# found by the fuzzer (0.1.3 and 0.1.4, generator seed 29 of its first
# version): legs stalled on a `grow` while their sessions wait at `join` are
# no cycle that stops the run (pyserq runs on to the horizon)
LEGS_GROWING = """\
pool p1 { cap 4; }
stage s1 : ps(1);
workload { arrive batch(2); session { turn; request; end; } }
server { fork { hold p1 (2) { run s1 (3); grow p1 (1); } } join; observe o1 = now; }
run { horizon 10; }
"""


def test_legs_stalled_on_a_growth_run_on_to_the_horizon():
    d = _report(LEGS_GROWING)
    # pyserq 0.1.3, seed 1: the run reaches its horizon; nobody ends, o1 has
    # no sample, p1 holds 4 units from t = 0 (mean_used 4)
    assert (d["ended"], d["observes"]["o1"]["count"]) == (0, 0)
    assert d["pools"][0]["mean_used"] == 4
    assert d["pools"][0]["growing_stalled"] is True


@requires("0.1.3")
def test_legs_stalled_on_a_growth_against_0_1_3():
    _same(LEGS_GROWING, run_reference(LEGS_GROWING, "0.1.3"))


# docs/departures.md, "a stalled growth granted later" (0.1.3 and 0.1.4,
# generator seed 49 of the fuzzer's first version, shrunk)
STALLED = """\
stage s0 : ps(1);
pool kv { cap 10; block 2; }
stage E : step { budget 16; cost 1; memory kv; }
workload { arrive batch(3); session { turn; request; turn; request; turn; request; end; } }
server {
  run s0 (0.5);
  hold kv (2) { run E prefill (2) growing kv; run E decode (2) growing kv; }
}
run { horizon 20; }
"""


def test_a_stalled_growth_granted_later_does_not_advance_the_position():
    d = _report(STALLED)
    # Part 03 §7.2 and §14: session 2's first decode token stalls at 3.5
    # (position 2, allocation 2), is granted 2 units at 4.5 and its tokens
    # end at 5.5 and 6.5 at positions 3 and 4, within its 4 units. pyserq
    # 0.1.3, seed 1, reports 5.2: its position ran one token ahead at the
    # grant, so the session grew by 2 more units from 5.5 to 6.5 (2 / 20)
    assert d["pools"][0]["mean_used"] == pytest.approx(5.1, rel=1e-9)
    with retried_growth_advances():
        emulated = _report(STALLED)
    assert emulated["pools"][0]["mean_used"] == pytest.approx(5.2, rel=1e-9)
    # every other field is the same either way
    assert not compare_reports(d, emulated, ignore=UNCOMPARED + ("mean_used",))


@requires("0.1.3")
def test_a_stalled_growth_against_0_1_3():
    ref = run_reference(STALLED, "0.1.3")
    with retried_growth_advances():
        emulated = _report(STALLED)
    assert not compare_reports(emulated, ref, ignore=UNCOMPARED)
    assert classify(Outcome("report", _report(STALLED)), Outcome("report", ref), STALLED,
                    lambda: Outcome("report", _report(STALLED)))[0] == \
        "departure: a stalled growth granted later"


# found by the fuzzer (0.1.3 and 0.1.4, generator seed 1023, shrunk): jobs of
# a `ps` stage that finish together -- sessions 0 and 1 at `s0`, at 8.2695,
# though their calendar entries were made at two settles of 7.2695 and
# session 2 joined `s0` between them -- both finish before the engine's
# attempt: their decodes share its iterations
PS_TIE = """\
stage E : step { budget residents > 2 ? 8 : 16; chunk 4; cost 1 + 0.001 * attention + 0.05 * decoders + 0.02 * residents; }
stage s0 : ps(min(present, 2));
stage s1 : ps(2);
stage m0 : ps(1);
pool p0 { }
pool reqs { admit via E; }
share maxmin;
workload { arrive batch(3); turn { set k = k + 1; } session { turn; request; } }
server {
  branch (k < 1) { } else { prefill (9); run s0 (2); }
  hold reqs (2), p0 (2) reuse (2) { } cache (2)
  run s1 (2);
  branch (k > 1) { run s1, m0 (1.75); } else { set w = 3; run s0 (w / 4 + 0.25); }
  observe d = now;
  run E decode (3);
  observe e = now;
}
run { horizon 20; }
"""


def test_ps_jobs_that_finish_together_precede_the_engines_attempt():
    rep = serq.run(serq.load(source=PS_TIE))
    # pyserq 0.1.3, seed 1: sessions 0 and 1 reach the engine together at
    # 8.2695 and end their 3 decode tokens together at 11.8295 (session 1
    # used to join after the attempt and end at 12.8995, with session 2)
    assert [round(v, 9) for v in rep.observes["d"].values] == [8.2695, 8.2695, 9.2695]
    assert [round(v, 9) for v in rep.observes["e"].values] == [11.8295, 11.8295, 12.8995]


@requires("0.1.3")
def test_ps_jobs_that_finish_together_against_0_1_3():
    ref = run_reference(PS_TIE, "0.1.3")
    assert not compare_reports(_report(PS_TIE), ref, ignore=UNCOMPARED)


# found by the fuzzer (0.1.3 and 0.1.4, generator seed 1592, shrunk): under
# `serve exclusive prefill` the selected prefill stalls in its growth (the
# pool is full) and gets nothing (Part 04 §7 step 4, which §8.4 step 2
# applies): the next prefilling resident is served instead
EXCLUSIVE_STALL = """\
stage E : step { cost 1 + 0.02 * prefilled + 0.02 * residents + 0.005 * kv_prefill; serve exclusive prefill; }
pool kv { cap 4; }
workload { arrive batch(3); session { request; } }
server {
  hold kv (2) { observe a = now; run E prefill (2) growing kv; observe b = now; run E prefill (2) growing kv; observe c = now; }
}
run { horizon 10; }
"""


def test_a_stalled_exclusive_prefill_gives_way_to_the_next():
    d = _report(EXCLUSIVE_STALL)
    # pyserq 0.1.3, seed 1: session 0's first prefill ends at 1.08 (cost
    # 1 + 0.04 + 0.02 * 2 + 0.005 * 0); its second stalls there (4 of 4 units
    # held) and session 1's first prefill runs 1.08-2.16 (it used to wait)
    assert d["observes"]["b"]["count"] == 2
    assert d["observes"]["b"]["p99"] == pytest.approx(2.16, rel=1e-9)
    assert (d["stages"][0]["completed"], d["stages"][0]["iterations"]) == (2, 2)


@requires("0.1.3")
def test_a_stalled_exclusive_prefill_against_0_1_3():
    assert not compare_reports(_report(EXCLUSIVE_STALL), run_reference(EXCLUSIVE_STALL, "0.1.3"),
                               ignore=UNCOMPARED)


# docs/departures.md, "an exclusive prefill engine with every prefill
# stalled": Part 04 §8.4 serves the decode batch when no prefilling resident
# is unstalled; pyserq 0.1.3 serves nothing while a stalled prefill is resident
EXCLUSIVE_ALL_STALLED = """\
stage E : step { cost 1; serve exclusive prefill; }
stage D : delay;
pool kv { cap 4; }
workload { arrive batch(4); session { request; } }
server {
  branch (serial < 2) { hold kv (2) { run E prefill (2) growing kv; observe b = now; run E prefill (2) growing kv; } }
  else { branch (serial == 2) { run E decode (5); observe dd = now; } else { run D (5); run D (1); } }
}
run { horizon 20; }
"""


def test_an_exclusive_prefill_engine_with_every_prefill_stalled_decodes():
    d = _report(EXCLUSIVE_ALL_STALLED)
    # Part 04 §8.4: sessions 0 and 1 prefill at [0, 1) and [1, 2); at 2 the
    # selected prefill (session 1's second) stalls, so the attempt serves
    # nothing; at 5 (session 3's delay ends) no prefill is unstalled: the
    # decode batch runs, session 2's 5 tokens end at 6, 7, 8, 9, 10.
    # pyserq 0.1.3, seed 1: no decode ever (dd has no sample, 2 iterations)
    assert d["observes"]["dd"]["count"] == 1 and d["observes"]["dd"]["mean"] == 10
    assert d["stages"][0]["iterations"] == 7
    with stalled_prefills_hold_decodes():
        emulated = _report(EXCLUSIVE_ALL_STALLED)
    assert emulated["observes"]["dd"]["count"] == 0
    assert emulated["stages"][0]["iterations"] == 2


@requires("0.1.3")
def test_an_exclusive_prefill_engine_with_every_prefill_stalled_against_0_1_3():
    ref = run_reference(EXCLUSIVE_ALL_STALLED, "0.1.3")
    assert classify(Outcome("report", _report(EXCLUSIVE_ALL_STALLED)), Outcome("report", ref),
                    EXCLUSIVE_ALL_STALLED,
                    lambda: Outcome("report", _report(EXCLUSIVE_ALL_STALLED)))[0] == \
        "departure: an exclusive prefill engine with every prefill stalled"


# the same departure when the stall begins with an admission (generator
# seed 59586, shrunk): session 1's prefill, admitted at 1, stalls
ADMITTED_STALL = """\
stage E : step { cost 1; serve exclusive prefill; }
pool kv { cap 20; block 4; admit via E; }
workload { arrive batch(2); session { request; } }
server {
  hold kv (4) { run E prefill (9) growing kv; observe pf = now; run E decode (2) growing kv; observe dc = now; }
}
run { horizon 10; }
"""


def _times(source: str, name: str) -> list[tuple[int, float]]:
    s = serq.run(serq.load(source=source)).observes[name]
    return [(int(k), t) for t, k in zip(s.times, s.sessions)]


def test_an_admitted_prefill_that_stalls_keeps_the_decode_batch():
    """Part 04 §8.4: session 0 prefills at [0, 1) (9 tokens: 16 of kv's 20
    units). At 1 the engine admits session 1 (4 units) and its prefill
    displaces session 0's tentative decode, but its growth to 16 units
    does not fit: it stalls and gets nothing, and the engine attempts again
    at that instant: no prefill is unstalled, so session 0 decodes at
    [1, 2) and [2, 3). Its hold ends at 3; session 1's growth goes through:
    prefill [3, 4), decode [4, 6); 6 iterations. pyserq 0.1.3 (seed 1)
    decodes at [1, 2) too, then serves nothing while session 1's prefill is
    stalled: 2 iterations, one `pf`, no `dc`; the runner's emulation gives
    that."""
    assert _times(ADMITTED_STALL, "pf") == [(0, 1.0), (1, 4.0)]
    assert _times(ADMITTED_STALL, "dc") == [(0, 3.0), (1, 6.0)]
    assert _report(ADMITTED_STALL)["stages"][0]["iterations"] == 6
    with stalled_prefills_hold_decodes():
        emulated = _report(ADMITTED_STALL)
    assert (emulated["observes"]["pf"]["count"], emulated["observes"]["dc"]["count"]) == (1, 0)
    assert emulated["stages"][0]["iterations"] == 2


@requires("0.1.3")
def test_an_admitted_prefill_that_stalls_against_0_1_3():
    assert not emulated_differences(ADMITTED_STALL, stalled_prefills_hold_decodes)


# found by the fuzzer (0.1.3 and 0.1.4, generator seed 1236, shrunk): in an
# iteration body, a grower that preempts itself ends its `serve` statement
# only; a later `admit` without `while` still admits (Part 04 §9), here the
# victim itself, at once
ADMIT_AFTER_SELF_PREEMPTION = """\
stage E : step { cost 1 + 0.001 * attention + 0.02 * residents + 0.005 * kv_prefill; iteration { serve; admit; } }
pool kv { cap 6; preempt by (admission); admit via E; }
workload { arrive batch(3); session { request; } }
server {
  hold kv (3) at admission (known = computed + 1) { observe a = now; run E decode (2) growing kv; observe b = now; run E decode (3) growing kv; observe c = now; } lease kv (inf)
  observe o5 = now;
}
run { horizon 30; }
"""


def test_admit_after_a_self_preemption_in_an_iteration_body():
    rep = serq.run(serq.load(source=ADMIT_AFTER_SELF_PREEMPTION))
    # pyserq 0.1.3, seed 1: session 0 preempts itself at 3.12 and is admitted
    # again at once (it used to wait until 6.18); sessions 0 and 1 then
    # preempt each other for good: 16 admissions, 14 preemptions, 2 stuck,
    # 29 iterations, nobody ends
    assert [round(v, 9) for v in rep.observes["a"].values[:4]] == [0.0, 0.0, 3.12, 4.16]
    d = to_dict(rep)
    pool = d["pools"][0]
    assert (pool["admissions"], pool["preemptions"], pool["stuck"]) == (16, 14, 2)
    assert (d["stages"][0]["iterations"], d["ended"]) == (29, 0)


@requires("0.1.3")
def test_admit_after_a_self_preemption_against_0_1_3():
    ref = run_reference(ADMIT_AFTER_SELF_PREEMPTION, "0.1.3")
    assert not compare_reports(_report(ADMIT_AFTER_SELF_PREEMPTION), ref, ignore=UNCOMPARED)


# found by the fuzzer (0.1.5, generator seed 1001864, reduced): the members of
# a stage array re-evaluate at the end of a settle in index order, as stages
# do in declaration order (Part 02 §10.3 step 4, Part 04 §6). Session 0 runs
# `a[1]`, session 1 then `a[0]`; both finish at 0.5, `a[0]`'s completion
# first, so session 1 runs on first and session 0 sees its job at `s1`
ARRAY_ORDER = """\
stage a[2] : ps(1);
stage s1 : ps(2);
workload { arrive batch(2); session { request; } }
server {
  run a[1 - serial] (0.5);
  branch (serial == 0) { observe w0 = work(s1); } else { observe w1 = work(s1); }
  run s1 (1 + serial);
}
run { horizon 10; }
"""

ARRAY_ORDER_MAIN = """\
fn main() {
  stage a[2] : ps(1);
  stage s1 : ps(2);
  workload { arrive batch(2); session { turn; } }
  server {
    run a[1 - serial] (cost(a[1 - serial], 0.5));
    if (serial == 0) { observe w0 = work(s1); } else { observe w1 = work(s1); }
    run s1 (cost(s1, 1 + serial));
  }
}
"""


def test_array_members_finish_in_index_order():
    d = _report(ARRAY_ORDER)
    # pyserq 0.1.3 and 0.1.5, seed 1: session 1 (at `a[0]`) reads 0, session 0
    # then reads the 2 units of session 1's job (serq-simpy read 0 and 1: the
    # members ranked alike and re-evaluated in the order their jobs joined)
    assert (d["observes"]["w0"]["mean"], d["observes"]["w1"]["mean"]) == (2, 0)
    m = _report(ARRAY_ORDER_MAIN, horizon=10)
    assert (m["observes"]["w0"]["mean"], m["observes"]["w1"]["mean"]) == (2, 0)


@requires("0.1.3")
def test_array_members_finish_in_index_order_against_0_1_3():
    ref = run_reference(ARRAY_ORDER, "0.1.3")
    assert not compare_reports(_report(ARRAY_ORDER), ref, ignore=UNCOMPARED)


@requires("0.1.5")
def test_array_members_finish_in_index_order_against_0_1_5():
    ref = run_reference(ARRAY_ORDER_MAIN, "0.1.5", horizon=10)
    assert not compare_reports(_report(ARRAY_ORDER_MAIN, horizon=10), ref, ignore=UNCOMPARED)


# found by the fuzzer (0.1.3 and 0.1.4, generator seed 4620, reduced): a
# session admitted by an engine's iteration grows its hold at once and
# preempts itself; that preemption is the iteration's (Part 04 §7 steps 5-6):
# no further admission, and the attempt is an iteration that only preempted
# (cost 1), so the victim is re-admitted at the next one. serq-simpy used to
# admit it again at once, for ever, at t = 0
SELF_PREEMPTING_GROW = """\
stage E : step { budget 16; cost 1; }
pool reqs { cap 4; preempt by (position); admit via E; }
workload { arrive batch(1); session { request; } }
server { hold reqs (2) { grow reqs (3); } }
run { horizon 10; }
"""


def test_a_preemption_by_an_admitted_session_ends_the_admissions():
    d = _report(SELF_PREEMPTING_GROW)
    # pyserq 0.1.3, seed 1: one admission and one preemption per iteration
    # at 0, 1, ..., 10 (11 of each), the session stuck from the second on,
    # waiting 1 s each time after the first (mean_wait 10 / 11)
    pool = d["pools"][0]
    assert (pool["admissions"], pool["preemptions"], pool["stuck"]) == (11, 11, 1)
    assert pool["mean_wait"] == pytest.approx(10 / 11, rel=1e-9)
    assert (d["stages"][0]["iterations"], d["events"], d["ended"]) == (11, 10, 0)


@requires("0.1.3")
def test_a_preemption_by_an_admitted_session_against_0_1_3():
    ref = run_reference(SELF_PREEMPTING_GROW, "0.1.3")
    assert not compare_reports(_report(SELF_PREEMPTING_GROW), ref, ignore=UNCOMPARED)


# found by the fuzzer (0.1.3, generator seed 3070, reduced): at the end of
# the instant t = 0 the stages go in declaration order (Part 02 §10.3 step
# 4): the engine `E` starts its iteration (its end entered for t = 1), then
# `s0` enters its completion for t = 1. At 1 session 1 (the engine's)
# resumes first, then 0 and 2 (at `s0`); each chooses the emptier `a[j]`.
# With `s0` declared first, its completion comes first (session 0 first)
CHOOSE_TIE = """\
stage E : step { cost 1; }
stage s0 : ps(1);
stage a[2] : fifo;
workload { arrive batch(3); session { request; } }
server {
  branch (serial == 1) { run E prefill (2); } else { run s0 (0.5); }
  choose j in 2 by (queue(a[j]), -j);
  run a[j] (serial / 4 + 0.5);
  observe done = now;
}
run { horizon 10; }
"""
CHOOSE_TIE_PS_FIRST = CHOOSE_TIE.replace("stage E : step { cost 1; }\nstage s0 : ps(1);\n",
                                         "stage s0 : ps(1);\nstage E : step { cost 1; }\n")


def test_an_iteration_end_and_a_ps_completion_at_one_time_go_in_the_stages_order():
    d = _report(CHOOSE_TIE)
    # pyserq 0.1.3, seed 1: session 1 takes a[1] (0.75), 0 takes a[0] (0.5),
    # 2 waits behind 1 at a[1] (1.0): done at 1.75, 1.5, 2.75
    assert d["observes"]["done"]["mean"] == pytest.approx(2.0, rel=1e-9)
    assert d["stages"][2]["mean_service"] == pytest.approx(0.5, rel=1e-9)
    assert d["stages"][3]["mean_wait"] == pytest.approx(0.375, rel=1e-9)
    # `s0` declared first (pyserq 0.1.3, seed 1): sessions 0, 1, 2 in turn,
    # done at 1.5, 1.75, 2.5 (serq-simpy gave these for both orders)
    e = _report(CHOOSE_TIE_PS_FIRST)
    assert e["observes"]["done"]["mean"] == pytest.approx(5.75 / 3, rel=1e-9)


@requires("0.1.3")
@pytest.mark.parametrize("source", [CHOOSE_TIE, CHOOSE_TIE_PS_FIRST], ids=["engine first", "ps first"])
def test_an_iteration_end_and_a_ps_completion_against_0_1_3(source):
    ref = run_reference(source, "0.1.3")
    assert not compare_reports(_report(source), ref, ignore=UNCOMPARED)


# a closed population whose sessions have no code (a candidate of the
# shrinker, from drawing program 1123264): serq-simpy stops at once (before,
# its replacements nested until a RecursionError ended the campaign);
# pyserq 0.1.3 runs for ever
NO_CODE = "stage d : delay;\nworkload { arrive closed(2); }\nrun { horizon 1; }\n"


@pytest.mark.parametrize("source", [NO_CODE, """\
stage d : delay;
workload { arrive closed(2); }
session { turn; observe x = 1; }
run { horizon 1; }
"""], ids=["no code", "no time"])
def test_a_closed_population_that_does_not_settle_is_the_departure(source):
    ours = run_ours(source, None, None)
    assert ours.status == "stopped" and "does not settle" in ours.message
    assert classify(ours, Outcome("hang", message="no answer"), source, version="0.1.3")[0] \
        == "departure: an instant that does not settle"


def test_an_exception_of_serq_simpy_is_a_finding(monkeypatch):
    """Anything serq-simpy raises that is none of its errors is a finding of
    its own class, and the campaign goes on."""
    def broken(*_a, **_k):
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(serq, "run", broken)
    ours = run_ours(NO_CODE, None, None)
    assert (ours.status, ours.message) == ("error", "RecursionError: maximum recursion depth exceeded")
    assert classify(ours, Outcome("hang", message="no answer"), NO_CODE, version="0.1.3") == \
        ("finding: serq-simpy raises", ["RecursionError: maximum recursion depth exceeded"])


def test_a_difference_another_reference_run_does_not_give_is_a_finding(monkeypatch):
    """pyserq 0.1.3 and 0.1.4 may give other last bits from one process to
    another (generator seed 142360: an observation's `cv2` of 1.4432e-30 in
    one run in six, 1.4408e-30 in the others, serq-simpy's): a program
    whose numbers differ runs in the reference again, and is counted as
    "reference varies" when a run gives serq-simpy's report."""
    import copy
    import differential_fuzz as fz
    source = "stage d : delay;\nworkload { arrive batch(2); session { request; } }\n" \
             "server { run d (1); observe x = now; }\nrun { horizon 5; }\n"
    job = job_of(source, "0.1.3")
    ours = run_ours(source, None, None)
    other = copy.deepcopy(ours.report)
    other["observes"]["x"]["mean"] += 1e-9
    runs = []
    monkeypatch.setattr(fz, "run_reference_batch", lambda v, jobs: [runs.pop(0)])
    runs[:] = [Outcome("report", other), Outcome("report", copy.deepcopy(ours.report))]
    assert fz.reference_varies(ours, source, job, "0.1.3") and not runs
    runs[:] = [Outcome("report", other)] * fz.REF_AGAIN
    assert not fz.reference_varies(ours, source, job, "0.1.3") and not runs


# the runner itself (generator seed 4546, 0.1.3): the reference answered
# jobs 46-48 of a batch at once and then worked on a slow job 49; job 46 was
# reported as not answering after 20 s, its answer waiting in the stream's
# buffer where a `select` on the pipe did not see it
_QUICK_THEN_SLOW = r"""
import json, sys, time
jobs = [json.loads(line) for line in sys.stdin]
out = {"status": "refused", "message": "m"}
sys.stdout.write("".join(json.dumps(dict(out, message=str(k))) + "\n" for k in range(3)))
sys.stdout.flush()
time.sleep(60)
"""


def test_answers_already_read_are_not_taken_for_a_hang(monkeypatch):
    import sys
    import time

    import differential_fuzz as df
    monkeypatch.setattr(df, "interpreter", lambda _v: sys.executable)
    monkeypatch.setattr(df, "_DRIVER", _QUICK_THEN_SLOW)
    monkeypatch.setattr(df, "REF_BOUND", 2.0)
    t0 = time.monotonic()
    outs = df.run_reference_batch("0.1.3", [{"source": ""}] * 4)
    assert [(o.status, o.message) for o in outs[:3]] == [("refused", str(k)) for k in range(3)]
    assert outs[3].status == "hang"
    assert time.monotonic() - t0 < 10  # one bound of 2 s, for the fourth job only


# ------------------------------------------------------------ kept cases

def _cases() -> list[str]:
    return sorted(glob.glob(os.path.join(CASES, "*", "*.sq")))


@pytest.mark.parametrize("path", _cases(), ids=lambda p: os.path.relpath(p, CASES))
def test_kept_case(path):
    """A shrunk program the fuzzer found: ours matches the reference's
    recorded outcome (its report field for field, or its refusal)."""
    version = os.path.basename(os.path.dirname(path))
    text = open(path, encoding="utf-8").read()
    with open(path[:-3] + ".json", encoding="utf-8") as fh:
        ref = json.load(fh)
    job = job_of(text, version)
    ours = run_ours(text, job["horizon"], job["trace"], job["warmup"])
    cls, diffs = classify(ours, Outcome(ref["status"], ref["report"], ref["message"]), text,
                          rerun(text, job))
    assert cls in ("equal", "both refuse", "both stop") or cls.startswith("departure"), \
        (cls, diffs[:10])


# ------------------------------------------------------------ generated programs

def _installed() -> list[str]:
    return [v for v in ("0.1.3", "0.1.4", "0.1.5") if available(v)]


def _check(c: Campaign) -> None:
    bad = [f"{r.version} seed {r.seed}: {r.cls}\n{r.text}\n  " + "\n  ".join(r.diffs[:8])
           for r in c.findings]
    assert not bad, f"{len(bad)} findings:\n" + "\n\n".join(bad[:5])


@pytest.mark.oracle
@pytest.mark.skipif(not _installed(), reason="no pyserq reference installed")
def test_generated_programs_short():
    """36 deterministic programs against 0.1.3 and 0.1.4, 12 drawing ones
    against 0.1.5 (those installed); fixed seeds."""
    c = campaign(_installed(), start=0, count=36, draw_count=12)
    _check(c)
    assert c.counts()["equal"] > 0


@pytest.mark.oracle
@pytest.mark.slow
@pytest.mark.skipif(not _installed(), reason="no pyserq reference installed")
def test_generated_programs_long():
    """4 000 deterministic programs (each against 0.1.3 and 0.1.4) and 1 000
    drawing ones (against 0.1.5): 5 000 programs, fixed seeds, on 2 worker
    processes (about 10 CPU-minutes, nearly all of it serq-simpy's runs), in
    CI's slow step."""
    c = campaign(_installed(), start=1000, count=4000, draw_count=1000, jobs=2)
    print(json.dumps(c.counts(), indent=1))
    print(coverage_table(c))
    for r in c.results:  # every comparison that is not `equal`, one line each
        if r.cls != "equal":
            print(f"{r.version} seed {r.seed}: {r.cls}: {(r.diffs or [''])[0]}")
    _check(c)
    assert all(c.coverage.get(k, 0) > 0 for k in KINDS), coverage_table(c)


def test_the_generator_covers_every_construct_kind():
    """Over a few hundred seeds (both kinds of program), every construct kind
    of the language reference appears."""
    seen: set[str] = set()
    for s in range(300):
        p = generate(s)
        seen |= kinds(p.flat()) | kinds(p.main())
        q = generate(1_000_000 + s, draws=True)
        seen |= kinds(q.main(if_=True))
    assert seen == set(KINDS), sorted(set(KINDS) - seen)


def test_generation_is_deterministic():
    assert generate(7).flat() == generate(7).flat()
    assert generate(7, draws=True).main(if_=True) == generate(7, draws=True).main(if_=True)


def test_departures_are_documented():
    """Every departure the runner accepts has its section in docs/departures.md."""
    page = open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "docs", "departures.md"), encoding="utf-8").read()
    assert "open" not in " ".join(dep.name for dep in DEPARTURES)
    # and those `classify` tells by serq-simpy's message
    by_message = ["a stale-state set in a hold's body", "an instant that does not settle"]
    for name in [dep.name for dep in DEPARTURES] + by_message:
        assert f"## {name}" in page.lower(), name


def test_a_departure_explains_only_the_versions_that_show_it():
    """A departure names the reference versions that show it
    (docs/departures.md), and a difference from another version is a
    finding: `mean_holders` alone is "holders counted as sessions" against
    pyserq 0.1.3, which lists a session once per admission, but not against
    0.1.5, which counts sessions as serq-simpy does (the runner had put
    drawing program 1074607's 0.1.5 difference down to that departure)."""
    source = ("pool p { cap 2; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
              "session { turn; hold p (1) { run d (1); } }\nrun { horizon 5; }\n")
    ours = _report(source)
    ref = json.loads(json.dumps(ours))
    ref["pools"][0]["mean_holders"] += 0.5
    versions = {d.name: d.versions for d in DEPARTURES}
    assert versions["holders counted as sessions"] == ("0.1.3", "0.1.4")
    assert "0.1.5" in versions["a pool pass at a session's end"]
    for version, cls in (("0.1.3", "departure: holders counted as sessions"),
                         ("0.1.4", "departure: holders counted as sessions"),
                         (None, "departure: holders counted as sessions"),
                         ("0.1.5", "finding: numbers pools.mean_holders")):
        got, diffs = classify(Outcome("report", ours), Outcome("report", ref), source,
                              version=version)
        assert (got, len(diffs)) == (cls, 1), version
