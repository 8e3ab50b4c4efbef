"""Pool rules at their edges (`serq/runtime/resources/pools.py`, spec Part 03), where
mutation testing found no test looking: the `reserve held` fit rule within
one unit of the cap, `queue by (waited)` run with its admission order
checked, `mean_cached` around a `drop`, and piece-by-piece eviction that
stops exactly at the limit. Each expected number is worked out by hand in
the test's docstring and agrees with the named reference run (pyserq 0.1.3,
seed 1, the same program); the differential check runs where pyserq is
installed. The tests after it cover the survivors of a later mutation run
(issue 27): over_cap at the cap, LRU block by block, `waiting` and
`decoding` as keys (derived from spec examples P-6 and P-8), the stall
flag, snapshots, `reserved()` for a policy, and, on a pool driven
directly, the capacity tolerance TOL and `check`'s tolerances (amounts no
program produces; no reference run, the docstrings give the arithmetic),
and policy pools beside a busy step engine (a policy's answer that changes
with time is asked after every iteration)."""
from __future__ import annotations

import pytest

import serq
from serq.report.json_report import to_dict

from oracle import requires, run_reference
from test_p03_examples import P6, P8  # spec Part 03 §12 examples P-6 and P-8

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


def lowest_prio_policy():
    """An eviction policy that evicts the entry whose owner has the smallest
    `prio`, and the list of the `prio`s it was shown, call by call."""
    from serq.policies import Pool

    seen = []

    class LowestPrio(Pool):
        def evict_victim(self, entries):
            prios = [e.attrs().attribute("prio") for e in entries]
            seen.append(prios)
            return entries[prios.index(min(prios))]
    return LowestPrio, seen


def test_an_eviction_policy_reads_the_attributes_of_ended_owners():
    """Sessions 0 and 1 cache 4 units each and end; session 2 asks 6 at
    t = 10: 8 + 6 > 10, one entry must go. The policy's keys read the
    owners' `prio` (3 and 2) although both sessions have ended: the pool
    keeps a snapshot of an owner's attributes for a policy (`attrs()`), and
    the entry of the smaller prio (session 1's) is evicted whole."""
    LowestPrio, seen = lowest_prio_policy()

    rep = serq.run(serq.load(source=OWNERS), policies={"kv": LowestPrio})
    assert seen and seen[0] == [3.0, 2.0]
    row = pool(rep, "kv")
    assert row["evicted_units"] == 4 and row["evicted_entries"] == 1


# -- survivors of the mutation run (issue 27): programs -----------------------------

AT_CAP = """
pool p { cap 10; }
stage d : delay;
stage gate : delay;
workload { arrive batch(2); }
session { turn; run gate (serial); hold p (serial == 0 ? 5 : 10) { run d (100); } }
run { horizon 20; warmup 0; seed 1; }
"""


def test_a_waiting_need_of_exactly_the_cap_is_not_over_cap():
    """Session 0 holds 5 of cap 10 past the horizon; session 1 asks 10 at
    t = 1 and waits to the end. `over_cap` reports a need *above* the cap
    (Part 03 §11): 10 is not, so it is null; the wait shows as mean_queue
    19/20 (hand calculation; pyserq 0.1.3: over_cap null)."""
    row = pool(run(AT_CAP), "p")
    assert row["over_cap"] is None
    assert row["mean_queue"] == pytest.approx(19 / 20, rel=1e-12)


LRU_PIECES = """
pool kv { cap 10; block 2.5; evict lru; }
stage d : delay;
stage gate : delay;
workload { arrive batch(2); init { set u = serial == 0 ? 7.5 : 5; } }
session { turn; run gate (serial * 5); hold kv (u) { run d (1); } cache (u); run d (20); }
run { horizon 30; warmup 0; seed 1; }
"""


def test_lru_eviction_piece_by_piece_stops_at_the_limit():
    """Blocks of 2.5 are not whole units, so LRU evicts block by block.
    Session 0 caches 7.5 (3 blocks) at t = 1; session 1 asks 5 at t = 5:
    7.5 + 5 > 10, one block goes (5 + 5 = 10 fits), the entry keeps 5.
    mean_cached = (7.5·4 + 5·1 + 10·24)/30 = 275/30 (hand calculation;
    pyserq 0.1.3 the same)."""
    row = pool(run(LRU_PIECES), "kv")
    assert row["evicted_units"] == 2.5
    assert row["evicted_entries"] == 0
    assert row["mean_cached"] == pytest.approx(275 / 30, rel=1e-12)


WAITING_KEY = P6.replace("evict by (waiting, size);", "evict by (-size - 1.5 * waiting);") + """
run { horizon 40; warmup 0; seed 1; }
"""


def test_waiting_is_one_in_an_eviction_key():
    """Spec P-6 with `evict by (-size - 1.5 * waiting)`: at 5, D needs 8
    units evicted; B (6 units) waits in `gate`'s queue, so `waiting` is 1
    and the keys are A -4, B -6 - 1.5 = -7.5, C -8: C goes whole and that
    suffices. `kept` A 4, B 6, C 0; evicted_units 8 (hand calculation from
    P-6's timeline; pyserq 0.1.3 the same). Were `waiting` 2, B (-9)
    would go first and then C."""
    rep = run(WAITING_KEY)
    kept = dict(zip(rep.observes["kept"].sessions, rep.observes["kept"].values))
    assert kept == {0: 4.0, 1: 6.0, 2: 0.0}
    assert pool(rep, "kv")["evicted_units"] == 8


PREEMPT_DECODING = P8.replace(
    "preempt lifo;", "preempt by (decoding == 0 ? -admission : admission);") + """
run { horizon 30; warmup 0; seed 1; }
"""


def test_decoding_is_zero_on_a_pool_that_is_no_engine_memory():
    """Spec P-8 with `preempt by (decoding == 0 ? -admission : admission)`:
    on a pool no engine uses as memory `decoding` is 0 (Part 03 §7.3), so
    the key is `-admission` and the run is P-8's `preempt lifo`: `adm`
    (0,0), (1,0), (1,5); `grown_at` (0,1), (1,6); preemptions 1. Were it
    not 0, the key would be `admission` and the grower itself the victim."""
    rep = run(PREEMPT_DECODING)
    adm = rep.observes["adm"]
    assert list(zip(adm.sessions, adm.values)) == [(0, 0.0), (1, 0.0), (1, 5.0)]
    grown = rep.observes["grown_at"]
    assert list(zip(grown.sessions, grown.values)) == [(0, 1.0), (1, 6.0)]
    assert pool(rep, "mem")["preemptions"] == 1


STALLED = """
pool mem { cap 10; preempt none; }
stage svc : delay;
workload { arrive batch(1); session { request; } }
server { hold mem (6) { run svc (1); grow mem (6); run svc (1); } }
run { horizon 30; warmup 0; seed 1; }
"""


def test_a_sole_holder_growing_past_the_cap_is_stalled():
    """One session holds 6 of cap 10 and grows by 6 at t = 1: 12 > 10, no
    other holder to free units, preempt none: it waits for ever. Every
    holder is a grower: growing_at_end 1, growing_stalled true (Part 03
    §11; hand calculation)."""
    row = pool(run(STALLED), "mem")
    assert row["growing_at_end"] == 1
    assert row["growing_stalled"] is True


def test_an_eviction_policy_reads_the_snapshot_taken_at_release():
    """OWNERS with `set prio = 99` after `cache`: the owners end with prio
    99, but an ended owner's attributes are the snapshot taken when it
    released (`CacheEntry.attrs()`): the policy sees 3 and 2, as in
    test_an_eviction_policy_reads_the_attributes_of_ended_owners."""
    LowestPrio, seen = lowest_prio_policy()

    source = OWNERS.replace("cache (4); }", "cache (4); set prio = 99; }")
    assert source != OWNERS
    serq.run(serq.load(source=source), policies={"kv": LowestPrio})
    assert seen and seen[0] == [3.0, 2.0]


RESERVED_POLICY = """
pool kv { cap 1; }
stage d : delay;
workload { arrive batch(2); }
session { turn; set t0 = now; hold kv (1) { observe adm = now - t0; run d (1); } }
run { horizon 10; warmup 0; seed 1; }
"""


def test_reserved_is_zero_without_reserve_held():
    """A policy's fit rule `used + reserved(frame) + units ≤ cap` on a pool
    without `reserve held`: reservations are 0 there (§4.6), so it is the
    plain rule; two sessions asking the cap 1 are admitted at 0 and 1
    (hand calculation: adm 0, 1)."""
    from serq.policies import Pool

    class Reserving(Pool):
        def has_room(self, units, frame=None):
            return self.used + self.reserved(frame) + units <= self.cap

    rep = serq.run(serq.load(source=RESERVED_POLICY), policies={"kv": Reserving})
    assert list(rep.observes["adm"].values) == [0.0, 1.0]


REUSE_DEAD = """
pool kv { cap 20; }
stage d : delay;
stage gate : delay;
workload { arrive batch(3); }
session { turn; run gate (serial == 2 ? 4 : serial);
  branch (serial == 0) {
    hold kv (8) { run d (1); } cache (8);
    run d (2);
    hold kv (10) reuse (2) { run d (10); } cache (0);
  } else {
    hold kv (serial == 1 ? 4 : 6) { run d (1); } cache (serial == 1 ? 4 : 0);
  }
}
run { horizon 30; warmup 0; seed 1; }
"""


def test_lru_takes_a_dead_entry_put_back_out_of_order():
    """Session 0 caches 8 at t = 1 (rseq 1), session 1 caches 4 at t = 2
    (rseq 2). At 3 session 0 holds 10 with `reuse (2)`: 6 of its 8 become a
    dead entry that keeps (last 1, rseq 1) although it is put after session
    1's (§4.2 step 4). At 4 session 2 asks 6: 10 + 10 + 6 = 26 > 20, LRU
    evicts the least (last, rseq), the dead entry (6 units), and that
    suffices: session 1's entry stays (hand calculation; pyserq 0.1.3:
    evicted_units 6, evicted_entries 1)."""
    row = pool(run(REUSE_DEAD), "kv")
    assert row["evicted_units"] == 6 and row["evicted_entries"] == 1


# -- survivors of the mutation run (issue 27): the pool alone, at the tolerance --------
# TOL = 1e-9 is the capacity tolerance (Part 03 conventions): a sum fits when it is
# at most cap + TOL, and an entry of at most TOL units is gone. These edges need
# amounts no program's block rounding produces, so the pool is driven directly.

def bare_pool(cap, block=None, evict_keys=None):
    """A pool member on a stub simulation at time 0 (no holds, no spill)."""
    from types import SimpleNamespace

    from serq.runtime.compile.poolspec import PoolSpec
    from serq.runtime.resources.pools import Pool

    sim = SimpleNamespace(env=SimpleNamespace(now=0.0), warmup=0.0, pool_list=[], stamp=0)
    spec = PoolSpec(cap=cap, block=block, queue_keys=None, evict_keys=evict_keys,
                    preempt="none", preempt_keys=lambda *a: (), requeue="head",
                    reserve_held=False, admit_via=None, spill=None)
    p = Pool(sim, "kv", None, spec)
    sim.pool_list.append(p)
    return p


def cache_entries(p, sizes):
    from serq.runtime.resources.pools import CacheEntry

    for i, size in enumerate(sizes):
        p.put_entry(CacheEntry(i, size, 0.0, i + 1, None, None))


def test_an_entry_shrunk_to_the_tolerance_is_gone():
    """An entry of 2·TOL loses TOL: TOL units left is no entry (`size ≤
    TOL`); it is removed and counted, and nothing stays cached."""
    from serq.core.tolerance import TOL

    p = bare_pool(1.0)
    cache_entries(p, [2 * TOL])
    p._shrink(p.entries[0], TOL)
    assert p.entries == {} and p.cached == 0.0 and p.evicted_entries == 1


def test_evict_by_stops_when_the_sum_is_cap_plus_tolerance():
    """Six entries of 2 (12 cached), cap 10, room for TOL units asked: 12 +
    TOL > 10 + TOL, so one entry goes; then 10 + TOL is exactly the limit,
    which fits: five entries stay (an `evict by` key, constant here, takes
    the entries in release order)."""
    from serq.core.tolerance import TOL

    p = bare_pool(10.0, evict_keys=lambda *args: (0.0,))
    cache_entries(p, [2.0] * 6)
    p.make_room(TOL)
    assert sorted(p.entries) == [1, 2, 3, 4, 5] and p.cached == 10.0


def test_lru_blocks_stop_when_the_sum_is_cap_plus_tolerance():
    """One LRU entry of 12 in blocks of 2, cap 10, room for TOL units
    asked (not a whole number: block by block): one block goes, 10 + TOL
    is the limit and fits, the entry keeps 10."""
    from serq.core.tolerance import TOL

    p = bare_pool(10.0, block=2.0)
    cache_entries(p, [12.0])
    p.make_room(TOL)
    assert p.entries[0].size == 10.0 and p.evicted_units == 2.0


def test_the_cache_invariant_allows_a_difference_of_one_millionth():
    """`check` accepts entries and `cached` differing by 1e-6 (its
    tolerance, inclusive) and stops the run beyond it."""
    from serq.core.errors import SimulationError

    p = bare_pool(10.0)
    p.cached = 1e-6
    p.check()
    p.cached = 2e-6
    with pytest.raises(SimulationError, match="entries sum to 0 but"):
        p.check()



def test_the_held_invariant_allows_a_difference_of_one_millionth():
    """`check` accepts the holds' allocations and `used` differing by 1e-6
    (its tolerance, inclusive) and stops the run beyond it."""
    from serq.core.errors import SimulationError

    p = bare_pool(10.0)
    p.used = 1e-6
    p.check()
    p.used = 0.5
    with pytest.raises(SimulationError, match="the holds hold 0 units but 0.5 are used"):
        p.check()


def test_a_pool_counts_the_sessions_that_hold_it_more_than_once():
    """`Pool.multi` follows `holder_count` (a step engine's totals skip
    reading a resident's session while it is 0): admissions, releases and a
    holding passed from a leg to its session move it, and the invariant
    checker stops a run whose count is off."""
    from serq.core.errors import SimulationError

    p = bare_pool(10.0)
    a, b = object(), object()  # two sessions
    p.add_holder(a)
    p.add_holder(b)
    assert p.multi == 0
    p.add_holder(a)  # a nested hold, or a lease beside a hold
    assert p.multi == 1
    p.add_holder(a)
    assert p.multi == 1
    p.pass_holder(b, a)  # b's holding becomes a's (a leg's lease its session's)
    assert p.holder_count == {a: 4} and p.multi == 1
    p.add_holder(b)
    p.pass_holder(a, b)
    assert p.holder_count == {a: 3, b: 2} and p.multi == 2
    p.remove_holder(a)
    p.remove_holder(b)
    assert p.holder_count == {a: 2, b: 1} and p.multi == 1
    p.remove_holder(a)
    assert p.holder_count == {a: 1, b: 1} and p.multi == 0
    p.check()
    p.multi = 1
    with pytest.raises(SimulationError, match="1 sessions are counted as holding it more"):
        p.check()


def test_over_the_cap_before_any_preemption_names_no_put_back():
    """A pool above its cap with no preempted hold's release behind it: the
    message names used, cached and cap, and no units put back."""
    from serq.core.errors import SimulationError

    p = bare_pool(10.0)
    p.used = 12.0
    with pytest.raises(SimulationError) as info:
        p.check()
    assert "exceeds the cap 10" in str(info.value)
    assert "by more than" not in str(info.value)



def test_the_overhang_allows_exactly_its_units_plus_one_millionth():
    """After preemptions put back 0.5 units beyond the cap (`overhang`
    0.5), `check` accepts an excess of 0.5 + 1e-6 (its tolerance,
    inclusive) and stops the run beyond it, naming the units put back."""
    from serq.core.errors import SimulationError

    p = bare_pool(0.0)
    cache_entries(p, [0.5 + 1e-6])  # excess = cached - cap = 0.5 + 1e-6
    p.overhang = 0.5
    p.check()
    assert p.overhang == 0.5  # (still above the cap: the allowance stays)
    p.entries[0].size = p.cached = 0.5 + 2e-6
    with pytest.raises(SimulationError, match="by more than the 0.5 units preempted holds"):
        p.check()


def test_an_excess_of_one_millionth_is_within_the_cap():
    """An excess of exactly 1e-6 counts as within the cap (`check`'s
    tolerance, inclusive): the allowance for units put back ends there
    (`overhang` 0 again), and an excess of 0.5 then stops the run."""
    from serq.core.errors import SimulationError

    p = bare_pool(0.0)
    cache_entries(p, [1e-6])
    p.overhang = 0.5
    p.check()
    assert p.overhang == 0.0
    p.entries[0].size = p.cached = 0.5
    with pytest.raises(SimulationError, match="cached 0.5 exceeds the cap 0$"):
        p.check()


# -- a policy pool beside a busy step engine (the fast paths' `plain_select`,
# `plain_room`): while only the engine's iterations happen, the event loop
# skips the pool pass when the built-in choice and fit rule would admit
# nothing; a policy's choice or fit may change with time, so its pool's pass
# must still run after every iteration (each takes 1, `cost 1`).
BESIDE_ENGINE = """
pool slots { cap 2; }
stage engine : step { budget 8; cost 1; }
workload { arrive batch(3); init { set u = serial == 1 ? 2 : 1; } }
session { turn; set t0 = now; hold slots (u) { observe adm = now - t0;
  run engine prefill (4); run engine decode (19); } }
run { horizon 100; warmup 0; seed 1; }
"""


def _admissions(source, policy):
    s = serq.run(serq.load(source=source), policies={"slots": policy}).observes["adm"]
    return list(zip(s.sessions, s.values))


def test_a_policy_choice_that_changes_with_time_is_asked_after_every_iteration():
    """Sessions 0, 2 ask 1 unit, session 1 asks 2 (cap 2). Session 0 is
    admitted at 0 and holds for 20 iterations (1 prefill, 19 decode). The
    policy tries the head (session 1, which does not fit) before 5.5 and
    the last in the queue after: the pass after the iteration ending at 6
    admits session 2 (until 26); session 1 fits once both ended, at 26
    (hand calculation)."""
    from serq.policies import Pool

    class LateLast(Pool):
        def select_candidate(self):
            return self.queue[0] if self.env.now < 5.5 else self.queue[-1]

    assert _admissions(BESIDE_ENGINE, LateLast) == [(0, 0.0), (2, 6.0), (1, 26.0)]


def test_a_policy_fit_that_changes_with_time_is_asked_after_every_iteration():
    """Three sessions ask 1 unit (cap 2); the policy lets at most 1 unit be
    used before 5.5: session 1 is admitted by the pass after the iteration
    ending at 6, session 2 when session 0 ends at 20 (hand calculation)."""
    from serq.policies import Pool

    class LateRoom(Pool):
        def has_room(self, units, frame=None):
            return self.used + units <= (self.cap if self.env.now > 5.5 else 1)

    source = BESIDE_ENGINE.replace("serial == 1 ? 2 : 1", "1")
    assert _admissions(source, LateRoom) == [(0, 0.0), (1, 6.0), (2, 20.0)]


# Two entries, then an admission that must evict one: session 0 caches 4 at
# t = 1, session 1 caches 6 at t = 2 (10 cached, the cap), session 2 asks 2
# at t = 5: 12 > 10, one entry goes, either suffices (no blocks: whole
# entries). Which one the key picks shows in evicted_units.
EVICT_ONE = """
pool kv { cap 10; evict by (KEYS); }
stage d : delay;
stage gate : delay;
workload { arrive batch(3); init { set u = serial == 0 ? 4 : serial == 1 ? 6 : 2; } }
session { turn; run gate (serial == 2 ? 5 : serial); hold kv (u) { run d (1); } cache (u);
  run d (20); }
run { horizon 30; warmup 0; seed 1; }
"""


def test_evict_by_age_takes_the_youngest_entry():
    """`age` is now − last (Part 03 §8): at 5 session 0's entry is 4 old,
    session 1's 3; the smallest key, session 1's (6 units), goes (hand
    calculation; pyserq 0.1.3, seed 1, agrees: the reference test below)."""
    row = pool(run(EVICT_ONE.replace("KEYS", "age")), "kv")
    assert row["evicted_units"] == 6 and row["evicted_entries"] == 1


def test_evict_by_a_tied_first_key_is_decided_by_the_next():
    """`waiting` is 0 for both entries (their owners run `d`, no hold
    pending), so `-size` decides: the larger entry, session 1's 6 units,
    goes (keys compared one by one, Part 03 §8; hand calculation; pyserq
    0.1.3, seed 1, agrees: the reference test below)."""
    row = pool(run(EVICT_ONE.replace("KEYS", "waiting, -size")), "kv")
    assert row["evicted_units"] == 6 and row["evicted_entries"] == 1


def test_a_hold_grown_past_its_reservation_reserves_nothing():
    """The outstanding reservation of a hold is max(0, reserved − allocated)
    (§4.6): a hold that reserved 4 and has 6 counts 0, not −2, against the
    others; one that reserved 4 and has 1 counts 3."""
    from dataclasses import replace
    from types import SimpleNamespace

    p = bare_pool(10.0)
    p.spec = replace(p.spec, reserve_held=True)
    grown = SimpleNamespace(pools=[p], req=[4.0], cells=[SimpleNamespace(alloc=6.0)])
    short = SimpleNamespace(pools=[p], req=[4.0], cells=[SimpleNamespace(alloc=1.0)])
    p.frames = [grown]
    assert p.reserved() == 0.0
    p.frames = [grown, short]
    assert p.reserved() == 3.0 and p.reserved(exclude=short) == 0.0


def test_the_fit_rule_holds_at_cap_plus_tolerance():
    """`used + units ≤ cap + TOL` fits (inclusive): with 10 used of 10, TOL
    more fits and 2·TOL does not."""
    from serq.runtime.resources.pools import TOL

    p = bare_pool(10.0)
    p.used = 10.0
    assert p.has_room(TOL) is True and p.has_room(2 * TOL) is False


def test_a_waiting_need_of_cap_plus_tolerance_is_not_over_cap():
    """`over_cap` names a queue head whose need exceeds cap + TOL: a need
    of exactly cap + TOL is not over the cap, one of cap + 3·TOL is."""
    from types import SimpleNamespace

    from serq.runtime.resources.pools import TOL

    p = bare_pool(10.0)
    p.queue = [SimpleNamespace(pools=[p], need=[10.0 + TOL])]
    assert p.over_cap() is None
    p.queue[0].need = [10.0 + 3 * TOL]
    assert p.over_cap() == ("kv", 10.0 + 3 * TOL)


PREEMPT_TIED = P8.replace("preempt lifo;", "preempt by (decoding);") + """
run { horizon 30; warmup 0; seed 1; }
"""


def test_tied_preemption_keys_take_the_candidate_admitted_last():
    """Spec P-8 with `preempt by (decoding)`: `decoding` is 0 for both
    holds (no engine), the keys tie, and the tie goes to the candidate
    admitted last (Part 03 §7.3), session 1: the run is P-8's `preempt lifo`,
    `adm` (0,0), (1,0), (1,5) and preemptions 1 (as in the test of `decoding`
    above)."""
    rep = run(PREEMPT_TIED)
    adm = rep.observes["adm"]
    assert list(zip(adm.sessions, adm.values)) == [(0, 0.0), (1, 0.0), (1, 5.0)]
    assert pool(rep, "mem")["preemptions"] == 1


NESTED = """
pool p { cap 5; }
stage d : delay;
workload { arrive batch(1); }
session { turn; hold p (1) { hold p (1) { hold p (1) { run d (1); } run d (1); } run d (1); } }
run { horizon 10; warmup 0; seed 1; }
"""


def test_a_session_holding_a_pool_thrice_is_one_holder_until_its_last_release():
    """One session holds p three times (nested), releasing at 1, 2 and 3: it
    is one holder from 0 to 3, mean_holders 3/10 = 0.3; used is 3, 2, 1 for
    a time unit each, mean_used 6/10 = 0.6 (hand calculation; pyserq 0.1.3
    agrees: the reference test below)."""
    row = pool(run(NESTED), "p")
    assert row["mean_holders"] == 0.3 and row["mean_used"] == 0.6

@requires("0.1.3")
@pytest.mark.oracle
@pytest.mark.parametrize("source", [RESERVE, WAITED, DROP, PIECES, PIECES_LRU, AT_CAP, LRU_PIECES,
                                    WAITING_KEY, PREEMPT_DECODING, STALLED, REUSE_DEAD,
                                    EVICT_ONE.replace("KEYS", "age"),
                                    EVICT_ONE.replace("KEYS", "waiting, -size"), PREEMPT_TIED,
                                    NESTED])
def test_pool_edges_against_the_reference(source):
    """The same programs under pyserq 0.1.3 (seed 1): every observe's count
    and mean, and every pool field the reference reports, agree."""
    ours = to_dict(run(source))
    ref = run_reference(source, version="0.1.3")
    assert ours["observes"].keys() == ref["observes"].keys()
    for name, theirs in ref["observes"].items():
        mine = ours["observes"][name]
        assert mine["count"] == theirs["count"], name
        assert mine["mean"] == pytest.approx(theirs["mean"], rel=1e-12, abs=0), name
    for mine, theirs in zip(ours["pools"], ref["pools"]):
        for key, value in theirs.items():
            if isinstance(value, float):
                value = pytest.approx(value, rel=1e-12, abs=0)
            assert mine[key] == value, key
