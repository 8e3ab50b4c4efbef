"""Holds: a session's allocations in pools (spec Part 03 §4–§7, §9).

A `hold` statement creates a `HoldFrame` that waits in its first pool's
queue; the pool pass (`HoldManager.pool_pass`, run at every settle and
right after every release) admits it. Its body then runs as ordinary
session code; `grow`, `release`, `load` and `drop` act on the innermost
frame holding a pool. A failed growth preempts by the pool's policy: the
victim's waits are cancelled, its frames unwound, its hold re-queued, and
`Preempted` is thrown into its generator, where the generated code of the
hold catches it and waits for the re-admission (the body re-executes).
"""
from __future__ import annotations

import copy
import math
from typing import Any, Callable, Optional

from simpy.events import Event

from ...core.errors import SPIN_LIMIT, SimulationError, amount_error, shortest, unsettled_error
from ..kernel.calendar import trigger
from ..kernel.instant import READY, fire, timer
from ..kernel.process import generator_of, generator_position
from ...core.tolerance import TOL
from .pools import CacheEntry, Pool, resident_job

Fn = Callable[..., Any]


class Preempted(Exception):
    """Thrown into a session whose hold `frame` was preempted."""

    def __init__(self, frame: "HoldFrame"):
        super().__init__("preempted")
        self.frame = frame


class HoldSpec:
    """A compiled `hold` statement: per pool (units, reserve or None, and
    whether each reads no deployment state; for units that do, next to a
    reserve that does not, the bounds of their values: `compile.bounds`),
    reuse, cache and lease-duration functions of the session."""

    __slots__ = ("units", "reserve", "static", "bounds", "reuse", "cache", "lease", "text")

    def __init__(self, units: list[Fn], reserve: list[Optional[Fn]], static: list[bool],
                 reuse: Optional[Fn], cache: Optional[Fn], lease: Optional[Fn], text: str,
                 bounds: Optional[list[Optional[Fn]]] = None):
        self.units = units
        self.reserve = reserve
        self.static = static
        self.bounds = bounds if bounds is not None else [None] * len(units)
        self.reuse = reuse
        self.cache = cache
        self.lease = lease
        self.text = text


class WaitEvent(Event):
    """An admission or a stalled growth the session waits for; `cancel()`
    takes it out of its pool when the session is preempted."""

    def __init__(self, env: Any, owner: Any):
        super().__init__(env)
        self.owner = owner

    def cancel(self) -> None:
        self.owner.cancel()


class Allotment:
    """A hold's allocation `alloc` on one of its pools and its position `pos`
    there (the units computed, §4.9).

    One small object per pool of a frame (`HoldFrame.cells`), which a run
    that grows the pool keeps (`StepJob.cell`): a step engine's iteration
    reads each resident's position and allocation through it, two fields
    side by side, instead of through the frame and two lists (in a large
    fleet each object read is likely a cache miss: docs/guide/performance.md).
    `marked`: the frame's `grown` was set since its admission (it stays so
    until the frame is admitted again), so an iteration that advances the
    position need not reach the frame to set it again."""

    __slots__ = ("pos", "alloc", "marked")

    def __init__(self) -> None:
        self.pos = 0.0
        self.alloc = 0.0
        self.marked = False


class HoldFrame:
    """One execution of a hold: waiting, then admitted. `cells[k]` is its
    allotment on `pools[k]`; `req`, `need` and `units` are per pool too."""

    # (slots: a frame's fields sit in the object itself, no separate values
    # array; the fields every iteration touches first)
    __slots__ = ("cells", "grown", "session", "pools", "req", "need", "units", "spec",
                 "lease_pool", "admitted", "rejected", "front", "enq_time", "enq_seq", "event",
                 "header")

    def __init__(self, spec: HoldSpec, session: Any, pools: list[Pool],
                 lease_pool: Optional[Pool]):
        n = len(pools)
        self.spec = spec
        self.session = session
        self.pools = pools
        # the pools its header lists: `release` takes one out of `pools`
        # (a new list), and a preempted hold is queued again with them all
        self.header = pools
        self.lease_pool = lease_pool
        self.cells = [Allotment() for _ in range(n)]
        self.req = [0.0] * n
        self.need = [0.0] * n
        self.units = [0.0] * n
        self.grown = False
        self.admitted = False
        self.rejected = False
        self.front = False
        self.enq_time = 0.0
        self.enq_seq = 0
        self.event: Optional[WaitEvent] = None

    def cancel(self) -> None:
        """Leave the queue (the session is preempted while waiting)."""
        q = self.pools[0]
        if self in q.queue:
            q.touch()
            q.queue.remove(self)
            q.sim.fleet.pool_changed(q)
        self.session.pending = None


class Growth:
    """A stalled growth of `amount` on `pool` by `frame` (`preempt none`), or
    by `lease` (then `frame` is None: `grow` of a lease, below).

    A `grow` statement waits on `event`; a step-engine resident (`job`) stays
    a resident that gets no tokens until the growth is granted."""

    __slots__ = ("frame", "session", "pool", "amount", "event", "job", "lease")

    def __init__(self, frame: Optional[HoldFrame], pool: Pool, amount: float,
                 event: Optional[WaitEvent], job: Any = None, lease: Optional["Lease"] = None):
        self.frame = frame
        self.lease = lease
        self.session = frame.session if frame is not None else lease.owner  # type: ignore
        self.pool = pool
        self.amount = amount
        self.event = event
        self.job = job

    def cancel(self) -> None:
        try:
            self.pool.growers.remove(self)
        except ValueError:
            return
        self.pool.sim.fleet.pool_changed(self.pool)


class Lease:
    """An allocation that outlived its scope (`lease P (t)`, §6)."""

    __slots__ = ("session", "owner", "expires", "pool", "alloc", "computed", "cache", "live")

    def __init__(self, session: Any, pool: Pool, alloc: float, computed: float,
                 cache: Optional[Fn], expires: bool):
        self.session = session   # whose attributes `cache` reads
        self.owner = session     # whose lease it is (a leg's passes to its session)
        self.expires = expires
        self.pool = pool
        self.alloc = alloc
        self.computed = computed
        self.cache = cache
        self.live = True


def snapshot(s: Any) -> Any:
    """The session's attributes at a release (read by eviction keys later)."""
    return copy.copy(s)


class HoldManager:
    """The session-side operations on pools of one simulation."""

    def __init__(self, sim: Any):
        self.sim = sim
        self.env = sim.env
        self.fleet = sim.fleet  # the pools with waiting holds or growers (`fleet.py`)
        self.rseq = 0
        self.enq_seq = 0
        self.adm_seq = 0
        self.dead = 0
        self.preemptions = 0  # every pool's, in all (what an admission caused: `StepStage`)
        self.spin_at = -1.0  # the instant of `spins`: preemptions per session (`preempt`)
        self.spins: dict[Any, int] = {}

    # -- helpers ----------------------------------------------------------------
    def _amount(self, value: float, text: str) -> float:
        if not value >= 0.0:
            raise amount_error(value, text, self.env.now)
        return value

    def _frame_of(self, s: Any, pool: Pool, what: str) -> tuple[HoldFrame, int]:
        found = self._innermost(s, pool)
        if found is None:
            raise SimulationError(f"`{what} {pool.label}` outside a hold of `{pool.label}`",
                                  self.env.now)
        return found

    @staticmethod
    def _innermost(s: Any, pool: Pool) -> Optional[tuple[HoldFrame, int]]:
        """The session's innermost hold that holds `pool` (one that released
        it no longer does), and the pool's place in it; None if none does."""
        for frame in reversed(s.holds):
            for k, p in enumerate(frame.pools):
                if p is pool:
                    return frame, k
        return None

    def _next_rseq(self) -> int:
        self.rseq += 1
        return self.rseq

    def _evaluate(self, frame: HoldFrame) -> None:
        """Units and requirements of every pool, evaluated now (Admit)."""
        spec = frame.spec
        s = frame.session
        units = spec.units
        reserve = spec.reserve
        k = 0
        for p in frame.pools:
            u = units[k](s)
            if not u >= 0.0:
                self._amount(u, spec.text)  # (raises)
            r = reserve[k]
            need = u if r is None else max(u, self._amount(r(s), spec.text))
            frame.units[k] = u
            frame.need[k] = p.ru(need)
            k += 1

    # -- the hold statement --------------------------------------------------------
    def begin(self, s: Any, spec: HoldSpec, pools: list[Pool],
              lease_pool: Optional[Pool]) -> Optional[HoldFrame]:
        """Join check, then enqueue; None when the session was rejected."""
        frame = HoldFrame(spec, s, pools, lease_pool)
        if self._rejects(frame):
            frame.rejected = True
            self.sim.refuse(s)
            return None
        self._enqueue(frame, front=False)
        return frame

    def _rejects(self, frame: HoldFrame) -> bool:
        """The join check: an amount that reads no deployment state and
        needs more than the cap can never fit (Part 03 §4.2 step 1), with
        the tolerance of every comparison against a capacity: more than
        cap + 1e-9 (pyserq 0.1.3 refuses anything above the cap here: a
        departure, docs/departures.md)."""
        self._evaluate(frame)
        spec = frame.spec
        s = frame.session
        for k, p in enumerate(frame.pools):
            units_static, reserve_static = spec.static[k]
            if (units_static and p.ru(frame.units[k]) > p.cap + TOL) or (
                    reserve_static and p.ru(spec.reserve[k](s)) > p.cap + TOL):
                p.rejected += 1
                return True
        return False

    def _enqueue(self, frame: HoldFrame, front: bool) -> None:
        q = frame.pools[0]
        q.touch()
        frame.admitted = False
        frame.front = front
        frame.enq_time = self.env.now
        self.enq_seq += 1
        frame.enq_seq = self.enq_seq
        frame.event = WaitEvent(self.env, frame)
        if front:
            q.queue.insert(0, frame)
        else:
            q.queue.append(frame)
        frame.session.pending = frame
        self.fleet.pool_changed(q)

    def try_admit(self, pool: Pool) -> None:
        """Admit queue heads while they fit (§4.3–4.4)."""
        while pool.queue and self.admit_from(pool, inline=False):
            pass

    def admit_from(self, pool: Pool, inline: bool = True) -> bool:
        """Try the pool's candidate: admit it if it fits (the fit rule), else
        stop (head-of-line blocking). `inline`: a step stage admits, and the
        session runs at once until it blocks (Part 04 §7 step 5)."""
        frame = pool.select_candidate()
        self._evaluate(frame)
        need = frame.need
        k = 0
        for p in frame.pools:  # every pool has room (the first that has not stops)
            if not p.has_room(need[k]):
                return False
            k += 1
        pool.touch()
        pool.queue.remove(frame)
        self.fleet.pool_changed(pool)
        self._admit(frame, inline=inline)
        return True

    def _admit(self, frame: HoldFrame, inline: bool) -> None:
        s = frame.session
        spec = frame.spec
        now = self.env.now
        reuse = None if spec.reuse is None else self._amount(spec.reuse(s), spec.text)
        best = 0.0
        for k, p in enumerate(frame.pools):
            own = 0.0
            if spec.cache is not None:
                e = p.remove_entry(s.sid)
                if e is not None:
                    own = e.size
                    if reuse is not None and own > p.rd(reuse):
                        limit = p.rd(reuse)
                        self.dead += 1
                        p.put_entry(CacheEntry(("dead", self.dead), own - limit, e.last,
                                               e.rseq, None, snapshot(s)))
                        own = limit
            a = p.ru(frame.units[k])
            p.make_room(a)
            p.touch()
            p.used += a
            p.add_holder(s)
            p.frames.append(frame)
            p.admissions += 1
            cell = frame.cells[k]
            cell.alloc = a
            cell.pos = own
            cell.marked = False
            frame.req[k] = frame.need[k]
            if own > best:
                best = own
        s.cached = best
        first = frame.pools[0]
        if now >= first.warmup:
            first.wait_sum += now - frame.enq_time
            first.wait_count += 1
        self.adm_seq += 1
        s.adm_seq = self.adm_seq
        frame.admitted = True
        frame.front = False
        frame.grown = False
        s.pending = None
        s.holds.append(frame)
        ev = frame.event
        frame.event = None  # (the event refers to the frame: no cycle left for the collector)
        if inline:
            fire(ev)
        else:
            trigger(self.env, ev, READY)

    def end(self, s: Any, frame: HoldFrame) -> None:
        """Scope end: release (or lease) every pool, then retry (§4.2 step 6)."""
        for p, cell in zip(frame.pools, frame.cells):
            computed = cell.pos if frame.grown else cell.alloc
            p.frames.remove(frame)
            p.freed += 1  # (its reservation is gone, even when a lease keeps its units)
            if p is frame.lease_pool:
                self._lease(s, frame, p, cell.alloc, computed)
            else:
                self._release_units(s, p, cell.alloc, computed, frame.spec.cache)
            s.preempt_pos.pop(p, None)
        s.holds.remove(frame)
        s.computed = 0.0
        self.pool_pass()

    def _release_units(self, s: Any, p: Pool, alloc: float, computed: float,
                       cache: Optional[Fn], holder: Any = None) -> float:
        """Give `alloc` units back and cache per the clause (`cache` reads
        `s`); the units cached. `holder`: whose holding ends, when not `s`
        (a lease a leg passed to its session)."""
        p.touch()
        p.used -= alloc
        p.freed += 1
        p.remove_holder(s if holder is None else holder)
        if cache is not None:
            keep = p.rd(min(max(cache(s), 0.0), computed))
            if keep > 0:
                # a leg's entry is its session's: eviction keys read the
                # session's attributes and whether it waits (pyserq 0.1.5,
                # drawing program 1145747)
                owner = s
                while owner.parent is not None:
                    owner = owner.parent
                snap = snapshot(owner) if p.spec.snapshots else None
                p.put_entry(CacheEntry(s.sid, keep, self.env.now, self._next_rseq(), owner, snap))
                return keep
        return 0.0

    # -- leases (§6) -------------------------------------------------------------------
    def _lease(self, s: Any, frame: HoldFrame, p: Pool, alloc: float, computed: float) -> None:
        t = frame.spec.lease(s)
        expires = t == t and t < math.inf
        lease = Lease(s, p, alloc, computed, frame.spec.cache, expires)
        s.leases.append(lease)
        p.leases.append(lease)
        if expires:
            timer(self.env, max(t, 0.0), lambda _ev: self._lease_expiry(lease))

    def _lease_expiry(self, lease: Lease) -> None:
        self.sim.events += 1
        if lease.live:
            self.end_lease(lease)
            self.pool_pass()

    def end_lease(self, lease: Lease) -> None:
        """A lease ends: its units go back, `cache` applies. A lease whose
        growth waits (`_grow_lease`) can only end by expiring: the run stops
        (pyserq 0.1.5 panics there)."""
        if any(g.lease is lease for g in lease.pool.growers):
            label = lease.pool.label
            raise SimulationError(
                f"the lease of `{label}` that session {lease.owner.serial:g}'s `grow {label}` "
                "waits to grow expired before the growth was granted (make the lease "
                "outlive the growth, or grow a hold)", self.env.now)
        lease.live = False
        lease.owner.leases.remove(lease)
        lease.pool.leases.remove(lease)
        self._release_units(lease.session, lease.pool, lease.alloc, lease.computed,
                            lease.cache, lease.owner)

    # -- statements on a hold (§5) -----------------------------------------------------
    def release(self, s: Any, pool: Pool) -> None:
        """`release P`: the innermost hold on P gives it back, else a lease ends."""
        found = self._innermost(s, pool)
        if found is not None:
            frame, k = found
            cell = frame.cells[k]
            computed = cell.pos if frame.grown else cell.alloc
            alloc = cell.alloc
            frame.pools = frame.pools[:k] + frame.pools[k + 1:]  # (`header` stays whole)
            for lst in (frame.cells, frame.req, frame.need, frame.units):
                del lst[k]
            pool.frames.remove(frame)
            self._release_units(s, pool, alloc, computed, frame.spec.cache)
            s.preempt_pos.pop(pool, None)
        else:
            for lease in s.leases:
                if lease.pool is pool:
                    self.end_lease(lease)
                    break
        self.pool_pass()

    def drop(self, s: Any, pool: Pool) -> None:
        """`drop P`: the session's own live entry leaves the cache."""
        pool.remove_entry(s.sid)

    def load(self, s: Any, pool: Pool, n: float, text: str) -> None:
        """`load P (n)`: the position advances by n within the allocation."""
        n = self._amount(n, text)
        frame, k = self._frame_of(s, pool, "load")
        cell = frame.cells[k]
        if cell.pos + n > cell.alloc + TOL:
            raise SimulationError(
                f"{text}: the hold has {shortest(cell.alloc)} allocated and "
                f"{shortest(cell.pos)} computed; a load must fit the allocation "
                "(grow first)", self.env.now)
        cell.pos += n
        frame.grown = True

    def grow(self, s: Any, pool: Pool, d: float, text: str) -> Optional[WaitEvent]:
        """`grow P (d)`: None when done, else the event of a stalled growth.
        Raises `Preempted` when the session preempts itself."""
        d = self._amount(d, text)
        found = self._innermost(s, pool)
        if found is None:
            return self._grow_lease(s, pool, d)
        frame, k = found
        return self._grow(frame, k, pool, d, running=s)

    @staticmethod
    def _allocation(frame: Optional[HoldFrame], k: int, lease: Optional[Lease]) -> float:
        """What a growth grows: `frame`'s `k`-th allocation, or `lease`'s."""
        return frame.cells[k].alloc if lease is None else lease.alloc  # type: ignore[union-attr]

    def _grow(self, frame: Optional[HoldFrame], k: int, pool: Pool, amount: float,
              running: Any, lease: Optional[Lease] = None) -> Optional[WaitEvent]:
        """Grow `frame`'s allocation on `pool` (its `k`-th), or `lease` (then
        `frame` is None), to cover `amount` more units (block-rounded): with
        room at once, else by preempting a holder's hold, else it waits (a
        `Growth`). None when done or nothing is needed."""
        a = self._allocation(frame, k, lease)
        need = pool.ru(a + amount) - a
        if need <= 0:
            return None
        while True:
            if pool.has_room(need, frame):
                self._grant(frame, k, lease, pool, need)
                return None
            victim = self._victim(pool)  # (a lease is never a candidate)
            if victim is None:
                ev = WaitEvent(self.env, None)
                g = Growth(frame, pool, amount, ev, lease=lease)
                ev.owner = g
                pool.growers.append(g)
                self.fleet.pool_changed(pool)
                return ev
            self.preempt(victim, pool, running)
            if victim.session is running:
                raise Preempted(victim)

    def _grow_lease(self, s: Any, pool: Pool, d: float) -> Optional[WaitEvent]:
        """`grow P (d)` in a hold that released `P` (no enclosing hold holds
        it now): the session's lease of `P` grows, as a hold's allocation
        does (pyserq 0.1.5, drawing program 1101344; 0.1.4 stops the run).
        Without a lease, the run stops."""
        lease = next((x for x in s.leases if x.pool is pool), None)
        if lease is None:
            raise SimulationError(
                f"`grow {pool.label}`: the session holds no `{pool.label}` and leases none "
                "(a hold that released the pool no longer holds it)", self.env.now)
        return self._grow(None, -1, pool, d, s, lease)

    def _grant(self, frame: Optional[HoldFrame], k: int, lease: Optional[Lease], pool: Pool,
               need: float) -> None:
        """A growth's `need` units: `frame`'s `k`-th allocation, or `lease`'s."""
        if lease is None:
            self._allocate(frame.cells[k], pool, need)  # type: ignore[union-attr]
        else:
            self._allocate_units(pool, need)
            lease.alloc += need

    def _allocate(self, cell: Allotment, pool: Pool, need: float) -> None:
        """`need` more units of `pool` for the allotment `cell`."""
        self._allocate_units(pool, need)
        cell.alloc += need

    @staticmethod
    def _allocate_units(pool: Pool, need: float) -> None:
        """`need` more units of `pool` in use (evicting cached ones first)."""
        pool.make_room(need)
        if pool.env.now - pool.t_last:  # (else eviction touched it just now)
            pool.touch()
        pool.used += need

    def _victim(self, pool: Pool) -> Optional[HoldFrame]:
        if pool.spec.preempt == "none":
            return None
        candidates = self._candidates(pool)
        if not candidates:
            return None
        return pool.preempt_victim(candidates)

    def _candidates(self, pool: Pool) -> list[HoldFrame]:
        """The holds a failed growth on `pool` may preempt, in the order
        its victim keys break ties by (Part 03 §7.3)."""
        # one candidate per holder (Part 03 §7.3): the session's innermost
        # hold on the pool, the one its runs and growths act on (§4.9), which
        # a preemption takes and whose position the key `position` reads
        # (pyserq 0.1.3, generator seed 59521; 0.1.5, drawing program 1069260)
        innermost: dict[Any, HoldFrame] = {}
        for f in pool.frames:
            innermost[f.session] = f
        if pool.memory_of:
            # engine residents, in the engine's admission order (Part 03 §7.3)
            candidates = [f for f in innermost.values()
                          if self._resident(f.session, pool.memory_of)]
            candidates.sort(key=lambda f: f.session.proc.target.adm)
        else:
            # the order the pool admitted its holders: a holder's first
            # listing (`Pool.listing`; pyserq 0.1.5, drawing program 1074607)
            rank: dict[Any, int] = {}
            for s in pool.listing:
                rank.setdefault(s, len(rank))
            candidates = sorted(innermost.values(), key=lambda f: rank.get(f.session, len(rank)))
        return candidates

    @staticmethod
    def _resident(s: Any, stages: list[Any]) -> bool:
        job = resident_job(s)
        return job is not None and job.stage in stages

    def engine_grow(self, job: Any, t: float, stage: Any) -> tuple[Any, Any]:
        """Grow a resident's hold to cover `t` more tokens (Part 04 §7 step 4).

        Returns (victims preempted, K) with K the position before the chunk,
        ("stall", victims preempted) when the resident must wait (its pool is
        another engine's memory: those residents were the candidates), or
        ("self", 0) when its owner was preempted."""
        s = job.session
        frame = self._job_frame(job)
        pool = job.growing
        cell = job.cell
        a = cell.alloc
        pos = cell.pos
        d = pos + t - a
        if d <= TOL:
            return 0, pos
        need = pool.ru(a + d) - a
        victims = 0
        while True:
            if pool.has_room(need, frame):
                self._allocate(cell, pool, need)
                return victims, pos
            victim = self._victim(pool)
            if victim is None:
                g = Growth(frame, pool, d, None, job)
                pool.growers.append(g)
                self.fleet.pool_changed(pool)
                job.stall = g
                return "stall", victims
            self.preempt(victim, pool, None)
            if victim.session is s:
                return "self", 0.0
            victims += 1

    def _job_frame(self, job: Any) -> HoldFrame:
        """The hold a growing run grows (fixed while the run is resident),
        found again when the pool's index in it (`job.fk`) no longer names
        the pool; `job.cell` is its allotment there."""
        frame = job.frame
        k = job.fk if frame is not None else -1
        if frame is None or k >= len(frame.pools) or frame.pools[k] is not job.growing:
            frame, k = self._frame_of(job.session, job.growing, "growing")
            job.frame, job.fk, job.cell = frame, k, frame.cells[k]
        return frame

    def advance(self, job: Any, t: float) -> None:
        """Commit `t` tokens: the growing hold's position advances."""
        frame = self._job_frame(job)
        job.cell.pos += t
        frame.grown = True

    def retry_growers(self, pool: Pool) -> None:
        """Retry stalled growths from the front; the first misfit stops (§7.2)."""
        while pool.growers:
            g = pool.growers[0]
            lease = g.lease
            k = g.frame.pools.index(pool) if lease is None else -1
            a = self._allocation(g.frame, k, lease)
            # (> 0: a growth stalls only with a need > 0, and its allocation
            # cannot change while it stalls)
            need = pool.ru(a + g.amount) - a
            if not pool.has_room(need, g.frame):
                return
            pool.growers.popleft()
            if not pool.growers:
                self.fleet.pool_changed(pool)
            self._grant(g.frame, k, lease, pool, need)
            if g.job is not None:
                g.job.stall = None
                g.job.stage.own_stamp += 1  # its resident may be served again
                g.job.stage.instant.mark(g.job.stage)
                continue
            trigger(self.env, g.event, READY)

    def pool_pass(self) -> None:
        """Retry growers and admit queue heads at every pool, in order (the
        pools with something to do: `FleetIndex.pass_pools`)."""
        self.sim.stamp += 1
        for pool in self.fleet.pass_pools():
            if pool.growers:
                self.retry_growers(pool)
            if pool.queue and pool.spec.admit_via is None:
                self.try_admit(pool)

    def waiting(self) -> bool:
        """Whether any pool has a queue or a grower (a pass could act)."""
        fleet = self.fleet
        return bool(fleet.passable or fleet.via)

    # -- preemption (§7.3) -----------------------------------------------------------------
    def preempt(self, frame: HoldFrame, pool: Pool, running: Any) -> None:
        """Preempt `frame` (the victim's innermost hold on `pool`)."""
        s = frame.session
        k = frame.pools.index(pool)
        pos = frame.cells[k].pos
        prev = s.preempt_pos.get(pool)
        if prev is not None and pos <= prev + TOL and not s.stuck:
            s.stuck = True
            pool.stuck += 1
        s.preempt_pos[pool] = pos
        s.computed = pos
        self.sim.tokens.preempted(s)  # (a later prefill end may continue, Part 06 §4)
        if s is not running:
            self._detach(s)
        while s.holds:
            inner = s.holds.pop()
            for p, cell in zip(inner.pools, inner.cells):
                p.frames.remove(inner)
                # (the position of a hold never advanced is the prefix it
                # consumed, which its allocation need not cover: `Pool.check`)
                kept = self._release_units(s, p, cell.alloc, cell.pos, inner.spec.cache)
                if kept > cell.alloc:
                    p.overhang += kept - cell.alloc
            if inner is frame:
                break
        pool.preemptions += 1
        self.preemptions += 1
        self._count_spin(s)
        frame.grown = False
        if frame.pools is not frame.header:
            # its body released a pool: the hold is queued again with its
            # whole header, to be evaluated afresh (Part 03 §7.3 step 7;
            # pyserq 0.1.3 and 0.1.4, generator seed 137043)
            n = len(frame.header)
            frame.pools = frame.header
            frame.cells = [Allotment() for _ in range(n)]
            frame.req, frame.need, frame.units = [0.0] * n, [0.0] * n, [0.0] * n
        else:
            for cell in frame.cells:
                cell.pos = cell.alloc = 0.0
                cell.marked = False
        if self._rejects(frame):
            frame.rejected = True
            self.sim.refuse(s)
        else:
            self._enqueue(frame, front=pool.spec.requeue == "head")
        if s is not running:
            self._throw(s, Preempted(frame))

    def _count_spin(self, s: Any) -> None:
        """A preempted session is admitted again before it runs on: one
        readiness more at this instant. More than SPIN_LIMIT stop the run
        (Part 02 §10.5): holds that preempt each other, each admitted again
        at once (an `admit` without `while` in an iteration body, Part 04
        §9), would otherwise never let time pass (pyserq loops for ever:
        generator seed 4549)."""
        now = self.env.now
        if now != self.spin_at:
            self.spin_at = now
            self.spins = {}
        n = self.spins[s] = self.spins.get(s, 0) + 1
        if n > SPIN_LIMIT:
            compiler = getattr(self.sim, "compiler", None)
            where = None
            if compiler is not None and s.proc is not None:
                where = generator_position(generator_of(s.proc), compiler.position)
            raise unsettled_error(s.serial, now, "holds that preempt each other, or a hold "
                                  "that preempts itself, admitted again at once", where)

    def _detach(self, s: Any) -> None:
        s.proc.detach()

    def _throw(self, s: Any, exc: BaseException) -> None:
        s.proc.throw(exc)

    # -- session end, spill ---------------------------------------------------------------
    def end_session(self, s: Any) -> None:
        """`end`: every open hold releases (innermost first), leases end."""
        while s.holds:
            frame = s.holds.pop()
            for p, cell in zip(frame.pools, frame.cells):
                p.frames.remove(frame)
                computed = cell.pos if frame.grown else cell.alloc
                self._release_units(s, p, cell.alloc, computed, frame.spec.cache)
        while s.leases:
            self.end_lease(s.leases[0])
        if s.pending is not None:
            s.pending.cancel()

    def spill(self, pool: Pool, entry: CacheEntry, piece: float) -> None:
        """An evicted piece is written to the tier (§9)."""
        sp = pool.spec.spill
        now = self.env.now
        attrs = entry.attrs()
        waiting = pool._waiting(entry)
        if sp.when(attrs, piece, now - entry.last, entry.last, waiting) == 0:
            return
        work = sp.work(attrs, piece, now - entry.last, entry.last, waiting)
        tier = sp.tier
        tier.make_room(piece)
        key = entry.key if entry.session is not None else ("spill", pool.label, entry.key)
        te = tier.pop_entry(key)
        tier.touch()
        if te is None:
            te = CacheEntry(key, 0.0, now, 0, entry.session, entry.snap)
        tier.entries[key] = te  # (again) the last entry: the most recent release
        te.size += piece
        te.last = now
        te.rseq = self._next_rseq()
        tier.appended(te)
        tier.cached += piece
        pool.spills += 1
        if work > 0:
            sp.link.request(None, work)
