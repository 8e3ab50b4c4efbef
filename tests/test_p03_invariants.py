"""Invariants of pools under randomized programs, and the pool policy seam.

Part 03 §1: in every configuration reachable between events
`used + cached ≤ cap` (tolerance 1e-9); no unit is held twice; every
holder's allocation is what its hold asked for (block-rounded, grown). The
runtime checks these after every event when the simulation is built with
`serq.runtime.sim.simulation.Simulation(program, check_invariants=True)`; a
violation stops the run with a `SimulationError`. (One exception to the
first, which the reference shares and the checker allows: a preempted hold
that never advanced may cache more than it frees; tests/test_pool_overhang.py.)

* `random_program(seed)` composes a pooled program (flat layout) from random
  choices: a `kv` pool with block, `evict lru` and `preempt lifo`; a `pc` pool
  with an `evict by` (or lru) order, optional block and `preempt none`; a
  `slots` pool with `queue fifo` or `queue by`; poisson arrivals, drawn
  attributes and think times; holds over several pools with `cache`,
  `reuse`, `grow`, `release`, `lease`, `load`, nested holds and `drop`.
  Every generated program for the seeds below was accepted by pyserq 0.1.3
  (checked while writing this file).
* Each is run with the invariant checker on; the report must also obey the
  invariants visible from outside (time averages, observed `used`/`free`)
  and be identical to a run without the checker (checking never changes
  the run).
* The policy seam: a user subclass of `serq.runtime.resources.pools.Pool` bound with
  `serq.run(prog, policies={"kv": MyPool})` whose `evict_victim(self,
  entries)` returns something that is not one of the entries it was given
  (a made-up object, None, a copy, an entry already evicted) must stop the
  run with a clear `SimulationError` naming the policy (its class) and the
  method; well-behaved subclasses work (delegating to `super()` changes
  nothing; "newest first" reproduces P-5's `evict by (-last)` numbers).
"""
from __future__ import annotations

import copy
import math
import random
import textwrap

import pytest

import serq
from serq.core.errors import SimulationError
from serq.report.json_report import to_dict
from serq.runtime.resources.pools import Pool
from serq.runtime.sim.simulation import Simulation

import test_p03_examples as ex
import test_p06_pool_reports as p06

CAPS_TOL = 1e-9


def random_program(seed: int) -> str:
    rng = random.Random(seed)
    kv_block = rng.choice([2, 4])
    kv_cap = rng.choice([40, 56, 72])
    pc_cap = rng.choice([16, 24, 30])
    pc_evict = rng.choice(["evict by (size, -last);", "evict by (waiting, age);",
                           "evict by (-size, serial);", "evict lru;"])
    pc_block = rng.choice(["", "block 2;"])
    slot_cap = rng.choice([2, 3, 4])
    slot_queue = rng.choice(["queue fifo;", "queue by (-waited, serial);", "queue by (n, serial);"])
    lam = rng.choice([0.4, 0.7, 1.0, 1.5])
    grow = rng.choice(["0", "2", "n / 2", "1 + serial - 3 * floor(serial / 3)"])
    reuse = rng.choice(["", " reuse (n)", " reuse (4)"])
    lines = [
        f"pool kv {{ cap {kv_cap}; block {kv_block}; evict lru; preempt lifo; }}",
        f"pool pc {{ cap {pc_cap}; {pc_block} {pc_evict} preempt none; }}",
        f"pool slots {{ cap {slot_cap}; {slot_queue} }}",
        "stage llm : ps(2);",
        "stage svc : fifo(2);",
        "stage pause : delay;",
        "workload {",
        f"  arrive poisson({lam});",
        "  init { set n = 2 + floor(~uniform(0, 10)); set m = 1 + floor(~uniform(0, 6)); }",
        "  session { request; run pause (~exp(1)); request; run pause (~exp(2)); request; }",
        "}",
        "server {",
    ]
    body = []
    stmts = ["A", "B", "C", "D", "E"]
    rng.shuffle(stmts)
    for s in stmts[: rng.randint(2, 5)]:
        if s == "A":
            body.append(
                f"  hold slots (1), kv (n + 4){reuse} {{ observe hit = cached; observe u_kv = used(kv);"
                f" run llm (0.1 + (n + 4 - cached) / 20); grow kv ({grow}); observe u_kv = used(kv);"
                f" run llm (0.2); }} cache (n + 4 + {grow});")
        elif s == "B":
            rel = rng.choice(["release pc; ", ""])
            lease = rng.choice([" lease pc (1)", " lease pc (0.5 + serial - 2 * floor(serial / 2))", ""])
            body.append(
                f"  hold pc (m) {{ observe u_pc = used(pc); run svc (0.3); {rel}run svc (0.2); }}"
                f" cache (m){lease};")
        elif s == "C":
            body.append(
                "  hold kv (n) { run llm (0.1); hold pc (m) { grow pc (1); observe u_pc = used(pc);"
                " run svc (0.2); } cache (m); observe u_kv = used(kv); } cache (n);")
        elif s == "D":
            body.append(
                "  hold kv (n + 2) reuse (n) { load kv (n - cached); run llm (0.2); observe own = cachedin(kv); }"
                " cache (n + 2);")
        elif s == "E":
            body.append("  observe c_kv = cachedin(kv); observe c_pc = cachedin(pc); drop pc;")
    lines += body
    lines += ["  set n = n + 2;", "  observe f_kv = free(kv); observe f_pc = free(pc);", "}"]
    return "\n".join(lines) + "\n"


def pool_caps(source):
    """`name -> cap` of the pools a generated program declares."""
    caps = {}
    for line in source.splitlines():
        line = line.strip()
        if line.startswith("pool "):
            name = line.split()[1]
            cap = line.split("cap ", 1)[1].split(";", 1)[0]
            caps[name] = float(cap)
    return caps


def load(source, **kw):
    return serq.load(None, source=textwrap.dedent(source), **kw)


def run_checked(source, *, policies=None, **kw):
    """Run with the invariant checker on (the runtime hook)."""
    prog = load(source, **kw)
    kwargs = {"check_invariants": True}
    if policies is not None:
        kwargs["policies"] = policies
    return Simulation(prog, **kwargs).run()


def comparable(rep):
    d = to_dict(rep)
    d.pop("events", None)
    d.pop("serq_version", None)
    return d


def assert_outside_invariants(rep, caps):
    """What the invariants imply for the report (Part 03 §1, §11)."""
    for row in rep.pools:
        cap = caps[row.name]
        # time averages of quantities bounded by the cap
        assert row.mean_used >= -CAPS_TOL and row.mean_cached >= -CAPS_TOL, row
        assert row.mean_used + row.mean_cached <= cap + 1e-6, \
            f"pool {row.label}: mean_used {row.mean_used} + mean_cached {row.mean_cached} > cap {cap}"
        assert row.mean_holders >= 0 and row.mean_queue >= 0
        # integral amounts: every evicted entry lost at least one unit
        assert row.evicted_units >= row.evicted_entries
        assert row.preemptions >= row.stuck >= 0
        assert row.spills == 0  # no spill clause in these programs
        if not (isinstance(row.mean_wait, float) and math.isnan(row.mean_wait)):
            assert row.mean_wait >= 0
    for name, pool_name in (("u_kv", "kv"), ("u_pc", "pc")):
        s = rep.observes.get(name)
        if s is not None:
            assert all(-CAPS_TOL <= v <= caps[pool_name] + CAPS_TOL for v in s.values), \
                f"{name}: {max(s.values, default=None)} > cap {caps[pool_name]}"
    for name, pool_name in (("f_kv", "kv"), ("f_pc", "pc")):
        s = rep.observes.get(name)
        if s is not None:
            assert all(-CAPS_TOL <= v <= caps[pool_name] + CAPS_TOL for v in s.values), name
    for name, pool_name in (("c_kv", "kv"), ("c_pc", "pc"), ("own", "kv")):
        s = rep.observes.get(name)
        if s is not None:
            assert all(0 <= v <= caps[pool_name] + CAPS_TOL for v in s.values), name


SEEDS = list(range(16))


@pytest.mark.parametrize("seed", SEEDS)
def test_p03_invariants_random_program(seed):
    source = random_program(seed)
    caps = pool_caps(source)
    rep = run_checked(source, horizon=60, seed=seed + 1)
    assert rep.arrivals > 0
    assert_outside_invariants(rep, caps)
    # the checker only observes: the same run without it gives the same report
    plain = serq.run(load(source, horizon=60, seed=seed + 1))
    assert comparable(rep) == comparable(plain)


@pytest.mark.parametrize("seed", SEEDS)
def test_p03_invariants_random_program_warmup_and_013_streams(seed):
    # the same programs with a warm-up and the 0.1.3 stream derivation (other draws, other
    # paths through the pool code)
    source = random_program(seed)
    caps = pool_caps(source)
    prog = load(source, horizon=40, warmup=7.5, seed=seed + 101)
    rep = Simulation(prog, check_invariants=True, scheme="0.1.3").run()
    assert_outside_invariants(rep, caps)


FIXED = """
pool kv { cap 36; block 4; evict lru; preempt lifo; }
pool pc { cap 20; block 2; evict by (waiting, -size, age); preempt none; }
pool slots { cap 8; queue by (-waited, serial); reserve held; }
stage llm : ps(2);
stage svc : fifo(2);
stage pause : delay;
workload {
  arrive poisson(1.2);
  init { set n = 2 + floor(~uniform(0, 12)); set m = 1 + floor(~uniform(0, 8)); }
  session { request; run pause (~exp(1)); request; run pause (~exp(1)); request; }
}
server {
  hold slots (1) reserve (2), kv (n + 4) reuse (n) {
    observe hit = cached; observe u_kv = used(kv);
    load kv (n - cached);
    run llm (0.1 + (n + 4 - cached) / 16);
    grow slots (1);
    grow kv (n / 2); load kv (2);
    observe u_kv = used(kv);
    hold pc (m) { run svc (0.2); grow pc (2); observe u_pc = used(pc); run svc (0.1); } cache (m + 1);
    run llm (0.2);
  } cache (n + 6);
  hold pc (m) { run svc (0.3); release pc; run svc (0.1); } cache (m) lease pc (0.5);
  observe c_kv = cachedin(kv); observe c_pc = cachedin(pc);
  branch (serial - 4 * floor(serial / 4) == 0) { drop kv; }
  set n = n + 3;
  observe f_kv = free(kv); observe f_pc = free(pc);
}
"""


@pytest.mark.parametrize("seed", [1, 2, 3, 7, 42, 2024])
def test_p03_invariants_fixed_program(seed):
    caps = pool_caps(FIXED)
    rep = run_checked(FIXED, horizon=80, seed=seed)
    assert_outside_invariants(rep, caps)
    kv = rep.pool("kv")
    assert kv.admissions > 0


@pytest.mark.parametrize("name, source, kw", [
    ("p5_lru", ex.P5.replace("EVICT", "evict lru;"), {"horizon": 30}),
    ("p6", ex.P6, {"horizon": 40}),
    ("p7", ex.P7.replace("HOSTCAP", "100"), {"horizon": 30}),
    ("p7_small_tier", ex.P7.replace("HOSTCAP", "4"), {"horizon": 30}),
    ("p8_lifo", ex.P8, {"horizon": 20}),
    ("p8_none", ex.P8_NONE, {"horizon": 30}),
    ("p9", ex.P9, {"horizon": 20}),
    ("p11", ex.P11.replace("HELD", "reserve held;"), {"horizon": 20}),
    ("p12", ex.P12, {"horizon": 10}),
    ("stuck", p06.STUCK, {"horizon": 5}),
], ids=lambda x: x if isinstance(x, str) and len(x) < 20 else "")
def test_p03_invariants_hold_on_examples(name, source, kw):
    # Part 03 §12's examples never break the invariants either (the small spill tier
    # included: §9 makes room in the tier first)
    rep = run_checked(source, **kw)
    plain = serq.run(load(source, **kw))
    assert comparable(rep) == comparable(plain)


# ---------------------------------------------------------------- the policy seam

P5_LRU = ex.P5.replace("EVICT", "evict lru;")


def _assert_policy_error(err, cls):
    msg = str(err.value)
    assert "evict_victim" in msg, f"the message should name the method: {msg!r}"
    assert cls.__name__ in msg, f"the message should name the policy {cls.__name__}: {msg!r}"


def test_p03_policy_evict_victim_returns_foreign_object():
    class HandsBackJunk(Pool):
        def evict_victim(self, entries):
            return object()

    prog = load(P5_LRU, horizon=30)
    with pytest.raises(SimulationError) as err:
        serq.run(prog, policies={"kv": HandsBackJunk})
    _assert_policy_error(err, HandsBackJunk)


def test_p03_policy_evict_victim_returns_none():
    # None while the pool still needs room (P-5: at t = 4 D needs 8 units evicted)
    class ReturnsNothing(Pool):
        def evict_victim(self, entries):
            return None

    prog = load(P5_LRU, horizon=30)
    with pytest.raises(SimulationError) as err:
        serq.run(prog, policies={"kv": ReturnsNothing})
    _assert_policy_error(err, ReturnsNothing)


def test_p03_policy_evict_victim_returns_a_copy():
    # looks like an entry, but is not one the pool caches: evicting it would free units that
    # are not cached (or that a holder holds)
    class ReturnsCopy(Pool):
        def evict_victim(self, entries):
            return copy.copy(super().evict_victim(entries))

    prog = load(P5_LRU, horizon=30)
    with pytest.raises(SimulationError) as err:
        serq.run(prog, policies={"kv": ReturnsCopy})
    _assert_policy_error(err, ReturnsCopy)


def test_p03_policy_evict_victim_returns_stale_entry():
    # keeps returning the first entry it was shown, after eviction emptied it (P-5: A's
    # 6 units go block by block, then the policy hands A back once more)
    class Sticky(Pool):
        first = None

        def evict_victim(self, entries):
            if Sticky.first is None:
                Sticky.first = super().evict_victim(entries)
            return Sticky.first

    prog = load(P5_LRU, horizon=30)
    with pytest.raises(SimulationError) as err:
        serq.run(prog, policies={"kv": Sticky})
    _assert_policy_error(err, Sticky)


def test_p03_policy_error_also_with_invariant_checker():
    class HandsBackJunk(Pool):
        def evict_victim(self, entries):
            return object()

    with pytest.raises(SimulationError) as err:
        run_checked(P5_LRU, horizon=30, policies={"kv": HandsBackJunk})
    _assert_policy_error(err, HandsBackJunk)


def test_p03_policy_delegating_subclass_changes_nothing():
    class Same(Pool):
        calls = 0

        def evict_victim(self, entries):
            Same.calls += 1
            return super().evict_victim(entries)

    prog = load(P5_LRU, horizon=30)
    rep = serq.run(prog, policies={"kv": Same})
    assert Same.calls >= 4  # P-5: 8 units evicted in 2-unit blocks
    assert comparable(rep) == comparable(serq.run(load(P5_LRU, horizon=30)))
    # and the spec's P-5 numbers: found A 0, B 4, C 6 (Part 03 §12)
    assert ex.obs(rep, "found") == [(0, 11, 0), (1, 11, 4), (2, 11, 6)]


def test_p03_policy_newest_first_matches_evict_by_minus_last():
    # a policy choosing the most recently released entry (largest `last`, Part 03 §1)
    # reproduces P-5's `evict by (-last)` numbers: A 6, B 4, C 0 (Part 03 §12 P-5)
    class NewestFirst(Pool):
        def evict_victim(self, entries):
            return max(entries, key=lambda e: e.last)

    prog = load(P5_LRU, horizon=30)
    rep = Simulation(prog, policies={"kv": NewestFirst}, check_invariants=True).run()
    assert ex.obs(rep, "found") == [(0, 11, 6), (1, 11, 4), (2, 11, 0)]
    row = rep.pool("kv")
    assert row.evicted_entries == 1 and row.evicted_units == 8
    assert math.isclose(row.mean_cached, 43 / 3, rel_tol=1e-9)


def test_p03_invariant_checker_catches_an_overfull_pool():
    # The checker is live: a (deliberately broken) subclass that admits whatever is asked
    # drives `used` above the cap, and the checked run stops with a SimulationError.
    # `has_room` is the runtime's fit-rule policy; skip if this runtime has no such seam.
    if not hasattr(Pool, "has_room"):
        pytest.skip("serq.runtime.resources.pools.Pool has no has_room policy")

    class Lax(Pool):
        def has_room(self, *args, **kwargs):
            return True

    with pytest.raises(SimulationError) as err:
        run_checked(ex.P1.replace("QUEUE", ""), horizon=20, policies={"mem": Lax})
    assert "mem" in str(err.value)
