"""The programs of test_p04_engine.py: Part 04 §13's worked step-engine
scenarios SE-1 … SE-18 and their variants, in the 0.1.3 flat dialect, with
§13's conventions (`cost 1`, the shared server block; test_p04_engine.py's
docstring gives them). They are collected in `SE_PROGRAMS` (name ->
(source, load keywords)), so the differential tests can run each one in the
reference; `ENGINE_FORM_PROGRAMS` holds the §11 engine spelling (SE-15)
with its kernel equivalent."""
from __future__ import annotations

SERVER = ("server { run engine prefill (n); observe ttft = now; run engine decode (o - 1); "
          "observe response = now; }")


def basic(stage_body: str, k: int, init: str) -> str:
    """§13 preamble: one step stage `engine`, K sessions at 0, the standard server."""
    return (f"stage engine : step {{ {stage_body} }}\n"
            f"workload {{ arrive batch({k}); init {{ {init} }} session {{ request; }} }}\n"
            f"{SERVER}\n")


SE1 = basic("budget 4; cost 1;", 1, "set n = 10; set o = 4;")
SE2 = basic("budget 8; cost 1;", 2, "set n = 6; set o = 3;")


def se3(serve: str) -> str:
    return basic(f"budget 8; cost 1; {serve}", 3,
                 "set n = serial == 0 ? 10 : (serial == 1 ? 4 : 3); set o = 3;")


def se4(chunk: str) -> str:
    return basic(f"budget 8; {chunk} cost 1;", 2, "set n = serial == 0 ? 7 : 4; set o = 3;")


SE5 = """
pool reqs { cap 2; admit via engine; }
pool kv { cap 64; block 4; evict lru; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
workload { arrive batch(3); init { set n = 6; set o = 3; } session { request; } }
server {
  hold reqs (1), kv (min(n, left)) reserve (n) at admission (left = budget_left(engine)) {
    observe adm = now; observe alloc = used(kv);
    run engine prefill (n) growing kv; observe ttft = now;
    run engine decode (o - 1) growing kv;
  }
  observe response = now;
}
"""


def se6(serve: str) -> str:
    return f"""
pool reqs {{ cap 2; admit via engine; }}
pool kv {{ cap 20; }}
stage gate : delay;
stage engine : step {{ budget 4; chunk 4; cost 1; memory kv; {serve} }}
workload {{ arrive batch(2); init {{ set prompt = serial == 0 ? 2 : 4; }} session {{ request; }} }}
server {{
  run gate (serial);
  set t0 = now;
  hold reqs (1), kv (min(prompt, left)) reserve (prompt) at admission (left = budget_left(engine)) {{
    run engine prefill (prompt) growing kv;
    observe ttft = now - t0;
    branch (serial == 0) {{ run engine decode (2) growing kv; }}
  }}
  observe response = now - t0;
}}
"""


def se6_three(serve: str) -> str:
    """§13 SE-6: three 2-token prompts, budget 8, reserve (prompt + 2), decode 2."""
    return f"""
pool reqs {{ cap 3; admit via engine; }}
pool kv {{ cap 20; }}
stage engine : step {{ budget 8; chunk 4; cost 1; memory kv; {serve} }}
workload {{ arrive batch(3); init {{ set prompt = 2; }} session {{ request; }} }}
server {{
  hold reqs (1), kv (min(prompt, left)) reserve (prompt + 2) at admission (left = budget_left(engine)) {{
    observe adm = now; observe u = used(kv);
    run engine prefill (prompt) growing kv;
    observe ttft = now;
    run engine decode (2) growing kv;
  }}
  observe done = now;
}}
"""


def se6_full_budget(budget: int) -> str:
    """§13 SE-6: s0, s1 (n = 1) at 0 and s2 (n = 2) at 2, decode 4, exclusive prefill."""
    return f"""
pool reqs {{ cap 3; admit via engine; }}
pool kv {{ cap 20; }}
stage gate : delay;
stage engine : step {{ budget {budget}; cost 1; memory kv; serve exclusive prefill; }}
workload {{ arrive batch(3); init {{ set prompt = serial == 2 ? 2 : 1; }} session {{ request; }} }}
server {{
  run gate (serial == 2 ? 2 : 0);
  hold reqs (1), kv (min(prompt, left)) reserve (prompt) at admission (left = budget_left(engine)) {{
    observe adm = now;
    run engine prefill (prompt) growing kv;
    observe ttft = now;
    run engine decode (4) growing kv;
  }}
  observe done = now;
}}
"""


def se7(clause: str) -> str:
    """SE-7's program; SE-8 replaces the serve clause by an iteration body."""
    return f"""
pool reqs {{ cap 8; admit via engine; }}
stage engine : step {{ budget 8; cost 1; {clause} }}
stage gate : delay;
workload {{ arrive batch(3); init {{ set n = serial == 2 ? 4 : 3; set o = 3; }} session {{ run gate (serial); request; }} }}
server {{ hold reqs (1) {{ run engine prefill (n); observe ttft = now; run engine decode (o - 1); }} observe response = now; }}
"""


SE8_IDLE = """
pool reqs { cap 8; admit via engine; }
stage engine : step { budget 8; cost 1; state just = 0; iteration { serve; branch (just == 0) { admit; } set just = admitted > 0; } }
stage gate : delay;
workload { arrive batch(2); init { set n = 3; } session { run gate (5 * serial); request; } }
server { hold reqs (1) { run engine prefill (n); observe ttft = now; } observe response = now; }
"""


def se9(granule: str) -> str:
    return f"""
pool reqs {{ cap 4; admit via e; }}
stage e : step {{ budget 5; cost 1; {granule} }}
workload {{ arrive batch(2); init {{ set n = serial == 0 ? 3 : 6; }} session {{ request; }} }}
server {{ hold reqs (1) {{ run e prefill (n); observe ttft = now; run e decode (1); }} observe done = now; }}
"""


def se10(preempt: str, observe_admissions: bool = False) -> str:
    extra = ("observe adm = now; observe comp = computed; observe kn = known;\n    "
             if observe_admissions else "")
    return f"""
let bs = 16; let B = 64; let blocks = 11; let max_seqs = 8;
pool reqs {{ cap max_seqs; admit via engine; }}
pool kv {{ cap blocks * bs; block bs; evict lru; {preempt} }}
stage engine : step {{ budget B; cost 1; memory kv; }}
stage gate : delay;
workload {{ arrive batch(4); hidden o;
  init {{ set prompt = 40; set o = 30; set arrive = serial; }}
  session {{ run gate (arrive); request; }} }}
server {{
  hold reqs (1), kv (min(known, budget_left(engine))) reserve (known)
       at admission (known = computed < prompt ? prompt : computed + 1) {{
    {extra}run engine prefill (known) growing kv;
    branch (known == prompt) {{ observe first = now; }}
    run engine decode (o - 1 - (known - prompt)) growing kv;
  }}
  observe done = now;
}}
"""


SE11 = """
let bs = 16; let B = 32; let blocks = 9; let max_seqs = 8; let chunk = 24;
pool reqs { cap max_seqs; admit via engine; }
pool kv { cap blocks * bs; block bs; evict lru; preempt lifo; }
stage engine : step { budget B; chunk residents + queued(reqs) > 1 ? chunk : 0; cost 1; memory kv; serve by (-admission); }
stage gate : delay;
workload { arrive batch(4); hidden o;
  init {
    set prompt = serial == 3 ? 30 : 60;
    set o = serial == 0 ? 12 : (serial == 1 ? 24 : (serial == 2 ? 12 : 6));
    set arrive = serial == 0 ? 1 : (serial == 1 ? 4 : (serial == 2 ? 0 : 1));
  }
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

SE12 = """
pool kv { cap 48; block 16; evict lru; preempt lifo; }
pool slots { cap 4; admit via engine; }
stage engine : step { budget 64; cost 1; memory kv; }
stage tool : delay;
workload { arrive batch(2); init { set d = serial == 0 ? 1 : 10; } }
session {
  hold slots (1), kv (16) {
    observe adm = now; observe comp = computed;
    run engine prefill (16) growing kv; run tool (d); run engine decode (20) growing kv;
    observe done = now;
  }
  end;
}
"""

SE13 = """
pool kv { cap 8; block 4; preempt lifo; }
pool reqs { cap 1; admit via engine; }
stage engine : step { budget 16; cost 1; memory kv; }
workload { arrive batch(1); session { request; } }
server {
  hold reqs (1), kv (4) { observe adm = now; observe comp = computed;
    run engine prefill (4) growing kv; run engine decode (6) growing kv; }
  observe done = now;
}
"""


def se14(cost: str) -> str:
    return f"""
pool kv {{ cap 100; block 4; }}
stage engine : step {{ budget 4; cost {cost}; memory kv; }}
workload {{ arrive batch(2); session {{ request; }} }}
server {{ hold kv (serial == 0 ? 3 : 5) {{
  branch (serial == 0) {{ run engine prefill (6) growing kv; }} else {{ run engine prefill (2); }}
  observe t = now; }} }}
"""


SE14_NOT_GROWING = """
stage engine : step { budget 4; cost 1 + attention; }
workload { arrive batch(1); session { request; } }
server { run engine prefill (6); observe t = now; }
"""

# A growing prefill after a cached prefix of 4: the first hold prefills 4
# tokens (K = 0, cost 1 + 8) and caches them; the second consumes the prefix
# (position 4) and prefills 2 more with K = 4: cost 1 + 2·(4 + 1) = 11.
SE14_CACHED_PREFIX = """
pool kv { cap 100; block 4; }
stage engine : step { budget 4; cost 1 + attention; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (4) { run engine prefill (4) growing kv; } cache (4);
  observe t1 = now;
  set t0 = now;
  hold kv (6) { observe c = cached; run engine prefill (2) growing kv; observe t = now - t0; } cache (0);
  end;
}
"""

SE15_KERNEL = """
stage llm : step { budget 8; cost 1 + 0.1 * tokens; serve by (remaining); }
workload { arrive batch(2); session { request; } }
server { run llm prefill (8); observe finished = now; }
"""

# The seed's own example (seed "context variables", Part 04 §11.2 and SE-15).
SE15_ENGINE = """
fn main() {
  device gpu { }
  engine llm on gpu {
    tokens cap 8;
    schedule { advance running by (remaining); admit waiting while (running.preempted == 0); }
    execute (1 + 0.1 * batch.tokens);
  }
  workload {
    arrive batch(2);
  }
  server {
    run llm prefill (cost(llm, 8));
    observe finished = now;
  }
}
"""

SE15_ADMISSION_KERNEL = """
stage llm : step { budget 8; cost 1; }
workload { arrive batch(2); session { request; } }
server { run llm prefill (8); run llm decode (2); observe finished = now; }
"""

SE15_ADMISSION_ENGINE = """
fn main() {
  device gpu { }
  engine llm on gpu {
    tokens cap 8;
    schedule { advance running; admit waiting while (running.preempted == 0); }
    execute (1);
  }
  workload {
    arrive batch(2);
  }
  server {
    run llm prefill (cost(llm, 8));
    run llm decode (cost(llm, 2));
    observe finished = now;
  }
}
"""


def se16(serve: str) -> str:
    return f"""
pool kv {{ cap 10; preempt lifo; }}
stage engine : step {{ budget 16; cost 1; memory kv; {serve} }}
workload {{ arrive batch(2); session {{ request; }} }}
server {{
  hold kv (serial == 0 ? 4 : 5) {{
    observe adm = now; observe u = used(kv); observe comp = computed;
    run engine prefill (serial == 0 ? 4 : 5) growing kv; observe ttft = now;
    run engine decode (3) growing kv;
  }} cache (0);
  observe done = now;
}}
"""


SE17 = """
pool a { cap 1; admit via engine; }
pool b { cap 5; admit via engine; }
stage engine : step { budget 100; cost 1; }
workload { arrive batch(3); session { request; } }
server {
  branch (serial < 2) { hold a (1) { observe adm = now; run engine prefill (3); } }
  else { hold b (1) { observe adm = now; run engine prefill (3); } }
  observe done = now;
}
"""


def se18(serve: str) -> str:
    return f"""
pool reqs {{ cap 4; admit via engine; }}
pool kv {{ cap 9; preempt lifo; }}
stage engine : step {{ budget 16; cost 1; memory kv; {serve} }}
workload {{ arrive batch(2); session {{ request; }} }}
server {{
  hold reqs (1), kv (serial == 0 ? 4 : 5) {{
    observe adm = now;
    run engine prefill (serial == 0 ? 4 : 5) growing kv;
    run engine decode (3) growing kv;
  }} cache (0);
  observe done = now;
}}
"""


SE3_ORDERS = ["", "serve admission;", "serve decode first;", "serve by (-admission);",
              "serve by (remaining);", "serve by (-remaining);", "serve exclusive prefill;"]
SE8_BODIES = [
    "iteration { serve; admit while (!preempted); }",
    "state just = 0; iteration { serve; branch (just == 0 || residents == 0) { admit; } "
    "set just = admitted > 0; }",
    "iteration { serve only (!decoding); admit; branch (tokens == 0) { serve; } }",
    "iteration { serve; branch (residents == 0) { admit; } }",
    "iteration { serve; admit only (decoders == 0) while (!preempted); }",
]
SE10_POLICIES = ["preempt lifo;", "preempt by (-admission);",
                 "preempt by (-admission) requeue tail;", "preempt by (admission);",
                 "preempt by (-position);", "preempt none;"]
SE14_COSTS = ["1 + attention", "1 + kv_prefill", "1 + residents", "1 + prefilled",
              "1 + tokens", "1 + kv_decode", "1 + decoders"]
H20 = {"horizon": 20}
H100 = {"horizon": 100}


def _collect() -> dict[str, tuple[str, dict]]:
    p: dict[str, tuple[str, dict]] = {
        "se1": (SE1, H20), "se2": (SE2, H20), "se5": (SE5, H20),
        "se8_idle": (SE8_IDLE, H20), "se11": (SE11, H100), "se12": (SE12, H100),
        "se13": (SE13, H20), "se14_not_growing": (SE14_NOT_GROWING, H100),
        "se14_cached_prefix": (SE14_CACHED_PREFIX, H100), "se15_kernel": (SE15_KERNEL, {"horizon": 10}),
        "se15_admission_kernel": (SE15_ADMISSION_KERNEL, {"horizon": 10}), "se17": (SE17, H20),
    }
    for i, o in enumerate(SE3_ORDERS):
        p[f"se3_{i}"] = (se3(o), H20)
    p["se4_chunk3"] = (se4("chunk 3;"), H20)
    p["se4_chunk_expr"] = (se4("chunk residents > 1 ? 3 : 0;"), H20)
    for tag, s in (("exclusive", "serve exclusive prefill;"), ("default", "")):
        p[f"se6_{tag}"] = (se6(s), H20)
        p[f"se6_three_{tag}"] = (se6_three(s), H20)
    p["se6_budget2"] = (se6_full_budget(2), H20)
    p["se6_budget3"] = (se6_full_budget(3), H20)
    p["se7_only"] = (se7("serve only (decoders > 0 ? decoding : !decoding);"), H20)
    p["se7_default"] = (se7(""), H20)
    p["se7_only_reverse"] = (se7("serve only (decoders < residents ? !decoding : decoding);"), H20)
    for i, b in enumerate(SE8_BODIES):
        p[f"se8_body{i}"] = (se7(b), H20)
    for tag, g in (("default", ""), ("4", "granule 4;"), ("inf", "granule inf;")):
        p[f"se9_granule_{tag}"] = (se9(g), H20)
    for i, pol in enumerate(SE10_POLICIES):
        p[f"se10_{i}"] = (se10(pol), H100)
    p["se10_observed"] = (se10("preempt lifo;", True), H100)
    for i, c in enumerate(SE14_COSTS):
        p[f"se14_cost{i}"] = (se14(c), H100)
    for tag, s in (("by_neg_admission", "serve by (-admission);"), ("default", "")):
        p[f"se16_{tag}"] = (se16(s), H20)
        p[f"se18_{tag}"] = (se18(s), H20)
    return p


#: name -> (0.1.3 flat-dialect source, load keywords) of every program here.
SE_PROGRAMS = _collect()

#: name -> (engine-form source, its kernel equivalent, load keywords) (Part 04 §11.2).
ENGINE_FORM_PROGRAMS = {
    "se15_engine": (SE15_ENGINE, SE15_KERNEL, {"horizon": 10}),
    "se15_admission_engine": (SE15_ADMISSION_ENGINE, SE15_ADMISSION_KERNEL, {"horizon": 10}),
}
