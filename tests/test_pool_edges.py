"""Pool rules at their edges (`serq/runtime/resources/pools.py`, spec Part 03), where
mutation testing found no test looking: the `reserve held` fit rule within
one unit of the cap, `queue by (waited)` run with its admission order
checked, `mean_cached` around a `drop`, and piece-by-piece eviction that
stops exactly at the limit. Each expected number is worked out by hand in
the test's docstring and agrees with the named reference run (pyserq 0.1.3,
seed 1, the same program); the differential check runs where pyserq is
installed."""
from __future__ import annotations

import pytest

import serq
from serq.report.json_report import to_dict

from oracle import requires, run_reference

RESERVE = """
pool p { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(3); init { set u = serial == 0 ? 2 : serial == 1 ? 2 : 1;
  set r = serial == 0 ? 8 : 0; set t = serial == 0 ? 10 : 1; } }
session { turn; set t0 = now; hold p (u) reserve (r) { observe adm = now - t0; run d (t); } }
run { horizon 20; warmup 0; seed 1; }
"""

WAITED = """
pool p { cap 1; queue by (waited); }
stage d : delay;
stage gate : delay;
workload { arrive batch(4); }
session { turn; run gate (serial); set t0 = now;
  hold p (1) { observe adm = now - t0; run d (10); } }
run { horizon 100; warmup 0; seed 1; }
"""

DROP = """
pool kv { cap 100; }
stage d : delay;
workload { arrive batch(1); }
session { turn; hold kv (10) { run d (1); } cache (10); run d (2); drop kv; run d (3); }
run { horizon 10; warmup 0; seed 1; }
"""

PIECES = """
pool kv { cap 10; block 2; evict by (size); }
stage d : delay;
stage gate : delay;
workload { arrive batch(2); init { set u = serial == 0 ? 8 : 6; } }
session { turn; run gate (serial * 5); hold kv (u) { run d (1); } cache (u); run d (20); }
run { horizon 30; warmup 0; seed 1; }
"""

PIECES_LRU = PIECES.replace("evict by (size);", "evict lru;")


def run(source):
    return serq.run(serq.load(source=source))


def pool(report, name):
    return next(p for p in to_dict(report)["pools"] if p["name"] == name)


def test_reserve_held_fits_exactly_at_the_cap():
    """Session 0 holds 2 and reserves 8 (reservation outstanding: 6).
    Session 1 asks 2: 2 + 6 + 2 = 10 ≤ cap 10, admitted at 0 (the rule is
    ≤, not <). Session 2 asks 1: 4 + 6 + 1 = 11 > 10, it waits for session
    1's end at t = 1. adm = 0, 0, 1 (pyserq 0.1.3: mean 1/3)."""
    rep = run(RESERVE)
    assert list(rep.observes["adm"].values) == [0.0, 0.0, 1.0]
    row = pool(rep, "p")
    assert row["admissions"] == 3 and row["mean_wait"] == 1 / 3


def test_queue_by_waited_admits_the_shortest_wait_first():
    """Sessions join at 0, 1, 2, 3; session 0 holds the one unit until 10.
    `queue by (waited)` takes the smallest time in queue first: session 3
    at 10 (waited 7), session 2 at 20 (18), session 1 at 30 (29). FIFO
    would give 9, 18, 27, with the same mean: the order is what is checked
    (pyserq 0.1.3: mean 13.5, p99 29)."""
    rep = run(WAITED)
    assert list(rep.observes["adm"].values) == [0.0, 7.0, 18.0, 29.0]
    assert list(rep.observes["adm"].sessions) == [0, 3, 2, 1]


def test_mean_cached_around_a_drop():
    """10 units cached from t = 1 to the `drop` at t = 3, nothing after:
    mean_cached = 10·2/10 = 2 over the horizon 10; the drop is no eviction
    (pyserq 0.1.3: mean_cached 2, evicted 0)."""
    row = pool(run(DROP), "kv")
    assert row["mean_cached"] == 2
    assert row["mean_used"] == 1
    assert row["evicted_entries"] == 0 and row["evicted_units"] == 0


@pytest.mark.parametrize("source", [PIECES, PIECES_LRU], ids=["evict-by", "lru"])
def test_eviction_by_blocks_stops_exactly_at_the_limit(source):
    """Session 0 caches 8 units (4 blocks of 2) at t = 1; session 1 asks 6
    at t = 5: 8 + 6 = 14 > 10, so blocks go until 4 + 6 = 10 = cap, not
    one more: 4 units evicted, the entry keeps 4 (pyserq 0.1.3, evict by:
    evicted_units 4, mean_cached 9.2)."""
    row = pool(run(source), "kv")
    assert row["evicted_units"] == 4
    assert row["evicted_entries"] == 0
    # cached: 8 on [1, 5), 4 + 6 = 10 on [6, 30) → (8·4 + 4·1 + 10·24)/30 = 9.2
    assert row["mean_cached"] == pytest.approx(9.2, rel=1e-12)


OWNERS = """
pool kv { cap 10; }
stage d : delay;
stage gate : delay;
workload { arrive batch(3); init { set prio = 3 - serial; } }
session { turn; run gate (serial * 5); hold kv (serial < 2 ? 4 : 6) { run d (1); } cache (4); }
run { horizon 30; warmup 0; seed 1; }
"""


def test_an_eviction_policy_reads_the_attributes_of_ended_owners():
    """Sessions 0 and 1 cache 4 units each and end; session 2 asks 6 at
    t = 10: 8 + 6 > 10, one entry must go. The policy's keys read the
    owners' `prio` (3 and 2) although both sessions have ended: the pool
    keeps a snapshot of an owner's attributes for a policy (`attrs()`), and
    the entry of the smaller prio (session 1's) is evicted whole."""
    from serq.policies import Pool

    seen = []

    class LowestPrio(Pool):
        def evict_victim(self, entries):
            prios = [e.attrs().attribute("prio") for e in entries]
            seen.append(prios)
            return entries[prios.index(min(prios))]

    rep = serq.run(serq.load(source=OWNERS), policies={"kv": LowestPrio})
    assert seen and seen[0] == [3.0, 2.0]
    row = pool(rep, "kv")
    assert row["evicted_units"] == 4 and row["evicted_entries"] == 1


@requires("0.1.3")
@pytest.mark.oracle
@pytest.mark.parametrize("source", [RESERVE, WAITED, DROP, PIECES, PIECES_LRU])
def test_pool_edges_against_the_reference(source):
    ours = to_dict(run(source))
    ref = run_reference(source, version="0.1.3")
    assert ours["observes"] == ref["observes"]
    for mine, theirs in zip(ours["pools"], ref["pools"]):
        for key, value in theirs.items():
            assert mine[key] == pytest.approx(value, rel=1e-12, abs=0), key
