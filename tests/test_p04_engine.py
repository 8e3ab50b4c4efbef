"""Part 04 §13: the worked step-engine scenarios SE-1 … SE-18, end to end,
with every number and every variant the spec's text gives.

Every expected number names the spec section it comes from (Part 04 unless
stated). The numbers are pyserq 0.1.3's (seed 1, warm-up 0); every program
(in p04_programs.py) was also run in pyserq 0.1.3 while this file was
written and printed exactly the numbers asserted (test_p04_differential.py
compares the whole reports and every sample with the reference).

Conventions of §13: `cost 1` (the step clock), all sessions at 0 unless a
`gate` delay stage spreads them, and the server block

    server { run engine prefill (n); observe ttft = now; run engine decode (o - 1);
             observe response = now; }

Where §13 gives no horizon the tests use one past the last event (20 for
the short scenarios, 100 for SE-10 … SE-12, whose runs end by t = 65);
every asserted number is then independent of the horizon except the time
averages of SE-1, SE-2 and SE-13, which §13 quotes at horizon 20.

SE-5 observes `adm` where §13 observes `admitted`, a supplied name refused
as an observation name (Part 01 §6.2; pyserq 0.1.5 refuses it too).

Observations are compared per session serial (a scenario lists values "s0,
s1, s2"), values and times to a relative 1e-9; counts exactly.

The programs are in p04_programs.py.
"""
from __future__ import annotations

import math

import pytest

from e2e_util import assert_close, run
from p04_programs import (
    SE1, SE11, SE12, SE13, SE14_CACHED_PREFIX, SE14_NOT_GROWING, SE15_ADMISSION_ENGINE,
    SE15_ADMISSION_KERNEL, SE15_ENGINE, SE15_KERNEL, SE17, SE2, SE3_ORDERS, SE5,
    SE8_BODIES, SE8_IDLE, se10, se14, se16, se18, se3, se4, se6, se6_full_budget,
    se6_three, se7, se9)

# ---------------------------------------------------------------- helpers


def by_serial(rep, name):
    """serial -> list of values of observation `name`, in recording order."""
    out: dict[int, list[float]] = {}
    s = rep.observes[name]
    for v, k in zip(s.values, s.sessions):
        out.setdefault(int(k), []).append(v)
    return out


def triples(rep, name):
    """(serial, time, value) of every sample of `name`, in recording order."""
    s = rep.observes[name]
    return [(int(k), t, v) for v, t, k in zip(s.values, s.times, s.sessions)]


def assert_per_session(rep, name, expected, what=""):
    """`expected` maps serial -> value or list of values (recording order).
    Sessions not in `expected` must have no sample."""
    got = by_serial(rep, name)
    exp = {k: (list(v) if isinstance(v, (list, tuple)) else [v]) for k, v in expected.items()}
    ok = set(got) == set(exp) and all(
        len(got[k]) == len(exp[k]) and all(
            math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(got[k], exp[k]))
        for k in exp)
    assert ok, f"{what} observe {name}: got {got}, expected {exp}"


def assert_triples(rep, name, expected, what=""):
    got = triples(rep, name)
    ok = len(got) == len(expected) and all(
        g[0] == e[0] and math.isclose(g[1], e[1], rel_tol=1e-9, abs_tol=1e-12)
        and math.isclose(g[2], e[2], rel_tol=1e-9, abs_tol=1e-12)
        for g, e in zip(got, expected))
    assert ok, f"{what} observe {name}: got {got}, expected {expected}"


_COUNTS = {"completed", "iterations", "admissions", "evicted_entries", "preemptions",
           "spills", "rejected", "stuck", "growing_at_end"}


def assert_row(row, what="", **expected):
    """Fields of a StageRow / PoolRow: counts and booleans exactly, None = NaN
    (JSON null), other numbers to a relative 1e-9."""
    assert row is not None, f"{what}: no such row"
    bad = []
    for field, exp in expected.items():
        got = getattr(row, field)
        if isinstance(exp, bool):
            ok = got is exp or got == exp and isinstance(got, bool)
        elif exp is None:
            ok = got is None or (isinstance(got, float) and math.isnan(got))
        elif field in _COUNTS:
            ok = got == exp and float(got).is_integer()
        else:
            ok = got is not None and math.isclose(float(got), exp, rel_tol=1e-9, abs_tol=1e-12)
        if not ok:
            bad.append(f"{field}: got {got!r}, expected {exp!r}")
    assert not bad, f"{what} {row.label}: " + "; ".join(bad)


# ---------------------------------------------------------------- SE-1

def test_p04_se1_one_request_chunked_by_budget():
    rep = run(SE1, horizon=20)  # §13 SE-1: report at horizon 20
    # §13 SE-1: prefill 4, 4, 2 -> ttft 3; decodes end at 4, 5, 6 -> response 6
    assert_triples(rep, "ttft", [(0, 3, 3)])
    assert_triples(rep, "response", [(0, 6, 6)])
    assert_row(rep.stage("engine"), "SE-1",
               iterations=6,            # §13 SE-1
               prefill_only=0.15,       # §13 SE-1
               decode_only=0.15,        # §13 SE-1
               mean_decode_batch=1,     # §13 SE-1
               mean_itl=1,              # §13 SE-1
               completed=2,             # §13 SE-1
               mean_service=3)          # §13 SE-1
    # §12: a step stage has mean_wait 0 ("a step job starts when it joins")
    assert_row(rep.stage("engine"), "SE-1", mean_wait=0, mixed=0)


# ---------------------------------------------------------------- SE-2

def test_p04_se2_two_requests_share_the_budget():
    rep = run(SE2, horizon=20)  # §13 SE-2: report at horizon 20
    # §13 SE-2: ttft s0 1, s1 2; response s0 3, s1 4
    assert_per_session(rep, "ttft", {0: 1, 1: 2})
    assert_per_session(rep, "response", {0: 3, 1: 4})
    assert_row(rep.stage("engine"), "SE-2",  # §13 SE-2 report, every field
               mean_number=0.35, utilization=0.2, completed=4, throughput=0.2,
               mean_wait=0, mean_service=1.75, iterations=4, prefill_only=0.05,
               decode_only=0.1, mixed=0.05, mean_decodes=0.2,
               mean_decode_batch=4 / 3,     # §13 SE-2: 1.3333
               mean_decode_step=1, mean_itl=1, itl_p50=1, itl_p99=1,
               idle_with_work=False)


# ---------------------------------------------------------------- SE-3

# §13 SE-3 table: serve -> (ttft s0, s1, s2), (response s0, s1, s2), iterations
SE3_TABLE = {
    "": ((2, 2, 3), (4, 4, 5), 5),                       # admission (default)
    "serve admission;": ((2, 2, 3), (4, 4, 5), 5),
    "serve decode first;": ((2, 2, 3), (4, 4, 5), 5),
    "serve by (-admission);": ((2, 2, 3), (4, 4, 5), 5),
    "serve by (remaining);": ((3, 1, 1), (5, 3, 3), 5),
    "serve by (-remaining);": ((3, 2, 2), (5, 4, 4), 5),
    "serve exclusive prefill;": ((2, 3, 4), (6, 6, 6), 6),
}


@pytest.mark.parametrize("serve", SE3_ORDERS, ids=["default", "admission", "decode_first",
                                                  "by_neg_admission", "by_remaining",
                                                  "by_neg_remaining", "exclusive_prefill"])
def test_p04_se3_orders(serve):
    rep = run(se3(serve), horizon=20)
    ttft, response, iterations = SE3_TABLE[serve]  # §13 SE-3 table
    assert_per_session(rep, "ttft", dict(enumerate(ttft)), serve)
    assert_per_session(rep, "response", dict(enumerate(response)), serve)
    assert_row(rep.stage("engine"), serve, iterations=iterations, completed=6)


def test_p04_se3_exclusive_prefill_itl():
    rep = run(se3("serve exclusive prefill;"), horizon=20)
    # §13 SE-3: under exclusive prefill mean_itl 1.5 and itl_p99 3 (s0's tokens at 2, 5, 6)
    assert_row(rep.stage("engine"), "SE-3 exclusive", mean_itl=1.5, itl_p99=3)
    assert_triples(rep, "ttft", [(0, 2, 2), (1, 3, 3), (2, 4, 4)])
    assert_per_session(rep, "response", {0: 6, 1: 6, 2: 6})


# ---------------------------------------------------------------- SE-4

@pytest.mark.parametrize("chunk", ["chunk 3;", "chunk residents > 1 ? 3 : 0;"],
                         ids=["const", "expr"])
def test_p04_se4_chunk(chunk):
    rep = run(se4(chunk), horizon=20)
    # §13 SE-4: ttft s0 3, s1 2; done s0 5, s1 4 (s0 gets 3, 3, 1); the same
    # with `chunk residents > 1 ? 3 : 0;`
    assert_per_session(rep, "ttft", {0: 3, 1: 2}, chunk)
    assert_per_session(rep, "response", {0: 5, 1: 4}, chunk)
    # s1's ttft (2) is recorded before s0's (3): time order (Part 06 §2)
    assert [k for k, _, _ in triples(rep, "ttft")] == [1, 0]


# ---------------------------------------------------------------- SE-5

def test_p04_se5_vllm_admission_budget_left_first_chunk():
    rep = run(SE5, horizon=20)
    # §13 SE-5: admitted 0, 0, 3; alloc 8, 12, 16; ttft 1, 2, 4; response 3, 4, 6
    assert_per_session(rep, "adm", {0: 0, 1: 0, 2: 3})
    assert_per_session(rep, "alloc", {0: 8, 1: 12, 2: 16})
    assert_per_session(rep, "ttft", {0: 1, 1: 2, 2: 4})
    assert_per_session(rep, "response", {0: 3, 1: 4, 2: 6})
    # §13 SE-5: reqs mean_wait 1, admissions 3
    assert_row(rep.pool("reqs"), "SE-5", mean_wait=1, admissions=3)


# ---------------------------------------------------------------- SE-6

def test_p04_se6_exclusive_prefill_displaces_decodes():
    rep = run(se6("serve exclusive prefill;"), horizon=20)
    # §13 SE-6: batches A p2 | B p4 | A d1 | A d1; ttft A 1, B 1; response A 4, B 1
    assert_per_session(rep, "ttft", {0: 1, 1: 1})
    assert_per_session(rep, "response", {0: 4, 1: 1})
    # B arrives at 1 and is done at 2; A's decodes end at 3 and 4
    assert_triples(rep, "response", [(1, 2, 1), (0, 4, 4)])
    assert_row(rep.stage("engine"), "SE-6", iterations=4)  # four batches (§13 SE-6)


def test_p04_se6_without_clause_batches_mix():
    rep = run(se6(""), horizon=20)
    # §13 SE-6: without the serve clause A p2 | A d1 + B p3 | A d1 + B p1:
    # ttft B 2 (done at 3), response A 3
    assert_per_session(rep, "ttft", {0: 1, 1: 2})
    assert_per_session(rep, "response", {0: 3, 1: 2})
    assert_triples(rep, "response", [(0, 3, 3), (1, 3, 2)])
    assert_row(rep.stage("engine"), "SE-6 default", iterations=3)  # three batches


def test_p04_se6_three_prompts_one_prefill_per_iteration():
    rep = run(se6_three("serve exclusive prefill;"), horizon=20)
    # §13 SE-6: one prefill per iteration: admitted 0, 1, 2; ttft 1, 2, 3; all
    # done at 5; the displaced decodes' growth stays allocated: used(kv) at the
    # admissions 2, 5, 8
    assert_per_session(rep, "adm", {0: 0, 1: 1, 2: 2})
    assert_per_session(rep, "ttft", {0: 1, 1: 2, 2: 3})
    assert_per_session(rep, "done", {0: 5, 1: 5, 2: 5})
    assert_per_session(rep, "u", {0: 2, 1: 5, 2: 8})


def test_p04_se6_three_prompts_without_clause():
    rep = run(se6_three(""), horizon=20)
    # §13 SE-6: without the clause: all admitted at 0, ttft 1, done 3
    assert_per_session(rep, "adm", {0: 0, 1: 0, 2: 0})
    assert_per_session(rep, "ttft", {0: 1, 1: 1, 2: 1})
    assert_per_session(rep, "done", {0: 3, 1: 3, 2: 3})


def test_p04_se6_tentative_decodes_use_the_whole_budget():
    rep = run(se6_full_budget(2), horizon=20)
    # §13 SE-6: budget 2: admitted 0, 1, 6; ttft 1, 2, 7; done 6, 6, 11
    assert_per_session(rep, "adm", {0: 0, 1: 1, 2: 6})
    assert_per_session(rep, "ttft", {0: 1, 1: 2, 2: 7})
    assert_per_session(rep, "done", {0: 6, 1: 6, 2: 11})


def test_p04_se6_budget_3_admits_the_displacing_prefill():
    rep = run(se6_full_budget(3), horizon=20)
    # §13 SE-6: with budget 3: admitted 0, 1, 2; ttft 1, 2, 3; all done at 7
    assert_per_session(rep, "adm", {0: 0, 1: 1, 2: 2})
    assert_per_session(rep, "ttft", {0: 1, 1: 2, 2: 3})
    assert_per_session(rep, "done", {0: 7, 1: 7, 2: 7})


# ---------------------------------------------------------------- SE-7

@pytest.mark.parametrize("clause, ttft, response", [
    # §13 SE-7: ttft 1, 4, 4; response 3, 6, 6
    ("serve only (decoders > 0 ? decoding : !decoding);", (1, 4, 4), (3, 6, 6)),
    # §13 SE-7: default serving: ttft 1, 2, 3; response 3, 4, 5
    ("", (1, 2, 3), (3, 4, 5)),
    # §13 SE-7: `serve only (decoders < residents ? !decoding : decoding)`: same as default
    ("serve only (decoders < residents ? !decoding : decoding);", (1, 2, 3), (3, 4, 5)),
], ids=["phases", "default", "reverse"])
def test_p04_se7_serve_only(clause, ttft, response):
    rep = run(se7(clause), horizon=20)
    assert_per_session(rep, "ttft", dict(enumerate(ttft)), clause)
    assert_per_session(rep, "response", dict(enumerate(response)), clause)


def test_p04_se7_admitted_while_excluded():
    # §13 SE-7: s1 and s2 are admitted at 1 and 2 but wait while s0 decodes:
    # the pool admitted all three without waiting (§8.5: a newcomer is
    # admitted even if `p` excludes it)
    rep = run(se7("serve only (decoders > 0 ? decoding : !decoding);"), horizon=20)
    assert_row(rep.pool("reqs"), "SE-7", admissions=3, mean_wait=0)


# ---------------------------------------------------------------- SE-8

@pytest.mark.parametrize("body, ttft, response", [
    (SE8_BODIES[0], (1, 2, 3), (3, 4, 5)),   # §13 SE-8 table row 1 (vLLM)
    (SE8_BODIES[1], (1, 3, 3), (3, 5, 5)),   # §13 SE-8 table row 2 (TGI-like)
    (SE8_BODIES[2], (1, 2, 3), (5, 5, 5)),   # §13 SE-8 table row 3 (SGLang-like)
    (SE8_BODIES[3], (1, 4, 4), (3, 6, 6)),   # §13 SE-8 table row 4 (static batching)
    (SE8_BODIES[4], (1, 3, 4), (3, 5, 6)),   # §13 SE-8 table row 5
], ids=["vllm", "tgi", "sglang", "static", "admit_only"])
def test_p04_se8_iteration_bodies(body, ttft, response):
    rep = run(se7(body), horizon=20)
    assert_per_session(rep, "ttft", dict(enumerate(ttft)), body)
    assert_per_session(rep, "response", dict(enumerate(response)), body)


def test_p04_se8_idle_with_work():
    rep = run(SE8_IDLE, horizon=20)
    # §13 SE-8: the first is served (ttft 1); at 5 the attempt admits nobody, so
    # `just = 0` is undone and the second never runs; iterations 1,
    # idle_with_work true
    assert_triples(rep, "ttft", [(0, 1, 1)])
    assert_triples(rep, "response", [(0, 1, 1)])
    assert_row(rep.stage("engine"), "SE-8 idle", iterations=1, idle_with_work=True)
    assert_row(rep.stage("gate"), "SE-8 idle gate", idle_with_work=False)  # §12: false for other kinds
    assert rep.ended == 1 and rep.arrivals == 2


# ---------------------------------------------------------------- SE-9

@pytest.mark.parametrize("granule, ttft, done", [
    ("", {0: 1, 1: 2}, {0: 2, 1: 3}),              # §13 SE-9: default ttft 1, 2 / done 2, 3
    ("granule 4;", {0: 1, 1: 3}, {0: 2, 1: 4}),    # §13 SE-9: granule 4: ttft 1, 3 / done 2, 4
    ("granule inf;", {0: 1}, {0: 2}),              # §13 SE-9: granule inf: s1 never runs
], ids=["default", "granule4", "granule_inf"])
def test_p04_se9_granule(granule, ttft, done):
    rep = run(se9(granule), horizon=20)
    assert_per_session(rep, "ttft", ttft, granule)
    assert_per_session(rep, "done", done, granule)
    # §9: a `granule inf` prefill larger than the budget leaves idle_with_work
    assert_row(rep.stage("e"), granule, idle_with_work=(granule == "granule inf;"))


def test_p04_se9_granule_4_grants():
    # §13 SE-9: s1's 2-token grant rounds to 0 at 0; it gets 4 then 2: three
    # iterations carry s1's prefill or s0's tokens, plus s1's decode
    rep = run(se9("granule 4;"), horizon=20)
    assert_row(rep.stage("e"), "SE-9 granule 4", iterations=4, completed=4)


# ---------------------------------------------------------------- SE-10

# §13 SE-10: preempt clause -> first (s0..s3), done (s0..s3), kv.preemptions (None: not stated)
SE10_TABLE = {
    "preempt lifo;": ((1, 2, 3, 32), (30, 31, 51, 61), 1),
    "preempt by (-admission);": ((1, 2, 3, 32), (30, 31, 51, 61), 1),       # "is identical"
    "preempt by (-admission) requeue tail;": ((1, 2, 3, 13), (30, 31, 51, 52), 2),
    "preempt by (admission);": ((1, 2, 3, 33), (50, 31, 32, 62), None),
    "preempt by (-position);": ((1, 2, 3, 33), (50, 31, 32, 62), None),
}


@pytest.mark.parametrize("policy", list(SE10_TABLE), ids=["lifo", "by_neg_admission",
                                                       "requeue_tail", "by_admission",
                                                       "by_neg_position"])
def test_p04_se10_vllm_preemption_and_recompute(policy):
    rep = run(se10(policy), horizon=100)
    first, done, preemptions = SE10_TABLE[policy]
    assert_per_session(rep, "first", dict(enumerate(first)), policy)
    assert_per_session(rep, "done", dict(enumerate(done)), policy)
    if preemptions is not None:
        assert_row(rep.pool("kv"), policy, preemptions=preemptions)
    assert rep.ended == 4


def test_p04_se10_iterations_one_fewer_than_vllm():
    rep = run(se10("preempt lifo;"), horizon=100)
    # §15 "Counting iterations against vLLM": 61 (vLLM's step count is 62)
    assert_row(rep.stage("engine"), "SE-10", iterations=61)


def test_p04_se10_self_preemption_and_readmission():
    rep = run(se10("preempt lifo;", observe_admissions=True), horizon=100)
    # §13 SE-10: s2 preempts itself (computed 48); re-admitted at 30 with known
    # 49; the other admissions are first admissions (known = prompt = 40)
    assert_per_session(rep, "adm", {0: 0, 1: 1, 2: [2, 30], 3: 31})
    assert_per_session(rep, "comp", {0: 0, 1: 0, 2: [0, 48], 3: 0})
    assert_per_session(rep, "kn", {0: 40, 1: 40, 2: [40, 49], 3: 40})
    # observations do not change the run (same numbers as without them)
    assert_per_session(rep, "first", {0: 1, 1: 2, 2: 3, 3: 32})
    assert_per_session(rep, "done", {0: 30, 1: 31, 2: 51, 3: 61})


def test_p04_se10_preempt_none_deadlocks():
    rep = run(se10("preempt none;"), horizon=100)
    # §13 SE-10: `preempt none` deadlocks (only `first` 1, 2, 3 observed)
    assert_per_session(rep, "first", {0: 1, 1: 2, 2: 3})
    assert triples(rep, "done") == []
    assert_row(rep.pool("kv"), "SE-10 none", preemptions=0)
    # §9: a stalled grower leaves the stage idle with work at the end
    assert_row(rep.stage("engine"), "SE-10 none", idle_with_work=True)
    assert rep.ended == 0


# ---------------------------------------------------------------- SE-11

def test_p04_se11_newest_first_preempt():
    rep = run(SE11, horizon=100)
    # §13 SE-11: first s2 3, s0 5, s3 18, s1 26; done s2 16, s3 23, s0 26, s1 49
    assert_triples(rep, "first", [(2, 3, 3), (0, 5, 5), (3, 18, 18), (1, 26, 26)])
    assert_triples(rep, "done", [(2, 16, 16), (3, 23, 23), (0, 26, 26), (1, 49, 49)])
    assert_row(rep.pool("kv"), "SE-11", preemptions=2)          # §13 SE-11: 2 preemptions
    assert_row(rep.stage("engine"), "SE-11", iterations=49)     # §15: 49 (vLLM 50)


# ---------------------------------------------------------------- SE-12

def test_p04_se12_victim_that_is_not_the_grower():
    rep = run(SE12, horizon=100)
    # §13 SE-12: done s0 65, s1 43
    assert_per_session(rep, "done", {0: 65, 1: 43})
    # §13 SE-12: kv.preemptions 8, kv.stuck 1; 62 iterations
    assert_row(rep.pool("kv"), "SE-12", preemptions=8, stuck=1)
    assert_row(rep.stage("engine"), "SE-12", iterations=62)
    # §13 SE-12 admissions (adm/comp): both at 0; s1 at 12 (computed 16); s0 at
    # 19 (32), 24 (18), then 27, 30, 33, 36, 43 (16 each)
    assert_triples(rep, "adm", [(0, 0, 0), (1, 0, 0), (1, 12, 12), (0, 19, 19), (0, 24, 24),
                                (0, 27, 27), (0, 30, 30), (0, 33, 33), (0, 36, 36),
                                (0, 43, 43)])
    assert [v for _, _, v in triples(rep, "comp")] == [0, 0, 16, 32, 18, 16, 16, 16, 16, 16]


# ---------------------------------------------------------------- SE-13

def test_p04_se13_self_preemption_livelock():
    rep = run(SE13, horizon=20)  # §13 SE-13: horizon 20
    # §13 SE-13: re-admitted at 6, 12, 18 with computed 8; never done
    assert_triples(rep, "adm", [(0, 0, 0), (0, 6, 6), (0, 12, 12), (0, 18, 18)])
    assert_triples(rep, "comp", [(0, 0, 0), (0, 6, 8), (0, 12, 8), (0, 18, 8)])
    assert triples(rep, "done") == []
    assert_row(rep.stage("engine"), "SE-13",
               iterations=21, prefill_only=0.2, decode_only=0.65, mixed=0,   # §13 SE-13
               mean_itl=1.1875, itl_p99=2)                                   # §13 SE-13
    assert_row(rep.pool("kv"), "SE-13", preemptions=3, stuck=1, admissions=4)  # §13 SE-13
    assert_row(rep.pool("reqs"), "SE-13", mean_wait=0.75)                     # §13 SE-13


# ---------------------------------------------------------------- SE-14

@pytest.mark.parametrize("cost, finish", [
    ("1 + attention", 22),    # §13 SE-14: costs 9 and 13
    ("1 + kv_prefill", 22),   # §13 SE-14: 5, then 1 + 8 + 8
    ("1 + residents", 6),     # §13 SE-14
    ("1 + prefilled", 10),    # §13 SE-14
    ("1 + tokens", 10),       # §13 SE-14
    ("1 + kv_decode", 2),     # §13 SE-14
    ("1 + decoders", 2),      # §13 SE-14
], ids=["attention", "kv_prefill", "residents", "prefilled", "tokens", "kv_decode", "decoders"])
def test_p04_se14_what_cost_reads(cost, finish):
    rep = run(se14(cost), horizon=100)
    # §13 SE-14: both finish at the same time; two iterations
    assert_per_session(rep, "t", {0: finish, 1: finish}, cost)
    assert_row(rep.stage("engine"), cost, iterations=2, completed=2)


def test_p04_se14_non_growing_prefill_attention():
    rep = run(SE14_NOT_GROWING, horizon=100)
    # §13 SE-14: a non-growing 6-token prefill under cost 1 + attention finishes
    # at 12 (attention 8, then 2: K stays 0; costs 9 and 3)
    assert_triples(rep, "t", [(0, 12, 12)])


def test_p04_se14_growing_prefill_after_cached_prefix():
    rep = run(SE14_CACHED_PREFIX, horizon=100)
    # §13 SE-14: a growing prefill after a cached prefix of 4 starts at K = 4:
    # first hold 1 + 4·(0 + 2) = 9; the second consumes the 4 cached units
    # (Part 03 §4.2: position starts at own) and costs 1 + 2·(4 + 1) = 11
    assert_triples(rep, "t1", [(0, 9, 9)])
    assert_triples(rep, "c", [(0, 9, 4)])
    assert_triples(rep, "t", [(0, 20, 11)])


# ---------------------------------------------------------------- SE-15

def test_p04_se15_kernel_form():
    rep = run(SE15_KERNEL, horizon=10)
    # §11.2 / §13 SE-15: the prefills tie on remaining, session 0 takes the 8
    # tokens first; finished 1.8 and 3.6
    assert_triples(rep, "finished", [(0, 1.8, 1.8), (1, 3.6, 3.6)])
    assert_row(rep.stage("llm"), "SE-15", iterations=2)


def test_p04_se15_engine_form():
    rep = run(SE15_ENGINE, horizon=10)  # the seed example: `serq run model.sq --horizon 10`
    # §11.2 / §13 SE-15: the engine form is the kernel stage: finished 1.8, 3.6
    assert_triples(rep, "finished", [(0, 1.8, 1.8), (1, 3.6, 3.6)])
    assert [s.name for s in rep.stages] == ["llm"]
    assert_row(rep.stage("llm"), "SE-15 engine", iterations=2)


@pytest.mark.parametrize("source", [SE15_ADMISSION_KERNEL, SE15_ADMISSION_ENGINE],
                         ids=["kernel", "engine"])
def test_p04_se15_admission_order_variant(source):
    rep = run(source, horizon=10)
    # §13 SE-15: advance running (admission order), execute (1), prefill 8
    # then decode 2: both finish at 4 (s1's prefill joined before s0's decode
    # run and takes the 8 tokens at 1; decodes at 2 and 3)
    assert_per_session(rep, "finished", {0: 4, 1: 4})
    assert_row(rep.stage("llm"), "SE-15 admission", iterations=4)


# ---------------------------------------------------------------- SE-16

@pytest.mark.parametrize("serve", ["serve by (-admission);", ""], ids=["by_neg_admission", "default"])
def test_p04_se16_plain_pool_under_preemption(serve):
    rep = run(se16(serve), horizon=20)
    # §13 SE-16 ("the default order gives the same numbers"):
    # adm s1 0, 2, 4; ttft 1, 1, 5; done s0 4, s1 8; preemptions 2
    assert_per_session(rep, "adm", {0: 0, 1: [0, 2, 4]}, serve)
    assert_per_session(rep, "ttft", {0: 1, 1: [1, 5]}, serve)
    assert_per_session(rep, "done", {0: 4, 1: 8}, serve)
    # §13 SE-16: s1 comes back at 2 (u 10) before the iteration at 2, whose
    # growth preempts it again (computed 0 ... first preemption computed 5)
    assert by_serial(rep, "u")[1][1] == 10
    assert_per_session(rep, "comp", {0: 0, 1: [0, 5, 0]}, serve)
    assert_row(rep.pool("kv"), serve, preemptions=2, stuck=1)  # §13 SE-16: preemptions 2, stuck 1


# ---------------------------------------------------------------- SE-17

def test_p04_se17_two_queues_one_engine():
    rep = run(SE17, horizon=20)
    # §13 SE-17: the head of `a` (s1) does not fit and ends the iteration's
    # admissions, so s2 waits although `b` has room. Admitted 0, 1, 1.
    assert_per_session(rep, "adm", {0: 0, 1: 1, 2: 1})
    assert_row(rep.pool("a"), "SE-17", admissions=2)
    assert_row(rep.pool("b"), "SE-17", admissions=1, mean_wait=1)


# ---------------------------------------------------------------- SE-18

def test_p04_se18_self_preemption_ends_the_pass():
    rep = run(se18("serve by (-admission);"), horizon=20)
    # §13 SE-18: done A 5, B 9; B re-admitted at 5; iterations 9; kv.preemptions 1
    assert_per_session(rep, "done", {0: 5, 1: 9})
    assert_per_session(rep, "adm", {0: 0, 1: [0, 5]})
    assert_row(rep.stage("engine"), "SE-18", iterations=9)
    assert_row(rep.pool("kv"), "SE-18", preemptions=1)
    # §13 SE-18: [1, 2) is a preempt-only iteration: counted in iterations but in
    # no class (§7 "an iteration that only preempted"; Part 06 §6.1), so the
    # three class fractions cover 8 of the 9 unit-cost iterations
    row = rep.stage("engine")
    assert_close(row.prefill_only + row.decode_only + row.mixed, 8 / 20, what="busy classes")


def test_p04_se18_default_order():
    rep = run(se18(""), horizon=20)
    # §13 SE-18: with the default order A is served first, its growth preempts
    # B, and A gets its token: done A 4, B 8 (B re-admitted at 4); iterations 8
    assert_per_session(rep, "done", {0: 4, 1: 8})
    assert_per_session(rep, "adm", {0: 0, 1: [0, 4]})
    assert_row(rep.stage("engine"), "SE-18 default", iterations=8)
    assert_row(rep.pool("kv"), "SE-18 default", preemptions=1)
