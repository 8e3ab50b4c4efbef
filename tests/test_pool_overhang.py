"""A preempted hold that never advanced may put back more cached units than
it frees (spec Part 03 §4.2 step 4, §7.3 step 5), and the invariant checker.

A hold's position starts at the prefix it consumed (`own`, the session's
cache entry), which the hold's units need not cover. When such a hold is
preempted before a `growing` run or a `load` advanced it, its computed
amount is that position, so the release frees the allocation `a` and caches
`rd(min(ℓ, own))`, which may exceed `a`. Releasing never evicts (§4.5, §8),
so `used + cached` can stay above the cap until the pool next allocates.
The reference does exactly this (pyserq 0.1.3, 0.1.4 and 0.1.5 give the
same pool row for `data/preempted_prefix_overhang.sq`), so Part 03 §1's
`used + cached ≤ cap` does not hold between events there; the checker
(`Simulation(…, check_invariants=True)`) allows the excess such releases
put back, and nothing more.

The program (horizon 20, no draws): session 0 caches 3 units by t = 1, then
holds `kv (1)` consuming them (position 3); session 1 holds 8 from 1.5 to
11; at 2 session 0 grows by 5 (`9 + 5 > 10`), `preempt by (serial)` picks
itself, and its release frees 1 unit and caches 3: used 8 + cached 3 = 11
until 11, when session 1 leaves and session 0 comes back (`kv (3)` now,
consuming its 3 cached units again) and ends at 13 with 3 cached.
By hand: mean_used = (3·1 + 1·0.5 + 9·0.5 + 8·9 + 3·2) / 20 = 4.3,
mean_cached = 3·(9 + 7) / 20 = 2.4 — what all three reference versions
report (run while this file was written).

Found by tests/engine_programs.py seed 1274 (two step engines sharing one
KV pool, `preempt lifo`): a resident re-admitted with a cached prefix larger
than its `kv (n)` preempts itself at its first growth.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import serq
from serq.core.errors import SimulationError
from serq.report.json_report import to_dict
from serq.runtime.resources.pools import Pool
from serq.runtime.sim.simulation import Simulation

from engine_programs import program
from oracle import UNCOMPARED, assert_reports_match, requires, run_reference

OVERHANG = Path(__file__).parent / "data" / "preempted_prefix_overhang.sq"

# The same program in the `fn main` layout of pyserq 0.1.5 (`if`, `cost(…)` amounts).
OVERHANG_015 = """
fn main() {
  pool kv { cap 10; preempt by (serial); }
  stage svc : delay;
  workload { arrive batch(2); }
  server {
    if (serial == 0) {
      hold kv (cost(kv, 3)) { run svc (cost(svc, 1)); } cache (cost(kv, 3));
      hold kv (cost(kv, computed > 0 ? 3 : 1)) {
        observe adm = now; observe hit = cached;
        run svc (cost(svc, 1));
        grow kv (cost(kv, computed > 0 ? 0 : 5));
        run svc (cost(svc, 1));
      } cache (cost(kv, 3));
    } else {
      run svc (cost(svc, 1.5));
      hold kv (cost(kv, 8)) { run svc (cost(svc, 9.5)); }
    }
    observe done = now;
  }
}
"""


def _comparable(rep):
    d = to_dict(rep)
    d.pop("events", None)
    d.pop("serq_version", None)
    return d


def test_preempted_prefix_overhang_under_the_checker():
    prog = serq.load(str(OVERHANG))
    checked = Simulation(prog, check_invariants=True).run()
    # the checker only observes
    assert _comparable(checked) == _comparable(serq.run(serq.load(str(OVERHANG))))
    row = checked.pool("kv")
    # pyserq 0.1.3 / 0.1.4 / 0.1.5, horizon 20 (deterministic), and the sums in the
    # module text: used 8 + cached 3 over [2, 11)
    assert math.isclose(row.mean_used, 4.3, rel_tol=1e-12)
    assert math.isclose(row.mean_cached, 2.4, rel_tol=1e-12)
    assert (row.admissions, row.preemptions, row.stuck) == (4, 1, 0)
    assert (row.evicted_entries, row.evicted_units) == (0, 0)  # releasing never evicts
    assert math.isclose(row.mean_wait, 2.25, rel_tol=1e-12)  # waits 0, 0, 0, 9
    obs = {name: list(s.values) for name, s in checked.observes.items()}
    # the re-admitted hold consumes the 3 units its preemption put back (not 1)
    assert obs["hit"] == [3, 3] and obs["adm"] == [1, 11] and obs["done"] == [11, 13]


@requires("0.1.3")
def test_preempted_prefix_overhang_against_013():
    ref = run_reference(None, "0.1.3", path=OVERHANG)
    mine = to_dict(serq.run(serq.load(str(OVERHANG))))
    assert_reports_match(mine, ref, ignore=UNCOMPARED)


@requires("0.1.5")
def test_preempted_prefix_overhang_against_015():
    ref = run_reference(OVERHANG_015, "0.1.5", horizon=20)
    mine = to_dict(serq.run(serq.load(source=OVERHANG_015, horizon=20)))
    assert_reports_match(mine, ref, ignore=UNCOMPARED)


def test_engine_program_1274_under_the_checker():
    # the random engine program that showed it (two engines, one `kv` pool, preempt lifo)
    source = program(1274)
    checked = Simulation(serq.load(source=source), check_invariants=True).run()
    assert _comparable(checked) == _comparable(serq.run(serq.load(source=source)))
    assert checked.pool("kv").preemptions > 0


# A third session allocates after the overhang is gone: at 14 it needs 9 units next to
# session 0's 3 cached ones, so 2 must be evicted (used 9 + cached 3 > cap 10). pyserq
# 0.1.3 (horizon 20): mean_used 4.75, mean_cached 1.5, evicted 1 entry / 3 units.
LATE_ALLOCATION = """
pool kv { cap 10; preempt by (serial); }
stage svc : delay;
workload { arrive batch(3); session { request; } }
server {
  branch (serial == 0) {
    hold kv (3) { run svc (1); } cache (3);
    hold kv (computed > 0 ? 3 : 1) { run svc (1); grow kv (computed > 0 ? 0 : 5); run svc (1); } cache (3);
  } else {
    branch (serial == 1) { run svc (1.5); hold kv (8) { run svc (9.5); } }
    else { run svc (14); hold kv (9) { run svc (1); } }
  }
}
run { horizon 20; }
"""


class NoEviction(Pool):
    """A broken pool: never evicts (so nothing makes room for an allocation)."""

    def make_room(self, units):
        return None


def test_late_allocation_program_evicts_what_it_must():
    rep = Simulation(serq.load(source=LATE_ALLOCATION), check_invariants=True).run()
    row = rep.pool("kv")
    # session 0's 3 cached units lose 2 at 14 (no block: the whole entry goes)
    assert (row.evicted_entries, row.evicted_units) == (1, 3)


def test_checker_still_catches_an_overflow_after_the_overhang():
    # The excess a preemption put back (2 units above what it freed) is gone once the
    # strict invariant holds again (t = 11); an allocation that then skips eviction
    # (9 + 3 > 10 at t = 14, 2 units over) must still stop the checked run.
    with pytest.raises(SimulationError) as err:
        Simulation(serq.load(source=LATE_ALLOCATION), check_invariants=True,
                   policies={"kv": NoEviction}).run()
    msg = str(err.value)
    assert "invariant broken at pool `kv`" in msg and "t=14" in msg, msg


def test_checker_catches_an_overflow_without_preemption():
    # Part 03 §12 P-5 (no preemption): D's 10 units at 4 need 8 evicted
    import test_p03_examples as ex

    source = ex.P5.replace("EVICT", "evict lru;")
    with pytest.raises(SimulationError) as err:
        Simulation(serq.load(source=source, horizon=30), check_invariants=True,
                   policies={"kv": NoEviction}).run()
    assert "invariant broken at pool `kv`" in str(err.value)
