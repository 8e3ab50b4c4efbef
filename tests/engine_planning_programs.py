"""The small programs of `test_engine_planning.py`, each aimed at one rule
of the step engine's iteration (spec Part 04 §5–§9, §12), and `PROGRAMS`,
those compared with pyserq 0.1.3 there. Each program's expected numbers
are worked out in the docstring of the test that runs it."""

# sessions admitted at 0 in serial order; those LATE selects join the engine at 1
JOIN_BY_ADMISSION = """
pool p { cap 10; }
stage engine : step { budget 2; cost 1; }
stage d : delay;
workload { arrive batch(3); }
session { turn; hold p (1) { run d (LATE ? 1 : 0); run engine decode (3);
                             observe done = now; } }
run { horizon 20; warmup 0; seed 1; }
"""

# session 0 grows kv at 0.5 while the iteration [0, 1) runs: lifo preempts session 2
PREEMPTED_WHILE_RUNNING = """
pool kv { cap 10; preempt lifo; }
stage engine : step { budget 8; cost 1; }
stage d : delay;
workload { arrive batch(3); }
session { turn;
  branch (serial == 0) { hold kv (2) { run d (0.5); grow kv (4); run d (1); } }
  else { hold kv (4) { observe adm = now; run engine decode (3); observe done = now; } } }
run { horizon 20; warmup 0; seed 1; }
"""

BUDGET_LEFT_OUTSIDE = """
stage engine : step { budget 4; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { run engine decode (3); observe done = now; }
  else { run d (0.5); observe bl = budget_left(engine); } }
run { horizon 20; warmup 0; seed 1; }
"""

ATTENTION_IN_ORDER = """
stage engine : step { budget 4; cost attention; serve by (remaining); }
workload { arrive batch(1); }
session { turn; run engine prefill (6); observe ttft = now; }
run { horizon 50; warmup 0; seed 1; }
"""

SHORT_COST = """
stage engine : step { budget 4; cost 0.25; }
workload { arrive batch(1); }
session { turn; run engine prefill (6); observe ttft = now; run engine decode (1.5);
  observe done = now; }
run { horizon 50; warmup 0; seed 1; }
"""

# the cost is the tokens: a decode's last half token lasts half as long
DECODE_FRACTION = """
stage engine : step { budget 4; cost tokens; }
workload { arrive batch(1); }
session { turn; run engine decode (2.5); observe done = now; }
run { horizon 50; warmup 0; seed 1; }
"""

# session 2 comes at 0.45, between the ends at 0.3 and 0.6 of two decoders' iterations
BETWEEN_ENDS = """
stage engine : step { budget 4; cost 0.3; }
stage d : delay;
workload { arrive batch(3); }
session { turn;
  branch (serial == 2) { run d (0.45); observe w = work(engine); observe b = busy(engine);
                         run engine decode (2); }
  else { run engine decode (5); }
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# Part 04 SE-1: one request of 10 prompt tokens and 4 output tokens, budget 4
SE1 = """
stage engine : step { budget 4; cost 1; }
workload { arrive batch(1); init { set n = 10; set o = 4; } session { request; } }
server { run engine prefill (n); observe ttft = now; run engine decode (o - 1);
         observe response = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# SE-1 measured from 1.5
SE1_WARMUP = SE1.replace("warmup 0;", "warmup 1.5;")

# Part 04 SE-18 with a preempt-only iteration that costs nothing
FREE_PREEMPTION = """
pool reqs { cap 4; admit via engine; }
pool kv { cap 9; preempt lifo; }
stage engine : step { budget 16; cost tokens > 0 ? 1 : 0; memory kv; serve by (-admission); }
workload { arrive batch(2); }
session { turn;
  hold reqs (1), kv (serial == 0 ? 4 : 5) {
    observe adm = now;
    run engine prefill (serial == 0 ? 4 : 5) growing kv;
    run engine decode (3) growing kv;
  } cache (0);
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

THREE_GROWERS = """
pool kv { cap 12; preempt lifo; }
stage engine : step { budget 16; cost 1; memory kv; }
workload { arrive batch(3); }
session { turn;
  hold kv (4) { observe adm = now; run engine prefill (4) growing kv;
                run engine decode (3) growing kv; } cache (0);
  observe done = now; }
run { horizon 30; warmup 0; seed 1; }
"""

# session 2 queues for the engine at 0.5 while session 1's prefill waits for its granule
GRANULE_WAIT = """
pool reqs { cap 3; admit via engine; }
stage engine : step { budget 4; cost 1; granule 4; }
stage gate : delay;
workload { arrive batch(3); }
session { turn; run gate (serial == 2 ? 0.5 : 0);
  hold reqs (1) { observe adm = now;
    branch (serial == 0) { run engine decode (3); }
    else { branch (serial == 1) { run engine prefill (6); } else { run engine decode (1); } } }
  observe done = now; }
run { horizon 30; warmup 0; seed 1; }
"""

FIRST_EXCLUDED = """
stage engine : step { budget 4; cost 1; serve only (remaining < 3 || residents == 1); }
workload { arrive batch(2); }
session { turn; run engine decode (serial == 0 ? 3 : 2); observe done = now; }
run { horizon 30; warmup 0; seed 1; }
"""

TWO_A_TIME = """
pool reqs { cap 10; admit via engine; }
stage engine : step { budget 16; cost 1; iteration { serve; admit while (admitted < 2); } }
workload { arrive batch(3); }
session { turn; hold reqs (1) { observe adm = now; run engine prefill (1); } observe done = now; }
run { horizon 30; warmup 0; seed 1; }
"""

# session 1 (prefill 8, chunk 4, not growing) is served first; session 0's growth at 17 preempts it
DROPPED_ATTENTION = """
pool kv { cap 9; preempt lifo; }
stage engine : step { budget 8; chunk 4; cost 1 + attention; memory kv; serve by (-admission); }
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { hold kv (4) { run engine prefill (4) growing kv; observe ttft = now;
                                       run engine decode (3) growing kv; } cache (0); }
  else { hold kv (5) { observe adm = now; run engine prefill (8); observe ttft = now; } cache (0); }
  observe done = now; }
run { horizon 60; warmup 0; seed 1; }
"""

NO_MEMORY = """
stage engine : step { budget 2 + kv_prefill + kv_decode; cost 1; }
workload { arrive batch(1); }
session { turn; run engine prefill (6); observe ttft = now; }
run { horizon 20; warmup 0; seed 1; }
"""

BUDGET_LEFT_CHUNKED = """
stage engine : step { budget 4; chunk CHUNK; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { run engine prefill (6); observe ttft = now; }
  else { run d (0.5); observe bl = budget_left(engine); } }
run { horizon 20; warmup 0; seed 1; }
"""

# one gap of 4 (the iteration that prefills session 1) among 198 gaps of 1
ONE_LONG_GAP = """
stage engine : step { budget 8; cost 1 + prefilled; }
stage d : delay;
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { run engine decode (200); }
  else { run d (50.5); run engine prefill (3); }
  observe done = now; }
run { horizon 300; warmup 0; seed 1; }
"""

# Part 04 SE-1 with claims over its iterations (Part 06 §8)
SERVED_BEFORE = SE1.replace("run {", """claim fresh: some iteration of engine (served == 0);
claim ten: some iteration of engine (served == 10);
claim before: every iteration of engine (served == 4 * now || now >= 3);
run {""")

# session 0 stalls in its growth at 1 (preempt none) until session 1 ends at 3
STALLED_FIRST = """
pool kv { cap 8; preempt none; }
stage engine : step { budget 8; cost 1; memory kv; }
workload { arrive batch(2); }
session { turn;
  hold kv (4) { branch (serial == 0) { run engine prefill (4) growing kv;
                                       run engine decode (3) growing kv; }
                else { run engine decode (3); } } cache (0);
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

EXCLUSIVE_NO_BUDGET = """
stage engine : step { budget 0; cost 1; serve exclusive prefill; }
workload { arrive batch(1); }
session { turn; run engine prefill (2); observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# a run whose owner holds nothing: its `admission` is pyserq's 2**64
NOT_ADMITTED = """
stage engine : step { budget 4; cost 1; serve only (admission == 18446744073709551616); }
workload { arrive batch(1); }
session { turn; run engine decode (2); observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# Part 04 SE-1 cut at 2.5, inside its third iteration
SE1_CUT = SE1.replace("horizon 20;", "horizon 2.5;")

SMALL_GRANULE = """
stage engine : step { budget 1; cost 1; granule 0.5; }
workload { arrive batch(1); }
session { turn; observe b0 = busy(engine); run engine prefill (3); observe ttft = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# session 1, queued at 0.5, is admitted at 1 by an exclusive-prefill engine decoding session 0
EXCLUSIVE_ADMISSION = """
pool reqs { cap 3; admit via engine; }
pool kv { cap 100; }
stage engine : step { budget 8; cost 1; serve exclusive prefill; }
stage gate : delay;
workload { arrive batch(2); }
session { turn; run gate (serial == 1 ? 0.5 : 0);
  hold reqs (1), kv (left) at admission (left = budget_left(engine)) {
    observe u = used(kv); observe adm = now;
    branch (serial == 0) { run engine decode (3); } else { run engine prefill (2); } }
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

ZERO_COST = """
stage engine : step { budget 4; cost 0; }
workload { arrive batch(1); }
session { turn; run engine decode (1); observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# session 2's end at 1 is an attempt that admits nobody (reqs is full)
REGISTER_RESTORED = """
pool reqs { cap 1; admit via engine; }
stage engine : step { budget 4; cost 1 + k; state k = 0; iteration { set k = k + 1; serve; admit; } }
stage d : delay;
workload { arrive batch(3); }
session { turn;
  branch (serial == 2) { run d (1); }
  else { hold reqs (1) { branch (serial == 0) { run d (2); } run engine decode (1); } }
  observe done = now; }
run { horizon 30; warmup 0; seed 1; }
"""

DECODERS_WITH_MEMORY = """
pool kv { cap 100; }
stage engine : step { budget 8; cost 1 + decoders / 2 + 0 * kv_decode; memory kv; }
workload { arrive batch(1); }
session { turn; hold kv (4) { run engine decode (2); } observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# the session holds kv twice (nested holds), or once and a lease, while its run grows the inner hold
KV_TWICE = """
pool kv { cap 100; }
stage engine : step { budget 8; cost kv_decode; memory kv; }
workload { arrive batch(1); }
session { turn; OUTER hold kv (2) { run engine decode (2) growing kv; } INNER observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""
KV_NESTED = KV_TWICE.replace("OUTER", "hold kv (3) {").replace("INNER", "}")
KV_LEASED = KV_TWICE.replace("OUTER", "hold kv (3) { } lease kv (inf);").replace("INNER", "")
# one hold on kv (3) and a second pool, kv2 (2), which the run grows instead of the memory
KV_OTHER_GROWN = KV_TWICE.replace("pool kv {", "pool kv2 { cap 100; }\npool kv {").replace(
    "OUTER hold kv (2)", "hold kv (3), kv2 (2)").replace("growing kv;", "growing kv2;").replace(
    "INNER ", "")

# the session's only hold on kv, which its run grows: the cost reads that hold's allocation
KV_SOLE = """
pool kv { cap 100; }
stage engine : step { budget 8; cost kv_decode; memory kv; }
workload { arrive batch(1); }
session { turn; hold kv (2) { run engine decode (3) growing kv; } observe done = now; }
run { horizon 40; warmup 0; seed 1; }
"""
# the same hold admitted by the engine: the run is a newcomer of the first iteration's admission
KV_SOLE_ADMITTED = KV_SOLE.replace("pool kv { cap 100; }", "pool kv { cap 100; admit via engine; }")

# session 1's growth, later in the serving pass, preempts session 0, served before it
KV_PREEMPTED_IN_THE_PASS = """
pool kv { cap 4; preempt by (admission); }
stage engine : step { budget 8; cost kv_decode; memory kv; }
workload { arrive batch(2); }
session { turn; hold kv (serial == 0 ? 3 : 1) { run engine decode (2) growing kv; }
          observe done = now; }
run { horizon 60; warmup 0; seed 1; }
"""

# session 1's hold, admitted by the engine at its iteration end at 2, joins session 0's prefill
KV_JOINED_AFTER_THE_PASS = """
pool kv { cap 100; admit via engine; }
stage engine : step { budget 8; chunk 1; cost kv_prefill; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session { turn; branch (serial == 1) { run d (0.5); }
  hold kv (2) { run engine prefill (4) growing kv; } observe done = now; }
run { horizon 60; warmup 0; seed 1; }
"""

# a prefill of 2e-9 tokens in chunks of 1e-9: the first leaves exactly the tolerance, 1e-9
LEFT_WITH_TOL = """
stage engine : step { budget 8; chunk 1e-9; cost 1; }
workload { arrive batch(1); }
session { turn; run engine prefill (2e-9); observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# session 1's second prefill is preempted by session 0's growth (lifo: session 1 was admitted last)
PREFILL_PREEMPTED = """
pool kv { cap 6; preempt lifo; }
stage engine : step { budget 1; cost 1; }
stage d : delay;
workload { arrive batch(2); session { request; } }
server {
  branch (serial == 0) { hold kv (2) { run d (2.5); grow kv (4); run d (1); } }
  else { run d (0.1); hold kv (4) { run engine prefill (2); run engine prefill (2); } }
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""
# the same with a decode of 2 tokens after the second prefill
PREFILL_PREEMPTED_DECODED = PREFILL_PREEMPTED.replace(
    "run engine prefill (2); } }", "run engine prefill (2); run engine decode (2); } }")

# the budget is the kv the prefilling residents hold, asked before the run first grows its hold
BUDGET_FROM_KV = """
pool kv { cap 100; }
stage engine : step { budget kv_prefill; cost 1; memory kv; }
workload { arrive batch(1); }
session { turn; hold kv (4) { run engine prefill (8) growing kv; observe ttft = now; } }
run { horizon 20; warmup 0; seed 1; }
"""

# session 0's admission forks a leg that runs on the engine too
LEG_IN_ADMISSION = """
pool reqs { cap 1; admit via engine; }
stage engine : step { budget 4; cost 1; }
workload { arrive batch(2); }
session { turn;
  hold reqs (1) {
    branch (serial == 0) { fork { observe x = 1; run engine decode (1); observe leg = now; } }
    observe x = 2; run engine decode (2); join; }
  observe done = now; }
run { horizon 30; warmup 0; seed 1; }
"""

# the same with a run of zero work after the fork: the session goes on behind the leg
LEG_BEFORE_ZERO_WORK = LEG_IN_ADMISSION.replace(
    "stage engine : step { budget 4; cost 1; }",
    "stage engine : step { budget 4; cost 1; }\nstage d : delay;").replace(
    "observe x = 2;", "run d (0); observe x = 2;")

# session 0's admission releases p, which lets session 1 through to the engine
RELEASED_IN_ADMISSION = """
pool reqs { cap 2; admit via engine; }
pool p { cap 1; }
stage engine : step { budget 4; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { hold p (1) { run d (1);
    hold reqs (1) { release p; run engine decode (1); observe s0 = now; } } }
  else { hold p (1) { run engine decode (1); observe s1 = now; } }
  observe done = now; }
run { horizon 30; warmup 0; seed 1; }
"""

DECODE_REQUEST = """
stage engine : step { budget 4; cost 1; }
workload { arrive batch(1); session { request; } }
server { run engine decode (3); observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# Part 04 SE-18 with a register that adds up the preemptions its attempts made
PREEMPTIONS_ADDED_UP = FREE_PREEMPTION.replace(
    "cost tokens > 0 ? 1 : 0; memory kv; serve by (-admission); }",
    "cost 1 + p; memory kv; state p = 0;\n"
    "  iteration { serve by (-admission); set p = p + preempted; admit while (!preempted); } }",
).replace("horizon 20;", "horizon 40;")

# newest first: session 2's prefill is scheduled, then session 1's growth preempts it
BUDGET_GIVEN_BACK = """
pool kv { cap 6; preempt lifo; }
stage engine : step { budget 6; chunk 3; cost 1; memory kv; serve by (-admission); }
workload { arrive batch(3); }
session { turn;
  branch (serial == 1) { hold kv (1) { run engine decode (3) growing kv; } cache (0); }
  else { hold kv (serial == 0 ? 2 : 3) { run engine prefill (8); observe ttft = now; } cache (0); }
  observe done = now; }
run { horizon 40; warmup 0; seed 1; }
"""

# the victim of an admitted session's `grow` statement keeps its tokens off
# the budget (generator seed 169046, shrunk)
GROW_STATEMENT_VICTIM = """
stage E : step { budget residents > 2 ? 8 : 16; cost 1 + 0.02 * prefilled + 0.001 * attention; memory kv; }
stage s0 : ps(1);
pool kv { cap 20; block 4; preempt lifo; admit via E; }
workload { arrive batch(4); init { set u = 2; } }
session { turn;
  run s0 (u / 4 + 2);
  hold kv (1) { grow kv (2); run E prefill (6) growing kv; }
  observe done = now; }
run { horizon 30; }
"""

# a growth of a pool that is another engine's memory preempts that engine's
# resident and then stalls (fleet program 562, made small)
VICTIMS_THEN_STALL = """
pool kv { cap 8; block 4; preempt lifo; }
stage F : step { budget 8; cost 1; memory kv; }
stage engine : step { budget 16; cost 1; }
workload { arrive batch(2); session { request; } }
server {
  branch (serial == 0) { hold kv (4) { run F prefill (8); } }
  else { hold kv (4) { run engine prefill (30) growing kv; } }
}
run { horizon 10; }
"""

# session 1's prefill advances within its allocation (8) before session 0's growth preempts it
COMPUTED_WITHIN_ALLOCATION = """
pool kv { cap 10; preempt lifo; }
stage engine : step { budget 16; cost 1; memory kv; }
workload { arrive batch(2); }
session { turn;
  hold kv (serial == 0 ? 2 : 8) { observe comp = computed;
    run engine prefill (serial == 0 ? 2 : 4) growing kv; run engine decode (2) growing kv; } cache (0);
  observe done = now; }
run { horizon 40; warmup 0; seed 1; }
"""

TWO_DECODERS = """
stage engine : step { budget 4; cost 1; }
workload { arrive batch(2); }
session { turn; run engine decode (serial == 0 ? 1 : 3); observe done = now; }
run { horizon 10; warmup 0; seed 1; }
"""

# session 1's delay ends at 2, with the engine's iteration [1, 2)
SAME_TIME_AS_AN_END = """
stage engine : step { budget 4; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { run engine decode (5); } else { run d (2); observe w = work(engine); }
  observe done = now; }
run { horizon 10; warmup 0; seed 1; }
"""


# session 0's runs of zero work in its admission (REGISTER_RESTORED's `run d (2)` made three)
ZERO_WORK_IN_ADMISSION = REGISTER_RESTORED.replace(
    "run d (2);", "run d (0); run d (0); observe mid = now; run d (0);")

# after an engine's admission, zero work outside one yields again
ZERO_WORK_AFTER_ADMISSION = """
pool reqs { cap 1; admit via engine; }
pool Q { cap 2; }
pool P { cap 1; }
stage engine : step { budget 4; cost 1; }
stage d : delay;
workload { arrive batch(3); }
session { turn;
  branch (serial == 0) { hold Q (2) { hold reqs (1) { run engine decode (1); } } }
  else { hold Q (1) { branch (serial == 1) { run d (0); } hold P (1) { run d (1); } } }
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# a serve key that weighs `decoding` against the admission order
DECODING_WEIGHED = """
pool p { cap 10; }
stage engine : step { budget 1; cost 1; serve by (admission - 0.75 * decoding); }
workload { arrive batch(2); }
session { turn;
  hold p (1) { branch (serial == 0) { run engine prefill (3); } else { run engine decode (2); } }
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""


#: The programs compared with pyserq 0.1.3 (seed 1).
PROGRAMS = [JOIN_BY_ADMISSION.replace("LATE", "serial == 1"),
            JOIN_BY_ADMISSION.replace("LATE", "serial < 2"), PREEMPTED_WHILE_RUNNING, BUDGET_LEFT_OUTSIDE,
            ATTENTION_IN_ORDER, SHORT_COST, DECODE_FRACTION, BETWEEN_ENDS, SE1_WARMUP, FREE_PREEMPTION,
            THREE_GROWERS, GRANULE_WAIT, FIRST_EXCLUDED, TWO_A_TIME, DROPPED_ATTENTION,
            NO_MEMORY, ONE_LONG_GAP, SERVED_BEFORE, STALLED_FIRST, EXCLUSIVE_NO_BUDGET,
            NOT_ADMITTED, SE1_CUT, SMALL_GRANULE, EXCLUSIVE_ADMISSION,
            FREE_PREEMPTION.replace("1 : 0;", "1 : -1;"),
            SE1_WARMUP.replace("warmup 1.5", "warmup 3"), REGISTER_RESTORED,
            ZERO_WORK_IN_ADMISSION, ZERO_WORK_AFTER_ADMISSION, DECODING_WEIGHED,
            DECODERS_WITH_MEMORY, KV_NESTED, KV_LEASED,
            KV_OTHER_GROWN, KV_SOLE, KV_SOLE_ADMITTED, KV_PREEMPTED_IN_THE_PASS,
            KV_JOINED_AFTER_THE_PASS, LEFT_WITH_TOL, PREFILL_PREEMPTED, PREFILL_PREEMPTED_DECODED,
            BUDGET_FROM_KV, LEG_IN_ADMISSION, LEG_BEFORE_ZERO_WORK,
            RELEASED_IN_ADMISSION, DECODE_REQUEST, PREEMPTIONS_ADDED_UP,
            BUDGET_GIVEN_BACK, GROW_STATEMENT_VICTIM, COMPUTED_WITHIN_ALLOCATION, TWO_DECODERS,
            SAME_TIME_AS_AN_END, VICTIMS_THEN_STALL] + [
    DROPPED_ATTENTION.replace("cost 1 + attention;", f"cost {c};")
    for c in ("1 + prefilled", "1 + tokens")] + [BUDGET_LEFT_CHUNKED.replace("CHUNK", c) for c in ("1", "0", "0.5")]
