"""Part 04 front end: step stages, engines on devices, the serving forms of
Part 05 §1 and the claims of Part 06 §8 (parse + link + lowering only).

Every worked step-engine scenario SE-1 … SE-18 of Part 04 §13 loads in the
flat 0.1.3 form, and the engine example of §11 (the context-variables seed)
loads in its `fn main` form; the tests check the IR they lower to. The
errors of §5/§10/§11 and Part 06 §8.2 are in tests/bad_programs/ (step_*,
ctx_*, engine_*, serving_*, claim_*); a few message details are checked here.
Every SE program below (and each variant) was run end to end against pyserq
0.1.3 while this file was written and gave its report field for field. SE-5
observes `adm` where §13 observes the supplied name `admitted` (Part 01 §6.2)."""
from __future__ import annotations

import dataclasses
import math

import pytest

from serq.core import ir
from serq.core.errors import LinkError, ParseError
from serq.frontend import load
from serq.frontend.link.lower import ir_stmts

from p04_programs import SE1, SE2, SE5, SE12, SE13  # §13's texts, as test_p04_engine runs them
from p04_programs import SE15_ENGINE as SEED_ENGINE, SE15_KERNEL as SE15

INF = math.inf
SERVER = ("server { run engine prefill (n); observe ttft = now; "
          "run engine decode (o - 1); observe response = now; }")


def basic(stage: str, k: int, n: str, o: str) -> str:
    """The common SE program of §13: K sessions at 0, the common server."""
    return (f"{stage}\nworkload {{ arrive batch({k}); init {{ set n = {n}; set o = {o}; }} "
            f"session {{ request; }} }}\n{SERVER}\n")


SE3 = "stage engine : step { budget 8; cost 1; SERVE }"
SE3_N = "serial == 0 ? 10 : serial == 1 ? 4 : 3"
SE4 = "stage engine : step { budget 8; chunk CHUNK; cost 1; }"
SE6 = """
pool reqs { cap 2; admit via engine; }
pool kv { cap 20; }
stage gate : delay;
stage engine : step { budget 4; chunk 4; cost 1; memory kv; serve exclusive prefill; }
workload { arrive batch(2); init { set prompt = serial == 0 ? 2 : 4; } session { request; } }
server {
  run gate (serial);
  set t0 = now;
  hold reqs (1), kv (min(prompt, left)) reserve (prompt) at admission (left = budget_left(engine)) {
    run engine prefill (prompt) growing kv;
    observe ttft = now - t0;
    branch (serial == 0) { run engine decode (2) growing kv; }
  }
  observe response = now - t0;
}
"""
SE7 = """
pool reqs { cap 8; admit via engine; }
stage engine : step { budget 8; cost 1; SERVE }
stage gate : delay;
workload { arrive batch(3); init { set n = serial == 2 ? 4 : 3; set o = 3; }
           session { run gate (serial); request; } }
server { hold reqs (1) { run engine prefill (n); observe ttft = now;
                         run engine decode (o - 1); }
         observe response = now; }
"""
SE9 = """
pool reqs { cap 4; admit via e; }
stage e : step { budget 5; cost 1; GRANULE }
workload { arrive batch(2); init { set n = serial == 0 ? 3 : 6; set o = 2; } session { request; } }
server { hold reqs (1) { run e prefill (n); observe ttft = now; run e decode (o - 1); }
         observe response = now; }
"""
SE10 = """
let bs = 16; let B = 64; let blocks = 11; let max_seqs = 8;
pool reqs { cap max_seqs; admit via engine; }
pool kv { cap blocks * bs; block bs; evict lru; preempt PREEMPT; }
stage engine : step { budget B; cost 1; memory kv; }
stage gate : delay;
workload { arrive batch(4); hidden o;
  init { set prompt = 40; set o = 30; set arrive = serial; }
  session { run gate (arrive); request; } }
server {
  hold reqs (1), kv (min(known, budget_left(engine))) reserve (known)
       at admission (known = computed < prompt ? prompt : computed + 1) {
    run engine prefill (known) growing kv;
    branch (known == prompt) { observe first = now; }
    run engine decode (o - 1 - (known - prompt)) growing kv;
  }
  observe done = now;
}
"""
SE11 = (SE10.replace("let B = 64; let blocks = 11;", "let B = 32; let blocks = 9; let chunk = 24;")
        .replace("PREEMPT", "lifo")
        .replace("stage engine : step { budget B; cost 1; memory kv; }",
                 "stage engine : step { budget B; chunk residents + queued(reqs) > 1 ? chunk : "
                 "0; cost 1; memory kv; serve by (-admission); }")
        .replace("init { set prompt = 40; set o = 30; set arrive = serial; }",
                 "init { set prompt = serial == 3 ? 30 : 60; "
                 "set o = serial == 0 ? 12 : serial == 1 ? 24 : serial == 2 ? 12 : 6; "
                 "set arrive = serial == 0 ? 1 : serial == 1 ? 4 : serial == 2 ? 0 : 1; }"))
SE14 = """
pool kv { cap 100; block 4; }
stage engine : step { budget 4; cost COST; memory kv; }
workload { arrive batch(2); session { request; } }
server { hold kv (serial == 0 ? 3 : 5) {
  branch (serial == 0) { run engine prefill (6) growing kv; } else { run engine prefill (2); }
  observe t = now; } }
"""
SE16 = """
pool kv { cap 10; preempt lifo; }
stage engine : step { budget 16; cost 1; memory kv; serve by (-admission); }
workload { arrive batch(2); session { request; } }
server {
  hold kv (serial == 0 ? 4 : 5) {
    observe adm = now; observe u = used(kv); observe comp = computed;
    run engine prefill (serial == 0 ? 4 : 5) growing kv; observe ttft = now;
    run engine decode (3) growing kv;
  } cache (0);
  observe done = now;
}
"""
SE17 = """
pool a { cap 1; admit via engine; }
pool b { cap 5; admit via engine; }
stage engine : step { budget 100; cost 1; }
workload { arrive batch(3); session { request; } }
server {
  branch (serial < 2) { hold a (1) { observe adm = now; run engine prefill (3); } }
  else { hold b (1) { observe adm = now; run engine prefill (3); } }
}
"""
SE18 = """
pool reqs { cap 4; admit via engine; }
pool kv { cap 9; preempt lifo; }
stage engine : step { budget 16; cost 1; memory kv; serve by (-admission); }
workload { arrive batch(2); session { request; } }
server {
  hold reqs (1), kv (serial == 0 ? 4 : 5) {
    observe adm = now;
    run engine prefill (serial == 0 ? 4 : 5) growing kv;
    run engine decode (3) growing kv;
  } cache (0);
  observe done = now;
}
"""
W4 = """
stage E : step { budget 8; cost 1; }
workload { arrive batch(3); init { set big = serial == 2; } session { request; end; } }
server { prefill (8 + 4 * big); decode (3); observe done = now; }
claim cap_ok: every iteration of E (tokens <= 8);
claim always_full: every iteration of E (tokens == 8);
claim some_full: some iteration of E (tokens == 8);
claim never: some iteration of E (tokens > 8);
claim all_done: at end (count(done) == 3 && largest(done) <= 10);
claim small_only given (big == 0): every iteration of E (tokens <= 8);
run { horizon 100; }
"""

C = ir.Ctx
N = ir.Num


def prog(text: str, **kw) -> ir.Program:
    kw.setdefault("horizon", 20)
    return load(source=text, **kw)


def error(text: str, kind=(ParseError, LinkError), **kw):
    kw.setdefault("horizon", 20)
    with pytest.raises(kind) as info:
        load(source=text, **kw)
    return info.value


def bare(node):
    """`node` with every position removed (IR comparisons by shape)."""
    if isinstance(node, list):
        return [bare(n) for n in node]
    if isinstance(node, tuple):
        return tuple(bare(n) for n in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, ir.Pos):
        return node
    changes = {f.name: (None if f.name == "pos" else bare(getattr(node, f.name)))
               for f in dataclasses.fields(node)}
    return dataclasses.replace(node, **changes)


def step_of(p: ir.Program, name: str = "engine") -> ir.Step:
    stage = next(s for s in p.stages if s.name == name)
    assert stage.kind == "step" and stage.step is not None
    return stage.step


def runs(p: ir.Program) -> list[ir.Run]:
    code = p.workload.init + p.workload.turn + (p.session or [])
    return [s for s in ir_stmts(code) if isinstance(s, ir.Run)]


def pool(p: ir.Program, name: str) -> ir.Pool:
    return next(x for x in p.pools if x.name == name)


def ref(kind: str, name: str, index=None) -> ir.Ref:
    return ir.Ref(kind, name, index)


# ------------------------------------------------------------ §13 SE-1 … SE-4
def test_p04_se1_step_defaults_and_modes():
    step = step_of(prog(SE1))
    assert bare(step) == ir.Step(cost=N(1), budget=N(4), chunk=N(0), serve="order")
    modes = [(r.mode, r.growing, bare(r.stages)) for r in runs(prog(SE1))]
    assert modes == [("prefill", None, [ref("stage", "engine")]),
                     ("decode", None, [ref("stage", "engine")])]
    assert runs(prog(SE1))[1].text == "run engine decode (o - 1)"


def test_p04_se2_budget_default_inf():
    assert bare(step_of(prog(SE2)).budget) == N(8)
    assert bare(step_of(prog(basic("stage engine : step { cost 1; }", 1, "1", "1"))).budget) \
        == N(INF)


@pytest.mark.parametrize("serve, kind, keys", [
    ("", "order", None),
    ("serve admission;", "order", None),
    ("serve decode first;", "order", [ir.Cond(C("decoding"), N(0), N(1))]),
    ("serve by (-admission);", "order", [ir.Unary("-", C("admission"))]),
    ("serve by (remaining);", "order", [C("remaining")]),
    ("serve by (-remaining);", "order", [ir.Unary("-", C("remaining"))]),
    ("serve by (decoding, -remaining);", "order",
     [C("decoding"), ir.Unary("-", C("remaining"))]),
    ("serve exclusive prefill;", "exclusive", None),
])
def test_p04_se3_serve_orders(serve, kind, keys):
    step = step_of(prog(basic(SE3.replace("SERVE", serve), 3, SE3_N, "3")))
    assert (step.serve, bare(step.keys), step.only) == (kind, keys, None)


@pytest.mark.parametrize("chunk, value", [
    ("3", N(3)),
    ("residents > 1 ? 3 : 0", ir.Cond(ir.Binary(">", C("residents"), N(1)), N(3), N(0))),
])
def test_p04_se4_chunk(chunk, value):
    text = basic(SE4.replace("CHUNK", chunk), 2, "serial == 0 ? 7 : 4", "3")
    assert bare(step_of(prog(text)).chunk) == value


# ------------------------------------------------------------ §13 SE-5 … SE-9
def test_p04_se5_admit_via_memory_budget_left():
    p = prog(SE5)
    assert bare(pool(p, "reqs").admit_via) == ref("stage", "engine")
    assert pool(p, "kv").admit_via is None
    assert bare(step_of(p).memory) == ref("pool", "kv")
    hold = next(s for s in ir_stmts(p.session) if isinstance(s, ir.Hold))
    assert bare(hold.pools[1].units) == ir.Call("min", [
        ir.Attr("n"), ir.Observable("budget_left", ref("stage", "engine"))])
    assert not hold.pools[1].static
    growing = [bare(r.growing) for r in runs(p)]
    assert growing == [ref("pool", "kv"), ref("pool", "kv")]


def test_p04_se6_exclusive_prefill():
    step = step_of(prog(SE6))
    assert (step.serve, bare(step.chunk), step.iteration) == ("exclusive", N(4), None)
    assert step_of(prog(SE6.replace(" serve exclusive prefill;", ""))).serve == "order"


@pytest.mark.parametrize("serve, only, keys", [
    ("serve only (decoders > 0 ? decoding : !decoding);",
     ir.Cond(ir.Binary(">", C("decoders"), N(0)), C("decoding"),
             ir.Unary("!", C("decoding"))), None),
    ("serve only (decoders < residents ? !decoding : decoding) by (remaining);",
     ir.Cond(ir.Binary("<", C("decoders"), C("residents")), ir.Unary("!", C("decoding")),
             C("decoding")), [C("remaining")]),
    ("", None, None),
])
def test_p04_se7_serve_only(serve, only, keys):
    step = step_of(prog(SE7.replace("SERVE", serve)))
    assert (bare(step.only), bare(step.keys), step.iteration) == (only, keys, None)


ADMIT_GUARD = ir.Unary("!", C("preempted"))


@pytest.mark.parametrize("body, registers, iteration", [
    ("iteration { serve; admit while (!preempted); }", [],
     [ir.IServe(), ir.IAdmit(cond=ADMIT_GUARD)]),
    ("state just = 0; iteration { serve; branch (just == 0 || residents == 0) { admit; } "
     "set just = admitted > 0; }", [("just", 0.0)],
     [ir.IServe(),
      ir.IIf(ir.Binary("||", ir.Binary("==", C("just"), N(0)),
                       ir.Binary("==", C("residents"), N(0))), [ir.IAdmit()], [],
             "`branch (just == 0 || residents == 0)`"),
      ir.ISet("just", ir.Binary(">", C("admitted"), N(0)))]),
    ("iteration { serve only (!decoding); admit; branch (tokens == 0) { serve; } }", [],
     [ir.IServe(only=ir.Unary("!", C("decoding"))), ir.IAdmit(),
      ir.IIf(ir.Binary("==", C("tokens"), N(0)), [ir.IServe()], [], "`branch (tokens == 0)`")]),
    ("iteration { serve; branch (residents == 0) { admit; } }", [],
     [ir.IServe(), ir.IIf(ir.Binary("==", C("residents"), N(0)), [ir.IAdmit()], [],
                          "`branch (residents == 0)`")]),
    ("iteration { serve; admit only (decoders == 0) while (!preempted); }", [],
     [ir.IServe(), ir.IAdmit(only=ir.Binary("==", C("decoders"), N(0)), cond=ADMIT_GUARD)]),
    ("iteration { serve; if (residents > 2) { admit; } else if (tokens > 1) { admit; } "
     "else { serve by (remaining); } }", [],
     [ir.IServe(), ir.IIf(ir.Binary(">", C("residents"), N(2)), [ir.IAdmit()],
                          [ir.IIf(ir.Binary(">", C("tokens"), N(1)), [ir.IAdmit()],
                                  [ir.IServe(keys=[C("remaining")])], "`if (tokens > 1)`")],
                          "`if (residents > 2)`")]),
])
def test_p04_se8_iteration_bodies(body, registers, iteration):
    step = step_of(prog(SE7.replace("SERVE", body)))
    assert step.registers == registers
    assert bare(step.iteration) == iteration


def test_p04_se8_body_serve_takes_the_stage_order():
    # a body's `serve` without an order serves in the stage's `serve` order (0.1.3)
    step = step_of(prog(SE7.replace("SERVE", "serve by (remaining); iteration { serve; "
                                             "admit; serve by (-remaining); }")))
    assert bare(step.iteration) == [ir.IServe(keys=[C("remaining")]), ir.IAdmit(),
                                    ir.IServe(keys=[ir.Unary("-", C("remaining"))])]


@pytest.mark.parametrize("granule, value", [("", None), ("granule 4;", 4.0),
                                            ("granule inf;", INF)])
def test_p04_se9_granule(granule, value):
    assert step_of(prog(SE9.replace("GRANULE", granule)), "e").granule == value


# ----------------------------------------------------------- §13 SE-10 … SE-18
@pytest.mark.parametrize("preempt, kind, keys, requeue", [
    ("lifo", "by", [ir.Unary("-", C("admission"))], "head"),
    ("by (-admission)", "by", [ir.Unary("-", C("admission"))], "head"),
    ("by (-admission) requeue tail", "by", [ir.Unary("-", C("admission"))], "tail"),
    ("by (admission)", "by", [C("admission")], "head"),
    ("by (-position)", "by", [ir.Unary("-", C("position"))], "head"),
    ("none", "none", [], "head"),
])
def test_p04_se10_vllm_oracle(preempt, kind, keys, requeue):
    p = prog(SE10.replace("PREEMPT", preempt))
    kv = pool(p, "kv")
    assert (kv.cap, kv.block, kv.preempt, bare(kv.preempt_keys), kv.requeue) == \
        (176, 16, kind, keys, requeue)
    assert bare(step_of(p)) == ir.Step(cost=N(1), budget=N(64), memory=ref("pool", "kv"))
    assert p.workload.hidden == ["o"]


def test_p04_se11_chunk_reads_a_pool():
    step = step_of(prog(SE11))
    assert bare(step.chunk) == ir.Cond(
        ir.Binary(">", ir.Binary("+", C("residents"),
                                 ir.Observable("queued", ref("pool", "reqs"))), N(1)),
        N(24), N(0))
    assert bare(step.keys) == [ir.Unary("-", C("admission"))]
    assert bare(step.budget) == N(32)


def test_p04_se12_se13_growing_runs():
    p = prog(SE12)
    assert [(r.mode, bare(r.growing)) for r in runs(p)] == [
        ("prefill", ref("pool", "kv")), (None, None), ("decode", ref("pool", "kv"))]
    assert bare(pool(p, "slots").admit_via) == ref("stage", "engine")
    p = prog(SE13)
    assert [r.text for r in runs(p)] == ["run engine prefill (4) growing kv",
                                         "run engine decode (6) growing kv"]


@pytest.mark.parametrize("cost, value", [
    ("1 + attention", ir.Binary("+", N(1), C("attention"))),
    ("1 + kv_prefill", ir.Binary("+", N(1), C("kv_prefill"))),
    ("1 + residents", ir.Binary("+", N(1), C("residents"))),
    ("1 + prefilled", ir.Binary("+", N(1), C("prefilled"))),
    ("1 + tokens", ir.Binary("+", N(1), C("tokens"))),
    ("1 + kv_decode", ir.Binary("+", N(1), C("kv_decode"))),
    ("1 + decoders", ir.Binary("+", N(1), C("decoders"))),
])
def test_p04_se14_what_cost_reads(cost, value):
    assert bare(step_of(prog(SE14.replace("COST", cost))).cost) == value


def test_p04_se15_seed_engine_is_the_kernel_stage():
    kernel = prog(SE15)
    engine = prog(SEED_ENGINE, horizon=10)
    assert bare(step_of(engine, "llm")) == bare(step_of(kernel, "llm")) == ir.Step(
        cost=ir.Binary("+", N(1), ir.Binary("*", N(0.1), C("tokens"))), budget=N(8),
        keys=[C("remaining")])
    assert [x.name for x in engine.pools] == []
    assert [(r.mode, bare(r.work)) for r in runs(engine)] == [("prefill", N(8))]


def test_p04_se16_se17_se18_pools_and_orders():
    p = prog(SE16)
    assert pool(p, "kv").admit_via is None
    hold = next(s for s in ir_stmts(p.session) if isinstance(s, ir.Hold))
    assert bare(hold.cache) == N(0)
    p = prog(SE17)
    assert [bare(x.admit_via) for x in p.pools] == [ref("stage", "engine")] * 2
    p = prog(SE18)
    assert bare(step_of(p).keys) == [ir.Unary("-", C("admission"))]
    assert step_of(prog(SE18.replace(" serve by (-admission);", ""))).keys is None


def test_p04_se_programs_in_fn_main_form():
    # the same kernel in pyserq 0.1.4's spelling: `fn main`, `cost(…)` on amounts
    main = ("fn main() {\n" + SE5.replace("run engine prefill (n)",
                                          "run engine prefill (cost(engine, n))")
            .replace("kv (min(n, left))", "kv (cost(kv, min(n, left)))") + "\n}\n")
    assert bare(step_of(prog(main))) == bare(step_of(prog(SE5)))
    assert [(bare(r.work), r.mode, bare(r.growing)) for r in runs(prog(main))] == \
        [(bare(r.work), r.mode, bare(r.growing)) for r in runs(prog(SE5))]


# ------------------------------------------------------------------- engines
ENGINE = """
device gpu { kv cap 64; fwd(t) = 0.5 + 0.01 * t; attn() = batch.attention; }
engine llm on gpu {
  reqs cap 2;
  tokens cap 8 + waiting.count;
  granule 2;
  state just = 0;
  schedule {
    let c = running.count > 1 ? 4 : inf;
    advance running by (remaining) each at most (c);
    branch (just == 0 || waiting.count > 0) { admit waiting each at most (c); }
    set just = waiting.admitted > 0;
  }
  execute (fwd(batch.tokens) + attn());
}
pool kv on gpu { block 4; evict lru; preempt lifo; }
pool reqs on llm { }
workload { arrive batch(2); }
server { hold reqs (1), kv (8) { run llm prefill (8) growing kv; run llm decode (2) growing kv; }
         observe finished = now; }
gauge g = just;
claim c : every iteration of llm (just >= 0 && tokens <= 8);
"""


def test_p04_engine_lowering():
    p = prog(ENGINE)
    queued = ir.Observable("queued", ref("pool", "reqs"))
    assert bare(step_of(p, "llm")) == ir.Step(
        cost=ir.Binary("+", ir.Binary("+", N(0.5), ir.Binary("*", N(0.01), C("tokens"))),
                       C("attention")),
        budget=ir.Binary("+", N(8), queued),
        chunk=ir.Cond(ir.Binary(">", C("residents"), N(1)), N(4), N(0)),
        memory=ref("pool", "kv"), granule=2.0, registers=[("just", 0.0)],
        iteration=[ir.IServe(keys=[C("remaining")]),
                   ir.IIf(ir.Binary("||", ir.Binary("==", C("just"), N(0)),
                                    ir.Binary(">", queued, N(0))), [ir.IAdmit()], [],
                          "`branch (just == 0 || queued(reqs) > 0)`"),
                   ir.ISet("just", ir.Binary(">", C("admitted"), N(0)))])
    kv, reqs = pool(p, "kv"), pool(p, "reqs")
    assert (kv.cap, kv.block, kv.preempt, kv.admit_via) == (64, 4, "by", None)
    assert (reqs.cap, bare(reqs.admit_via)) == (2, ref("stage", "llm"))
    assert bare(p.gauges[0].value) == C("just")
    assert bare(p.claims[0].value) == ir.Binary("&&", ir.Binary(">=", C("just"), N(0)),
                                                ir.Binary("<=", C("tokens"), N(8)))


def test_p04_engine_family_and_spellings():
    text = """
    device gpu[2] { kv cap 64; }
    engine llm[2] on gpu {
      reqs cap 2;
      tokens cap 8;
      scheduler { exclusive prefill; admit waiting while (running.preempted == 0); }
      worker { forward (1); }
    }
    pool kv on llm.gpu { }
    pool reqs on llm { }
    """
    p = prog(text, need_horizon=False)
    stage = p.stages[0]
    assert (stage.name, stage.size, stage.step.serve) == ("llm", 2, "exclusive")
    assert bare(stage.step.memory) == ref("pool", "kv")
    assert [(x.name, x.size, x.cap, bare(x.admit_via)) for x in p.pools] == [
        ("kv", 2, 64, ref("stage", "llm")), ("reqs", 2, 2, ref("stage", "llm"))]


def test_p04_engine_schedule_forms():
    base = ("device gpu {{ }}\nengine llm on gpu {{ reqs[3] cap 2; tokens cap 8 + waiting.count; "
            "schedule {{ {} }} execute (1); }}\npool reqs on llm {{ }}\n")
    only = "decoders > 0 ? decoding : !decoding"
    p = prog(base.format(f"advance running only ({only}) by (remaining); admit waiting only "
                         f"({only}) while (running.preempted == 0);"), need_horizon=False)
    step = step_of(p, "llm")
    assert (step.iteration, bare(step.keys)) == (None, [C("remaining")])
    assert step.only is not None
    total = bare(step.budget).right
    assert total == ir.Binary("+", ir.Binary("+", *[
        ir.Observable("queued", ref("pool", "reqs", N(k))) for k in (0, 1)]),
        ir.Observable("queued", ref("pool", "reqs", N(2))))
    # the same statements with another `while` are a body
    p = prog(base.format("advance running; admit waiting while (waiting.admitted < 2);"),
             need_horizon=False)
    assert bare(step_of(p, "llm").iteration) == [
        ir.IServe(), ir.IAdmit(cond=ir.Binary("<", C("admitted"), N(2)))]
    p = prog(base.format("advance running each at most (max(2, running.count)); "
                         "admit waiting while (running.preempted == 0);"), need_horizon=False)
    assert bare(step_of(p, "llm").chunk) == ir.Call("max", [N(2), C("residents")])
    p = prog(base.format("advance running each at most (inf); admit waiting;"),
             need_horizon=False)
    assert bare(step_of(p, "llm").chunk) == N(0)


# ------------------------------------------------------ Part 05 §1 serving forms
def test_p05_program_a_rewrites():
    text = """
    stage prefill : fifo;  stage decode : ps(1);  stage tool : delay;  stage link : ps(10);
    workload { arrive batch(1); init { set W = 2; } session { request; } }
    server { prefill W;  decode (W);  tool W + 1; }
    """
    assert [r.text for r in runs(prog(text))] == ["run prefill (W)", "run decode (W)",
                                                  "run tool (W + 1)"]


def test_p05_program_b_rewrites():
    text = """
    stage prefill[2] : fifo; stage E[2] : step { cost 1; } stage X : ps(1);
    workload { arrive batch(1); init { set j = 1; } session { request; } }
    server { prefill[j] (4); decode[j] (2); prefill on X (3); decode on E[0] (1); tool on X (5); }
    """
    assert [r.text for r in runs(prog(text))] == [
        "run prefill[j] (4)", "run E[j] decode (2)", "run X (3)", "run E[0] decode (1)",
        "run X (5)"]
    assert [r.mode for r in runs(prog(text))] == [None, "decode", None, "decode", None]


def test_p05_forms_resolve_where_a_definition_is_used():
    text = """
    def serve_it(w) { prefill (w); decode (1); }
    stage E : step { cost 1; }
    workload { arrive batch(1); session { request; } }
    server { serve_it(3); }
    """
    assert [r.text for r in runs(prog(text))] == ["run E prefill (3)", "run E decode (1)"]
    err = error("workload { arrive batch(1); session { request; } }\n"
                "def f(w) { prefill (w); }\nserver { f(3); }\nstage E : step { cost 1; }",
                ParseError)
    assert "no stage declared above plays `prefill`" in err.message
    assert "in `f`, used at 3:10" in err.notes


def test_p05_forms_take_growing_and_work_forms():
    text = """
    pool kv { cap 64; }
    stage E : step { cost 1; }
    workload { arrive batch(1); session { request; } }
    server { hold kv (4) { prefill -1 + 4 growing kv; decode (3) * 2 growing kv; } }
    """
    assert [(r.text, bare(r.growing)) for r in runs(prog(text))] == [
        ("run E prefill (-1 + 4) growing kv", ref("pool", "kv")),
        ("run E decode (3 * 2) growing kv", ref("pool", "kv"))]


# ------------------------------------------------------------ Part 06 §8 claims
def test_p06_w5_claims():
    p = prog(W4)
    e = ref("stage", "E")
    assert [(c.name, c.kind, bare(c.stage)) for c in p.claims] == [
        ("cap_ok", "every_iteration", e), ("always_full", "every_iteration", e),
        ("some_full", "some_iteration", e), ("never", "some_iteration", e),
        ("all_done", "at_end", None), ("small_only", "every_iteration", e)]
    assert bare(p.claims[4].value) == ir.Binary(
        "&&", ir.Binary("==", ir.ObsAggregate("count", "done"), N(3)),
        ir.Binary("<=", ir.ObsAggregate("largest", "done"), N(10)))
    assert bare(p.claims[5].given) == ir.Binary("==", ir.Attr("big"), N(0))


def test_p06_claim_reads():
    text = W4.split("claim")[0] + """
    pool p[2] { cap 4; }
    claim a : every iteration of E (demand + served + arrived + attention + now > 0
                                   && used(p[0]) + queue(E) + busy(E) + queued(p[1]) >= 0);
    claim b : at end (total(done) + smallest(done) + prefix_total(done) > now);
    claim c given (big == 0 && serial < 1) : some iteration of E[0] (tokens > 0);
    """
    p = prog(text)
    assert bare(p.claims[2].stage) == ref("stage", "E")
    assert bare(p.claims[1].value).left.left.right == ir.ObsAggregate("smallest", "done")
    hidden = prog(W4.replace("session { request; end; }", "hidden big; session { request; end; }"))
    assert bare(hidden.claims[5].given) == ir.Binary("==", ir.Attr("big"), N(0))
    arr = prog("stage E[2] : step { cost 1; }\nclaim c : every iteration of E[1] (tokens > 0);",
               need_horizon=False)
    assert bare(arr.claims[0].stage) == ref("stage", "E", N(1))


# ------------------------------------------------------- a few message details
@pytest.mark.parametrize("text, message", [
    ("stage e : step { cost 1; serve by (x); }\nworkload { arrive batch(1); hidden x; "
     "init { set x = 1; } }", "`x` is hidden from the scheduler"),
    ("stage e : step { cost 1; }\nstage d : delay;\npool q { admit via d; }",
     "`admit via d`: `d` is not a step stage"),
    ("stage e[2] : step { cost 1; }\npool q { admit via e; }",
     "`admit via` names a family of 2, and `q` is a family of 1"),
    ("stage e : step { cost 1; }\npool q[3] { admit via e; queue by (waited); }", None),
    ("stage e[2] : step { cost 1; }\npool q[2] { admit via e; }", None),
    ("stage e[2] : step { cost 1; }\npool q { admit via e[1]; }", None),
    ("stage e[2] : step { cost 1; memory kv; }\npool kv { }", None),
    ("stage e : step { cost 1; state x = 0; iteration { serve; admit; set x = 1; } }\n"
     "pool q { admit via e; queue by (x); }", None),
])
def test_p04_admission_pairing_and_registers(text, message):
    if message is None:
        prog(text, need_horizon=False)
    else:
        assert message in error(text).message


def test_p04_register_in_a_hold_header_of_its_pool():
    text = """
    stage e : step { cost 1; state x = 0; iteration { serve; admit; set x = 1; } }
    pool q { cap 4; admit via e; }
    pool r { cap 4; }
    workload { arrive batch(1); session { request; } }
    server { hold q (1), r (x + 1) { run e prefill (1); } }
    """
    hold = next(s for s in ir_stmts(prog(text).session) if isinstance(s, ir.Hold))
    assert bare(hold.pools[1].units) == ir.Binary("+", C("x"), N(1))


def test_p04_serving_and_step_parse_errors_name_the_spelling():
    assert error("stage e : step { cost 1; iteration { admit waiting; } }",
                 ParseError).message.startswith("`admit waiting` is an engine's schedule")
    assert error("device g { }\nengine a on g { tokens cap 1; schedule { advance running; "
                 "admit; } execute (1); }", ParseError).message.startswith(
        "`admit` is a step stage's iteration statement; an engine's schedule writes "
        "`admit waiting`")


def test_p04_se1_end_to_end():
    """SE-1's report (horizon 20), through the public API."""
    import serq
    rep = serq.run(serq.load(source=SE1, horizon=20))
    row = next(r for r in rep.stages if r.name == "engine")
    values = row.values if hasattr(row, "values") else vars(row)
    assert rep.observes["ttft"].values == [3.0]
    assert rep.observes["response"].values == [6.0]
    for key, want in [("iterations", 6), ("prefill_only", 0.15), ("decode_only", 0.15),
                      ("mean_decode_batch", 1), ("mean_itl", 1), ("completed", 2),
                      ("mean_service", 3)]:
        assert values[key] == pytest.approx(want, rel=1e-9), key


def test_p05_forms_find_stages_of_the_workload_file(tmp_path):
    # a --workload file's items stand before the program's (Part 01 §2.8)
    wl = tmp_path / "w.sq"
    wl.write_text("stage prefill : fifo;\nworkload { arrive batch(1); session { request; } }\n")
    p = prog("server { prefill 3; }\n", workload=str(wl))
    assert [r.text for r in runs(p)] == ["run prefill (3)"]
