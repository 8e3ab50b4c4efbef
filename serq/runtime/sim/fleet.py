"""Indexes that keep the work of an event independent of the fleet size.

After every event the loop asks which step engines are idle with work (an
idle engine with residents or a waiting hold attempts at the end of the
instant, Part 04 §7) and whether a pool pass could act (Part 03 §4.3); a
burst (`burst.py`) and the leapfrog (`leapfrog.py`) ask the same before
each iteration they run inline. Asking every engine and every pool makes
an event cost O(engines + pools): with hundreds of replicas that scan is
most of the run. `FleetIndex` keeps the answers on change instead:

* `idle`: the engines that *may* be idle with work, a superset kept lazily.
  An engine enters it whenever it may become idle with work -- an iteration
  ends (`_finish`, a relay, the leapfrog), an attempt starts nothing, a run
  joins its residents, a hold waits in a pool it admits from -- and leaves
  it when a reader finds it is not (`idle_engines`, `idle_other`). Every
  engine that is idle with work is in it, so the readers' answers are the
  full scans' answers; the loop marks the ones it finds in the engines'
  order (`position`), as the scan did.
* `passable`: exactly the pools a pool pass acts on (a stalled growth, or a
  waiting hold in a pool not admitted through an engine), and `via`:
  exactly the pools admitted through an engine that have a waiting hold.
  Every change of a queue or of the growers calls `pool_changed`. So
  `HoldManager.waiting()` is `bool(via or passable)` and the pass visits
  the pools of `passable` in declaration order, as the full pass would.

The indexes live with the event loop and the fast paths, not in the
policy-facing classes: an override of a policy method changes nothing here.
"""
from __future__ import annotations

from typing import Any, Iterable

from ...core.errors import SimulationError


class FleetIndex:
    """The engines that may be idle with work and the pools a pass may act
    on, kept on change (see the module text)."""

    __slots__ = ("idle", "passable", "via", "engine_pos", "pool_pos", "admitter")

    def __init__(self) -> None:
        self.idle: set = set()
        self.passable: set = set()
        self.via: set = set()
        self.engine_pos: dict = {}  # engine -> its place among the engines
        self.pool_pos: dict = {}  # pool -> its place among the pools
        self.admitter: dict = {}  # pool with `admit via` -> the engine admitting from it

    def bind(self, engines: Iterable[Any], pools: Iterable[Any]) -> None:
        """The program's engines and pools, in declaration order (their members
        in index order), and the engine each `admit via` pool is served by."""
        self.engine_pos = {st: k for k, st in enumerate(engines)}
        self.pool_pos = {p: k for k, p in enumerate(pools)}
        for st in self.engine_pos:
            for pool in st.served_pools:
                self.admitter[pool] = st

    # -- engines ---------------------------------------------------------------------------
    def idle_engines(self) -> list:
        """The engines idle with work, in the engines' order (the others leave
        the index)."""
        idle = self.idle
        found = []
        for st in list(idle):
            if st.last_void and st.running is None and (st.residents or st.queue_waiting()):
                found.append(st)
            else:
                idle.discard(st)
        if len(found) > 1:
            found.sort(key=self.engine_pos.__getitem__)
        return found

    def idle_other(self, me: Any) -> bool:
        """Whether an engine other than `me` (None: any) is idle with work."""
        idle = self.idle
        if not idle or (len(idle) == 1 and me in idle):
            return False
        for st in list(idle):
            if st is me:
                continue
            if st.last_void and st.running is None and (st.residents or st.queue_waiting()):
                return True
            idle.discard(st)
        return False

    # -- pools -----------------------------------------------------------------------------
    def pool_changed(self, pool: Any) -> None:
        """`pool`'s queue or growers changed: its place in `passable` and `via`."""
        if pool.growers or (pool.queue and pool.spec.admit_via is None):
            self.passable.add(pool)
        else:
            self.passable.discard(pool)
        if pool.spec.admit_via is not None:
            if pool.queue:
                self.via.add(pool)
                st = self.admitter.get(pool)
                if st is not None:
                    self.idle.add(st)
            else:
                self.via.discard(pool)

    def pass_pools(self) -> list:
        """The pools a pool pass acts on, in declaration order."""
        pools = self.passable
        if len(pools) < 2:
            return list(pools)
        return sorted(pools, key=self.pool_pos.__getitem__)

    def check(self, engines: Iterable[Any], pools: Iterable[Any], now: float) -> None:
        """The invariant checker's test of the indexes against full scans."""
        for st in engines:
            if st.last_void and st.running is None and (st.residents or st.queue_waiting()) \
                    and st not in self.idle:
                raise SimulationError(f"invariant broken: engine `{st.label}` is idle with "
                                      "work but not in the fleet index", now)
        for p in pools:
            acts = bool(p.growers or (p.queue and p.spec.admit_via is None))
            waits = bool(p.queue and p.spec.admit_via is not None)
            if acts != (p in self.passable) or waits != (p in self.via):
                raise SimulationError(f"invariant broken: pool `{p.label}`'s waiting holds "
                                      "and growers are not the fleet index's", now)
