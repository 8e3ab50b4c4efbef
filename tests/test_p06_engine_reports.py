"""Part 06 worked examples that run the step engine, end to end: §4 W-2 and
the "Replacement" example (client series), §6.3 W-4 (step statistics),
§8.4 W-5 (claims, every variant in its text), §9.6 the complete example
(the whole JSON report) and §10's text report of W-4/W-5's program (through
the `serq-simpy run FILE` command line).

Every expected number names the spec section it comes from. The programs
were run in the references while this file was written: the seed-dialect
texts in pyserq 0.1.3 (stage rows, claims, observations), and equivalent
engine-call programs in pyserq 0.1.5 for the client series (0.1.3 has no
`client`); a number marked "verified 0.1.3" / "verified 0.1.5" is one the
spec does not print but the reference did for the same program.

Numbers are compared as the spec README's "Exactness" says: counts, strings,
booleans and nulls exactly, every other number to a relative 1e-9. The JSON
tests (§9.6) also require every key, in upstream's order, and (on the
command line's output) that an integral value the spec writes as an integer
is written without a fraction (§9).
"""
from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from serq.report.json_report import reference_view, to_dict

from e2e_util import assert_close, run
from test_p06_statistics import S10_TEXT

# ---------------------------------------------------------------- helpers

_SCRIPT = shutil.which("serq-simpy")


def cli(*args, cwd=None, timeout=300):
    """Run the command line; return the CompletedProcess (text mode)."""
    cmd = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "serq.cli"]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                          encoding="utf-8", cwd=cwd, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return p


def series(rep, name, client=False):
    """(session, time, value) of every sample, in series order."""
    s = rep.client[name] if client else rep.observes[name]
    return [(int(k), t, v) for v, t, k in zip(s.values, s.times, s.sessions)]


def assert_series(rep, name, expected, client=False, what=""):
    got = series(rep, name, client)
    ok = len(got) == len(expected) and all(
        g[0] == e[0] and math.isclose(g[1], e[1], rel_tol=1e-9, abs_tol=1e-12)
        and math.isclose(g[2], e[2], rel_tol=1e-9, abs_tol=1e-12)
        for g, e in zip(got, expected))
    kind = "client" if client else "observe"
    assert ok, f"{what} {kind} {name}: got {got}, expected {expected}"


def json_diffs(actual, expected, where="report", rel=1e-9, strict_ints=False):
    """Differences between two JSON values: same keys in the same order,
    lists of equal length, ints/strings/bools/null exactly, other numbers to
    `rel`. With `strict_ints`, a number the expected JSON writes as an
    integer must be an integer in `actual` too (it was written without a
    fraction, §9)."""
    out = []
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {actual!r}"]
        if list(actual) != list(expected):
            out.append(f"{where}: keys {list(actual)} != expected {list(expected)}")
        for k, ev in expected.items():
            if k in actual:
                out += json_diffs(actual[k], ev, f"{where}.{k}", rel, strict_ints)
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: {actual!r} != expected {expected!r}"]
        for i, (a, e) in enumerate(zip(actual, expected)):
            out += json_diffs(a, e, f"{where}[{i}]", rel, strict_ints)
        return out
    if expected is None or isinstance(expected, (bool, str)):
        if not (actual is expected or (actual == expected and type(actual) is type(expected))):
            out.append(f"{where}: {actual!r} != expected {expected!r}")
        return out
    # a number
    if isinstance(actual, bool) or not isinstance(actual, (int, float)):
        return [f"{where}: {actual!r} != expected {expected!r}"]
    if strict_ints and isinstance(expected, int) and not isinstance(actual, int):
        out.append(f"{where}: {actual!r} is written with a fraction; expected {expected!r} (§9)")
    if isinstance(expected, int) and isinstance(actual, int):
        if actual != expected:
            out.append(f"{where}: {actual!r} != expected {expected!r}")
    elif not math.isclose(float(actual), float(expected), rel_tol=rel, abs_tol=0.0):
        out.append(f"{where}: {actual!r} != expected {expected!r}")
    return out


def assert_json(actual, expected, **kw):
    d = json_diffs(actual, expected, **kw)
    assert not d, "JSON differs:\n  " + "\n  ".join(d[:40])


def summary(d):
    """A §9.2 summary object from the spec's text."""
    return json.loads(d)


# ---------------------------------------------------------------- §4 W-2

W2 = """
stage llm : step { budget 8; cost 1; }
workload { arrive batch(3); init { set o = serial + 1; } session { request; end; } }
server { set t0 = now; prefill (8); decode (o - 1); observe finished = now - t0; }
run { horizon 20; }
"""

# §4 W-2 "Expected `client`"
W2_CLIENT = json.loads(
    '{"ttft":{"count":3,"mean":2,"ci":null,"cv2":0.25,"p99":3},'
    '"tpot":{"count":2,"mean":1.5,"ci":null,"cv2":0.2222222222222222,"p99":2},'
    '"response":{"count":3,"mean":3.3333333333333335,"ci":null,"cv2":0.3899999999999999,"p99":5}}')


def test_p06_w2_client_json():
    rep = run(W2)
    # §4 W-2 expected `client`: the reference's keys, exactly
    assert_json(reference_view(to_dict(rep))["client"], W2_CLIENT)
    # issue 25: serq-simpy's percentiles beside them (nearest rank of ttft {1, 2, 3})
    assert {k: to_dict(rep)["client"]["ttft"][k] for k in ("p50", "p90", "p95")} == {
        "p50": 2, "p90": 3, "p95": 3}


def test_p06_w2_client_samples():
    rep = run(W2)
    # §4 W-2 table: ttft 1 (at 1), 2 (at 2), 3 (at 3); tpot — , 2 (at 4), 1 (at 5);
    # response 1 (1), 4 (4), 5 (5). Series are in time-stamp order (§4).
    assert_series(rep, "ttft", [(0, 1, 1), (1, 2, 2), (2, 3, 3)], client=True)
    assert_series(rep, "tpot", [(1, 4, 2), (2, 5, 1)], client=True)
    assert_series(rep, "response", [(0, 1, 1), (1, 4, 4), (2, 5, 5)], client=True)
    # §4: every sample is tagged with the turn_no at the request's start (0:
    # no `turn;` in this program, Part 06 §12 "client in the seed dialect")
    for name in ("ttft", "tpot", "response"):
        assert list(rep.client[name].turns) == [0] * len(rep.client[name].values), name
    # the program's own observation equals `response` (§4 W-2: session 0's
    # decode (0) completes at once, Part 04 §2)
    assert_series(rep, "finished", [(0, 1, 1), (1, 4, 4), (2, 5, 5)])


def test_p06_w2_iterations():
    rep = run(W2)
    # §4 W-2: five iterations of cost 1 ([0,1) … [4,5)); session 0's decode (0)
    # is a run of zero work that completes at once and yields no token, and the
    # stage records nothing for it (Part 04 §2): 3 prefills + 2 decodes complete
    row = rep.stage("llm")
    assert row.iterations == 5
    assert row.completed == 5  # verified 0.1.3 / 0.1.5 (stage rows byte-identical, §4)


def test_p06_w2_client_with_warmup_2_5():
    rep = run(W2, warmup=2.5)
    # §4 W-2: with warm-up 2.5, ttft {3}, tpot {2, 1}, response {4, 5}
    assert_series(rep, "ttft", [(2, 3, 3)], client=True)
    assert_series(rep, "tpot", [(1, 4, 2), (2, 5, 1)], client=True)
    assert_series(rep, "response", [(1, 4, 4), (2, 5, 5)], client=True)
    c = reference_view(to_dict(rep))["client"]  # (the reference's keys)
    # summaries of those samples (§3; verified 0.1.5 with warm-up 2.5)
    assert_json(c, json.loads(
        '{"ttft":{"count":1,"mean":3,"ci":null,"cv2":null,"p99":3},'
        '"tpot":{"count":2,"mean":1.5,"ci":null,"cv2":0.2222222222222222,"p99":2},'
        '"response":{"count":2,"mean":4.5,"ci":null,"cv2":0.024691358024691357,"p99":5}}'))


# ---------------------------------------------------------------- §4 Replacement

# §4 "Replacement": a request that prefills 8 tokens (1 output token) on
# `llm`, waits 5 time units on a delay stage, then prefills again and
# decodes 2 tokens (0.1.5: `llm (8, 1); run wait (…5); llm (8, 3);`).
REPLACEMENT = """
stage llm : step { budget 8; cost 1; }
stage wait : delay;
workload { arrive batch(1); session { request; end; } }
server { run llm prefill (8); run wait (5); run llm prefill (8); run llm decode (2); observe done = now; }
run { horizon 20; }
"""


@pytest.mark.parametrize("warmup", [0, 2, 7])
def test_p06_4_replacement(warmup):
    rep = run(REPLACEMENT, warmup=warmup)
    # §4: ttft 7 (the second prefill end, at t = 7), tpot 1 and response 9; with
    # warm-up 2 or 7 the ttft sample (time 7) is kept
    assert_series(rep, "ttft", [(0, 7, 7)], client=True, what=f"warmup {warmup}")
    # tpot = (9 − 7) / 2 at the last token (t = 9); response at the request's end (9)
    assert_series(rep, "tpot", [(0, 9, 1)], client=True, what=f"warmup {warmup}")
    assert_series(rep, "response", [(0, 9, 9)], client=True, what=f"warmup {warmup}")


# ---------------------------------------------------------------- §6.3 W-4

W4 = """
stage E : step { budget 8; cost 1; }
workload { arrive batch(3); init { set big = serial == 2; } session { request; end; } }
server { prefill (8 + 4 * big); decode (3); observe done = now; }
run { horizon 100; }
"""

W5_CLAIMS = """
claim cap_ok: every iteration of E (tokens <= 8);
claim always_full: every iteration of E (tokens == 8);
claim some_full: some iteration of E (tokens == 8);
claim never: some iteration of E (tokens > 8);
claim all_done: at end (count(done) == 3 && largest(done) <= 10);
claim small_only given (big == 0): every iteration of E (tokens <= 8);
"""


def w5(extra: str = "", arrive: str = "batch(3)") -> str:
    """W-4's program with the claims of §8.4 (and `extra` claims)."""
    head, tail = W4.split("run {")
    return head.replace("batch(3)", arrive) + W5_CLAIMS + extra + "run {" + tail


W5 = w5()


@pytest.mark.parametrize("source", [W4, W5], ids=["w4", "w4_with_claims"])
def test_p06_w4_step_statistics(source):
    rep = run(source)
    row = rep.stage("E")
    # §6.3 W-4 table, every field (the claims do not change the run, §8.1)
    assert row.iterations == 7
    assert_close(row.prefill_only, 0.03, what="prefill_only")
    assert_close(row.mixed, 0.01, what="mixed")
    assert_close(row.decode_only, 0.03, what="decode_only")
    assert_close(row.mean_decodes, 0.09, what="mean_decodes")
    assert_close(row.mean_decode_batch, 2.25, what="mean_decode_batch")
    assert_close(row.mean_decode_step, 1, what="mean_decode_step")
    assert_close(row.mean_itl, 1.3333333333333333, what="mean_itl")
    assert_close(row.itl_p50, 1, what="itl_p50")
    assert_close(row.itl_p99, 3, what="itl_p99")
    assert_close(row.mean_number, 0.19, what="mean_number")
    assert_close(row.utilization, 0.07, what="utilization")
    assert row.completed == 6
    assert_close(row.mean_service, 3.166666666666667, what="mean_service")
    # §10 (the same run's text report): thru 0.0600, wait 0.0000, not idle
    assert_close(row.throughput, 0.06, what="throughput")
    assert row.mean_wait == 0
    assert row.idle_with_work is False


def test_p06_w4_tokens_and_client():
    rep = run(W4)
    # §6.3: decodes end at 4, 5, 6 for sessions 0 and 1 and 5, 6, 7 for session
    # 2: done 6, 6, 7 (§10: done count 3, mean 6.3333, p99 7)
    assert sorted(v for _, _, v in series(rep, "done")) == [6, 6, 7]
    # §10: first tokens at 1, 2, 4, last tokens at 6, 6, 7: ttft 1, 2, 4,
    # tpot 5/3, 4/3, 1, response 6, 6, 7
    assert_series(rep, "ttft", [(0, 1, 1), (1, 2, 2), (2, 4, 4)], client=True)
    tpot = {k: (t, v) for k, t, v in series(rep, "tpot", client=True)}
    assert set(tpot) == {0, 1, 2}
    for k, (t, v) in {0: (6, 5 / 3), 1: (6, 4 / 3), 2: (7, 1)}.items():
        assert_close(tpot[k][0], t, what=f"tpot time s{k}")
        assert_close(tpot[k][1], v, what=f"tpot s{k}")
    resp = sorted((k, t, v) for k, t, v in series(rep, "response", client=True))
    assert resp == [(0, 6, 6), (1, 6, 6), (2, 7, 7)]
    assert rep.ended == 3 and rep.arrivals == 3 and rep.turns == 0  # §10 run line
    assert_close(rep.mean_live, 0.19, what="mean_live")               # §10: mean live 0.190


def test_p06_4_ttft_of_requests_unfinished_at_the_end():
    rep = run(W4, horizon=3)
    # §4 table: `ttft` is recorded when the request has at least one token,
    # `tpot` with k >= 2 tokens, `response` for every request (that ended):
    # at horizon 3 sessions 0 and 1 have their first tokens (1, 2) and no
    # request has ended (verified 0.1.5: ttft count 2, mean 1.5; tpot and
    # response count 0)
    assert_series(rep, "ttft", [(0, 1, 1), (1, 2, 2)], client=True)
    assert series(rep, "tpot", client=True) == []
    assert series(rep, "response", client=True) == []


# ---------------------------------------------------------------- §8.4 W-5

W5_EXPECTED = [json.loads(line) for line in r"""
{"name":"cap_ok","kind":"every_iteration","result":"holds","checked":7,"failures":0,"first":null,"note":null}
{"name":"always_full","kind":"every_iteration","result":"fails","checked":7,"failures":4,"first":3,"note":null}
{"name":"some_full","kind":"some_iteration","result":"witnessed","checked":7,"failures":4,"first":0,"note":null}
{"name":"never","kind":"some_iteration","result":"not_witnessed","checked":7,"failures":7,"first":null,"note":null}
{"name":"all_done","kind":"at_end","result":"holds","checked":1,"failures":0,"first":null,"note":null}
{"name":"small_only","kind":"every_iteration","result":"out_of_scope","checked":0,"failures":0,"first":null,"note":"session 2 fails `given`"}
""".strip().splitlines()]


def claim_dicts(rep):
    assert rep.claims is not None, "the program declares claims: `claims` must be present (§9.1)"
    return [dict(name=c.name, kind=c.kind, result=c.result, checked=c.checked,
                 failures=c.failures, first=c.first, note=c.note) for c in rep.claims]


def test_p06_w5_claims_objects():
    rep = run(W5)
    # §8.4 W-5 JSON `claims`, all six objects exactly
    assert_json(claim_dicts(rep), W5_EXPECTED)
    assert_json(to_dict(rep)["claims"], W5_EXPECTED)


def test_p06_w5_no_claims_key_without_claims():
    # §9.1: `claims` is present only if the program declares a claim
    assert rep_claims_absent(run(W4))


def rep_claims_absent(rep):
    return rep.claims is None and "claims" not in to_dict(rep)


def test_p06_w5_horizon_3():
    rep = run(W5, horizon=3)
    # §8.4: with horizon 3: checked 4 for the iteration claims (iterations
    # starting at 0, 1, 2, 3), always_full fails 1 of 4, and all_done is
    # not_evaluated with note "3 sessions live at the end"
    by = {c["name"]: c for c in claim_dicts(rep)}
    for name in ("cap_ok", "always_full", "some_full", "never"):
        assert by[name]["checked"] == 4, by[name]
    assert by["always_full"]["result"] == "fails" and by["always_full"]["failures"] == 1
    assert_json(by["all_done"], {"name": "all_done", "kind": "at_end", "result": "not_evaluated",
                                 "checked": 0, "failures": 0, "first": None,
                                 "note": "3 sessions live at the end"})
    # the rest of the objects (verified 0.1.3, horizon 3)
    assert_json(claim_dicts(rep), [
        {"name": "cap_ok", "kind": "every_iteration", "result": "holds", "checked": 4, "failures": 0, "first": None, "note": None},
        {"name": "always_full", "kind": "every_iteration", "result": "fails", "checked": 4, "failures": 1, "first": 3, "note": None},
        {"name": "some_full", "kind": "some_iteration", "result": "witnessed", "checked": 4, "failures": 1, "first": 0, "note": None},
        {"name": "never", "kind": "some_iteration", "result": "not_witnessed", "checked": 4, "failures": 4, "first": None, "note": None},
        {"name": "all_done", "kind": "at_end", "result": "not_evaluated", "checked": 0, "failures": 0, "first": None, "note": "3 sessions live at the end"},
        {"name": "small_only", "kind": "every_iteration", "result": "out_of_scope", "checked": 0, "failures": 0, "first": None, "note": "session 2 fails `given`"},
    ])


def test_p06_w5_total_below_10_fails():
    rep = run(w5("claim tot: at end (total(done) < 10);\n"))
    # §8.4: `at end (total(done) < 10)` gives fails, checked 1, failures 1, first 100
    assert_json(claim_dicts(rep)[-1], {"name": "tot", "kind": "at_end", "result": "fails",
                                       "checked": 1, "failures": 1, "first": 100, "note": None})
    assert_json(claim_dicts(rep)[:6], W5_EXPECTED)  # the other claims are unchanged


def test_p06_w5_aggregates_include_warmup():
    src = w5("claim agg: at end (total(done) == 19 && count(done) == 3 && "
             "prefix_total(done) == 37 && now == 100);\n")
    rep = run(src, warmup=50)
    # §8.4: with warm-up 50 no `done` sample survives in the observes …
    assert len(rep.observes["done"].values) == 0
    assert to_dict(rep)["observes"]["done"] == {"count": 0, "mean": None, "ci": None,
                                                "cv2": None, "p99": None, "p50": None,
                                                "p90": None, "p95": None}  # §2: count 0, others null
    # … but the aggregates include warm-up: the claim holds
    assert_json(claim_dicts(rep)[-1], {"name": "agg", "kind": "at_end", "result": "holds",
                                       "checked": 1, "failures": 0, "first": None, "note": None})
    # §1: claims cover the whole run, warm-up included: the W-5 claims read as
    # without warm-up
    assert_json(claim_dicts(rep)[:6], W5_EXPECTED)


def test_p06_w5_given_out_of_scope_after_arrival():
    src = w5("claim first_only given (serial < 1): every iteration of E (tokens <= 8);\n",
             arrive="renewal(5)")
    rep = run(src)
    # §8.4: with renewal(5) and given (serial < 1), the iteration claim reads 4
    # iterations before session 1 arrives at t = 10 and is then out_of_scope
    # with checked 4 (note: §8.3 "session S fails `given`")
    assert_json(claim_dicts(rep)[-1], {"name": "first_only", "kind": "every_iteration",
                                       "result": "out_of_scope", "checked": 4, "failures": 0,
                                       "first": None, "note": "session 1 fails `given`"})
    by = {c["name"]: c for c in claim_dicts(rep)}
    # §8.3 singular note (verified 0.1.3: one session is still live at 100)
    assert by["all_done"]["result"] == "not_evaluated"
    assert by["all_done"]["note"] == "1 session live at the end"


# ---------------------------------------------------------------- §9.6 complete example

COMPLETE = """
pool reqs { cap 2; admit via llm; }
pool kv { cap 64; block 4; evict lru; preempt lifo; admit via llm; }
stage llm : step { budget 8; cost 1; memory kv; }
stage net : ps(2);
gauge held = used(kv);
gauge slots = used(reqs);
claim cap_ok: every iteration of llm (tokens <= 8);
claim full: some iteration of llm (tokens == 8);
claim fast: at end (total(finished) <= 100 * count(finished));
workload { arrive batch(4); init { set o = 3; } session { request; end; } }
server {
  set t0 = now;
  run net (1);
  hold reqs (1), kv (8) { prefill (8) growing kv; decode (o - 1) growing kv; };
  observe finished = now - t0;
}
run { horizon 50; }
"""

# §9.6 "Expected --json", line breaks removed.
COMPLETE_JSON = r"""
{"serq_version":"…","horizon":50,"end":50,"warmup":0,"seed":1,"events":13,
 "arrivals":4,"ended":4,"turns":0,"mean_live":0.64,
 "observes":{"finished":{"count":4,"mean":8,"ci":null,"cv2":0.10416666666666667,"p99":11}},
 "client":{"ttft":{"count":4,"mean":6,"ci":null,"cv2":0.1851851851851852,"p99":9},
           "tpot":{"count":4,"mean":1,"ci":null,"cv2":0,"p99":1},
           "response":{"count":4,"mean":8,"ci":null,"cv2":0.10416666666666667,"p99":11}},
 "gauges":{"held":{"mean":3.04,"ci":3.0984139858083237,"min":0,"max":20},
           "slots":{"mean":0.3,"ci":0.3074569794467614,"min":0,"max":2}},
 "claims":[{"name":"cap_ok","kind":"every_iteration","result":"holds","checked":9,"failures":0,"first":null,"note":null},
           {"name":"full","kind":"some_iteration","result":"witnessed","checked":9,"failures":5,"first":2,"note":null},
           {"name":"fast","kind":"at_end","result":"holds","checked":1,"failures":0,"first":null,"note":null}],
 "stages":[{"name":"llm","index":null,"mean_number":0.3,"utilization":0.18,"completed":8,"throughput":0.16,
            "mean_wait":0,"mean_service":1.875,"iterations":9,"prefill_only":0.02,"decode_only":0.04,"mixed":0.12,
            "mean_decodes":0.16,"mean_decode_batch":1,"mean_decode_step":1,"mean_itl":1,"itl_p50":1,"itl_p99":1,
            "idle_with_work":false},
           {"name":"net","index":null,"mean_number":0.16,"utilization":0.04,"completed":4,"throughput":0.08,
            "mean_wait":0,"mean_service":2,"iterations":0,"prefill_only":0,"decode_only":0,"mixed":0,
            "mean_decodes":0,"mean_decode_batch":null,"mean_decode_step":null,"mean_itl":null,"itl_p50":null,
            "itl_p99":null,"idle_with_work":false}],
 "pools":[{"name":"reqs","index":null,"mean_used":0.3,"mean_cached":0,"mean_queue":0.18,"mean_holders":0.3,
           "mean_wait":2.25,"admissions":4,"evicted_entries":0,"evicted_units":0,"preemptions":0,"spills":0,
           "rejected":0,"stuck":0,"over_cap":null,"growing_at_end":0,"growing_stalled":false},
          {"name":"kv","index":null,"mean_used":3.04,"mean_cached":0,"mean_queue":0,"mean_holders":0.3,
           "mean_wait":null,"admissions":4,"evicted_entries":0,"evicted_units":0,"preemptions":0,"spills":0,
           "rejected":0,"stuck":0,"over_cap":null,"growing_at_end":0,"growing_stalled":false}]}
"""


def _complete_expected():
    exp = json.loads(" ".join(line.strip() for line in COMPLETE_JSON.strip().splitlines()))
    return exp


def _strip_uncompared(d):
    """The report without serq_version/events (not compared, §9.1) and the
    serq_simpy object (§9.7), which must come last; and without serq-simpy's
    additions of issue 25 (`reference_view`: the reference's keys remain)."""
    assert list(d)[-2:] == ["throughput", "serq_simpy"]
    d = reference_view(d)
    keys = list(d)
    assert keys[-1] == "serq_simpy", f"§9.7: serq_simpy must follow pools; keys {keys}"
    del d["serq_simpy"]
    for k in ("serq_version", "events"):
        assert k in d, f"§9.1: key {k} missing"
    return d


def _without(d, *keys):
    return {k: v for k, v in d.items() if k not in keys}


def test_p06_9_6_complete_example_to_dict():
    rep = run(COMPLETE)
    mine = _strip_uncompared(to_dict(rep))
    exp = _complete_expected()
    # §9.6: the whole report, key for key (in order) and value for value,
    # except serq_version and events (an implementation's own, §9.1)
    assert list(mine) == list(exp)
    assert_json(_without(mine, "serq_version", "events"), _without(exp, "serq_version", "events"))
    assert isinstance(mine["serq_version"], str) and isinstance(mine["events"], int)


def test_p06_9_6_complete_example_cli_json(tmp_path):
    f = write(tmp_path, "complete.sq", COMPLETE)
    out = cli("run", f, "--json")
    assert out.returncode == 0, out.stderr  # §11.3: 0 success
    assert out.stdout.count("\n") == 1 and out.stdout.endswith("\n")  # §9: one line
    mine = _strip_uncompared(json.loads(out.stdout))
    exp = _complete_expected()
    assert list(mine) == list(exp)
    # §9: integral doubles are written without a fraction, counts are integers
    assert_json(_without(mine, "serq_version", "events"), _without(exp, "serq_version", "events"),
                strict_ints=True)
    ss = json.loads(out.stdout)["serq_simpy"]
    assert ss["implementation"] == "serq-simpy" and ss["schema"] == "pyserq-0.1.5"  # §9.7
    assert ss["ci"] == {"batches": 20, "t": 2.093, "level": 0.95, "min_samples": 40}  # §9.7


def test_p06_9_6_hand_checks():
    rep = run(COMPLETE)
    # §9.6 hand checks: the gauge `held` changes at (0,0) (2,8) (3,20) (9,12) (11,0)
    pts = rep.gauges["held"].points
    assert len(pts) == 5 and all(
        math.isclose(t, et, abs_tol=1e-12) and math.isclose(v, ev, abs_tol=1e-12)
        for (t, v), (et, ev) in zip(pts, [(0, 0), (2, 8), (3, 20), (9, 12), (11, 0)])), pts
    # §9.6: client ttft samples 3, 5, 7, 9; tpot 1 each; response 5, 7, 9, 11
    assert sorted(v for _, _, v in series(rep, "ttft", client=True)) == [3, 5, 7, 9]
    assert [round(v, 12) for _, _, v in series(rep, "tpot", client=True)] == [1, 1, 1, 1]
    assert sorted(v for _, _, v in series(rep, "response", client=True)) == [5, 7, 9, 11]
    # ttft is stamped at the first token (requests start at 0): times = values
    assert sorted(t for _, t, _ in series(rep, "ttft", client=True)) == [3, 5, 7, 9]
    # §9.6: `full` is first witnessed by the iteration starting at t = 2
    full = next(c for c in rep.claims if c.name == "full")
    assert full.first == 2


# ---------------------------------------------------------------- §10 text report

# the §10 example's text after the run line (the same program: W-4/W-5)
W45_TEXT = S10_TEXT.split("\n", 2)[2]


def test_p06_10_text_report_w4_w5(tmp_path):
    f = write(tmp_path, "w5.sq", W5)
    out = cli("run", f)
    assert out.returncode == 0, out.stderr  # §11.3: failed claims do not change the status
    lines = out.stdout.split("\n")
    # §10 item 1: events is the implementation's own (§9.1), every other field exact
    assert re.fullmatch(r"run: horizon 100 end 100 warmup 0 seed 1 events \d+ arrivals 3 "
                        r"ended 3 turns 0 mean live 0\.190", lines[0]), lines[0]
    assert lines[1] == "", "§10: each section is preceded by one blank line"
    body = lines[2:]
    while body and body[-1] == "":
        body.pop()
    assert body == W45_TEXT.rstrip("\n").split("\n"), "\n" + out.stdout
    assert out.stderr == ""
