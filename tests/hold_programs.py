"""The small programs of test_holds.py, each aimed at one rule of the
session-side operations on pools (spec Part 03 §4–§7); each program's
expected numbers are worked out in the docstring of the test that runs
it."""
from __future__ import annotations

from pathlib import Path

NESTED_RELEASE = """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { turn;
  hold p (3) { hold p (4) { observe both = used(p); release p; observe inner = used(p); run d (1); }
               observe outer = used(p); run d (1); }
  observe after = used(p); observe comp = computed; }
run { horizon 10; warmup 0; seed 1; }
"""

RELEASE_BESIDE_A_LEASE = """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { turn;
  hold p (2) { run d (1); } lease p (100);
  hold p (3) { release p; observe in_hold = used(p); run d (1); }
  observe after = used(p); release p; observe lease_ended = used(p); }
run { horizon 10; warmup 0; seed 1; }
"""

CACHE_NOTHING = """
pool kv { cap 100; }
stage d : delay;
workload { arrive batch(1); }
session { turn;
  hold kv (10) { run d (1); } cache (0); observe zero = cachedin(kv);
  hold kv (10) { run d (1); } cache (-3); observe negative = cachedin(kv);
  hold kv (10) { run d (1); } cache (0.5); observe half = cachedin(kv); }
run { horizon 10; warmup 0; seed 1; }
"""

TWO_GROWERS = """
pool m { cap 11; preempt none; }
stage d : delay;
workload { arrive batch(4);
  init { set u = serial == 0 ? 4 : serial == 1 ? 3 : serial == 2 ? 3 : 1; } }
session { turn;
  hold m (u) {
    branch (serial == 0) { run d (1); grow m (4); observe grown = now; observe u = used(m);
                           run d (1); }
    else { branch (serial == 1) { run d (2); grow m (1); observe grown = now;
                                  observe u = used(m); run d (1); }
           else { run d (serial == 2 ? 3 : 4); } }
  }
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

REQUEUE = """
pool m { cap 10; PREEMPT }
stage d : delay;
stage gate : delay;
workload { arrive batch(4); init { set u = serial == 0 ? 6 : serial == 1 ? 4 : 7; } }
session { turn; run gate (serial == 2 ? 0.5 : serial == 3 ? 0.6 : 0);
  hold m (u) { observe adm = now;
    branch (serial == 0) { run d (1); grow m (4); run d (1); } else { run d (serial == 1 ? 5 : 1); } }
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

FRACTIONS = """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); init { set f = 0.5; } }
session { turn;
  hold m (f) reserve (f) { grow m (f); observe a = used(m); load m (f); run d (1); } cache (10);
  observe kept = cachedin(m);
  hold m (f) reuse (f) { observe c = cached; run d (1); } cache (0); }
run { horizon 10; warmup 0; seed 1; }
"""

NEGATIVE = """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); init { set g = 0 - 0.5; } }
session { turn; hold m (UNITS) { run d (1); grow m (GROW); run d (1); } }
run { horizon 10; warmup 0; seed 1; }
"""

# two entries released at the same instant (same `last`), then one's excess
# over `reuse` put back as a dead entry after the other's
SAME_INSTANT_DEAD = """
pool kv { cap 20; }
stage d : delay;
stage gate : delay;
workload { arrive batch(3); }
session { turn; run gate (serial == 2 ? 4 : 0);
  branch (serial == 0) {
    hold kv (8) { run d (1); } cache (8);
    run d (2);
    hold kv (10) reuse (2) { run d (10); } cache (0);
  } else {
    hold kv (serial == 1 ? 4 : 6) { run d (1); } cache (serial == 1 ? 4 : 0);
  } }
run { horizon 20; warmup 0; seed 1; }
"""

# tests/data/preempted_prefix_overhang.sq (used 8 + cached 3 > cap 10 over
# [2, 11)) with session 1 growing its hold by nothing at 5, inside the overhang
OVERHANG_GROW_0 = (Path(__file__).parent / "data" / "preempted_prefix_overhang.sq").read_text() \
    .replace("hold kv (8) { run svc (9.5); }", "hold kv (8) { run svc (3.5); grow kv (0); run svc (6); }")

# a step engine's memory pool with a holder that is no resident (serial 0, in a delay)
NOT_A_RESIDENT = """
pool kv { cap 12; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session { turn;
  branch (serial == 2) { hold kv (4) { run d (10); } }
  else { hold kv (1) { observe adm = now; run engine prefill (serial == 0 ? 8 : 1) growing kv;
                       observe pre = now; } }
  observe done = now; }
run { horizon 30; warmup 0; seed 1; }
"""

TWO_POOLS_WAIT = """
pool a { cap 1; }
pool b { cap 5; }
stage d : delay;
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { hold a (1) { run d (2); } }
  else { hold a (1), b (1) { observe adm = now; run d (1); } } }
run { horizon 10; warmup 0; seed 1; }
"""

# §12 P-7's spill with no work on the link: `when (1)`, work WORK
SPILL = """
pool kv { cap 10; block 2; evict lru; spill host via link (WORK) when (WHEN); }
pool host { cap 100; }
stage link : fifo(1);
stage svc : delay;
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { hold kv (6) { run svc (1); } cache (6); run svc (5);
                         observe in_host = cachedin(host); }
  else { run svc (2); hold kv (9) { run svc (1); } } }
run { horizon 10; warmup 0; seed 1; }
"""
SPILL_FREE = SPILL.replace("WORK", "0").replace("WHEN", "1")
SPILL_AGE = SPILL.replace("WORK", "age").replace("WHEN", "1")
SPILL_NONE = SPILL.replace("WORK", "1").replace("WHEN", "size > 2")
SPILL_YOUNG = SPILL.replace("WORK", "1").replace("WHEN", "age < 2")

# a step-engine resident whose hold already covers its tokens (kv 8 >= 4 + 3)
COVERED = """
pool reqs { cap 2; admit via engine; }
pool kv { cap 64; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
stage gate : delay;
workload { arrive batch(2); }
session { turn; run gate (serial * 0.5);
  hold reqs (1), kv (8) { observe adm = now; run engine prefill (4) growing kv;
                          run engine decode (3) growing kv; }
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# session 2 is preempted at position 0, then again after a load of LOAD
STUCK = """
pool m { cap 10; preempt lifo; }
stage d : delay;
workload { arrive batch(3); init { set n = 0; } }
session { turn;
  branch (serial == 0) { hold m (1) { run d (3); grow m (6); run d (1); } }
  else { branch (serial == 1) { hold m (2) { run d (1); grow m (5); run d (1); } }
  else { hold m (4) { set n = n + 1; observe adm = now;
                      branch (n == 2) { load m (LOAD); } run d (10); } } }
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# the join check (§4.2 step 1) of an amount that reads no deployment state
JOIN = """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); init { set u = AMOUNT; } }
session { turn; hold p (UNITS) RESERVE { observe adm = now; run d (1); } observe done = now; }
run { horizon 10; warmup 0; seed 1; }
"""


def join(amount: str, units: str, reserve: str) -> str:
    return JOIN.replace("AMOUNT", amount).replace("UNITS", units).replace("RESERVE", reserve)


JOIN_FORMS = (("u", ""), ("1", "reserve (u)"))
JOINS = [join(a, u, r) for a in ("10", "10.000000002") for u, r in JOIN_FORMS]
#: within the tolerance above the cap: admitted here, rejected by pyserq
#: 0.1.3 (docs/departures.md, "A join amount within the tolerance above the cap")
JOINS_WITHIN = [join("10.0000000009", u, r) for u, r in JOIN_FORMS]

NEGATIVE_LEASE = """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); init { set t = 0 - 5; } }
session { turn; hold p (2) { run d (1); } lease p (t);
  observe at_end = used(p); run d (1); observe later = used(p); }
run { horizon 10; warmup 0; seed 1; }
"""

# an engine iteration that preempts admits nobody (requeue tail: the victim
# re-enters behind session 3, which waits for a `reqs` slot)
PREEMPTING_ITERATION = """
pool reqs { cap 2; admit via engine; }
pool kv { cap 12; preempt by (-admission) requeue tail; }
stage engine : step { budget 9; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(4); }
session { turn;
  branch (serial == 2) { hold kv (4) { run d (20); } }
  else { branch (serial == 3) { hold reqs (1) { observe adm = now; run engine prefill (1); } }
  else { hold reqs (1), kv (1) { observe adm = now; run engine prefill (1) growing kv;
                                 run engine decode (6) growing kv; } } }
  observe done = now; }
run { horizon 40; warmup 0; seed 1; }
"""

TWO_LEASES = """
pool p { cap 20; }
stage d : delay;
workload { arrive batch(1); }
session { turn; hold p (3) { run d (1); } cache (3) lease p (inf);
  hold p (5) { run d (1); } cache (5) lease p (inf); end; }
run { horizon 10; warmup 0; seed 1; }
"""

END_INSIDE = """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { hold p (3) { run d (1); end; } }
  else { hold p (8) { observe adm = now; run d (1); } } }
run { horizon 10; warmup 0; seed 1; }
"""

THREE_LEASES = """
pool p { cap 20; }
stage d : delay;
workload { arrive batch(1); }
session { turn; hold p (1) { run d (1); } lease p (inf); hold p (2) { run d (1); } lease p (inf);
  hold p (4) { run d (1); } lease p (inf); release p; observe u = used(p); run d (1); }
run { horizon 10; warmup 0; seed 1; }
"""

REUSE_ALL = """
pool kv { cap 12; evict lru; }
stage d : delay;
stage gate : delay;
workload { arrive batch(2); }
session { turn; run gate (serial * 3);
  branch (serial == 0) { hold kv (8) { run d (1); } cache (8); hold kv (8) reuse (8) { observe c = cached; run d (1); } cache (4); }
  else { hold kv (12) { run d (1); } } }
run { horizon 10; warmup 0; seed 1; }
"""

# session 1 waits for q inside its hold of m when that hold is preempted
PREEMPTED_WHILE_WAITING = """
pool m { cap 10; preempt lifo; }
pool q { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session { turn;
  branch (serial == 0) { hold m (6) { run d (1); grow m (4); run d (1); } }
  else { branch (serial == 1) { hold m (4) { hold q (1) { observe got = now; run d (1); } } }
         else { hold q (1) { run d (5); } } }
  observe done = now; }
run { horizon 10; warmup 0; seed 1; }
"""

# session 1's hold of m (the victim) is inside its hold of q
NESTED_VICTIM = """
pool m { cap 10; preempt lifo; }
pool q { cap 5; }
stage d : delay;
workload { arrive batch(2); }
session { turn;
  branch (serial == 0) { hold m (6) { run d (1); grow m (4); run d (1); } }
  else { hold q (2) { hold m (4) { observe adm = now; observe qu = used(q); run d (5); } } }
  observe done = now; }
run { horizon 10; warmup 0; seed 1; }
"""

LOAD_PAST = """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { turn; hold m (4) { load m (3); run d (1); load m (SECOND); run d (1); } }
run { horizon 10; warmup 0; seed 1; }
"""

# PREEMPTED_WHILE_WAITING with the inner hold on two pools, q and r
PREEMPTED_WHILE_WAITING_2 = PREEMPTED_WHILE_WAITING.replace(
    "pool q { cap 1; }", "pool q { cap 1; }\npool r { cap 5; }").replace(
    "hold q (1) { observe got", "hold q (1), r (1) { observe got")

LEASE_RELEASED = """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { turn; hold p (2) { run d (1); } lease p (5); run d (1); release p; observe u = used(p); run d (10); observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

# session 2 keeps nothing (cache (0)) at 0.5, session 0 keeps 4 at 1; session 1 needs all 10 at 2
NOTHING_KEPT = """
pool kv { cap 10; evict lru; }
stage d : delay;
stage gate : delay;
workload { arrive batch(3); }
session { turn; run gate (serial == 1 ? 2 : 0);
  branch (serial == 0) { hold kv (4) { run d (1); } cache (4); }
  else { branch (serial == 2) { hold kv (2) { run d (0.5); } cache (0); }
  else { hold kv (10) { run d (1); } } } }
run { horizon 10; warmup 0; seed 1; }
"""

# session 1's units read an attribute its body changes before it is preempted
REJECTED_ON_REQUEUE = """
pool m { cap 10; preempt lifo; }
stage d : delay;
workload { arrive batch(2); init { set u = 4; } }
session { turn;
  branch (serial == 0) { hold m (6) { run d (1); grow m (4); run d (1); } }
  else { hold m (u) { set u = 20; run d (5); } observe after = now; }
  observe done = now; }
run { horizon 10; warmup 0; seed 1; }
"""

# two sessions each leave a dead entry of 6
TWO_DEAD = """
pool kv { cap 100; }
stage d : delay;
workload { arrive batch(2); }
session { turn; hold kv (8) { run d (1); } cache (8); hold kv (10) reuse (2) { observe c = cached; run d (1); } cache (0); }
run { horizon 10; warmup 0; seed 1; }
"""
