"""A prefill end after a preemption (spec Part 06 §4 and §6.2, with the
reference's reading): it continues the sequence when it is on the previous
token's stage and the session was preempted since that token, wherever the
preemption found the session -- resident at another stage, or growing at no
stage at all; on another stage it starts the sequence afresh, even when the
preemption was on the previous token's stage.

Found by the differential campaign (generator seeds 51278 and 51056 against
pyserq 0.1.3: `mean_itl` null against a number). Each program is small
enough to work by hand; `cost 1`, so an iteration of k tokens started at t
ends at t + 1. The two sessions are apart in time (session 1 starts at 5)
except for the one preemption each program is about. Every number below is
also what pyserq 0.1.3 gives at seed 1 (the differential test at the end,
run where the reference is installed); the code before this rule gave the
other answer in each, as each docstring says."""
from __future__ import annotations

import pytest

import serq
from serq.report.json_report import to_dict

from oracle import assert_fields_match, requires, run_reference


def rows(source: str) -> dict:
    """Each stage's `mean_itl`, and the pool's preemptions."""
    rep = to_dict(serq.run(serq.load(None, source=source)))
    out = {s["name"]: s["mean_itl"] for s in rep["stages"]}
    out["preemptions"] = rep["pools"][0]["preemptions"]
    return out


# two sessions, apart in time (session 1 starts at 5); BODY is the session's
# hold, whose growth preempts (lifo: session 1, admitted last)
PROGRAM = """
pool p { cap 8; preempt lifo; }
stage E : step { budget EBUDGET; cost 1; }
stage F : step { budget 1; cost 1; }
stage D : delay;
workload { arrive batch(2); }
session { turn; run D (serial * 5);
          BODY }
run { horizon 40; warmup 0; seed 1; }
"""


def program(body: str, e_budget: int = 16) -> str:
    return PROGRAM.replace("EBUDGET", str(e_budget)).replace("BODY", body)


# session 1 is preempted at F (by session 0's growth); its previous token,
# and its next, are on E
ELSEWHERE = program("hold p (3) { run E prefill (1); run F prefill (1 + 20 * serial); "
                    "run D (10 * (1 - serial)); grow p (3); }")

# session 1 is preempted at E, where its previous token was; its next is on F
NEXT_ELSEWHERE = program("hold p (3) { run F prefill (1); run E prefill (1); "
                         "run E prefill (1 + 20 * serial); run D (10 * (1 - serial)); "
                         "grow p (3); }", e_budget=1)

# session 1's own growth preempts it (it was admitted last), at no stage
HOLD = ("hold p (computed > 0 ? 6 : 3) { run E prefill (1) growing p; run D (20 * (1 - serial)); "
        "grow p (computed > 0 ? 0 : 3 * serial); }")
GROWING_SESSION = program(HOLD)
GROWING_LEG = program("fork { " + HOLD + " } join;")


def test_a_preemption_at_another_stage_lets_the_next_end_on_the_same_stage_continue():
    """Session 0: E [0, 1) (a token at 1), F [1, 2), the delay to 12, where
    it grows p to 6 + 3 > 8: lifo preempts session 1 (admitted last, at 5),
    resident at F with 10 of its 21 tokens done. Session 1's tokens: E at 6;
    admitted again at 12 (session 0's hold ended), E [12, 13): the end at 13
    is on its previous token's stage, after a preemption -- a gap of 7 on E,
    the run's only one; its F run ends at 34 after a prefill end and no
    preemption, so it starts afresh (F: none). Before: E none (the
    preemption was at F)."""
    assert rows(ELSEWHERE) == {"E": 7.0, "F": None, "D": None, "preemptions": 1}


def test_a_preemption_on_the_previous_tokens_stage_does_not_carry_to_another():
    """Session 1 (from 5): F [5, 6), E [6, 7) (its token at 7), then its
    21-token prefill on E from 7; session 0's growth at 13 preempts it there
    (lifo). Admitted again at 13, its first prefill end is at F, 14: not its
    previous token's stage (E), so it starts afresh although the preemption
    was at E; every other prefill end follows one with no preemption between
    (F [0, 1) and E [1, 3) of session 0, E at 15 and 36 of session 1). No
    gap anywhere. Before: F's mean_itl 7 (from 7 to 14)."""
    assert rows(NEXT_ELSEWHERE) == {"E": None, "F": None, "D": None, "preemptions": 1}


@pytest.mark.parametrize("source", [GROWING_SESSION, GROWING_LEG], ids=["session", "fork leg"])
def test_a_grower_that_preempts_itself_continues_at_its_next_prefill_end(source):
    """Session 1 (from 5) holds 3, prefills on E [5, 6) (a token at 6) and
    grows p by 3: 3 + 3 + 3 > 8, and lifo picks itself (admitted last), at
    no stage. Its hold asks 6 again (computed = 1), which waits for session
    0's release at 21 (session 0: E [0, 1), the delay to 21, no growth). E
    [21, 22): the end at 22 is on the previous token's stage, after the
    preemption: a gap of 16. A fork leg's tokens are a sequence of their
    own, with the same rule. Before: none."""
    assert rows(source) == {"E": 16.0, "F": None, "D": None, "preemptions": 1}


@requires("0.1.3")
@pytest.mark.oracle
@pytest.mark.parametrize("source", [ELSEWHERE, NEXT_ELSEWHERE, GROWING_SESSION, GROWING_LEG])
def test_preemption_programs_against_the_reference(source):
    """The same programs under pyserq 0.1.3 (seed 1): every stage field it
    reports and the count of events."""
    ours, ref = to_dict(serq.run(serq.load(None, source=source))), run_reference(source, version="0.1.3")
    assert_fields_match(ours, ref, "stages")
    assert ours["events"] == ref["events"]
