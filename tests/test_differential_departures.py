"""Departures from pyserq found by the differential campaign (issue 22) at
a session's end, in a `closed` population's replacements, in an over-cap
hold's need, in a spill tier's cap and in holds that preempt each other at
one instant. Each is pinned to serq-simpy's numbers, worked out in the
comments from the spec sections they name, and, where the reference is
installed, shown to be the departure docs/departures.md documents (pyserq
0.1.3, seed 1)."""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator

import pytest

import serq
from serq.core.errors import SimulationError
from serq.report.json_report import to_dict

from differential_fuzz import CASES, classify, emulated_differences, job_of, rerun, Outcome
from fuzz_departures import end_without_pass, replacement_at_next_event, spill_tier_unchecked
from oracle import UNCOMPARED, compare_reports, requires, run_reference
from test_p03_examples import P7  # spec Part 03 §12 example P-7


def _report(source: str, **kw) -> dict:
    return to_dict(serq.run(serq.load(source=source, **kw)))


# the departure of a pool pass at a session's end (docs/departures.md),
# generator seed 50519 (0.1.3 and 0.1.4). Session 0 fills `gate` until 1;
# session 1 holds all of `p0` and queues at `gate` at 0.5, session 2 queues
# at `p0` at 0.25, session 3 at `gate` at 0.75
END_IN_A_SETTLE = """
stage a : delay;
pool gate { cap 2; }
pool p0 { cap 2; }
workload { arrive batch(4); }
session {
    branch (serial == 0) { hold gate (2) { run a (1); } }
    branch (serial == 1) { hold p0 (2) { run a (0.5); hold gate (1) { } end; } }
    branch (serial == 2) { run a (0.25); hold p0 (2) { } }
    branch (serial == 3) { run a (0.75); hold gate (1) { observe u = used(p0); } }
}
run { horizon 6; }
"""

# a `closed` replacement reads `used(p0)` at once: session 0 keeps p0 as a
# lease until it ends at 1.5, while session 1 waits for p0
END_OF_A_CLOSED_SESSION = """
stage s0 : delay;
stage a : delay;
pool p0 { cap 2; }
workload { arrive closed(2); session { request; end; } }
server {
  observe u = used(p0);
  hold p0 (2) { run a (1); } lease p0 (2)
  run s0 (0.5);
}
run { horizon 6; }
"""


def _samples(source: str, name: str) -> list[tuple[int, float, float]]:
    s = serq.run(serq.load(source=source)).observes[name]
    return [(int(k), t, v) for v, t, k in zip(s.values, s.times, s.sessions)]


def test_a_session_end_admits_at_once():
    """Part 02 §10.3 step 1 and Part 03 §4.3: a session's end runs the
    pool pass at once, before the next ready session runs. At 1 session 0's
    scope end admits sessions 1 and 3 at `gate` (both ready, in that
    order); session 1 ends inside its hold of p0, which admits session 2's
    hold of p0 at once, so session 3 reads used(p0) = 2 (pyserq 0.1.3: 0,
    session 2 is admitted after session 3 has run). In the closed program,
    sessions 0 and 1 read 0 at 0 (session 0 holds p0, session 1 waits);
    each end after that, at 1.5, 3, 4.5 and 6 (each session holds p0 for
    1, keeps it as a lease, and ends 0.5 later), admits the waiting hold
    before the replacement runs: the replacements read 2 (pyserq 0.1.3: 0)."""
    assert _samples(END_IN_A_SETTLE, "u") == [(3, 1.0, 2.0)]
    assert _samples(END_OF_A_CLOSED_SESSION, "u") == [
        (0, 0.0, 0.0), (1, 0.0, 0.0), (2, 1.5, 2.0), (3, 3.0, 2.0), (4, 4.5, 2.0), (5, 6.0, 2.0)]
    with end_without_pass():
        assert _samples(END_IN_A_SETTLE, "u") == [(3, 1.0, 0.0)]
        assert [v for _k, _t, v in _samples(END_OF_A_CLOSED_SESSION, "u")] == [0.0] * 6


# fleet program 28 (tests/fleet_programs.py, deterministic, 0.1.3), made
# small: session 0's growth to 24 units at 2 does not fit kv's cap 18, it is
# the engine's only resident and preempts itself (computed 16), and its hold,
# queued again, needs a reservation of ru(17) = 20 above the cap: the session
# is refused and ends inside the engine's attempt. Its end admits session 1
# at `reqs` at once (Part 03 §4.3; pyserq at the next pass, the iteration's
# end at 3: the departure above). Under that departure's emulation the
# admission waits for the next event -- the process end that the attempt
# left on the calendar is no event (pyserq), no settle and no pool pass
# follow it, although it came after the end of an instant (before the fix
# it was handled as one: session 1 admitted at 2, and no emulation explained
# fleet program 28)
REFUSED_IN_AN_ATTEMPT = """
pool reqs { cap 1; }
pool kv { cap 18; block 4; preempt lifo; }
stage E : step { budget 8; cost 1; memory kv; }
workload { arrive batch(2); session { request; } }
server {
  hold reqs (1), kv (4) reserve (known) at admission (known = computed + 1) {
    observe adm = now;
    run E prefill (30) growing kv;
  }
}
run { horizon 10; }
"""


@requires("0.1.3")
@pytest.mark.parametrize("source", [END_IN_A_SETTLE, END_OF_A_CLOSED_SESSION, REFUSED_IN_AN_ATTEMPT],
                         ids=["same settle", "closed replacement", "refused in an attempt"])
def test_a_session_end_admits_at_once_against_0_1_3(source):
    assert not emulated_differences(source, end_without_pass)
    ref = run_reference(source, "0.1.3")
    assert classify(Outcome("report", _report(source)), Outcome("report", ref), source,
                    rerun(source, job_of(source, "0.1.3")))[0] \
        == "departure: a pool pass at a session's end"


def test_a_session_end_left_by_an_attempt_is_no_event():
    assert _samples(REFUSED_IN_AN_ATTEMPT, "adm") == [(0, 0.0, 0.0), (1, 2.0, 2.0)]
    with end_without_pass():
        # pyserq 0.1.3 (seed 1): session 1 admitted at 3
        assert _samples(REFUSED_IN_AN_ATTEMPT, "adm") == [(0, 0.0, 0.0), (1, 3.0, 3.0)]


# fleet program 58 of the mixed family (0.1.3), made small: the program
# above as a closed population of 2. At 2 session 0 is refused inside the
# engine's attempt and its replacement, session 2, starts: serq-simpy runs
# it at once (Part 02 §10.3 step 1: a session made ready at an instant runs
# at that instant), pyserq at the next event, the iteration's end at 3 (and
# so on at 5 and 8: 6 and 9). Under both emulations serq-simpy gives
# pyserq's `start` samples
REPLACED_IN_AN_ATTEMPT = REFUSED_IN_AN_ATTEMPT.replace(
    "arrive batch(2); session { request; }",
    "arrive closed(2); session { turn; observe start = now; request; }").replace(
    "    observe adm = now;\n", "")


def test_a_replacement_made_in_an_attempt_runs_at_once():
    assert _samples(REPLACED_IN_AN_ATTEMPT, "start") == [
        (0, 0.0, 0.0), (1, 0.0, 0.0), (2, 2.0, 2.0), (3, 5.0, 5.0), (4, 8.0, 8.0)]
    assert _emulated(REPLACED_IN_AN_ATTEMPT, "start") == [
        (0, 0.0, 0.0), (1, 0.0, 0.0), (2, 3.0, 3.0), (3, 6.0, 6.0), (4, 9.0, 9.0)]


@requires("0.1.3")
def test_a_replacement_made_in_an_attempt_is_a_departure_of_0_1_3():
    source = REPLACED_IN_AN_ATTEMPT
    ref = run_reference(source, "0.1.3")
    assert ref["observes"]["start"]["mean"] == 3.6  # (0 + 0 + 3 + 6 + 9) / 5
    cls = classify(Outcome("report", _report(source)), Outcome("report", ref), source,
                   rerun(source, job_of(source, "0.1.3")), "0.1.3")[0]
    assert "a replacement made in an engine's attempt" in cls


# Where pyserq 0.1.3 runs such a replacement (its source: `end_session`
# appends it to the ready list, which the next calendar entry's settle
# empties, or an admission by a later engine's attempt in the same settle),
# told apart by three programs; `replacement_at_next_event` must give each
# pyserq's answer. (1) the next entry is the warm-up's end, which changes
# nothing: the first replacement starts there, at 2.5, not at the
# iteration's end at 3 (then 6 and 9, as without the warm-up; pyserq
# 0.1.3: mean 5.8333 of 3 = (2.5 + 6 + 9) / 3)
REPLACED_AT_THE_WARMUP = REPLACED_IN_AN_ATTEMPT.replace(
    "run { horizon 10; }", "run { horizon 10; warmup 2.5; }")
# (2) the next entry is session 1's delay ending at 3: pyserq runs the
# replacement (session 2) before session 1 goes on, so session 2 takes the
# cap-1 pool `q2` first: `got` (serial × time) 2 × 3, then 1 × 4 (pyserq
# 0.1.3: mean 5 of 2; after the entry's own session, the earlier
# emulation's placement, 1 × 3 and 2 × 4: mean 5.5)
AHEAD_OF_THE_ENTRYS_SESSION = """
pool reqs { cap 1; }
pool kv { cap 18; block 4; preempt lifo; }
pool q2 { cap 1; }
stage E : step { budget 8; cost 1; memory kv; }
stage D : delay;
workload { arrive closed(2); session { turn; request; } }
server {
  branch (serial < 1) {
    hold reqs (1), kv (4) reserve (known) at admission (known = computed + 1) {
      run E prefill (30) growing kv;
    }
  } else {
    branch (serial < 2) { run D (3); }
    hold q2 (1) { observe got = serial * now; run D (1); }
  }
}
run { horizon 4.5; }
"""
# (3) an engine declared after the refusing one admits (`admit via E1`) in
# the same settle: the replacement (session 4) runs then, at 2 (declared
# before it: 3; pyserq 0.1.3: `start` means 32/9 and 33/9, the other eight
# starts 0, 0, 0, 2, 4, 6, 8, 10 in both)
ADMITTED_LATER_IN_THE_SETTLE = """
pool reqs { cap 1; }
pool kv { cap 18; block 4; preempt lifo; }
pool slots { cap 1; admit via E1; }
STAGES
workload { arrive closed(3); session { turn; observe start = now; request; } }
server {
  branch (serial < 1) {
    hold reqs (1), kv (4) reserve (known) at admission (known = computed + 1) {
      run E0 prefill (30) growing kv;
    }
  } else {
    hold slots (1) { run E1 prefill (16); }
  }
}
run { horizon 10; }
"""
_E0 = "stage E0 : step { budget 8; cost 1; memory kv; }"
_E1 = "stage E1 : step { budget 8; cost 1; }"
E0_FIRST = ADMITTED_LATER_IN_THE_SETTLE.replace("STAGES", _E0 + "\n" + _E1)
E1_FIRST = ADMITTED_LATER_IN_THE_SETTLE.replace("STAGES", _E1 + "\n" + _E0)


@contextmanager
def _both_emulations() -> Iterator[None]:
    """The replacement's emulation with the departure it usually comes with
    (the refused session's end admits the next hold)."""
    with replacement_at_next_event(), end_without_pass():
        yield


def _emulated(source: str, name: str) -> list[tuple[int, float, float]]:
    with _both_emulations():
        return _samples(source, name)


def test_the_replacements_place_in_0_1_3_emulated():
    """The emulation's answers to the three programs (pyserq 0.1.3's, below)."""
    assert [t for _k, t, _v in _emulated(REPLACED_AT_THE_WARMUP, "start")] == [2.5, 6.0, 9.0]
    assert [(k, t) for k, t, _v in _emulated(AHEAD_OF_THE_ENTRYS_SESSION, "got")] == [
        (2, 3.0), (1, 4.0)]
    assert _emulated(E0_FIRST, "start")[4] == (4, 2.0, 2.0)
    assert _emulated(E1_FIRST, "start")[4] == (4, 3.0, 3.0)
    # serq-simpy's own semantics (Part 02 §10.3 step 1): the replacement runs
    # at once, at 2 (before the warm-up ends) and ahead of session 1 at 3
    assert [t for _k, t, _v in _samples(REPLACED_AT_THE_WARMUP, "start")] == [5.0, 8.0]
    assert [(k, t) for k, t, _v in _samples(AHEAD_OF_THE_ENTRYS_SESSION, "got")][:2] == [
        (2, 2.0), (1, 3.0)]


@requires("0.1.3")
@pytest.mark.parametrize("source", [REPLACED_AT_THE_WARMUP, AHEAD_OF_THE_ENTRYS_SESSION,
                                    E0_FIRST, E1_FIRST],
                         ids=["warm-up's end", "ahead of the entry's session",
                              "admitted later in the settle", "admitted earlier"])
def test_the_replacements_place_is_0_1_3s(source):
    assert not emulated_differences(source, _both_emulations)


# fleet program 10 (deterministic, 0.1.3), made small: a hold whose demand
# reads the pool's state waits for 17 units of a pool of cap 20 in blocks of
# 8 (24 in blocks) for ever. Part 03 §11 reports `need` as ru(max(u, r)):
# 24; pyserq 0.1.3, 0.1.4 and 0.1.5 report 17 (docs/departures.md)
OVER_CAP_IN_BLOCKS = """
pool mem { cap 20; block 8; }
stage svc : delay;
workload { arrive batch(2); session { request; } }
server { hold mem (17 + queued(mem) * 0) { run svc (1); } }
run { horizon 10; }
"""


def test_over_cap_need_is_in_blocks():
    rep = to_dict(serq.run(serq.load(source=OVER_CAP_IN_BLOCKS)))
    assert rep["pools"][0]["over_cap"] == {"queue": "mem", "need": 24.0}


@requires("0.1.3")
def test_over_cap_need_in_blocks_is_the_departure():
    source = OVER_CAP_IN_BLOCKS
    ref = run_reference(source, "0.1.3")
    assert ref["pools"][0]["over_cap"] == {"queue": "mem", "need": 17}
    assert classify(Outcome("report", _report(source)), Outcome("report", ref), source,
                    rerun(source, job_of(source, "0.1.3")), "0.1.3")[0] \
        == "departure: over_cap's need before rounding"


# generator seed 4549 (0.1.3 and 0.1.4; tests/differential_cases/0.1.3/
# seed4549_unsettled.sq): an iteration body's `admit` without `while` admits
# again after a preemption (Part 04 §9); at 7.954 two holds of `kv` preempt
# each other and are admitted again at once, for ever. Part 02 §10.5 stops
# the run; pyserq 0.1.3 gives no answer (none within 300 s of wall time)
def test_holds_that_preempt_each_other_at_one_instant_stop_the_run():
    path = os.path.join(CASES, "0.1.3", "seed4549_unsettled.sq")
    with pytest.raises(SimulationError, match=r"the instant t = 7\.95\d* does not settle: "
                       r"session \d+ became ready 1001 times .*preempt each other") as info:
        serq.run(serq.load(source=open(path, encoding="utf-8").read()))
    # where it waits: line 16's `run E prefill`, inside the hold that is preempted
    assert info.value.notes == ["the session is at <program>:16:19"]


# the departure of a spill tier kept within its cap (docs/departures.md):
# Part 03 §12's P-7 with a 4-unit tier
SPILL_SMALL_TIER = P7.replace("HOSTCAP", "4") + "run { horizon 30; }\n"


def test_a_spill_tier_is_kept_within_its_cap():
    d = _report(SPILL_SMALL_TIER)
    # Part 03 §9 step 3: at 2 three 2-unit pieces spill; the third finds the
    # tier full (4 of 4) and evicts session 0's whole entry there (no block),
    # so the tier ends with 2 units. pyserq 0.1.3, seed 1: the tier takes all
    # three pieces, 6 units in a 4-unit tier (`in_host` 6, `mean_cached` 5.6)
    host = d["pools"][1]
    assert d["observes"]["in_host"]["mean"] == 2
    assert (host["evicted_entries"], host["evicted_units"]) == (1, 4)
    with spill_tier_unchecked():
        emulated = _report(SPILL_SMALL_TIER)
    assert emulated["observes"]["in_host"]["mean"] == 6
    assert emulated["pools"][1]["mean_cached"] == pytest.approx(5.6, rel=1e-9)


@requires("0.1.3")
def test_a_spill_tier_is_kept_within_its_cap_against_0_1_3():
    ref = run_reference(SPILL_SMALL_TIER, "0.1.3")
    with spill_tier_unchecked():
        emulated = _report(SPILL_SMALL_TIER)
    assert not compare_reports(emulated, ref, ignore=UNCOMPARED)
    assert classify(Outcome("report", _report(SPILL_SMALL_TIER)), Outcome("report", ref),
                    SPILL_SMALL_TIER, lambda: Outcome("report", _report(SPILL_SMALL_TIER)))[0] \
        == "departure: a spill tier kept within its cap"
