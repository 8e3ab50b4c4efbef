"""Pools as custom SimPy resources (spec Part 03): capacity, block rounding,
the admission queue, growers, the prefix cache, eviction and spill.

Like SimPy's `BaseResource`, a pool keeps its waiting requests (hold frames)
and exposes its decisions as methods a subclass may override — the policy
seam:

* `select_candidate()` — which waiting hold is tried next (`queue`);
* `has_room(units, frame)` — whether `units` more fit (the fit rule);
* `evict_victim(entries)` — which cache entry loses units next (`evict`);
* `preempt_victim(candidates)` — which holder a failed growth preempts.

When a subclass overrides one of them, the runtime checks what it returns
(`guards.py`: a victim must be one of the candidates, an evicted entry must
be cached here, a fit may not exceed the cap) and stops the run with a
message naming the policy, the method and the rule otherwise.

Session-side operations (admission, release, growth, preemption) are in
`holds.py`; this module only manages the pool's own state.
"""
from __future__ import annotations

from collections import Counter, deque
from math import ceil, floor
from dataclasses import replace
from typing import Any, Optional

from ...core.errors import SimulationError, shortest
from ...core.tolerance import TOL
from .decision import decision, overridden


class CacheEntry:
    """A cached prefix: `size` units, released at `last` with sequence `rseq`.

    `session` is the owning session object (None for a dead entry); `snap`
    the attribute snapshot taken at release (read once the owner ended, and
    always for a dead entry)."""

    __slots__ = ("key", "size", "last", "rseq", "session", "snap")

    def __init__(self, key: Any, size: float, last: float, rseq: int, session: Any,
                 snap: Any):
        self.key = key
        self.size = size
        self.last = last
        self.rseq = rseq
        self.session = session
        self.snap = snap

    def attrs(self) -> Any:
        """What attribute reads see: the live session, else the snapshot."""
        s = self.session
        if s is not None and not s.ended:
            return s
        return self.snap


class Pool:
    """One pool member. `sim` supplies the clock, the run-wide sequence
    numbers and the evict stream; `spec` is the compiled declaration."""

    kind = "pool"

    # The fields a hold, a growth or a routing key touches sit in the object
    # itself, side by side, and the others in its dictionary (as for
    # `StepStage`: in a large fleet a member's fields are rarely in the
    # processor's caches when an event reaches it).
    __slots__ = ("sim", "env", "spec", "cap", "block", "used", "cached", "holder_count", "multi",
                 "freed",
                 "queue", "growers", "frames", "entries", "t_last", "int_used", "int_cached",
                 "int_queue", "int_holders", "lru_sorted", "lru_tail", "lru_front", "overhang",
                 "listing", "__dict__", "__weakref__")

    def __init__(self, sim: Any, name: str, index: Optional[int], spec: Any):
        self.sim = sim
        self.env = sim.env
        self.name = name
        self.index = index
        cls = type(self)
        if not spec.snapshots and overridden(cls, "evict_victim"):
            spec = replace(spec, snapshots=True)  # a policy may read an ended owner's attributes
        self.spec = spec
        self.cap = spec.cap
        self.block = spec.block
        # the built-in `evict lru` (`make_room` takes the first entry in LRU
        # order), and whether it may evict whole numbers of blocks at once
        # (blocks of whole units, no spill: what block-by-block eviction gives)
        self.lru_builtin = spec.evict_keys is None and not overridden(cls, "evict_victim")
        #: the built-in admission choice and fit rule (the fast paths may assume them)
        self.plain_select = not overridden(cls, "select_candidate")
        self.plain_room = not overridden(cls, "has_room")
        b = spec.block
        self.bulk_blocks = b is not None and spec.spill is None and float(b).is_integer()
        self.used = 0.0
        # how many times room may have come back (units released, a hold's
        # reservation gone, a new capacity): a head that did not fit still does
        # not while it stands (`fast.blocked`)
        self.freed = 0
        self.cached = 0.0
        self.entries: dict[Any, CacheEntry] = {}
        # whether `entries` is in ascending (last, rseq) order (LRU order: the
        # first entry is the victim), and the greatest key put since then
        self.lru_sorted = True
        self.lru_tail: tuple = ()
        # the first entry of `entries` when known (None: look): in a full
        # cache nine victims in ten are the one before, which only lost
        # units (replica.sq); a look makes an iterator over the dictionary
        # and crosses the slots that removed entries left at its front
        self.lru_front: Optional[CacheEntry] = None
        self.frames: list[Any] = []        # hold frames holding this pool (admission order)
        self.leases: list[Any] = []        # leases of this pool
        self.holder_count: dict[Any, int] = {}
        # how many sessions hold it more than once (`holder_count` above 1):
        # while none does, a run that grows its hold here holds the pool
        # once, which a step engine's totals use without reading the session
        self.multi = 0
        # the admission listing a preemption ranks its candidates by (Part 03
        # §1 "holders, in admission order"; §7.3): a holder once per
        # admission, and a release (scope end, preemption, `release`, lease
        # end) takes out the holder's first listing, whichever allocation it
        # gives back -- so a session whose inner hold ended ranks where that
        # inner hold was admitted (pyserq 0.1.5, drawing program 1074607).
        # Kept only by a pool that preempts and is no engine's memory
        # (`listing` is None otherwise: `Simulation._bind_engines`).
        self.listing: Optional[list[Any]] = None if spec.preempt == "none" else []
        self.queue: list[Any] = []         # waiting hold frames whose first pool this is
        self.growers: deque[Any] = deque()
        self.memory_of: list[Any] = []     # step stages whose `memory` this pool is
        # statistics
        self.warmup = sim.warmup
        self.t_last = 0.0
        self.int_used = self.int_cached = self.int_queue = self.int_holders = 0.0
        self.wait_sum = 0.0
        self.wait_count = 0
        self.admissions = 0
        self.evicted_entries = 0
        self.evicted_units = 0.0
        self.preemptions = 0
        self.spills = 0
        self.rejected = 0
        self.stuck = 0
        # units by which preemptions' releases cached more than they freed
        # (`HoldManager.preempt`): the invariant checker allows that much
        # above the cap until the pool is within it again (`check`)
        self.overhang = 0.0

    @property
    def label(self) -> str:
        return self.name if self.index is None else f"{self.name}[{self.index}]"

    # -- rounding (Part 03 §3) --------------------------------------------------
    def ru(self, x: float) -> float:
        """`x` rounded up to a multiple of the block."""
        b = self.block
        # (x - x is 0.0 exactly when x is finite)
        return x if b is None or x - x != 0.0 else ceil(x / b) * b

    def rd(self, x: float) -> float:
        """`x` rounded down to a multiple of the block."""
        b = self.block
        return x if b is None or x - x != 0.0 else floor(x / b) * b

    # -- time averages ------------------------------------------------------------
    def touch(self) -> None:
        """Integrate the averaged quantities up to now (call before a change)."""
        now = self.env.now
        dt = now - self.t_last
        if dt:
            self.int_used += self.used * dt
            self.int_cached += self.cached * dt
            self.int_queue += len(self.queue) * dt
            self.int_holders += len(self.holder_count) * dt
            self.t_last = now

    def reset_measurement(self, now: float) -> None:
        """The warm-up boundary: averages start afresh."""
        self.touch()
        self.int_used = self.int_cached = self.int_queue = self.int_holders = 0.0

    def finish_measurement(self, end: float) -> None:
        self.touch()

    # -- holders ------------------------------------------------------------------
    def add_holder(self, session: Any) -> None:
        """`session` is admitted to this pool (a hold's allocation)."""
        self._count(session, 1)
        if self.listing is not None:
            self.listing.append(session)

    def pass_holder(self, old: Any, new: Any) -> None:
        """`old`'s holding of this pool becomes `new`'s (a lease a leg that
        ended leaves to its session)."""
        if (self.holder_count.get(old, 0) == 1) != (new not in self.holder_count):
            # the number of holders changes (only then: a touch splits the
            # time averages' sums, and the reports stay the same to the bit)
            self.touch()
        self._count(old, -1)
        self._count(new, 1)
        listing = self.listing
        if listing is not None and old in listing:
            listing[listing.index(old)] = new  # (in place: the holding keeps its rank)

    def remove_holder(self, session: Any) -> None:
        """An allocation `session` holds in this pool is given back."""
        self._count(session, -1)
        if self.listing is not None:
            try:
                self.listing.remove(session)  # (its first listing)
            except ValueError:
                pass

    def _count(self, session: Any, d: int) -> None:
        counts = self.holder_count
        was = counts.get(session, 0)
        c = was + d
        if c > 0:
            counts[session] = c
        else:
            counts.pop(session, None)
        if (was > 1) != (c > 1):
            self.multi += 1 if c > 1 else -1

    def reserved(self, exclude: Any = None) -> float:
        """Σ outstanding reservations of live holds (`reserve held`, §4.6)."""
        if not self.spec.reserve_held:
            return 0.0
        total = 0.0
        for frame in self.frames:
            if frame is not exclude:
                k = frame.pools.index(self)
                total += max(0.0, frame.req[k] - frame.cells[k].alloc)
        return total

    def set_capacity(self, units: float) -> None:
        """A capacity of `units` from now (a process's change, `serq.build`;
        never below `used`). The next pool pass admits what now fits."""
        self.cap = units
        self.freed += 1
        self.sim.stamp += 1  # the pools are no longer known to be idle

    # -- policies -------------------------------------------------------------------
    @decision
    def has_room(self, units: float, frame: Any = None) -> bool:
        """Policy: do `units` more fit? (the fit rule, Part 03 §4.4).

        Receives the units asked (already rounded to blocks) and `frame`, the
        growing hold (`HoldFrame`; its own reservation does not count against
        it), or None for an admission. Returns True or False; a False
        admission blocks the queue, a False growth evicts nothing and
        preempts or stalls. Cached units never count: they are evicted to
        make room once the answer is True. Checked when overridden: a bool,
        and True only when `used + units ≤ cap`. Default: `used +
        reservations + units ≤ cap`."""
        held = self.reserved(frame) if self.spec.reserve_held else 0.0
        return self.used + held + units <= self.cap + TOL

    @decision
    def select_candidate(self) -> Any:
        """Policy: the waiting hold frame to try next (`queue fifo` / `queue by`).

        Receives nothing: the queue is `self.queue`, a list of `HoldFrame`s
        (`frame.session` the waiting session, `session.attribute("name")`
        an attribute; `frame.front` a preempted hold re-queued at the head;
        `frame.enq_time` when it joined). Returns one of its frames. Only
        that frame is tried: if it does not fit, the queue stops
        (head-of-line blocking). For a pool with `admit via`, this is the
        engine's admission candidate. Checked when overridden: the frame is
        waiting in `self.queue`. Default: the head (`queue fifo`), or the
        smallest keys (`queue by`), preempted holds first."""
        keys = self.spec.queue_keys
        if keys is None:
            return self.queue[0]
        now = self.env.now
        best = None
        best_key = None
        for frame in self.queue:
            if frame.front:
                return frame
            key = keys(frame.session, now - frame.enq_time) + (frame.enq_seq,)
            if best is None or key < best_key:
                best, best_key = frame, key
        return best

    @decision
    def evict_victim(self, entries: list[CacheEntry]) -> CacheEntry:
        """Policy: the cache entry that loses units next.

        Receives the `CacheEntry`s in ascending release sequence (`rseq`;
        an entry has `size`, `last` (release time), `key` and
        `attrs()`, the owner's attributes, `attrs().attribute("name")`);
        returns one of them, which loses one block (all of it without
        blocks); asked again until the units fit. Checked when overridden:
        the entry is one it received, cached in this pool (held units are
        never evicted). Default: `evict lru` — smallest `(last, rseq)` — or
        `evict by (keys)` — smallest `(keys…, rseq)`, keys evaluated afresh
        for every entry before every step (Part 03 §8, Part 07 §4.5)."""
        keyfn = self.spec.evict_keys
        if keyfn is None:
            return min(entries, key=_lru_key)
        now = self.env.now
        best = None
        best_key = None
        for e in entries:
            key = keyfn(e.attrs(), e.size, now - e.last, e.last, self._waiting(e)) + (e.rseq,)
            if best is None or _lex_less(key, best_key):
                best, best_key = e, key
        return best

    @decision
    def preempt_victim(self, candidates: list[Any]) -> Any:
        """Policy: the hold frame a failed growth preempts.

        Receives the candidates, one `HoldFrame` per session holding this
        pool: the session's innermost hold on it (the one its runs and
        growths act on), in the pool's admission order (each session at
        its earliest listing left in `listing`: once per admission, the
        earliest taken out at each release; on an engine's `memory` pool,
        only the engine's residents, in the engine's admission order);
        returns one of them, which loses its allocation and queues again
        (Part 03 §7.3). It may be the growing hold's own frame. Checked
        when overridden: the frame is one of the candidates. Default:
        smallest victim keys (`preempt by`; `lifo` is `by (-admission)`),
        ties to the candidate admitted last."""
        keyfn = self.spec.preempt_keys
        best = None
        best_key = None
        for rank, frame in enumerate(candidates):
            k = frame.pools.index(self)
            key = keyfn(frame.session, float(rank), _decoding(frame.session),
                        frame.cells[k].pos)
            if best is None or not _lex_less(best_key, key):
                best, best_key = frame, key
        return best

    @staticmethod
    def _waiting(e: CacheEntry) -> float:
        s = e.session
        return 1.0 if s is not None and not s.ended and s.pending is not None else 0.0

    # -- the prefix cache -----------------------------------------------------------
    def own_entry(self, session: Any) -> float:
        """Units of the session's own live entry (`cachedin`)."""
        e = self.entries.get(session.sid)
        return e.size if e is not None else 0.0

    def pop_entry(self, key: Any) -> Optional[CacheEntry]:
        """`entries.pop(key, None)`, keeping `lru_front` true (every removal
        of an entry goes through here or `_shrink`)."""
        e = self.entries.pop(key, None)
        if e is not None and e is self.lru_front:
            self.lru_front = None
        return e

    def remove_entry(self, key: Any) -> Optional[CacheEntry]:
        """Take an entry out of the cache (not an eviction)."""
        e = self.pop_entry(key)
        if e is not None:
            self.touch()
            self.cached -= e.size
        return e

    def put_entry(self, entry: CacheEntry) -> None:
        """Insert (or replace) an entry."""
        self.touch()
        old = self.pop_entry(entry.key)
        if old is not None:
            self.cached -= old.size
        self.entries[entry.key] = entry
        self.cached += entry.size
        self.appended(entry)

    def appended(self, entry: CacheEntry) -> None:
        """`entry`, with its current (last, rseq), is now the last of
        `entries`: they stay in LRU order when no entry's key is greater."""
        key = (entry.last, entry.rseq)
        if self.lru_sorted:
            if key < self.lru_tail:
                self.lru_sorted = False
            else:
                self.lru_tail = key

    def _lru_victim(self) -> CacheEntry:
        """The entry with the least (last, rseq), the first such in `entries`
        (as `min` finds it): the first entry once they are in LRU order."""
        if not self.lru_sorted:
            # a stable sort: equal keys keep their order, as `min` sees them
            self.entries = {e.key: e for e in sorted(self.entries.values(), key=_lru_key)}
            self.lru_sorted = True
            last = next(reversed(self.entries.values()))
            self.lru_tail = (last.last, last.rseq)
            self.lru_front = None
        front = self.lru_front
        if front is None:
            front = self.lru_front = next(iter(self.entries.values()))
        return front

    def make_room(self, units: float) -> None:
        """Evict until `units` more fit next to what is used and cached (§8)."""
        limit = self.cap + TOL
        if not self.used + self.cached + units > limit:
            return
        if not self.lru_builtin:
            while self.used + self.cached + units > limit and self.entries:
                entries = sorted(self.entries.values(), key=_rseq_key)
                self._evict_piece(self.evict_victim(entries))
            return
        # LRU: a key does not change as the entry shrinks, so the victim loses
        # what it must at once -- whole numbers throughout, exactly what block
        # by block gives -- or block by block
        f = float
        used = self.used  # (eviction without spill leaves it)
        bulk = self.bulk_blocks and f(units).is_integer() and f(used).is_integer()
        b = self.block
        while self.used + self.cached + units > limit and self.entries:
            victim = self._lru_victim()
            size = victim.size
            if bulk and f(size).is_integer() and f(self.cached).is_integer():
                lose = ceil((used + self.cached + units - self.cap) / b) * b
                self._shrink(victim, lose if lose < size else size)  # min(size, lose)
                continue
            while (self.used + self.cached + units > limit
                   and self.entries.get(victim.key) is victim):
                self._evict_piece(victim)

    def _shrink(self, e: CacheEntry, units: float) -> None:
        """Eviction takes `units` from the tail of entry `e`."""
        self.touch()
        e.size -= units
        self.cached -= units
        self.evicted_units += units
        if e.size <= TOL:
            self.cached -= e.size
            del self.entries[e.key]
            if e is self.lru_front:
                self.lru_front = None
            self.evicted_entries += 1

    def _evict_piece(self, e: CacheEntry) -> None:
        b = self.block
        piece = e.size if b is None else min(b, e.size)
        self._shrink(e, piece)
        if self.spec.spill is not None:
            self.sim.holds.spill(self, e, piece)

    # -- rows -------------------------------------------------------------------------
    def over_cap(self) -> Optional[tuple[str, float]]:
        """The head of a queue asking this pool for more than its cap."""
        for pool in self.sim.pool_list:
            if pool.queue:
                frame = pool.queue[0]
                for k, p in enumerate(frame.pools):
                    if p is self and frame.need[k] > self.cap + TOL:
                        return (pool.label, frame.need[k])
        return None

    def row_values(self, span: float) -> dict[str, Any]:
        """The report row's fields (Part 03 §11)."""
        nan = float("nan")
        growing = len(self.growers)
        stalled = growing > 0 and all(
            any(g.session is s for g in self.growers) for s in self.holder_count)
        return {
            "mean_used": self.int_used / span, "mean_cached": self.int_cached / span,
            "mean_queue": self.int_queue / span, "mean_holders": self.int_holders / span,
            "mean_wait": self.wait_sum / self.wait_count if self.wait_count else nan,
            "admissions": self.admissions, "evicted_entries": self.evicted_entries,
            "evicted_units": self.evicted_units, "preemptions": self.preemptions,
            "spills": self.spills, "rejected": self.rejected, "stuck": self.stuck,
            "over_cap": self.over_cap(), "growing_at_end": growing,
            "growing_stalled": stalled,
        }

    def check(self) -> None:
        """Invariants after an event (used by `check_invariants`).

        `used + cached ≤ cap` (spec Part 03 §1) holds except after a
        preemption: a hold no `growing` run or `load` advanced is released
        with its position as its computed amount (§7.3 step 5), and that
        position starts at the prefix it consumed (§4.2 step 4), which its
        allocation need not cover. Its release can then cache more than it
        frees, and since releasing never evicts (§4.5, §8) the pool stays
        above the cap until its next allocation evicts (the reference,
        pyserq 0.1.3–0.1.5, does the same). So the excess may be at most
        what such releases put back since the pool was last within the cap
        (`overhang`)."""
        held = sum(f.cells[f.pools.index(self)].alloc for f in self.frames)
        held += sum(lease.alloc for lease in self.leases)
        now = self.env.now
        excess = self.used + self.cached - self.cap
        if excess <= 1e-6:
            self.overhang = 0.0
        elif excess > self.overhang + 1e-6:
            put_back = ""
            if self.overhang:
                put_back = (f" by more than the {shortest(self.overhang)} units preempted "
                            "holds cached beyond their allocations")
            raise SimulationError(
                f"invariant broken at pool `{self.label}`: used {shortest(self.used)} + cached "
                f"{shortest(self.cached)} exceeds the cap {shortest(self.cap)}{put_back}", now)
        if abs(held - self.used) > 1e-6:
            raise SimulationError(
                f"invariant broken at pool `{self.label}`: the holds hold {shortest(held)} "
                f"units but {shortest(self.used)} are used", now)
        if self.multi != sum(1 for c in self.holder_count.values() if c > 1):
            raise SimulationError(
                f"invariant broken at pool `{self.label}`: {self.multi} sessions are counted "
                "as holding it more than once, but its holders say otherwise", now)
        if self.listing is not None and Counter(self.listing) != self.holder_count:
            raise SimulationError(
                f"invariant broken at pool `{self.label}`: its admission listing does not "
                "list each holder once per allocation it holds", now)
        cached = sum(e.size for e in self.entries.values())
        if abs(cached - self.cached) > 1e-6:
            raise SimulationError(
                f"invariant broken at pool `{self.label}`: entries sum to {shortest(cached)} "
                f"but {shortest(self.cached)} are cached", now)
        if self.lru_front is not None and self.lru_front is not next(iter(self.entries.values()),
                                                                     None):
            raise SimulationError(
                f"invariant broken at pool `{self.label}`: the entry kept as the first "
                "is not the first of its entries", now)


def _lru_key(e: CacheEntry) -> tuple[float, int]:
    return (e.last, e.rseq)


def _rseq_key(e: CacheEntry) -> int:
    return e.rseq


def _lex_less(a: tuple, b: tuple) -> bool:
    """`a < b` key by key; a comparison involving NaN decides nothing."""
    for x, y in zip(a, b):
        if x < y:
            return True
        if x > y:
            return False
    return False


def resident_job(s: Any) -> Any:
    """The job of session `s` that is a resident of a step stage (the job
    it waits on, present among the stage's residents), or None."""
    proc = s.proc
    job = proc.target if proc is not None else None
    stage = getattr(job, "stage", None)
    if stage is None or job not in getattr(stage, "residents", ()):
        return None
    return job


def _decoding(s: Any) -> float:
    """`decoding` of a preemption candidate (Part 03 §7.3): 1 when its
    session is a resident of a step stage in a `decode` run, else 0."""
    job = resident_job(s)
    return 1.0 if job is not None and job.mode == "decode" else 0.0
