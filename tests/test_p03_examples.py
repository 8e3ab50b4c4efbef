"""Part 03 (pools and holds) worked examples end to end (the pool rows of
Part 06 on these programs -- §1 program D, §5.4 W-3, §9.5 growing_*, §10
text report -- are in test_p06_pool_reports.py).

Every expected number names the spec section it comes from. Part 03 §12's
numbers are pyserq 0.1.3's (seed 1, warm-up 0); each program below was run
again in pyserq 0.1.3 (seed 1) while writing this file and printed exactly
the numbers asserted here — a number marked "verified 0.1.3" is one the spec
does not print but the reference did (same program, horizon and seed). The
§9.5 growing cases were verified in pyserq 0.1.5 (fn main text, seed 1);
0.1.3 does not report `growing_*`.

Observations are compared as `(session serial, time, value)` triples, in
recording order (Part 06 §2), times and values to a relative 1e-9.

Where §12 observes `admitted` (P-1, P-2, P-10) the programs here observe
`adm`: a supplied name is refused as an observation name (Part 01 §6.2;
pyserq 0.1.5 refuses it too, 0.1.3 accepts it), and the numbers are the same.
"""
from __future__ import annotations

import math
import textwrap

import pytest

import serq
from serq.core.errors import LinkError
from serq.report.json_report import to_dict

from e2e_util import assert_close, run
from p03_programs import P2, P6, P8, P9, P10, P12  # §12's texts, as the front-end tests load them
from p03_programs import P3 as P3_OVER_CAP  # §12's P-3 over the cap, the same text

# ---------------------------------------------------------------- helpers


def obs(rep, name):
    """`(serial, time, value)` of every sample of `name`, in recording order."""
    s = rep.observes[name]
    return [(int(k), t, v) for v, t, k in zip(s.values, s.times, s.sessions)]


def assert_obs(rep, name, expected, what=""):
    """The samples of `name` are exactly `expected` ((serial, time, value)
    triples; serials exact, times and values to 1e-9)."""
    got = obs(rep, name)
    ok = len(got) == len(expected) and all(
        g[0] == e[0] and math.isclose(g[1], e[1], rel_tol=1e-9, abs_tol=1e-12)
        and math.isclose(g[2], e[2], rel_tol=1e-9, abs_tol=1e-12)
        for g, e in zip(got, expected))
    assert ok, f"{what} observe {name}: got {got}, expected {expected}"


def assert_values(rep, name, expected, what=""):
    """`(serial, value)` pairs of `name` in recording order."""
    got = [(k, v) for k, _, v in obs(rep, name)]
    ok = len(got) == len(expected) and all(
        g[0] == e[0] and math.isclose(g[1], e[1], rel_tol=1e-9, abs_tol=1e-12)
        for g, e in zip(got, expected))
    assert ok, f"{what} observe {name}: got {got}, expected {expected}"


def pool(rep, name, index=None):
    row = rep.pool(name, index)
    assert row is not None, f"no pool row {name}[{index}] in {[p.label for p in rep.pools]}"
    return row


def assert_pool(row, what="", **expected):
    """Every named field of a PoolRow: counts exactly, numbers to 1e-9, a
    `None` mean_wait is NaN (JSON null), `over_cap` as a tuple."""
    for field, exp in expected.items():
        got = getattr(row, field)
        where = f"{what} pool {row.label}.{field}"
        if field == "over_cap":
            if exp is None:
                assert got is None, f"{where}: {got!r} != None"
            else:
                assert got is not None and got[0] == exp[0] and math.isclose(got[1], exp[1]), \
                    f"{where}: {got!r} != {exp!r}"
        elif exp is None:
            assert got is None or (isinstance(got, float) and math.isnan(got)), \
                f"{where}: {got!r} != null"
        elif isinstance(exp, bool):
            assert got is exp or got == exp, f"{where}: {got!r} != {exp!r}"
        elif field in ("admissions", "evicted_entries", "preemptions", "spills", "rejected",
                       "stuck", "growing_at_end"):
            assert got == exp, f"{where}: {got!r} != {exp!r}"
        else:
            assert_close(got, exp, what=where)


def json_pool(rep, name, index=None):
    for p in to_dict(rep)["pools"]:
        if p["name"] == name and p["index"] == index:
            return p
    raise AssertionError(f"no JSON pool row {name}[{index}]")


# ---------------------------------------------------------------- P-1

P1 = """
pool mem { cap 10; QUEUE }
stage svc : delay;
workload { arrive batch(3);
  init { set u = serial == 0 ? 6 : serial == 1 ? 5 : 2; set d = serial == 0 ? 5 : 1; }
  session { request; } }
server { hold mem (u) { observe adm = now; run svc (d); } observe done = now; }
"""


def test_p03_p1_head_of_line_blocking():
    rep = run(P1.replace("QUEUE", ""), horizon=20)  # Part 03 §12 P-1, horizon 20
    # §12 P-1: admitted = (0, 0), (1, 5), (2, 5); done = 5, 6, 6
    assert_obs(rep, "adm", [(0, 0, 0), (1, 5, 5), (2, 5, 5)])
    assert_obs(rep, "done", [(0, 5, 5), (1, 6, 6), (2, 6, 6)])
    # §12 P-1: mean_used 1.85, mean_queue 0.5, mean_holders 0.35, mean_wait 3.3333, admissions 3
    assert_pool(pool(rep, "mem"), "P-1", mean_used=1.85, mean_queue=0.5, mean_holders=0.35,
                mean_wait=10 / 3, admissions=3,
                # verified 0.1.3: no cache, no eviction, nothing else counted
                mean_cached=0, evicted_entries=0, evicted_units=0, preemptions=0, spills=0,
                rejected=0, stuck=0, over_cap=None)


def test_p03_p1_queue_by_u():
    rep = run(P1.replace("QUEUE", "queue by (u);"), horizon=20)  # §12 P-1 with `queue by (u);`
    # §12 P-1: admitted (2, 0), (1, 0), (0, 1)
    assert_obs(rep, "adm", [(2, 0, 0), (1, 0, 0), (0, 1, 1)])
    # verified 0.1.3 (seed 1): done (2,1) (1,1) (0,6); waits 0, 0, 1
    assert_obs(rep, "done", [(2, 1, 1), (1, 1, 1), (0, 6, 6)])
    assert_pool(pool(rep, "mem"), "P-1 queue by", mean_used=1.85, mean_queue=0.05,
                mean_holders=0.35, mean_wait=1 / 3, admissions=3)


# ---------------------------------------------------------------- P-2

def test_p03_p2_reserve_and_block_rounding():
    rep = run(P2, horizon=20)
    # §12 P-2: admitted = 0, 4, 4; usedin = 8, 8, 8; done = 4, 5, 5
    assert_obs(rep, "adm", [(0, 0, 0), (1, 4, 4), (2, 4, 4)])
    assert_obs(rep, "usedin", [(0, 0, 8), (1, 4, 8), (2, 4, 8)])
    assert_obs(rep, "done", [(0, 4, 4), (1, 5, 5), (2, 5, 5)])
    # §12 P-2: mean_wait 2.6667 (waits 0, 4, 4); verified 0.1.3 (horizon 20): mean_used 2,
    # mean_queue 0.4, mean_holders 0.3, admissions 3
    assert_pool(pool(rep, "mem"), "P-2", mean_wait=8 / 3, mean_used=2, mean_queue=0.4,
                mean_holders=0.3, admissions=3, mean_cached=0)


# ---------------------------------------------------------------- P-3

P3_REJECT = """
pool mem { cap 10; block 4; }
stage svc : delay;
workload { arrive batch(3);
  init { set u = serial == 0 ? 9 : serial == 1 ? 11 : 2; }
  session { request; } }
server { hold mem (u) { observe adm = now; run svc (1); } observe done = now; }
"""

P3_CONSTANT = """
pool mem { cap 10; block 4; }
stage svc : delay;
workload { arrive batch(1); session { request; } }
server { hold mem (11) { run svc (1); } }
"""

def test_p03_p3_rejection():
    rep = run(P3_REJECT, horizon=20)
    # §12 P-3: units 9, 11, 2 on cap 10 block 4: ru(9) = 12 > 10 and ru(11) = 12 > 10 are
    # rejected at the join, the third runs: rejected 2, ended 3, admissions 1
    row = pool(rep, "mem")
    assert_pool(row, "P-3", rejected=2, admissions=1, over_cap=None)
    assert rep.ended == 3
    # verified 0.1.3: only session 2 is admitted (at 0) and done at 1; mean_used 0.2
    # (4 units for 1 time unit over 20), mean_holders 0.05, mean_wait 0
    assert_obs(rep, "adm", [(2, 0, 0)])
    assert_obs(rep, "done", [(2, 1, 1)])
    assert_pool(row, "P-3", mean_used=0.2, mean_holders=0.05, mean_queue=0, mean_wait=0)


def test_p03_p3_constant_demand_above_cap_is_link_error():
    # §12 P-3: "A constant `hold mem (11)` on that pool does not link" (§4.2 step 1, §13);
    # pyserq 0.1.3 refuses it at compile time too ("waits for 11 units (12 in blocks of 4),
    # more than its cap 10")
    with pytest.raises(LinkError) as info:
        serq.load(None, source=textwrap.dedent(P3_CONSTANT), horizon=20)
    msg = str(info.value)
    assert "mem" in msg


def test_p03_p3_over_cap():
    rep = run(P3_OVER_CAP, horizon=20)
    # §12 P-3: the head sees queued(mem) = 2 and needs 204 for ever: admissions 0,
    # mean_queue 2, over_cap {"queue": "mem", "need": 204}; nothing rejected
    row = pool(rep, "mem")
    assert_pool(row, "P-3 over_cap", admissions=0, mean_queue=2, rejected=0,
                over_cap=("mem", 204), mean_wait=None, mean_used=0)
    assert json_pool(rep, "mem")["over_cap"] == {"queue": "mem", "need": 204}  # §11, §9.5
    assert rep.ended == 0  # verified 0.1.3: both sessions still waiting


# ---------------------------------------------------------------- P-4

P4 = """
pool kv { cap 100; block 4; }
stage svc : delay;
workload { arrive batch(1); session { request; } }
server {
  hold kv (10) { run svc (1); } cache (7);
  observe c_after1 = cachedin(kv);
  hold kv (20) { observe c2 = cached; run svc (1); } cache (18);
  observe c_after2 = cachedin(kv);
  hold kv (20) reuse (9) { observe c3 = cached; run svc (1); } cache (0);
  observe c_after3 = cachedin(kv);
  hold kv (5) { observe c4 = cached; run svc (1); } cache (30);
  observe c_after4 = cachedin(kv);
  hold kv (5) { run svc (1); }
  observe c_after5 = cachedin(kv);
  drop kv;
  observe c_after6 = cachedin(kv);
}
"""

P4_TWO_POOLS = """
pool kv { cap 100; block 4; }
pool kv2 { cap 100; }
stage svc : delay;
workload { arrive batch(1); session { request; } }
server {
  hold kv (10), kv2 (3) { observe c1 = cached; run svc (1); } cache (12);
  observe k1 = cachedin(kv); observe k2 = cachedin(kv2);
  hold kv (10), kv2 (3) { observe c2 = cached; run svc (1); } cache (12);
  observe k1b = cachedin(kv); observe k2b = cachedin(kv2);
}
"""


def test_p03_p4_prefix_cache_of_one_session():
    rep = run(P4, horizon=20)
    # §12 P-4 (horizon 20): c_after1 4, c2 4, c_after2 16, c3 8, c_after3 0, c4 0,
    # c_after4 8, c_after5 8, c_after6 0 (times verified 0.1.3: one hold per time unit)
    assert_obs(rep, "c_after1", [(0, 1, 4)])
    assert_obs(rep, "c2", [(0, 1, 4)])
    assert_obs(rep, "c_after2", [(0, 2, 16)])
    assert_obs(rep, "c3", [(0, 2, 8)])
    assert_obs(rep, "c_after3", [(0, 3, 0)])
    assert_obs(rep, "c4", [(0, 3, 0)])
    assert_obs(rep, "c_after4", [(0, 4, 8)])
    assert_obs(rep, "c_after5", [(0, 5, 8)])
    assert_obs(rep, "c_after6", [(0, 5, 0)])
    # §12 P-4: mean_used 3.4, mean_cached 7.6 (the dead 8 units stay), admissions 5, no eviction
    assert_pool(pool(rep, "kv"), "P-4", mean_used=3.4, mean_cached=7.6, admissions=5,
                evicted_entries=0, evicted_units=0,
                mean_holders=0.25, mean_queue=0, mean_wait=0)  # verified 0.1.3
    # report order of the series: first appearance (Part 06 §2)
    assert list(rep.observes) == ["c_after1", "c2", "c_after2", "c3", "c_after3", "c4",
                                  "c_after4", "c_after5", "c_after6"]


def test_p03_p4_two_pool_hold():
    rep = run(P4_TWO_POOLS, horizon=20)
    # §12 P-4: `hold kv (10), kv2 (3) {…} cache (12);` keeps 12 in kv (block 4, allocation 12)
    # and 3 in kv2; the next such hold sees cached = 12 (the larger of the two consumptions)
    assert_obs(rep, "c1", [(0, 0, 0)])
    assert_obs(rep, "k1", [(0, 1, 12)])
    assert_obs(rep, "k2", [(0, 1, 3)])
    assert_obs(rep, "c2", [(0, 1, 12)])
    assert_obs(rep, "k1b", [(0, 2, 12)])  # verified 0.1.3
    assert_obs(rep, "k2b", [(0, 2, 3)])  # verified 0.1.3
    # verified 0.1.3 (horizon 20): kv mean_used 1.2, mean_cached 10.8; kv2 mean_used 0.3,
    # mean_cached 2.7; both count 2 admissions; kv2 is never a first pool: mean_wait null
    assert_pool(pool(rep, "kv"), "P-4 two pools", mean_used=1.2, mean_cached=10.8,
                admissions=2, mean_wait=0)
    assert_pool(pool(rep, "kv2"), "P-4 two pools", mean_used=0.3, mean_cached=2.7,
                admissions=2, mean_wait=None)


# ---------------------------------------------------------------- P-5

P5 = """
pool kv { cap 20; block 2; EVICT }
stage svc : delay;
workload { arrive batch(4); session { request; } }
server {
  branch (serial < 3) {
    run svc (serial);
    hold kv (6) { run svc (1); } cache (6);
    run svc (10 - serial);
    hold kv (6) { observe found = cached; run svc (1); } cache (6);
  } else {
    run svc (4);
    hold kv (10) { observe used_at_d = used(kv); run svc (1); }
  }
}
"""


@pytest.mark.parametrize("evict, found", [
    # §12 P-5: evict lru: all of A (3 blocks) and one tail block of B go: A 0, B 4, C 6
    ("evict lru;", (0, 4, 6)),
    # §12 P-5: `evict by (-last);` (newest first): A 6, B 4, C 0
    ("evict by (-last);", (6, 4, 0)),
    # §12 P-5: `evict by (serial == 1 ? 0 : 1);`: B loses all 6, then A one block: A 4, B 0, C 6
    ("evict by (serial == 1 ? 0 : 1);", (4, 0, 6)),
], ids=["lru", "newest_first", "serial_key"])
def test_p03_p5_lru_eviction_block_by_block(evict, found):
    rep = run(P5.replace("EVICT", evict), horizon=30)  # §12 P-5, horizon 30
    # §12 P-5: "At 11: found …" (all three at t = 11)
    assert_obs(rep, "found", [(0, 11, found[0]), (1, 11, found[1]), (2, 11, found[2])], evict)
    # §12 P-5: at 4 D needs 10 units (0 + 18 + 10 > 20) — it is admitted at 4 and sees 10 used
    assert_obs(rep, "used_at_d", [(3, 4, 10)], evict)
    # §12 P-5: evicted_entries 1, evicted_units 8, mean_cached 14.3333 (horizon 30); verified
    # 0.1.3: the same for all three orders, admissions 7, mean_used 1.5333
    assert_pool(pool(rep, "kv"), evict, evicted_entries=1, evicted_units=8,
                mean_cached=43 / 3, admissions=7, mean_used=23 / 15, preemptions=0)


# ---------------------------------------------------------------- P-6

def test_p03_p6_waiting_as_eviction_key():
    rep = run(P6, horizon=40)  # §12 P-6, horizon 40
    # §12 P-6: B (6 units) waits in gate's queue (key (1, 6)); A (0, 4) and C (0, 8) go first:
    # kept A 0, B 6, C 0 (times verified 0.1.3: 11, 12, 14)
    assert_obs(rep, "kept", [(0, 11, 0), (1, 12, 6), (2, 14, 0)])
    # §12 P-6: evicted_units 12; verified 0.1.3: evicted_entries 2, admissions 4
    assert_pool(pool(rep, "kv"), "P-6", evicted_units=12, evicted_entries=2, admissions=4)
    # verified 0.1.3: gate admits 3 holds, mean_wait 7/3
    assert_pool(pool(rep, "gate"), "P-6", admissions=3, mean_wait=7 / 3)


# ---------------------------------------------------------------- P-7

P7 = """
pool kv { cap 10; block 2; evict lru; spill host via link (size * 0.5) when (size >= 2); }
pool host { cap HOSTCAP; }
stage link : fifo(1);
stage svc : delay;
workload { arrive batch(2); session { request; } }
server {
  branch (serial == 0) {
    hold kv (6) { run svc (1); } cache (6);
    run svc (5);
    observe in_kv = cachedin(kv);
    observe in_host = cachedin(host);
  } else {
    run svc (2);
    hold kv (9) { run svc (1); }
  }
}
"""


def test_p03_p7_spill_to_a_tier():
    rep = run(P7.replace("HOSTCAP", "100"), horizon=30)  # §12 P-7, horizon 30
    # §12 P-7: at 6: in_kv 0, in_host 6
    assert_obs(rep, "in_kv", [(0, 6, 0)])
    assert_obs(rep, "in_host", [(0, 6, 6)])
    # §12 P-7: kv spills 3, evicted_entries 1, evicted_units 6
    assert_pool(pool(rep, "kv"), "P-7", spills=3, evicted_entries=1, evicted_units=6,
                admissions=2, mean_cached=0.2)  # mean_cached verified 0.1.3 (6 units on [1,2))
    # §12 P-7: link completed 3, mean_wait 1, mean_service 1
    link = rep.stage("link")
    assert link.completed == 3
    assert_close(link.mean_wait, 1, what="link.mean_wait")
    assert_close(link.mean_service, 1, what="link.mean_service")
    # §12 P-7: host mean_cached 5.6 (the units are in the tier at once, from t = 2)
    assert_pool(pool(rep, "host"), "P-7", mean_cached=5.6, mean_used=0, admissions=0,
                spills=0, evicted_units=0, mean_wait=None)


def test_p03_p7_spill_tier_makes_room_first():
    # Spec README "two deliberate departures" and Part 03 §9 step 3 / §14 "Spill tier
    # capacity": a tier makes room for the piece before it accepts it, so a 4-unit tier never
    # holds more than 4. pyserq 0.1.3 gives in_host 6 here (checked); this expectation is the
    # spec's, derived by hand: pieces 2 and 2 fill the tier; the third (2) evicts the tier's
    # only entry (session 0's 4 units, no block: whole entry), then a new 2-unit entry is made.
    rep = run(P7.replace("HOSTCAP", "4"), horizon=30)
    assert_obs(rep, "in_host", [(0, 6, 2)])
    assert_obs(rep, "in_kv", [(0, 6, 0)])
    assert_pool(pool(rep, "kv"), "P-7 tier cap 4", spills=3, evicted_entries=1,
                evicted_units=6)
    assert_pool(pool(rep, "host"), "P-7 tier cap 4", evicted_entries=1, evicted_units=4,
                mean_cached=2 * 28 / 30)


# ---------------------------------------------------------------- P-8

P8_NONE = """
pool mem { cap 10; block 2; preempt none; }
stage svc : delay;
workload { arrive batch(2); session { request; } }
server {
  hold mem (serial == 0 ? 6 : 3) {
    observe adm = now;
    run svc (1);
    grow mem (serial == 0 ? 3 : 1);
    observe grown_at = now;
    run svc (1);
  }
  observe done = now;
}
"""


def test_p03_p8_preempt_lifo_without_engine():
    rep = run(P8, horizon=20)  # §12 P-8 (no horizon given; 20 verified in 0.1.3)
    # §12 P-8: adm (0,0), (1,0), (1,5); grown_at (0,1), (1,6)
    assert_obs(rep, "adm", [(0, 0, 0), (1, 0, 0), (1, 5, 5)])
    assert_obs(rep, "grown_at", [(0, 1, 1), (1, 6, 6)])
    # §12 P-8: session 1 is preempted at position 0: computed 0 at its re-admission
    assert_obs(rep, "comp", [(0, 0, 0), (1, 0, 0), (1, 5, 0)])
    # §12 P-8: session 0 done at 5, session 1 re-admitted at 5 and done at 8
    assert_obs(rep, "done", [(0, 5, 5), (1, 8, 8)])
    # §12 P-8: mean_wait 1.3333 (waits 0, 0, 4); preemptions 1; evicted_units 9 (session 0's
    # cached 9 are evicted by session 1's re-admission); verified 0.1.3: evicted_entries 1,
    # admissions 3, stuck 0; horizon 20: mean_used 2.7, mean_cached 1.8, mean_queue 0.2,
    # mean_holders 0.45
    assert_pool(pool(rep, "mem"), "P-8", mean_wait=4 / 3, preemptions=1, evicted_units=9,
                evicted_entries=1, admissions=3, stuck=0, mean_used=2.7, mean_cached=1.8,
                mean_queue=0.2, mean_holders=0.45)


def test_p03_p8_preempt_none_deadlock():
    rep = run(P8_NONE, horizon=30)  # §12 P-8 variant, horizon 30
    # §12 P-8: both growths fail at 1 and wait for each other for ever: no done observed,
    # mean_used 10, mean_holders 2 over horizon 30
    assert obs(rep, "done") == []
    assert obs(rep, "grown_at") == []
    assert_obs(rep, "adm", [(0, 0, 0), (1, 0, 0)])  # verified 0.1.3
    row = pool(rep, "mem")
    assert_pool(row, "P-8 none", mean_used=10, mean_holders=2, admissions=2, preemptions=0,
                mean_wait=0)
    # Part 06 §9.5: both holders wait to grow here — a growth deadlock (verified 0.1.5,
    # fn main text, seed 1: growing_at_end 2, growing_stalled true)
    assert_pool(row, "P-8 none", growing_at_end=2, growing_stalled=True)
    assert rep.ended == 0
    # §13: a growth deadlock is not an error; the run simply makes no progress


# ---------------------------------------------------------------- P-9

def test_p03_p9_leases_and_load():
    rep = run(P9, horizon=20)  # §12 P-9 (horizon 20 verified in 0.1.3)
    # §12 P-9: used_after 20 for both (leases keep their units), cached_after 0
    assert_obs(rep, "used_after", [(0, 1, 20), (1, 1, 20)])
    assert_obs(rep, "cached_after", [(0, 1, 0), (1, 1, 0)])
    # §12 P-9: session 1's release P ends its lease at 4: p_used 10, p_cached 10
    assert_obs(rep, "p_used", [(1, 4, 10)])
    assert_obs(rep, "p_cached", [(1, 4, 10)])
    # §12 P-9: after load Q (7) the Q hold keeps rd(min(20, 7)) = 4
    assert_obs(rep, "q_cached", [(1, 4, 4)])
    # §12 P-9: session 0's lease expires at 6: at 8 p0_used 0, p0_cached 10
    assert_obs(rep, "p0_used", [(0, 8, 0)])
    assert_obs(rep, "p0_cached", [(0, 8, 10)])
    # verified 0.1.3 (horizon 20): P mean_used 5, mean_cached 15, mean_holders 0.5,
    # admissions 2; Q mean_used 0.6, mean_cached 3.2, admissions 1
    assert_pool(pool(rep, "P"), "P-9", mean_used=5, mean_cached=15, mean_holders=0.5,
                admissions=2, evicted_units=0)
    assert_pool(pool(rep, "Q"), "P-9", mean_used=0.6, mean_cached=3.2, mean_holders=0.05,
                admissions=1)


# ---------------------------------------------------------------- P-10

def test_p03_p10_queue_by_with_aging():
    rep = run(P10, horizon=20)  # §12 P-10 (horizon 20 verified in 0.1.3)
    # §12 P-10: admission order and times: 0 at 0, 4 at 4, 1 at 5, 5 at 6, 2 at 7, 3 at 8
    assert_obs(rep, "adm", [(0, 0, 0), (4, 4, 4), (1, 5, 5), (5, 6, 6), (2, 7, 7),
                                 (3, 8, 8)])
    # verified 0.1.3: waits 0, 1, 5, 3, 6, 6 (joins at 0, 3, 0, 3, 1, 2): mean_wait 3.5,
    # admissions 6, mean_queue 1.05
    assert_pool(pool(rep, "slot"), "P-10", mean_wait=3.5, admissions=6, mean_queue=1.05,
                mean_used=0.45, mean_holders=0.45)


# ---------------------------------------------------------------- P-11

P11 = """
pool mem { cap 10; HELD }
stage svc : delay;
workload { arrive batch(3); session { request; } }
server {
  run svc (serial);
  branch (serial == 0) {
    hold mem (2) reserve (6) { observe adm = now; run svc (3); grow mem (4);
                               observe grown = now; run svc (3); }
  } else {
    hold mem (serial == 1 ? 3 : 2) { observe adm = now; run svc (5); }
  }
  observe done = now;
}
"""


def test_p03_p11_reserve_held():
    rep = run(P11.replace("HELD", "reserve held;"), horizon=20)  # §12 P-11 (horizon 20)
    # §12 P-11: adm 0, 1, 6; grown 3 (inside its own reservation); done (1,6), (0,6), (2,11)
    assert_obs(rep, "adm", [(0, 0, 0), (1, 1, 1), (2, 6, 6)])
    assert_obs(rep, "grown", [(0, 3, 3)])
    assert_obs(rep, "done", [(1, 6, 6), (0, 6, 6), (2, 11, 11)])
    # verified 0.1.3: session 2 waits 4 (enqueued at 2): mean_wait 4/3, mean_used 2.45
    assert_pool(pool(rep, "mem"), "P-11 held", mean_wait=4 / 3, admissions=3,
                mean_used=2.45, mean_queue=0.2, mean_holders=0.8)


def test_p03_p11_without_reserve_held():
    rep = run(P11.replace("HELD", ""), horizon=20)
    # §12 P-11: without reserve held: adm 0, 1, 2; grown 6 (the growth waits, preempt none);
    # done (1,6), (2,7), (0,9)
    assert_obs(rep, "adm", [(0, 0, 0), (1, 1, 1), (2, 2, 2)])
    assert_obs(rep, "grown", [(0, 6, 6)])
    assert_obs(rep, "done", [(1, 6, 6), (2, 7, 7), (0, 9, 9)])
    # verified 0.1.3: no waiting admissions, mean_used 2.75
    assert_pool(pool(rep, "mem"), "P-11 not held", mean_wait=0, admissions=3,
                mean_used=2.75, mean_queue=0, mean_holders=0.95, growing_at_end=0,
                growing_stalled=False)


# ---------------------------------------------------------------- P-12

def test_p03_p12_lease_statistics():
    rep = run(P12, horizon=10)  # §12 P-12, horizon 10
    # §12 P-12: mean_used 3.6, mean_cached 2.4, mean_queue 0.3, mean_holders 0.6,
    # mean_wait 1.5 (0 and 3), admissions 2, evicted_entries 1, evicted_units 6
    assert_pool(pool(rep, "P"), "P-12", mean_used=3.6, mean_cached=2.4, mean_queue=0.3,
                mean_holders=0.6, mean_wait=1.5, admissions=2, evicted_entries=1,
                evicted_units=6, preemptions=0, spills=0, rejected=0, stuck=0, over_cap=None)


def test_p03_p12_lease_statistics_warmup_4():
    rep = run(P12, horizon=10, warmup=4)  # §12 P-12 with warm-up 4
    # §12 P-12: time averages over [4, 10]: mean_used 2, mean_cached 4, mean_holders 0.3333,
    # mean_queue 0; mean_wait null (both admissions before 4); admissions and evicted_* still
    # count from 0
    row = pool(rep, "P")
    assert_pool(row, "P-12 warm-up 4", mean_used=2, mean_cached=4, mean_holders=1 / 3,
                mean_queue=0, mean_wait=None, admissions=2, evicted_entries=1, evicted_units=6)
    assert json_pool(rep, "P")["mean_wait"] is None  # Part 06 §9.5: null in JSON


def test_p03_holders_count_sessions_once():
    # Part 03 §1: holders are the sessions holding an allocation; a session
    # with two nested holds of one pool is one holder throughout (pyserq 0.1.3
    # reports 0 here after the inner hold ends: see test_p03_differential.py)
    src = """
pool mem { cap 20; }
stage svc : delay;
workload { arrive batch(1); session { request; } }
server { hold mem (2) { run svc (1); hold mem (2) { run svc (1); } run svc (2);
         observe h = holders(mem); } }
run { horizon 10; }
"""
    import serq as _serq
    rep = _serq.run(_serq.load(source=src))
    assert rep.observes["h"].values == [1.0]
    assert rep.pools[0].mean_holders == pytest.approx(0.4)  # 1 holder on [0, 4)
