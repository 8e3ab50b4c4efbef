"""Differential tests of pools and holds (spec Part 03) against the pyserq
reference wheels (tests/oracle.py; each test is skipped when its version is
not installed).

* ``DETERMINISTIC``: one or more programs without draws per pool option and
  hold statement of Part 03 §2.2, §4, §5, §6 and §9 (cap, block, evict lru,
  evict by, preempt none / lifo / by … requeue head|tail, queue fifo, queue by
  with ``waited``, reserve held, spill, pool arrays with computed indices,
  holds over several pools, reserve, reuse, at admission, cache / cached,
  computed after preemption, lease, grow, drop, release, load, nested holds,
  ``end`` inside a hold), in the 0.1.3 flat layout, compared with pyserq
  **0.1.3** field by field (``assert_reports_match``: counts exactly, other
  numbers to a relative 1e-9; ``events``/``serq_version`` not compared) and
  sample by sample (every observation's values, times, sessions, turns and
  every gauge's change points). Every program was run in 0.1.3 while this
  file was written: it is accepted and exercises what its name says (the
  comment above each program gives the reference's counters).
* ``SPEC_EXAMPLES``: Part 03 §12 P-1 … P-12 (every variant) and Part 06's
  program D, the same way. P-7 with a tier smaller than the spilled prefix
  is *not* here: the spec departs from 0.1.3 on purpose there (README,
  Part 03 §14); test_p03_examples.py asserts the spec's numbers.
* ``STOCHASTIC``: pooled programs with draws in the ``fn main`` layout,
  compared *exactly* with pyserq **0.1.5**, whose random streams serq-simpy
  follows (Part 07 §9.3): a multi-turn chat with a prefix cache (poisson
  arrivals, ``~exp`` think times, block pool, evict lru), preemption with
  drawn growth, a spill with a drawn predicate and drawn work (evict stream),
  and Part 07 §11.4 V7 (drawn ``evict by`` keys).
"""
from __future__ import annotations

import math
import textwrap

import pytest

import serq
from serq.report.json_report import to_dict

from oracle import assert_samples_match, UNCOMPARED, assert_reports_match, requires, run_reference

import test_p03_examples as ex
import test_p06_pool_reports as p06
from differential_fuzz import emulated_differences
from fuzz_departures import holders_listed


def _mine(source, kw):
    rep = serq.run(serq.load(None, source=source, **kw))
    return rep, to_dict(rep)


def _close(a, b):
    if b is None:
        return a is None or (isinstance(a, float) and not math.isfinite(a))
    if isinstance(b, float) and math.isnan(b):
        return isinstance(a, float) and math.isnan(a)
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)




def _first_diff(m, s):
    mine = list(zip([int(x) for x in m.sessions], m.times, m.values))
    ref = list(zip(s["sessions"], s["times"], s["values"]))
    for i, (a, b) in enumerate(zip(mine, ref)):
        if a[0] != b[0] or not _close(a[1], b[1]) or not _close(a[2], b[2]):
            return f"#{i}: mine {a} vs reference {b}"
    n = min(len(mine), len(ref))
    return f"#{n}: mine {mine[n:n + 1]} vs reference {ref[n:n + 1]}"


def check(source, version, kw):
    """Run `source` in serq-simpy and in pyserq `version`: the reports (every
    field the reference writes) and every sample must match."""
    source = textwrap.dedent(source)
    kw = dict(kw)
    ignore = tuple(kw.pop("ignore", ()))
    ref = run_reference(source, version, samples=True, **kw)
    rep, mine = _mine(source, kw)
    assert_reports_match(mine, ref, ignore=UNCOMPARED + ignore)
    # pools and stages in declaration order (Part 06 §9.1)
    assert [(p["name"], p["index"]) for p in mine["pools"]] == \
        [(p["name"], p["index"]) for p in ref["pools"]]
    assert [(s["name"], s["index"]) for s in mine["stages"]] == \
        [(s["name"], s["index"]) for s in ref["stages"]]
    assert list(mine["observes"]) == list(ref["observes"])
    assert_samples_match(rep, ref["_samples"])
    return rep, ref


# ---------------------------------------------------------------- deterministic, 0.1.3

# A deliberate departure: pyserq 0.1.3 lists a holder once per admission and
# drops every listing of the session when its inner hold on the pool ends, so
# with two nested holds of one pool it counts the session twice, then zero
# times while the outer hold still holds (checked: `hold mem (2) { run; hold
# mem (2) { run; } run; observe h = holders(mem); }` observes 0). Part 03 §1
# defines holders as the sessions holding an allocation; serq-simpy counts
# each such session once, so `mean_holders` differs for nested same-pool holds.
NESTED_HOLDERS = ("mean_holders",)

# two sizes of one nested-hold program (the smaller pool preempts)
NESTED_HOLDS = r"""
pool mem { cap 20; block 2; preempt lifo; }
stage svc : delay;
workload { arrive renewal(0.8); init { set u = 2 + serial - 3 * floor(serial / 3); } session { request; } }
server {
  hold mem (u) {
    observe outer = used(mem);
    run svc (0.5);
    hold mem (u + 1) { run svc (0.5); grow mem (2); observe inner = used(mem); run svc (0.5); } cache (u);
    observe own = cachedin(mem);
    grow mem (1); run svc (0.5);
  } cache (2 * u);
  observe done = now; observe own2 = cachedin(mem);
}
run { horizon 15; }
"""

DETERMINISTIC = {
    # 0.1.3: ended 14/28; mem: adm 16
    "cap_block_pool_functions": (r"""
pool mem { cap 16; block 4; }
stage svc : fifo(2);
workload { arrive renewal(0.7); init { set u = 1 + serial - 5 * floor(serial / 5); } session { request; } }
server {
  observe q_at_join = queued(mem);
  hold mem (u * 2) {
    observe used_in = used(mem); observe free_in = free(mem); observe h = holders(mem);
    observe bs = blocksize(mem); observe q_in = queued(mem);
    run svc (1 + u / 2);
  }
  observe done = now;
}
run { horizon 20; }
""", {}),
    # 0.1.3: ended 7/30; kv: adm 39, evicted 37/444
    "evict_lru_blocks": (r"""
pool kv { cap 24; block 4; evict lru; }
stage svc : fifo(1);
stage think : delay;
workload { arrive renewal(1); init { set ctx = 4 + 3 * (serial - 3 * floor(serial / 3)); }
           session { request; run think (2); request; run think (3); request; } }
server {
  hold kv (ctx + 4) { observe hit = cached; observe own_in = cachedin(kv); run svc (0.75); } cache (ctx + 4);
  set ctx = ctx + 4;
  observe after = cachedin(kv);
}
run { horizon 30; }
""", {}),
    # 0.1.3: ended 20/31; kv: adm 49, evicted 41/476
    "evict_by_keys": (r"""
pool kv { cap 30; block 2; evict by (prio, age > 4 ? 0 : 1, -size); }
stage svc : fifo(1);
stage think : delay;
workload { arrive renewal(0.8); init { set prio = serial - 2 * floor(serial / 2); set ctx = 3 + serial - 4 * floor(serial / 4); }
           session { request; run think (1 + prio * 3); request; } }
server {
  hold kv (ctx * 2) { observe hit = cached; run svc (0.5); } cache (ctx * 2);
  set ctx = ctx + 2;
  observe kept = cachedin(kv);
}
run { horizon 25; }
""", {}),
    # 0.1.3: ended 22/37; mem: adm 24
    "preempt_none_growers": (r"""
pool mem { cap 12; block 2; preempt none; }
stage svc : delay;
workload { arrive renewal(0.8); init { set kind = serial - 2 * floor(serial / 2); } session { request; } }
server {
  hold mem (kind == 1 ? 2 : 5) {
    run svc (1); grow mem (kind == 1 ? 3 : 0); observe grown = now; observe u = used(mem);
    run svc (kind == 1 ? 1 : 2);
  }
  observe done = now;
}
run { horizon 30; }
""", {}),
    # 0.1.3: ended 10/33; mem: adm 39, evicted 10/65, preemptions 26, stuck 5
    "preempt_lifo_computed": (r"""
pool mem { cap 16; preempt lifo; }
stage svc : delay;
workload { arrive renewal(0.75); init { set g = 2 + serial - 3 * floor(serial / 3); } session { request; } }
server {
  hold mem (4 + computed) {
    observe adm = now; observe comp = computed; observe hit = cached;
    run svc (1); load mem (2); grow mem (g * 2); load mem (g);
    observe grown = now; run svc (1.5);
  } cache (16);
  observe done = now; observe comp_after = computed;
}
run { horizon 25; }
""", {}),
    # 0.1.3: ended 6/40; mem: adm 26, evicted 11/27, preemptions 19, stuck 3
    "preempt_by_requeue_head": (r"""
pool mem { cap 12; preempt by (prio, -position) requeue head; }
stage svc : delay;
workload { arrive renewal(0.5); init { set prio = serial - 3 * floor(serial / 3); } session { request; } }
server {
  hold mem (3 + computed) {
    observe adm = now; observe comp = computed;
    run svc (1); load mem (1 + prio); grow mem (4); observe grown = now; run svc (2);
  } cache (8);
  observe done = now;
}
run { horizon 20; }
""", {}),
    # 0.1.3: ended 6/40; mem: adm 30, evicted 20/41, preemptions 22, stuck 6
    "preempt_by_requeue_tail": (r"""
pool mem { cap 12; preempt by (prio, -position) requeue tail; }
stage svc : delay;
workload { arrive renewal(0.5); init { set prio = serial - 3 * floor(serial / 3); } session { request; } }
server {
  hold mem (3 + computed) {
    observe adm = now; observe comp = computed;
    run svc (1); load mem (1 + prio); grow mem (4); observe grown = now; run svc (2);
  } cache (8);
  observe done = now;
}
run { horizon 20; }
""", {}),
    # 0.1.3: ended 8/33; mem: adm 29, evicted 8/28, preemptions 17, stuck 2
    "preempt_by_tail_queue_by": (r"""
pool mem { cap 12; preempt by (-admission) requeue tail; queue by (-computed, waited > 2 ? 0 : 1, serial); }
stage svc : delay;
workload { arrive renewal(0.6); init { set prio = serial - 3 * floor(serial / 3); } session { request; } }
server {
  hold mem (3 + computed) {
    observe adm = now; observe comp = computed;
    run svc (1); load mem (2); grow mem (3 + prio); observe grown = now; run svc (1.5);
  } cache (8);
  observe done = now;
}
run { horizon 20; }
""", {}),
    # 0.1.3: ended 9/37; mem: adm 10
    "queue_fifo_head_of_line": (r"""
pool mem { cap 10; queue fifo; }
stage svc : fifo(3);
workload { arrive renewal(0.4); init { set u = 1 + 3 * (serial - 3 * floor(serial / 3)); } session { request; } }
server { hold mem (u) { observe adm = now; observe q = queued(mem); run svc (1 + u / 4); } observe done = now; }
run { horizon 15; }
""", {}),
    # 0.1.3: ended 35/37; slot: adm 37
    "queue_by_waited_aging": (r"""
pool slot { cap 2; queue by (big && waited < 4 ? 1 : 0, -waited, serial); }
stage svc : fifo(2);
workload { arrive renewal(0.4); init { set big = serial - 3 * floor(serial / 3) == 0; } session { request; } }
server { hold slot (1) { observe adm = now; observe qn = queued(slot); run svc (big ? 1.5 : 0.5); } observe done = now; }
run { horizon 15; }
""", {}),
    # 0.1.3: ended 11/13; mem: adm 13
    "reserve_held_growth": (r"""
pool mem { cap 16; block 2; reserve held; }
stage svc : delay;
workload { arrive renewal(1.5); init { set r = 4 + 2 * (serial - 2 * floor(serial / 2)); } session { request; } }
server {
  hold mem (2) reserve (r) {
    observe adm = now; run svc (1); grow mem (r - 2); observe grown = now; observe u = used(mem);
    run svc (1); grow mem (2); observe g2 = now; run svc (0.5);
  }
  observe done = now;
}
run { horizon 20; }
""", {}),
    # 0.1.3: ended 17/40; mem: adm 20
    "reserve_gate": (r"""
pool mem { cap 12; block 4; }
stage svc : delay;
workload { arrive renewal(0.5); init { set u = 1 + serial - 3 * floor(serial / 3); set r = serial - 4 * floor(serial / 4) == 1 ? 9 : 0; } session { request; } }
server {
  hold mem (u) reserve (r) { observe adm = now; observe usedin = used(mem); run svc (2); }
  observe done = now;
}
run { horizon 20; }
""", {}),
    # 0.1.3: ended 14/20; kv: adm 35, evicted 33/264, spills 34; host: adm 8
    "spill_tier": (r"""
pool kv { cap 16; block 4; evict lru; spill host via link (size / 4) when (size >= 4 && serial - 2 * floor(serial / 2) == 0); }
pool host { cap 200; }
stage link : fifo(1);
stage svc : delay;
stage think : delay;
workload { arrive renewal(1); session { request; run think (3); request; } }
server {
  observe in_host = cachedin(host);
  branch (cachedin(host) > 0) { hold host (1) { observe host_hit = cached; run svc (0.1); } cache (0); }
  hold kv (8) { observe hit = cached; run svc (1); } cache (8);
  observe in_kv = cachedin(kv);
}
run { horizon 20; }
""", {}),
    # 0.1.3: ended 9/40; kv[0]: adm 25, evicted 20/128; kv[1]: adm 26, evicted 20/120; kv[2]:
    # adm 25, evicted 21/122
    "pool_array_computed_index": (r"""
let N = 3;
pool kv[N] { cap 12; block 2; evict lru; }
stage svc[N] : fifo(1);
workload { arrive renewal(0.5);
           init { set k = serial - 3 * floor(serial / 3); set ctx = 2 + serial - 4 * floor(serial / 4); }
           session { request; request; } }
server {
  choose j in N by (used(kv[j]) + queued(kv[j]), j);
  observe pick = j;
  hold kv[j] (ctx * 2) { observe hit = cached; run svc[j] (1); } cache (ctx * 2);
  hold kv[2 - k] (ctx) { observe hit2 = cached; observe c2 = cachedin(kv[2 - k]); run svc[2 - k] (0.5); } cache (ctx);
  set ctx = ctx + 1;
}
run { horizon 20; }
""", {}),
    # 0.1.3: ended 8/33; reqs: adm 29, evicted 27/27; kv: adm 29, evicted 14/64
    "multi_pool_hold": (r"""
pool reqs { cap 2; }
pool kv { cap 36; block 4; evict lru; }
stage svc : fifo(2);
stage think : delay;
workload { arrive renewal(0.6); init { set n = 3 + 2 * (serial - 3 * floor(serial / 3)); } session { request; run think (1); request; } }
server {
  hold reqs (1), kv (n) { observe hit = cached; observe ur = used(reqs); observe uk = used(kv); run svc (n / 4); } cache (n);
  set n = n + 2;
  observe done = now;
}
run { horizon 20; }
""", {}),
    # 0.1.3: ended 13/16; kv: adm 45, evicted 32/652
    "reuse_dead_entries": (r"""
pool kv { cap 72; block 4; evict lru; }
stage svc : fifo(1);
stage think : delay;
workload { arrive renewal(1.5); init { set ctx = 8; set lim = 4 * (serial - 3 * floor(serial / 3)); }
           session { request; run think (1); request; run think (1); request; } }
server {
  hold kv (ctx + 6) reuse (lim + 1) { observe hit = cached; run svc (0.5); } cache (ctx + 6);
  set ctx = ctx + 6;
  observe own = cachedin(kv); observe tot_used = used(kv);
}
run { horizon 25; }
""", {}),
    # 0.1.3: ended 9/28; kv: adm 17, evicted 9/90, preemptions 7
    "at_admission_bindings": (r"""
pool kv { cap 24; block 2; preempt lifo; }
stage svc : delay;
workload { arrive renewal(0.7); init { set prompt = 6 + 2 * (serial - 3 * floor(serial / 3)); set o = 3; } session { request; } }
server {
  hold kv (known + 2) reserve (extra) at admission (known = computed < prompt ? prompt : computed + 1, extra = known + 4) {
    observe k = known; observe c = cached; observe comp = computed;
    run svc (1); load kv (known - cached); grow kv (o); load kv (2); run svc (1);
  } cache (known + 2);
  observe done = now;
}
run { horizon 20; }
""", {}),
    # 0.1.3: ended 7/37; kv: adm 45, evicted 34/368
    "cache_cached_multiturn": (r"""
pool kv { cap 64; block 4; evict lru; }
stage llm : ps(2);
stage think : delay;
workload {
  arrive renewal(0.8);
  init { set ctx = 0; }
  turn { set ctx = ctx + 6 + serial - 3 * floor(serial / 3); }
  session { turn; request; run think (2); turn; request; run think (3); turn; request; }
}
server {
  hold kv (ctx) { observe hit = cached; observe miss = ctx - cached; run llm ((ctx - cached) / 8); } cache (ctx);
  observe after = cachedin(kv);
}
run { horizon 30; }
""", {}),
    # 0.1.3: ended 25/33; kv: adm 46, evicted 35/256, preemptions 20
    "computed_resume_idiom": (r"""
pool kv { cap 20; block 2; preempt lifo; }
stage svc : delay;
workload { arrive renewal(0.6); init { set prompt = 4 + 2 * (serial - 2 * floor(serial / 2)); set o = 6; } session { request; } }
server {
  set t0 = now;
  hold kv (known) at admission (known = computed < prompt ? prompt : computed + 1) {
    observe k = known; observe hit = cached;
    load kv (known - cached); run svc (0.5);
    grow kv (1); load kv (1); run svc (0.25);
    grow kv (1); load kv (1); run svc (0.25);
    grow kv (1); load kv (1); run svc (0.25);
    observe pos_end = known + 3;
  } cache (known + 3);
  observe response = now - t0;
}
run { horizon 20; }
""", {}),
    # 0.1.3: ended 23/28; pre: adm 28, evicted 23/136; dec: adm 25, evicted 19/112
    "lease_expiry_and_release": (r"""
pool pre { cap 30; block 2; evict lru; }
pool dec { cap 40; }
stage svc : fifo(2);
stage link : delay;
workload { arrive renewal(0.7); init { set n = 4 + 2 * (serial - 3 * floor(serial / 3)); } session { request; } }
server {
  hold pre (n) { run svc (0.5); } cache (n) lease pre (serial - 2 * floor(serial / 2) == 0 ? 1.5 : inf);
  observe pre_used = used(pre); observe h = holders(pre);
  run link (0.5);
  hold dec (n + 2) { load dec (n); release pre; observe pre_after = used(pre); observe cached_pre = cachedin(pre); run svc (1); } cache (n + 1);
  observe dec_cached = cachedin(dec);
}
run { horizon 20; }
""", {}),
    # 0.1.3: ended 4/6; mem: adm 6
    "grow_block_rounding": (r"""
pool mem { cap 24; block 4; }
stage svc : delay;
workload { arrive renewal(2.5); init { set d = 1 + serial - 5 * floor(serial / 5); } session { request; } }
server {
  hold mem (3) {
    observe a0 = used(mem);
    run svc (0.5); grow mem (d); observe a1 = used(mem);
    run svc (0.5); grow mem (d); observe a2 = used(mem);
    run svc (0.5); grow mem (0); grow mem (2 * d); observe a3 = used(mem);
    run svc (1);
  }
  observe done = now;
}
run { horizon 15; }
""", {}),
    # 0.1.3: ended 13/15; kv: adm 28, evicted 3/28
    "drop_own_entry": (r"""
pool kv { cap 40; block 2; evict lru; }
stage svc : fifo(1);
stage think : delay;
workload { arrive renewal(1); init { set n = 4 + 2 * (serial - 3 * floor(serial / 3)); } session { request; run think (1); request; } }
server {
  hold kv (n) { observe hit = cached; run svc (0.5); } cache (n);
  observe before = cachedin(kv);
  branch (serial - 2 * floor(serial / 2) == 0) { drop kv; }
  observe after = cachedin(kv);
  set n = n + 2;
}
run { horizon 15; }
""", {}),
    # 0.1.3: ended 14/30; a: adm 16, evicted 14/46; b: adm 16, evicted 14/55
    "release_inside_hold": (r"""
pool a { cap 10; block 2; }
pool b { cap 12; }
stage svc : delay;
workload { arrive renewal(0.5); init { set n = 3 + serial - 3 * floor(serial / 3); } session { request; } }
server {
  hold a (n), b (n + 1) {
    observe adm = now; run svc (1); release a; observe ua = used(a); observe ca = cachedin(a);
    run svc (1); release a; observe ub = used(b);
  } cache (n);
  observe cb = cachedin(b);
}
run { horizon 15; }
""", {}),
    # 0.1.3: ended 14/18; kv: adm 33, evicted 18/236
    "load_position": (r"""
pool kv { cap 50; block 4; evict lru; }
stage svc : delay;
workload { arrive renewal(0.8); init { set n = 8 + 2 * (serial - 3 * floor(serial / 3)); } session { request; request; } }
server {
  hold kv (n + 4) { observe hit = cached; load kv (n - cached); run svc (1); load kv (serial - 2 * floor(serial / 2)); } cache (n + 8);
  observe kept = cachedin(kv);
  set n = n + 4;
}
run { horizon 15; }
""", {}),
    # 0.1.3: ended 16/18; mem: adm 36, evicted 21/104
    "nested_holds_same_pool": (NESTED_HOLDS, {"ignore": NESTED_HOLDERS}),
    # 0.1.3: ended 23/25; kv: adm 24, evicted 20/100; lz: adm 25, evicted 15/45
    "end_inside_hold_shape_k": (r"""
pool kv { cap 20; block 2; evict lru; }
pool lz { cap 30; }
stage svc : delay;
workload { arrive renewal(0.6); init { set n = 4 + 2 * (serial - 2 * floor(serial / 2)); } }
session {
  turn;
  hold lz (3) { run svc (0.25); } cache (3) lease lz (2);
  hold kv (n) {
    run svc (0.5);
    branch (serial - 3 * floor(serial / 3) == 1) { end; }
    run svc (0.5);
  } cache (n);
  observe kept = cachedin(kv); observe lz_used = used(lz);
}
run { horizon 15; }
""", {}),
}


@requires("0.1.3")
@pytest.mark.parametrize("name", list(DETERMINISTIC))
def test_p03_differential_013(name):
    source, kw = DETERMINISTIC[name]
    check(source, "0.1.3", kw)


# the smaller pool preempts: a session nesting two holds of `mem` is one
# candidate (Part 03 §7.3), as in pyserq 0.1.5; 0.1.3's listing makes it
# two (the departure "holders counted as sessions", which the runner
# emulates; 0.1.3: ended 8/18; mem: adm 34, evicted 15/60, preemptions 14,
# stuck 2). The same program in 0.1.5's dialect (0.1.5: preemptions 12):
NESTED_HOLDS_PREEMPTED_015 = r"""
fn main() {
  pool mem { cap 16; block 2; preempt lifo; }
  stage svc : delay;
  workload { arrive renewal(0.8); init { set u = 2 + serial - 3 * floor(serial / 3); } }
  server {
    hold mem (cost(mem, u)) {
      observe outer = used(mem);
      run svc (cost(svc, 0.5));
      hold mem (cost(mem, u + 1)) {
        run svc (cost(svc, 0.5)); grow mem (cost(mem, 2)); observe inner = used(mem);
        run svc (cost(svc, 0.5));
      } cache (cost(mem, u));
      observe own = cachedin(mem);
      grow mem (cost(mem, 1)); run svc (cost(svc, 0.5));
    } cache (cost(mem, 2 * u));
    observe done = now; observe own2 = cachedin(mem);
  }
}
"""


@requires("0.1.5")
def test_nested_holds_preempted_against_0_1_5():
    check(NESTED_HOLDS_PREEMPTED_015, "0.1.5", {"horizon": 15})


@requires("0.1.3")
def test_nested_holds_preempted_against_0_1_3_emulated():
    source = textwrap.dedent(NESTED_HOLDS.replace("cap 20;", "cap 16;"))
    assert not emulated_differences(source, holders_listed)


# A resident of an engine whose memory pool it holds through two nested
# holds: the inner one ends, then the resident's prefill grows the outer
# one beyond the cap. It still holds the pool, so it is a candidate (Part 03
# §7.3) and preempts itself, as in SE-13. pyserq 0.1.3 dropped every listing
# of the session at the inner hold's end, found no candidate, and stalled
# the growth: no iteration, `idle_with_work` (generator seed 108574, shrunk;
# the departure "holders counted as sessions", which the runner emulates).
INNER_HOLD_ENDED = """\
stage E : step { cost 1; memory kv; }
pool kv { cap 4; preempt lifo; }
workload { arrive batch(1); session { turn; request; end; } }
server {
  hold kv (1) { hold kv (1) { } cache (2) run E prefill (9) growing kv; }
}
run { horizon 10; }
"""
# the same without the inner hold, where 0.1.3 lists the session
NO_INNER_HOLD = INNER_HOLD_ENDED.replace("hold kv (1) { } cache (2) ", "")


def _preempting(source: str) -> tuple:
    rep = to_dict(serq.run(serq.load(source=source)))
    (pool,), (stage,) = rep["pools"], rep["stages"]
    return pool["preemptions"], stage["iterations"], stage["idle_with_work"]


def test_a_resident_whose_inner_hold_ended_is_a_candidate():
    # the self-preemptions of the program without the inner hold (pyserq
    # 0.1.3, seed 1: 11 preemptions, 11 preempt-only iterations by 10)
    assert _preempting(INNER_HOLD_ENDED) == _preempting(NO_INNER_HOLD) == (11, 11, False)
    with holders_listed():  # 0.1.3 (seed 1): the growth stalls
        assert _preempting(INNER_HOLD_ENDED) == (0, 0, True)


@requires("0.1.3")
def test_a_resident_whose_inner_hold_ended_against_0_1_3():
    ref = run_reference(NO_INNER_HOLD, "0.1.3")
    assert (ref["pools"][0]["preemptions"], ref["stages"][0]["iterations"]) == (11, 11)
    assert not emulated_differences(INNER_HOLD_ENDED, holders_listed)
    assert not emulated_differences(NO_INNER_HOLD, holders_listed)


# Warm-up and other seeds on a few of them: pool time averages over [warmup, end],
# mean_wait over admissions after warm-up, counters from 0 (Part 03 §11, Part 06 §1).
@requires("0.1.3")
@pytest.mark.parametrize("name, warmup", [
    ("evict_lru_blocks", 7.3),
    ("preempt_lifo_computed", 5),
    ("lease_expiry_and_release", 4.1),
    ("spill_tier", 6.5),
    ("queue_by_waited_aging", 3.9),
    ("pool_array_computed_index", 2),
])
def test_p03_differential_013_warmup(name, warmup):
    source, kw = DETERMINISTIC[name]
    check(source, "0.1.3", dict(kw, warmup=warmup))


# ---------------------------------------------------------------- spec examples, 0.1.3

SPEC_EXAMPLES = {
    "p1": (ex.P1.replace("QUEUE", ""), {"horizon": 20}),
    "p1_queue_by_u": (ex.P1.replace("QUEUE", "queue by (u);"), {"horizon": 20}),
    "p1_queue_fifo": (ex.P1.replace("QUEUE", "queue fifo;"), {"horizon": 20}),
    "p2": (ex.P2, {"horizon": 20}),
    "p3_reject": (ex.P3_REJECT, {"horizon": 20}),
    "p3_over_cap": (ex.P3_OVER_CAP, {"horizon": 20}),
    "p4": (ex.P4, {"horizon": 20}),
    "p4_two_pools": (ex.P4_TWO_POOLS, {"horizon": 20}),
    "p5_lru": (ex.P5.replace("EVICT", "evict lru;"), {"horizon": 30}),
    "p5_newest_first": (ex.P5.replace("EVICT", "evict by (-last);"), {"horizon": 30}),
    "p5_serial_key": (ex.P5.replace("EVICT", "evict by (serial == 1 ? 0 : 1);"), {"horizon": 30}),
    "p6": (ex.P6, {"horizon": 40}),
    "p7": (ex.P7.replace("HOSTCAP", "100"), {"horizon": 30}),
    "p8_lifo": (ex.P8, {"horizon": 20}),
    "p8_none_deadlock": (ex.P8_NONE, {"horizon": 30}),
    "p9": (ex.P9, {"horizon": 20}),
    "p10": (ex.P10, {"horizon": 20}),
    "p11_held": (ex.P11.replace("HELD", "reserve held;"), {"horizon": 20}),
    "p11_not_held": (ex.P11.replace("HELD", ""), {"horizon": 20}),
    "p12": (ex.P12, {"horizon": 10}),
    "p12_warmup_4": (ex.P12, {"horizon": 10, "warmup": 4}),
    "p06_program_d": (p06.PROGRAM_D, {}),
    "p06_program_d_warmup_1_5": (p06.PROGRAM_D, {"warmup": 1.5}),
    "stuck_self_preemption": (p06.STUCK, {"horizon": 5}),
    "grow_both_stall": (p06.GROW_BOTH, {"horizon": 20}),
    "grow_one_behind_holder": (p06.GROW_ONE, {"horizon": 20}),
}


@requires("0.1.3")
@pytest.mark.parametrize("name", list(SPEC_EXAMPLES))
def test_p03_differential_013_spec_examples(name):
    source, kw = SPEC_EXAMPLES[name]
    check(source, "0.1.3", kw)


# ---------------------------------------------------------------- stochastic, 0.1.5

STOCHASTIC = {
    # 0.1.5: ended 60/63; kv: adm 248, evicted 65/4132
    "prefix_cache_chat": (r"""
fn main() {
  pool kv { cap 160; block 4; evict lru; }
  stage llm : ps(2);
  stage pause : delay;
  workload {
    arrive poisson(0.2);
    init { set ctx = 0; set k = 0; }
    turn { set k = k + 1; set ctx = ctx + 8 + floor(~uniform(0, 16)); }
    session { turn; while (k < 4) { run pause (cost(pause, ~exp(0.5))); turn; } }
  }
  server {
    set t0 = now;
    hold kv (cost(kv, ctx)) { observe hit = cached; run llm (cost(llm, (ctx - cached) / 16 + 0.1)); } cache (cost(kv, ctx));
    observe response = now - t0;
    observe own = cachedin(kv);
  }
}
""", {'horizon': 300}),
    # 0.1.5: ended 30/42; kv: adm 48, evicted 34/268, preemptions 17, stuck 2
    "preempt_lifo_drawn_growth": (r"""
fn main() {
  pool kv { cap 40; block 4; preempt lifo; evict lru; }
  stage svc : ps(1);
  workload { arrive poisson(0.25); init { set p = 4 + floor(~uniform(0, 12)); } }
  server {
    set t0 = now;
    hold kv (cost(kv, p + computed)) {
      observe comp = computed; observe hit = cached;
      load kv (cost(kv, p - cached));
      run svc (cost(svc, ~exp(2)));
      grow kv (cost(kv, floor(~uniform(0, 10))));
      run svc (cost(svc, ~exp(2)));
    } cache (cost(kv, p));
    observe response = now - t0;
  }
}
""", {'horizon': 150}),
    # 0.1.5: ended 41/48; kv: adm 133, evicted 93/1628, spills 242; host: adm 0
    "spill_drawn_predicate": (r"""
fn main() {
  pool kv { cap 32; block 4; evict lru; spill host via link (size * ~uniform(0.1, 0.3)) when (~bernoulli(0.6)); }
  pool host { cap 100000; }
  stage link : fifo(1);
  stage llm : ps(1);
  stage pause : delay;
  workload {
    arrive poisson(0.3);
    init { set ctx = 4 + floor(~uniform(0, 12)); set k = 0; }
    turn { set k = k + 1; set ctx = ctx + 4; }
    session { turn; while (k < 3) { run pause (cost(pause, ~exp(0.3))); turn; } }
  }
  server {
    observe in_host = cachedin(host);
    hold kv (cost(kv, ctx)) { observe hit = cached; run llm (cost(llm, (ctx - cached) / 16)); } cache (cost(kv, ctx));
  }
}
""", {'horizon': 150}),
    # 0.1.5: ended 11/11; kv: adm 22, evicted 10/40
    "v7_drawn_evict_keys": (r"""
fn main() {
  pool kv { cap 40; evict by (~uniform(0, 1)); }
  stage svc : delay;
  stage gate : delay;
  workload {
    arrive batch(11);
    session { run gate (cost(gate, serial == 10 ? 20 : 9 - serial)); turn; run gate (cost(gate, 30)); turn; }
  }
  server {
    observe c = cachedin(kv);
    hold kv (cost(kv, serial == 10 ? 20 : 4)) { run svc (cost(svc, 0.5)); } cache (cost(kv, serial == 10 ? 0 : 4));
  }
}
""", {'horizon': 100}),
}


@requires("0.1.5")
@pytest.mark.parametrize("name", list(STOCHASTIC))
def test_p03_differential_015_stochastic(name):
    source, kw = STOCHASTIC[name]
    check(source, "0.1.5", kw)


@requires("0.1.5")
@pytest.mark.parametrize("seed", [2, 7, 20240601])
def test_p03_differential_015_prefix_cache_other_seeds(seed):
    source, kw = STOCHASTIC["prefix_cache_chat"]
    check(source, "0.1.5", dict(kw, seed=seed))


@requires("0.1.5")
@pytest.mark.parametrize("seed", [3, 11])
def test_p03_differential_015_preemption_other_seeds(seed):
    source, kw = STOCHASTIC["preempt_lifo_drawn_growth"]
    check(source, "0.1.5", dict(kw, seed=seed))


@requires("0.1.5")
def test_p03_differential_015_prefix_cache_warmup():
    source, kw = STOCHASTIC["prefix_cache_chat"]
    check(source, "0.1.5", dict(kw, warmup=50))


def test_p07_11_4_v7_drawn_evict_keys():
    # Part 07 §11.4 V7 (0.1.5 values, horizon 100): serials 0–9 cache 4 units each, released
    # in the order 9, 8, …, 0; serial 10 needs 20 at t = 20, so five entries are evicted
    # (40 keys drawn). Second observation of each serial (turn 2): serials 8, 4, 3, 2, 0 read
    # 4, serials 9, 7, 6, 5, 1 and 10 read 0; the first observation of every serial is 0.
    source, kw = STOCHASTIC["v7_drawn_evict_keys"]
    rep = serq.run(serq.load(None, source=textwrap.dedent(source), **kw))
    s = rep.observes["c"]
    samples = list(zip([int(k) for k in s.sessions], [int(t) for t in s.turns], s.values,
                       s.times))
    first = {}
    second = {}
    for k, t, v, _ in samples:
        (second if k in first else first)[k] = v
    assert sorted(first) == list(range(11)) and sorted(second) == list(range(11))
    assert all(v == 0 for v in first.values()), first
    assert {k for k, v in second.items() if v == 4} == {8, 4, 3, 2, 0}, second
    assert {k for k, v in second.items() if v == 0} == {9, 7, 6, 5, 1, 10}, second
    # verified 0.1.5 (seed 1): recording order and times — first round at 9 - serial (serial
    # 10 at 20), second round 30.5 later (serial 10 at 50.5); turns 1 then 2
    assert [(k, t, tm) for k, t, _, tm in samples] == \
        [(k, 1, 9.0 - k) for k in range(9, -1, -1)] + [(10, 1, 20.0)] + \
        [(k, 2, 39.5 - k) for k in range(9, -1, -1)] + [(10, 2, 50.5)]
    row = rep.pool("kv")
    # verified 0.1.5: 22 admissions; 10 entries / 40 units evicted in all (five at t = 20 and
    # five more when serial 10 holds 20 again at 50.5; consuming one's own prefix at
    # admission is not an eviction); mean_cached 25.12
    assert row.admissions == 22
    assert row.evicted_entries == 10 and row.evicted_units == 40
    assert math.isclose(row.mean_cached, 25.12, rel_tol=1e-9)
