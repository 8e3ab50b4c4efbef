"""Differential tests of the step engine (spec Part 04 §5–§13, Part 06 §4,
§6, §8, §9.6) against the pyserq reference wheels (tests/oracle.py; each test
is skipped when its reference version is not installed).

* ``DETERMINISTIC``: engine programs without draws in the 0.1.3 flat
  dialect, one or more per construct — every serve policy (``admission``,
  ``by (…)`` with totals, ``now`` and several keys, ``decode first``,
  ``exclusive prefill``, ``only (p) [order]``), ``chunk`` (constant and
  reading ``residents``/``queued``), ``granule``, a drawn-free ``budget``
  expression, iteration bodies with registers (TGI-, SGLang-like, static
  batching, two serves, ``admit only … while``, ``branch … else``), memory
  pools with growing holds and preemption (``lifo``, ``by`` on ``admission``,
  ``position``, ``decoding`` with ``requeue tail``, ``none``), ``admit via``
  with ``budget_left`` in the header and ``budget_left`` read in a session,
  a plain (settle-time) memory pool, a prefix cache over a multi-turn
  session, a step-stage array, two engines in sequence, claims of every kind
  (reading ``demand``, ``served``, ``arrived``, registers, pool state,
  aggregates, ``given``), warm-up and ``--arrivals``. Compared with pyserq
  **0.1.3** field by field (``assert_reports_match``: counts exactly, other
  numbers to a relative 1e-9; ``events``/``serq_version`` not compared) and
  sample by sample (every observation's values, times, sessions and turns,
  every gauge's change points). Every program was run in 0.1.3 while this
  file was written; the comment above each group says what it exercises.
* ``SE``: every program of test_p04_engine.py (in p04_programs.py: Part 04
  §13 SE-1 … SE-18 and all variants) the same way; the §11 engine form
  (SE-15) is compared with 0.1.3 running its kernel equivalent (0.1.3 has
  no ``device``/``engine``).
* Part 06's engine examples (W-2, Replacement, W-4, W-5 and its variants,
  §9.6) against 0.1.3 in the seed dialect, and against **0.1.5** running the
  same deployments in its own dialect (``engine … { tokens cap …; scheduler
  {…} worker { forward (…); } }`` and the engine call ``E (input,
  output)``), which is the only reference with ``client`` series and the
  pool keys ``growing_at_end``/``growing_stalled``.
* ``STOCHASTIC``: engine programs with draws (poisson arrivals, ``~exp``
  prompt and output lengths, a drawn iteration cost), compared **exactly**
  with pyserq **0.1.5**, whose random streams serq-simpy follows (Part 07
  §9.3): every report field, the ``client`` series and every sample. Part 04
  §15 is right that 0.1.5 refuses ``stage … : step``, ``admit via`` and
  ``memory``; but it does run step engines in its engine spelling, so each
  serq-simpy program (``fn main`` layout, kernel step stage, holds with
  ``at admission``) is paired with the 0.1.5 program that means the same
  (``engine … { tokens cap; scheduler {…}; worker { forward (…); } }``,
  ``taking``, ``pool … on``, the call ``llm (n, o)``). The pairing is
  checked, not assumed: ``test_p04_stochastic_translation_is_faithful``
  runs each pair with the draws replaced by serial-dependent constants
  (long enough prompts for the memory pairs to preempt 74–80 times), where
  the 0.1.3 kernel program (flat dialect) and the 0.1.5 engine program must
  give the same report, since they share the arrival and machine streams —
  they do, field by field (and pyserq 0.1.4 runs the serq-simpy ``fn main``
  text itself with the same report). 0.1.5 adds two observations per engine
  call (``llm.reused``, ``llm.prefill``, Part 06 §9.6), not compared.
  Outputs are at least 2 tokens (see ``DRAWN``).
* ``ARRIVALS_013``: memory programs whose admission reads ``budget_left``
  (vLLM's first chunk) under heavy preemption. Their 0.1.5 spelling
  (``taking … kv (min(request.known, budget_left(llm)))``) is *not* the
  kernel program there (0.1.3 and 0.1.5 disagree), so they draw only their
  arrivals and are compared exactly with **0.1.3** (the arrival stream is
  common to all versions, Part 07 §9.1).

Not here on purpose: a ``preempt none`` grower that stalls and is later
granted its growth (the spec departs from the reference there, Part 03 §14
and Part 04 §15: 0.1.3 advances the position by the stalled amount), so the
``preempt none`` programs below either never stall or deadlock for good
(SE-10's variant).
"""
from __future__ import annotations

import math
import textwrap

import pytest

import serq
from serq.report.json_report import to_dict

from oracle import assert_samples_match, UNCOMPARED, assert_reports_match, compare_reports, requires, run_reference

import p04_programs as se
import test_p06_engine_reports as p06e


# ---------------------------------------------------------------- helpers

def _mine(source, kw):
    rep = serq.run(serq.load(None, source=textwrap.dedent(source), **kw))
    return rep, to_dict(rep)


def _close(a, b):
    if b is None:
        return a is None or (isinstance(a, float) and not math.isfinite(a))
    if isinstance(b, float) and math.isnan(b):
        return isinstance(a, float) and math.isnan(a)
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def check(source, version, kw, *, ref_source=None, ignore=(), same_dialect=True, turns=None):
    """Run `source` in serq-simpy and `ref_source` (default: the same text) in
    pyserq `version`: every field the reference writes (except `ignore`) and
    every sample must match. `same_dialect` also compares the order of the
    observations, gauges and top-level keys; `turns` (default: the same as
    `same_dialect`) the samples' turn tags."""
    source = textwrap.dedent(source)
    ref_text = textwrap.dedent(ref_source) if ref_source is not None else source
    ref = run_reference(ref_text, version, samples=True, **kw)
    rep, mine = _mine(source, kw)
    assert_reports_match(mine, ref, ignore=UNCOMPARED + tuple(ignore))
    if same_dialect:
        # Part 06 §2 / §9.1: series in first-appearance order, gauges and
        # stages in declaration order, top-level keys in upstream's order
        assert list(mine["observes"]) == list(ref["observes"])
        assert list(mine["gauges"]) == list(ref["gauges"])
        ref_keys = [k for k in ref if not k.startswith("_")]
        assert [k for k in mine if k in ref_keys] == ref_keys
    assert [(s["name"], s["index"]) for s in mine["stages"]] == \
        [(s["name"], s["index"]) for s in ref["stages"]]
    assert_samples_match(rep, ref["_samples"], skip=ignore,
                         turns=same_dialect if turns is None else turns)
    return rep, ref


# ---------------------------------------------------------------- deterministic programs (0.1.3)

DETERMINISTIC: dict[str, tuple[str, dict]] = {}
DET = DETERMINISTIC

# Two templates: `plain` (sessions join the engine directly; a `gate` delay
# spreads the arrivals over [0, 3.4]; prompts 2 … 14, outputs 1 … 5, so some
# decodes are `decode (0)`) and `pooled` (the same behind a `reqs` pool the
# engine admits, so iteration bodies' `admit` and admission numbers matter).
INIT = ("set n = 2 + 3 * (serial - 4 * floor(serial / 4)) + floor(serial / 3); "
        "set o = 1 + (serial * 7 - 5 * floor(serial * 7 / 5)); "
        "set at = 0.4 * serial + (serial == 5 ? 0.6 : 0);")


def plain(stage_body, k=8, extra=""):
    return f"""
stage engine : step {{ {stage_body} }}
stage gate : delay;
gauge busy_e = busy(engine);
gauge queue_e = queue(engine);
{extra}
workload {{ arrive batch({k}); init {{ {INIT} }} session {{ run gate (at); request; }} }}
server {{ set t0 = now; run engine prefill (n); observe ttft = now - t0; run engine decode (o - 1); observe response = now - t0; observe q = queue(engine); }}
"""


def pooled(stage_body, k=8, cap=3, extra=""):
    return f"""
pool reqs {{ cap {cap}; admit via engine; }}
stage engine : step {{ {stage_body} }}
stage gate : delay;
gauge held = used(reqs);
gauge waiting_q = queued(reqs);
{extra}
workload {{ arrive batch({k}); init {{ {INIT} }} session {{ run gate (at); request; }} }}
server {{ set t0 = now; hold reqs (1) {{ observe adm = now - t0; run engine prefill (n); observe ttft = now - t0; run engine decode (o - 1); }} observe response = now - t0; }}
"""


H = {"horizon": 40}
DET["admission_cost_tokens"] = (plain("budget 6; cost 0.5 + 0.1 * tokens;"), H)
DET["admission_explicit"] = (plain("budget 6; cost 0.5 + 0.1 * tokens; serve admission;"), H)
DET["by_neg_remaining"] = (plain("budget 7; cost 1; serve by (-remaining);"), H)
DET["by_two_keys_totals"] = (plain("budget 7; cost 0.25 + 0.05 * tokens + 0.1 * decoders; serve by (residents > 3 ? remaining : -remaining, decoding);"), H)
DET["by_now_key"] = (plain("budget 5; cost 1; serve by (decoding ? now : -remaining);"), H)
DET["by_admission_pooled"] = (pooled("budget 7; cost 1; serve by (-admission);", cap=4), H)
DET["decode_first_chunk"] = (plain("budget 6; chunk 2; cost 1; serve decode first;"), H)
DET["admission_chunk"] = (plain("budget 6; chunk 2; cost 1;"), H)
DET["exclusive_chunk"] = (plain("budget 6; chunk 4; cost 0.5 + 0.1 * prefilled; serve exclusive prefill;"), H)
DET["exclusive_pooled"] = (pooled("budget 6; cost 1; serve exclusive prefill;", cap=4), H)
DET["only_remaining"] = (plain("budget 8; cost 1; serve only (decoding || remaining <= 6);"), H)
DET["only_with_order_pooled"] = (pooled("budget 8; cost 1; serve only (decoders > 1 ? decoding : 1) by (-remaining);", cap=4), H)
DET["chunk_expr_queued"] = (pooled("budget 9; chunk residents + queued(reqs) > 1 ? 3 : 0; cost 0.5 + 0.05 * attention;", cap=3), H)
DET["granule_2"] = (plain("budget 7; cost 1; granule 2;"), H)
DET["granule_3_chunk_5_pooled"] = (pooled("budget 8; chunk 5; cost 1; granule 3;", cap=4), H)
DET["budget_expr"] = (plain("budget decoders > 2 ? 4 : 9; cost 0.2 + 0.1 * residents;"), H)
# `decoders` read by the budget, by the chunk: each gives another report when
# the planning totals read 0 decoders (StepSpec.resident_dec; 0.1.3)
DET["budget_reads_decoders"] = (plain("budget decoders > 1 ? 3 : 9; cost 0.2 + 0.1 * tokens;"), H)
DET["chunk_reads_decoders"] = (plain("budget 9; chunk decoders > 0 ? 2 : 0; cost 0.2 + 0.1 * tokens;"), H)
DET["body_registers"] = (pooled("budget k > 4 ? 8 : 4; chunk k > 6 ? 0 : 3; cost 1 + 0.01 * k; state k = 0; state adm = 0; iteration { serve; branch (k - 2 * floor(k / 2) == 0 || residents == 0) { admit; } set k = k + 1; set adm = adm + admitted; }", cap=4,
                                    extra="gauge kreg = k;\ngauge admreg = adm;\nclaim k_grows: some iteration of engine (k >= 5);\nclaim regs_end: at end (k >= 1 && adm == 8);"), H)
DET["body_tgi"] = (pooled("budget 8; cost 1; state just = 0; iteration { serve; branch (just == 0 || residents == 0) { admit; } set just = admitted > 0; }", cap=5, extra="gauge justg = just;"), H)
DET["body_sglang"] = (pooled("budget 8; cost 1; iteration { serve only (!decoding); admit; branch (tokens == 0) { serve; } }", cap=5), H)
DET["body_static"] = (pooled("budget 8; cost 1; iteration { serve; branch (residents == 0) { admit; } }", cap=5), H)
DET["body_two_serves_while"] = (pooled("budget 8; cost 1; iteration { serve only (decoding) by (-remaining); serve by (remaining); admit while (tokens < 6); }", cap=5), H)
DET["body_admit_only"] = (pooled("budget 8; cost 1; iteration { serve; admit only (decoders == 0) while (!preempted); }", cap=5), H)
DET["body_branch_else"] = (pooled("budget 8; cost 1; state t = 0; iteration { branch (t == 0) { serve decode first; admit; } else { serve by (remaining); admit while (admitted < 1); } set t = 1 - t; }", cap=5), H)

# the stage observables on a step stage (Part 01 §8: `queue` = residents,
# `busy` = jobs scheduled in the running iteration, 0 between iterations,
# `work` = tokens left in the residents' runs), read in sessions and gauges
DET["observables_queue_busy_work"] = ("""
stage engine : step { budget 6; chunk 4; cost 1; }
stage gate : delay;
gauge busy_e = busy(engine);
gauge queue_e = queue(engine);
workload { arrive batch(4); init { set n = 3 + 2 * serial; } session { run gate (0.5 * serial); request; } }
server { observe w0 = work(engine); observe b0 = busy(engine); observe q0 = queue(engine);
  run engine prefill (n); observe w1 = work(engine); observe b1 = busy(engine); observe q1 = queue(engine);
  run engine decode (3); observe w2 = work(engine); }
""", {"horizon": 20})
# a growth that preempts a resident already served in this iteration: the
# victim's tokens are dropped and its budget is given back, so a resident
# served later still gets a token (Part 04 §7 step 4, "Growth preempting a
# served resident"); 0.1.3: the iteration at 9 schedules 2 tokens (s0, s2)
DET["preempt_served_resident_returns_budget"] = ("""
pool kv { cap 20; preempt by (serial == 1 ? 0 : 1); }
stage engine : step { budget residents > 2 && decoders == residents ? 2 : 16; cost 1 + tokens; memory kv; serve by (remaining); }
workload { arrive batch(3); session { request; } }
server {
  hold kv (serial == 0 ? 4 : 8) {
    observe adm = now; observe comp = computed;
    run engine prefill (serial == 0 ? 4 : 2) growing kv;
    run engine decode (serial == 0 ? 3 : (serial == 1 ? 2 : 6)) growing kv;
  } cache (0);
  observe done = now;
}
claim t2: some iteration of engine (tokens == 2 && residents == 2);
claim t1: some iteration of engine (tokens == 1 && residents == 2);
""", {"horizon": 80})
DET["admission_warmup"] = (plain("budget 6; cost 0.5 + 0.1 * tokens;"), {"horizon": 40, "warmup": 3.3})

H120 = {"horizon": 120}
VLLM = """
let B = {B}; let blocks = {blocks}; let bs = {bs};
pool reqs {{ cap {seqs}; admit via engine; }}
pool kv {{ cap blocks * bs; block bs; evict lru; {preempt} }}
stage engine : step {{ budget B; {chunk} cost {cost}; memory kv; {serve} }}
stage gate : delay;
gauge used_kv = used(kv);
gauge kvq = queued(reqs);
{extra}
workload {{ arrive batch({k}); hidden o;
  init {{ set prompt = 12 + 9 * (serial - 3 * floor(serial / 3)) + serial; set o = 4 + 5 * (serial - 2 * floor(serial / 2)) + floor(serial / 2); set at = 0.7 * serial; }}
  session {{ run gate (at); request; }} }}
server {{
  set t0 = now;
  hold reqs (1), kv (min(known, budget_left(engine))) reserve (known)
       at admission (known = computed < prompt ? prompt : computed + 1) {{
    observe adm = now; observe comp = computed; observe alloc = used(kv);
    run engine prefill (known) growing kv;
    branch (known == prompt) {{ observe ttft = now - t0; }}
    run engine decode (o - 1 - (known - prompt)) growing kv;
  }}
  observe response = now - t0;
}}
"""
def vllm(preempt="preempt lifo;", B=32, blocks=6, bs=8, seqs=6, chunk="", cost="1", serve="", extra="", k=9):
    return VLLM.format(preempt=preempt, B=B, blocks=blocks, bs=bs, seqs=seqs, chunk=chunk, cost=cost, serve=serve, extra=extra, k=k)

DET["mem_lifo"] = (vllm(), H120)
DET["mem_lifo_chunk_vllm"] = (vllm(chunk="chunk residents + queued(reqs) > 1 ? 12 : 0;", cost="0.5 + 0.02 * tokens + 0.01 * kv_decode"), H120)
DET["mem_by_neg_admission_tail"] = (vllm("preempt by (-admission) requeue tail;"), H120)
DET["mem_by_admission"] = (vllm("preempt by (admission);"), H120)
DET["mem_by_neg_position"] = (vllm("preempt by (-position);"), H120)
DET["mem_by_decoding_position"] = (vllm("preempt by (decoding, position) requeue tail;"), H120)
DET["mem_serve_by_neg_admission"] = (vllm(serve="serve by (-admission);"), H120)
DET["mem_exclusive"] = (vllm(serve="serve exclusive prefill;", chunk="chunk 16;"), H120)
DET["mem_none_ample"] = (vllm("preempt none;", blocks=64), H120)
DET["mem_cost_kv"] = (vllm(cost="0.2 + 0.01 * kv_prefill + 0.005 * kv_decode + 0.001 * attention", blocks=8), H120)
# the KV totals over all residents, read by the budget, the chunk, serve
# keys, `only` and an iteration body: the engine sums them for planning only
# when one of these reads them (StepSpec.resident_kv); each program gives
# another report when the planning totals read 0 there (0.1.3, written with
# this file)
DET["mem_budget_kv"] = (vllm(cost="0.5 + 0.02 * tokens", blocks=8).replace(
    "budget B;", "budget kv_decode + kv_prefill > 30 ? 9 : B;"), H120)
DET["mem_chunk_kv"] = (vllm(chunk="chunk kv_decode > 16 ? 5 : 0;", blocks=8), H120)
DET["mem_serve_by_kv"] = (vllm(serve="serve by (kv_prefill > 8 ? -remaining : remaining);", blocks=8, B=6), H120)
DET["mem_only_kv"] = (vllm(serve="serve only (decoding || kv_decode < 20);", blocks=8), H120)
DET["mem_body_kv"] = (vllm(serve="iteration { serve; branch (kv_decode + kv_prefill < 24) { admit; } }", blocks=8), H120)
DET["mem_claims"] = (vllm(blocks=7, extra="""claim budget_ok: every iteration of engine (tokens <= 32);
claim demand_cov: every iteration of engine (demand >= 0 && served >= 0);
claim kv_full: some iteration of engine (used(kv) >= 48);
claim arrived_all: some iteration of engine (arrived == 9);
claim big_prompt given (prompt < 100): every iteration of engine (kv_decode + kv_prefill <= 56);
claim total_ok: at end (count(response) == 9 && largest(response) < 100 && smallest(ttft) > 0);"""), H120)
# plain kv pool (no admit via) with growing: admitted at settle time
DET["mem_plain_pool"] = ("""
pool kv { cap 40; block 4; preempt lifo; }
stage engine : step { budget 16; cost 1; memory kv; }
stage gate : delay;
gauge used_kv = used(kv);
workload { arrive batch(6); init { set n = 5 + 3 * serial; set at = 0.5 * serial; } session { run gate (at); request; } }
server { set t0 = now;
  hold kv (n) { observe adm = now; observe comp = computed; run engine prefill (n) growing kv; observe ttft = now - t0; run engine decode (6) growing kv; } cache (0);
  observe response = now - t0; }
""", H120)
# prefix cache with growing prefill (K > 0) and a multi-turn session
DET["mem_prefix_cache_turns"] = ("""
pool kv { cap 64; block 4; evict lru; preempt lifo; }
stage engine : step { budget 12; cost 0.5 + 0.01 * attention; memory kv; }
stage think : delay;
workload { arrive batch(3); init { set ctx = 0; set q = 6 + 2 * serial; } }
session {
  loop {
    turn;
    set t0 = now;
    hold kv (ctx + q) { observe hit = cached; run engine prefill (ctx + q - cached) growing kv; observe ttft = now - t0; run engine decode (4) growing kv; } cache (ctx + q + 4);
    set ctx = ctx + q + 4;
    observe response = now - t0;
    branch (turn_no >= 3) { end; }
    run think (2 + serial);
  }
}
""", H120)
# step stage array
DET["stage_array"] = ("""
stage E[2] : step { budget 6; cost 0.5 + 0.1 * tokens; }
stage gate : delay;
gauge b0 = busy(E[0]);
claim e1_cap: every iteration of E[1] (tokens <= 6);
workload { arrive batch(6); init { set n = 3 + serial; set i = serial - 2 * floor(serial / 2); } session { run gate (0.3 * serial); request; } }
server { set t0 = now; run E[i] prefill (n); observe ttft = now - t0; run E[i] decode (3); observe response = now - t0; }
""", H120)
# two engines in sequence (prefill/decode split)
DET["two_engines"] = ("""
pool kvp { cap 32; block 4; admit via P; }
pool kvd { cap 48; block 4; preempt lifo; admit via D; }
stage P : step { budget 16; cost 0.5 + 0.02 * tokens; memory kvp; }
stage D : step { budget 8; cost 0.3 + 0.01 * tokens; memory kvd; serve by (remaining); }
stage link : delay;
workload { arrive batch(6); init { set n = 10 + 2 * serial; set o = 3 + serial; } session { request; } }
server { set t0 = now;
  hold kvp (n) { run P prefill (n) growing kvp; } 
  observe ttft = now - t0;
  run link (0.2);
  hold kvd (n) { run D decode (o - 1) growing kvd; } cache (0);
  observe response = now - t0; }
""", H120)

# a state-independent `reserve (known)` above the cap rejects at the join
# although the units read `budget_left` (Part 03 §4.2 step 1 and §7.3 step 7:
# "a `reserve (known)` that grew above the cap now rejects the session"):
# kv 24 units, prompts 12 … 35 (0.1.3: kv rejected 4, ended 6)
DET["mem_reserve_above_cap_rejects"] = (vllm("preempt by (-position) requeue tail;", blocks=3, k=6, B=16),
                                        {"horizon": 80})
DET["mem_lifo_warmup"] = (vllm(), {"horizon": 120, "warmup": 10})
DET["budget_left_session"] = ("""
pool reqs { cap 3; admit via engine; }
stage engine : step { budget 10; chunk 4; cost 1; }
stage gate : delay;
workload { arrive batch(6); init { set n = 3 + 2 * serial; } session { run gate (0.5 * serial); request; } }
server { set t0 = now; observe bl_before = budget_left(engine);
  hold reqs (1) { observe bl_in = budget_left(engine); run engine prefill (n); observe bl_mid = budget_left(engine); run engine decode (2); }
  observe response = now - t0; }
""", {"horizon": 40})
DET["renewal_arrivals_n"] = ("""
stage engine : step { budget 8; cost 0.3 + 0.05 * tokens; serve decode first; chunk 4; }
workload { arrive renewal(0.45); init { set n = 2 + serial - 5 * floor(serial / 5); set o = 2 + serial - 3 * floor(serial / 3); } session { request; } }
server { set t0 = now; run engine prefill (n); observe ttft = now - t0; run engine decode (o - 1); observe response = now - t0; }
""", {"horizon": 1000, "arrivals": 12})


@requires("0.1.3")
@pytest.mark.parametrize("name", list(DETERMINISTIC))
def test_p04_engine_deterministic_against_013(name):
    source, kw = DETERMINISTIC[name]
    check(source, "0.1.3", kw)


# ---------------------------------------------------------------- Part 04 §13 (0.1.3)

@requires("0.1.3")
@pytest.mark.parametrize("name", list(se.SE_PROGRAMS))
def test_p04_se_programs_against_013(name):
    source, kw = se.SE_PROGRAMS[name]
    check(source, "0.1.3", kw)


@requires("0.1.3")
@pytest.mark.parametrize("name", list(se.ENGINE_FORM_PROGRAMS))
def test_p04_engine_form_against_013_kernel(name):
    # Part 04 §11.2: the engine form is parse-time sugar for the kernel step
    # stage; 0.1.3 runs the kernel text. `turns` is a dialect artifact (the
    # `fn main` server counts a turn per run, the flat `session { request; }`
    # none; Part 06 §12), and so are the turn tags of the samples.
    engine, kernel, kw = se.ENGINE_FORM_PROGRAMS[name]
    check(engine, "0.1.3", kw, ref_source=kernel, ignore=("turns",), same_dialect=False)


# ---------------------------------------------------------------- Part 06 engine examples

P06_013 = {
    "w2": (p06e.W2, {}),
    "w2_warmup": (p06e.W2, {"warmup": 2.5}),
    "replacement": (p06e.REPLACEMENT, {}),
    "replacement_warmup7": (p06e.REPLACEMENT, {"warmup": 7}),
    "w4": (p06e.W4, {}),
    "w5": (p06e.W5, {}),
    "w5_horizon3": (p06e.W5, {"horizon": 3}),
    "w5_total": (p06e.w5("claim tot: at end (total(done) < 10);\n"), {}),
    "w5_agg_warmup50": (p06e.w5("claim agg: at end (total(done) == 19 && count(done) == 3 && "
                                "prefix_total(done) == 37 && now == 100);\n"), {"warmup": 50}),
    "w5_renewal_given": (p06e.w5("claim first_only given (serial < 1): every iteration of E "
                                 "(tokens <= 8);\n", arrive="renewal(5)"), {}),
    "complete_9_6": (p06e.COMPLETE, {}),
}


@requires("0.1.3")
@pytest.mark.parametrize("name", list(P06_013))
def test_p06_engine_examples_against_013(name):
    source, kw = P06_013[name]
    check(source, "0.1.3", kw)


# The same deployments in 0.1.5's dialect (verified: 0.1.5's stage rows,
# claims and gauges equal 0.1.3's for each). 0.1.5 counts a turn per server
# run and tags samples with turn 1; it lists the §9.6 pools in its own
# declaration order (Part 06 §9.6) — compared by name below.
ENGINE = ("device gpu {{ }}\n  engine {E} on gpu {{\n    tokens cap 8;\n"
          "    scheduler {{ advance running; admit waiting while (running.preempted == 0); }}\n"
          "    worker {{ forward (1); }}\n  }}")
W2_015 = f"""
fn main() {{
  {ENGINE.format(E="llm")}
  workload {{ arrive batch(3); init {{ set o = serial + 1; }} }}
  server {{ set t0 = now; llm (8, o); observe finished = now - t0; }}
}}
"""
REPLACEMENT_015 = f"""
fn main() {{
  {ENGINE.format(E="llm")}
  stage wait : delay;
  workload {{ arrive batch(1); }}
  server {{ llm (8, 1); run wait (cost(wait, 5)); llm (8, 3); observe done = now; }}
}}
"""
W4_015 = f"""
fn main() {{
  {ENGINE.format(E="E")}
  workload {{ arrive batch(3); init {{ set big = serial == 2; }} }}
  server {{ E (8 + 4 * big, 4); observe done = now; }}
}}
"""
W5_015 = W4_015.replace("  workload", p06e.W5_CLAIMS.strip().replace("\n", "\n  ") + "\n  workload")
COMPLETE_015 = """
fn main() {
  device gpu { kv cap 64; }
  engine llm on gpu {
    reqs cap 2;
    tokens cap 8;
    scheduler { advance running; admit waiting while (running.preempted == 0) taking reqs (1), kv (8); }
    worker { forward (1); }
  }
  pool kv on llm.gpu { block 4; evict lru; preempt lifo; }
  pool reqs on llm { }
  stage net : ps(2);
  gauge held = used(kv);
  gauge slots = used(reqs);
  claim cap_ok: every iteration of llm (tokens <= 8);
  claim full: some iteration of llm (tokens == 8);
  claim fast: at end (total(finished) <= 100 * count(finished));
  workload { arrive batch(4); init { set o = 3; } }
  server {
    set t0 = now;
    run net (cost(net, 1));
    llm (8, o);
    observe finished = now - t0;
  }
}
"""
P06_015 = {
    "w2": (p06e.W2, W2_015, {"horizon": 20}),
    "w2_warmup": (p06e.W2, W2_015, {"horizon": 20, "warmup": 2.5}),
    "replacement": (p06e.REPLACEMENT, REPLACEMENT_015, {"horizon": 20}),
    "replacement_warmup2": (p06e.REPLACEMENT, REPLACEMENT_015, {"horizon": 20, "warmup": 2}),
    "replacement_warmup7": (p06e.REPLACEMENT, REPLACEMENT_015, {"horizon": 20, "warmup": 7}),
    "w4": (p06e.W4, W4_015, {"horizon": 100}),
    "w5": (p06e.W5, W5_015, {"horizon": 100}),
    "w5_horizon3": (p06e.W5, W5_015, {"horizon": 3}),
}
_ENGINE_CALL_OBS = ("llm.reused", "llm.prefill", "E.reused", "E.prefill")


@requires("0.1.5")
@pytest.mark.parametrize("name", list(P06_015))
def test_p06_engine_examples_against_015(name):
    # §4: the client series (and every stage field) of the seed-dialect
    # program equal 0.1.5's for the same deployment
    mine, ref, kw = P06_015[name]
    check(mine, "0.1.5", kw, ref_source=ref, ignore=("turns",) + _ENGINE_CALL_OBS,
          same_dialect=False)


@requires("0.1.5")
def test_p06_9_6_complete_example_against_015():
    ref = run_reference(textwrap.dedent(COMPLETE_015), "0.1.5", samples=True, horizon=50)
    rep, mine = _mine(p06e.COMPLETE, {})
    ignore = UNCOMPARED + ("turns", "pools") + _ENGINE_CALL_OBS
    assert_reports_match(mine, ref, ignore=ignore)
    # pools by name: 0.1.5 declares kv before reqs (Part 06 §9.6)
    ref_pools = {p["name"]: p for p in ref["pools"]}
    assert [p["name"] for p in mine["pools"]] == ["reqs", "kv"]
    for p in mine["pools"]:
        assert_reports_match(p, ref_pools[p["name"]])
    assert_samples_match(rep, ref["_samples"], skip=_ENGINE_CALL_OBS, turns=False)


# ---------------------------------------------------------------- stochastic programs (0.1.5)

ADMIT = "admit waiting while (running.preempted == 0)"
FWD = "worker { forward (0.02 + 0.001 * batch.tokens); }"
#: init with draws (workload stream, Part 07 §4.3). Outputs are at least 2
#: tokens: 0.1.5's engine call `E (n, 1)` ends the request at its prefill and
#: records its ttft when the call returns, after the ttft of the requests
#: whose first token ties with it (a property of the call, which the kernel
#: program's `decode (0)` does not share), so `o = 1` would only compare the
#: two dialects' tie order in `client.ttft`.
DRAWN = "set n = 1 + floor(~exp(20)); set o = 2 + floor(~exp(6));"
#: the same with serial-dependent constants, long enough prompts for the
#: memory programs to preempt (translation check, and the 0.1.3 comparisons)
FIXED = ("set n = 1 + 15 * (serial - 7 * floor(serial / 7)); "
         "set o = 2 + 3 * (serial - 5 * floor(serial / 5));")

# name -> (kernel stage clauses, 0.1.5 engine items, memory: None or
#          (kv cap, kv pool options, kernel kv units))
STOCHASTIC = {
    "admission": (
        "budget 24; cost 0.02 + 0.001 * tokens;",
        f"tokens cap 24; scheduler {{ advance running; {ADMIT}; }} {FWD}", None),
    "by_remaining": (
        "budget 24; cost 0.02 + 0.001 * tokens; serve by (remaining);",
        f"tokens cap 24; scheduler {{ advance running by (remaining); {ADMIT}; }} {FWD}", None),
    "by_two_keys": (
        "budget 24; cost 0.02 + 0.001 * tokens; serve by (-decoding, -remaining);",
        f"tokens cap 24; scheduler {{ advance running by (-decoding, -remaining); {ADMIT}; }} {FWD}",
        None),
    "decode_first_chunk": (
        "budget 24; chunk 8; cost 0.02 + 0.001 * tokens; serve decode first;",
        f"tokens cap 24; scheduler {{ advance running by (decoding ? 0 : 1) each at most (8); "
        f"{ADMIT} each at most (8); }} {FWD}", None),
    "exclusive_prefill": (
        "budget 24; chunk 16; cost 0.02 + 0.001 * tokens; serve exclusive prefill;",
        f"tokens cap 24; scheduler {{ exclusive prefill each at most (16); {ADMIT} each at most (16); }} {FWD}",
        None),
    "serve_only": (
        "budget 24; cost 0.02 + 0.001 * tokens; serve only (decoders > 0 ? decoding : !decoding);",
        "tokens cap 24; scheduler { advance running only (running.decoding > 0 ? decoding : !decoding); "
        "admit waiting only (running.decoding > 0 ? decoding : !decoding) while (running.preempted == 0); } "
        + FWD, None),
    "granule": (
        "budget 24; cost 0.02 + 0.001 * tokens; granule 8;",
        f"tokens cap 24; granule 8; scheduler {{ advance running; {ADMIT}; }} {FWD}", None),
    "machine_draw": (
        # a drawn iteration cost: the machine stream (Part 07 §4.5), once per iteration
        "budget 24; cost 0.01 + ~exp(0.01) + 0.001 * tokens;",
        f"tokens cap 24; scheduler {{ advance running; {ADMIT}; }} "
        "worker { forward (0.01 + ~exp(0.01) + 0.001 * batch.tokens); }", None),
    "body_tgi": (
        "budget 24; cost 0.02 + 0.001 * tokens; state just = 0; "
        "iteration { serve; branch (just == 0 || residents == 0) { admit; } set just = admitted > 0; }",
        "tokens cap 24; state just = 0; scheduler { advance running; "
        "if (just == 0 || running.count == 0) { admit waiting; } set just = waiting.admitted > 0; } " + FWD,
        None),
    "mem_lifo_claims": (
        "budget 32; cost 0.02 + 0.001 * tokens; memory kv;",
        f"reqs cap 8; tokens cap 32; scheduler {{ advance running; {ADMIT} taking reqs (1), "
        f"kv (request.known); }} {FWD}",
        (96, "block 16; evict lru; preempt lifo;", "kv (known)")),
    "mem_by_position_tail": (
        "budget 32; cost 0.02 + 0.001 * tokens; memory kv;",
        f"reqs cap 6; tokens cap 32; scheduler {{ advance running; {ADMIT} taking reqs (1), "
        f"kv (request.known); }} {FWD}",
        (112, "block 16; evict lru; preempt by (-position) requeue tail;", "kv (known)")),
}
STOCHASTIC_CLAIMS = """gauge kvused = used(kv);
  claim cap_ok: every iteration of llm (tokens <= 32);
  claim full: some iteration of llm (tokens == 32);
  claim decoding_batch: some iteration of llm (decoders >= 3);
  claim some_done: at end (count(response) > 100);"""
STOCHASTIC_KW = {"horizon": 150}
STOCHASTIC_WARMUP = {"admission": 20, "mem_lifo_claims": 30}


def stochastic_kernel(name, init, rate=4):
    """The serq-simpy program (`fn main`, kernel step stage, holds; amounts
    written `cost(RESOURCE, e)` as pyserq 0.1.4 wants, which this program
    also runs with every report field equal to the 0.1.5 engine program's
    when the lengths are constants)."""
    clauses, engine, mem = STOCHASTIC[name]
    pools, extra = "", ""
    body = "run llm prefill (cost(llm, n)); run llm decode (cost(llm, o - 1));"
    if mem:
        cap, opts, units = mem
        seqs = engine.split("reqs cap ")[1].split(";")[0]
        pools = f"pool kv {{ cap {cap}; {opts} }}\n  pool reqs {{ cap {seqs}; admit via llm; }}"
        units = units.replace("kv (", "kv (cost(kv, ") + ")"
        body = (f"hold reqs (cost(reqs, 1)), {units} "
                "at admission (known = computed < n ? n : computed + 1) { "
                "run llm prefill (cost(llm, known)) growing kv; "
                "run llm decode (cost(llm, o - 1 - (known - n))) growing kv; }")
        if name == "mem_lifo_claims":
            extra = STOCHASTIC_CLAIMS
    return f"""fn main() {{
  {pools}
  stage llm : step {{ {clauses} }}
  {extra}
  workload {{ arrive poisson({rate}); init {{ {init} }} }}
  server {{ set t0 = now; {body} observe response = now - t0; }}
}}
"""


def stochastic_kernel_flat(name, init, rate=4):
    """The same kernel program in the 0.1.3 flat dialect (translation check)."""
    src = stochastic_kernel(name, init, rate)
    inner = src.split("fn main() {", 1)[1].rsplit("}", 1)[0]
    for r in ("llm", "kv", "reqs"):
        inner = inner.replace(f"cost({r}, ", "(")
    return inner.replace(f"init {{ {init} }} }}", f"init {{ {init} }} session {{ request; }} }}")


def stochastic_engine(name, init, rate=4):
    """The 0.1.5 program: the same deployment in its engine spelling."""
    clauses, engine, mem = STOCHASTIC[name]
    dev, pools, extra = "", "", ""
    if mem:
        cap, opts, _ = mem
        dev = f"kv cap {cap};"
        pools = f"pool kv on gpu {{ {opts} }}\n  pool reqs on llm {{ }}"
        if name == "mem_lifo_claims":
            extra = STOCHASTIC_CLAIMS
    return f"""fn main() {{
  device gpu {{ {dev} }}
  engine llm on gpu {{ {engine} }}
  {pools}
  {extra}
  workload {{ arrive poisson({rate}); init {{ {init} }} }}
  server {{ set t0 = now; llm (n, o); observe response = now - t0; }}
}}
"""


@requires("0.1.5")
@pytest.mark.parametrize("name", list(STOCHASTIC))
def test_p04_stochastic_engine_against_015(name):
    # exact: every field, the client series and every sample (Part 07 §9.3)
    check(stochastic_kernel(name, DRAWN), "0.1.5", STOCHASTIC_KW,
          ref_source=stochastic_engine(name, DRAWN), ignore=_ENGINE_CALL_OBS, same_dialect=False,
          turns=True)


@requires("0.1.5")
@pytest.mark.parametrize("name", list(STOCHASTIC_WARMUP))
def test_p04_stochastic_engine_warmup_against_015(name):
    kw = dict(STOCHASTIC_KW, warmup=STOCHASTIC_WARMUP[name])
    check(stochastic_kernel(name, DRAWN), "0.1.5", kw,
          ref_source=stochastic_engine(name, DRAWN), ignore=_ENGINE_CALL_OBS, same_dialect=False,
          turns=True)


@requires("0.1.3")
@requires("0.1.5")
@pytest.mark.parametrize("name", list(STOCHASTIC))
def test_p04_stochastic_translation_is_faithful(name):
    # Guard of the pairing above: with constant lengths the only draws are
    # the arrivals (and the machine stream), which 0.1.3 and 0.1.5 share, so
    # the 0.1.3 kernel program and the 0.1.5 engine program must agree …
    k013 = run_reference(stochastic_kernel_flat(name, FIXED), "0.1.3", **STOCHASTIC_KW)
    e015 = run_reference(stochastic_engine(name, FIXED), "0.1.5", **STOCHASTIC_KW)
    diffs = compare_reports(k013, e015, ignore=UNCOMPARED + ("turns", "client", "growing_at_end",
                                                             "growing_stalled") + _ENGINE_CALL_OBS)
    assert not diffs, "the 0.1.5 engine program is not the kernel program:\n  " + "\n  ".join(diffs[:20])
    # … and serq-simpy's `fn main` kernel program must give both
    check(stochastic_kernel(name, FIXED), "0.1.5", STOCHASTIC_KW,
          ref_source=stochastic_engine(name, FIXED), ignore=_ENGINE_CALL_OBS, same_dialect=False,
          turns=True)


# ---------------------------------------------------------------- poisson arrivals (0.1.3)

# Programs whose only draws are the arrivals (poisson; lengths depend on the
# serial): the arrival stream is the same in every version (Part 07 §9.1), so
# 0.1.3 is an exact oracle for them in the flat dialect. They carry the
# memory programs whose 0.1.5 engine spelling is not the kernel program
# (`budget_left` in the admission's units), under heavy preemption.
def arrivals_flat(units, preempt, cap=112, seqs=6):
    return f"""
pool kv {{ cap {cap}; block 16; evict lru; {preempt} }}
pool reqs {{ cap {seqs}; admit via llm; }}
stage llm : step {{ budget 32; cost 0.02 + 0.001 * tokens; memory kv; }}
gauge kvused = used(kv);
workload {{ arrive poisson(4); init {{ {FIXED} }} session {{ request; }} }}
server {{ set t0 = now;
  hold reqs (1), {units} at admission (known = computed < n ? n : computed + 1) {{
    run llm prefill (known) growing kv; run llm decode (o - 1 - (known - n)) growing kv; }}
  observe response = now - t0; }}
"""


ARRIVALS_013 = {
    "budget_left_by_position_tail": arrivals_flat("kv (min(known, budget_left(llm)))",
                                                  "preempt by (-position) requeue tail;"),
    "budget_left_lifo": arrivals_flat("kv (min(known, budget_left(llm)))", "preempt lifo;"),
    "budget_left_reserve_lifo": arrivals_flat("kv (min(known, budget_left(llm))) reserve (known)",
                                              "preempt lifo;", cap=176),
    "known_lifo": arrivals_flat("kv (known)", "preempt lifo;", cap=96, seqs=8),
}


@requires("0.1.3")
@pytest.mark.parametrize("name", list(ARRIVALS_013))
def test_p04_poisson_arrivals_against_013(name):
    check(ARRIVALS_013[name], "0.1.3", STOCHASTIC_KW)
