"""The departures of docs/departures.md as the differential runner knows
them (tests/differential_fuzz.py): each with the report fields it may
change, the programs that can show it, the reference versions that show
it and, where its effects spread, an emulation -- a context in which
serq-simpy behaves as that reference does in that one respect, so that a
program is a case of the departure when serq-simpy's run under it equals
the reference's."""
from __future__ import annotations

import re
from contextlib import contextmanager
from heapq import heapify, heappop as plain_heappop, heappush
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Iterator, Optional
from unittest.mock import patch

from serq.core.errors import SimulationError
from serq.runtime.compile import schedule
from serq.runtime.fast.burst import Burst
from serq.runtime.kernel.instant import READY
from serq.runtime.kernel.process import SessionProcess, unwatched_end
from serq.runtime.resources import engine as engine_module
from serq.runtime.sim import simulation as simulation_module
from serq.runtime.resources.engine import StepStage
from serq.runtime.resources.holds import HoldManager
from serq.runtime.resources.pools import Pool
from serq.runtime.sim.simulation import Simulation


@contextmanager
def released_hold_grows_nothing() -> Iterator[None]:
    """pyserq 0.1.3/0.1.4's `grow P` in a hold that has released `P`,
    emulated in serq-simpy for the runner: the run stops, whether or not
    the session has a lease of `P` to grow (pyserq 0.1.5 grows it; drawing
    program 1101344)."""
    def grow_lease(self: HoldManager, s: Any, pool: Any, d: float) -> None:
        raise SimulationError(f"`grow {pool.label}` outside a hold of `{pool.label}`",
                              self.env.now)
    with patch.object(HoldManager, "_grow_lease", grow_lease):
        yield


@contextmanager
def retried_growth_advances() -> Iterator[None]:
    """pyserq 0.1.3/0.1.4's retried growth, emulated in serq-simpy for the
    runner: a step-engine resident that stalled in a `growing` run and is
    granted its growth at a settle has its position advanced by the stalled
    amount, although no token was computed (Part 03 §14, Part 04 §15)."""
    plain = HoldManager.retry_growers

    def retry_growers(self: HoldManager, pool: Any) -> None:
        before = list(pool.growers)
        plain(self, pool)
        for g in before[:len(before) - len(pool.growers)]:  # those granted, in order
            if g.job is not None:
                g.frame.cells[g.frame.pools.index(pool)].pos += g.amount
    with patch.object(HoldManager, "retry_growers", retry_growers):
        yield


@contextmanager
def stalled_prefills_hold_decodes() -> Iterator[None]:
    """pyserq 0.1.3/0.1.4's `serve exclusive prefill`, emulated in
    serq-simpy for the runner: while a prefilling resident is stalled in a
    growth and none is unstalled, the decoding residents wait too (Part 04
    §8.4 serves them) from the next instant on; the engine still admits,
    and serves the prefills it admits (generator seeds 51236, 59586,
    62857)."""
    plain = schedule.exclusive_body

    def exclusive_body() -> Callable[[Any, Any], None]:
        inner = plain()
        seen: dict[Any, float] = {}  # each stall, and when an attempt first met it

        def body(stage: Any, plan: Any) -> None:
            now = stage.env.now
            prefills = [j for j in stage.residents if j.mode == "prefill"]
            # (a stall that began at this instant, such as an admitted
            # prefill's, does not hold the decode batch yet: the reference
            # keeps the batch it planned before that admission, seed 59586)
            if not prefills or any(j.stall is None or seen.get(j.stall, now) == now
                                   for j in prefills):
                inner(stage, plan)
            else:
                serve = stage.serve_one  # (a decoder admitted now waits too: seed 62857)
                stage.serve_one = lambda job, plan: None if job.mode == "decode" else serve(job, plan)
                try:
                    inner(stage, plan)
                finally:
                    del stage.serve_one
            for j in stage.residents:
                if j.stall is not None:
                    seen.setdefault(j.stall, now)
        return body
    with patch.object(schedule, "exclusive_body", exclusive_body):
        yield


@contextmanager
def spill_tier_unchecked() -> Iterator[None]:
    """pyserq 0.1.3/0.1.4's spill, emulated in serq-simpy for the runner:
    the tier makes room for 0 units before it takes the spilled piece, so it
    can end above its cap (Part 03 §9 step 3 makes room for the piece;
    Part 03 §14)."""
    plain = HoldManager.spill

    def spill(self: HoldManager, pool: Any, entry: Any, piece: float) -> None:
        tier = pool.spec.spill.tier
        make_room = tier.make_room
        tier.make_room = lambda _units: make_room(0.0)
        try:
            plain(self, pool, entry, piece)
        finally:
            del tier.make_room
    with patch.object(HoldManager, "spill", spill):
        yield


@contextmanager
def end_without_pass() -> Iterator[None]:
    """pyserq 0.1.3-0.1.5's session end, emulated in serq-simpy for the
    runner: `end;` (or the end of the session code) releases the session's
    holds and leases without the pool pass that Part 02 §10.3 step 1 and
    Part 03 §4.3 run at once; waiting holds and growers are tried at the
    next pass (another session's release or scope end, or the settle's
    step 2), so the sessions that run before it -- a `closed`
    replacement, another session made ready in the same settle -- do not
    see them admitted."""
    plain_end, plain_pass = Simulation.end_session, HoldManager.pool_pass

    def end_session(self: Simulation, s: Any) -> None:
        holds = self.holds if self.pool_list else None
        if holds is not None:
            holds.skip_pass = True  # the pass `end_session` makes itself
        try:
            plain_end(self, s)
        finally:
            if holds is not None:
                holds.skip_pass = False

    def pool_pass(self: HoldManager) -> None:
        if getattr(self, "skip_pass", False):
            self.skip_pass = False
            return
        plain_pass(self)
    with patch.object(Simulation, "end_session", end_session), \
            patch.object(HoldManager, "pool_pass", pool_pass):
        yield


@contextmanager
def replacement_at_next_event() -> Iterator[None]:
    """pyserq 0.1.3/0.1.4's closed replacement of a session that ends inside
    an engine's attempt (refused when its preempted hold is queued again),
    emulated in serq-simpy for the runner. pyserq creates the replacement
    then (its serial, `init`) and appends it to its list of ready sessions
    (the reference's source: `end_session`, `settle`, `admit_bound`). Two
    things empty that list: an admission by a later engine's attempt in
    the same settle (the replacement runs ahead of the admitted session),
    else the next calendar entry's settle -- whatever the entry, even one
    that changes nothing: the replacement runs at that entry's time, after
    the entry's own handling (an iteration's end, a lease's pool pass) but
    ahead of the sessions the entry makes ready and of the settle's pool
    pass. Here the replacement's start entry waits until one of the two:
    an admission's `run_ready`, or the loop's next pop, whose callbacks
    that resume no session run first, then the start and, after it, the
    resumptions, as READY entries of that time (bursts off: every entry
    passes the loop). Mixed fleet programs 34, 58 and 113, and 320, 708,
    1143, 1179, 1582, 1650, 2004 and 2227, which an earlier placement (after
    the next entry and its pool pass) left unexplained."""
    plain_attempt, plain_create = StepStage.attempt, Simulation.create_session
    plain_allow, plain_run_ready = Burst.allow_burst, engine_module.run_ready
    made: list[Any] = []
    waiting: list[Any] = []  # start entries taken off the calendar
    depth = [0]

    def create_session(self: Simulation, start_now: bool = False) -> None:
        before = self.next_serial
        plain_create(self, start_now)
        if depth[0] and self.next_serial > before:
            q = self.env.queue  # (the start entry it just made: the latest of its time)
            made.append(max((e for e in q if e[0] == self.env.now and e[1] == READY),
                            key=lambda e: e[2]))

    def attempt(self: StepStage) -> None:
        depth[0] += 1
        try:
            plain_attempt(self)
        finally:
            depth[0] -= 1
        if depth[0] == 0 and made:
            q = self.env.queue
            waiting.extend(e for e in made if e in q)
            made.clear()
            q[:] = [e for e in q if e not in waiting]
            heapify(q)

    def start_waiting(env: Any) -> None:
        for e in waiting:  # (their old sequence numbers: ahead of what is ready since)
            heappush(env.queue, (env.now, READY, e[2], e[3]))
        waiting.clear()

    def run_ready(env: Any) -> None:
        start_waiting(env)
        plain_run_ready(env)

    def heappop(q: list) -> Any:
        item = plain_heappop(q)
        if waiting and not unwatched_end(item[3]):
            event = item[3]
            callbacks = event.callbacks
            resumes = [c for c in callbacks
                       if isinstance(getattr(c, "__self__", None), SessionProcess)]
            own = [c for c in callbacks if c not in resumes]

            def handled(ev: Any) -> None:
                env = ev.env
                for callback in own:
                    callback(ev)
                start_waiting(env)
                if resumes:
                    ev.callbacks = resumes
                    heappush(env.queue, (env.now, READY, next(env.eids), ev))

            event.callbacks = [handled]
        return item

    with patch.object(Simulation, "create_session", create_session), \
            patch.object(StepStage, "attempt", attempt), \
            patch.object(engine_module, "run_ready", run_ready), \
            patch.object(simulation_module, "heappop", heappop), \
            patch.object(Burst, "allow_burst", lambda self, allowed: plain_allow(self, False)):
        yield


class _Listings(dict):
    """0.1.3's holders: a count of listings per session, `len` their sum."""

    def __len__(self) -> int:
        return int(sum(self.values()))


def _recount(pool: Pool) -> None:
    """`Pool.multi` after an emulation changed `holder_count` itself."""
    pool.multi = sum(1 for c in pool.holder_count.values() if c > 1)


@contextmanager
def holders_listed() -> Iterator[None]:
    """pyserq 0.1.3/0.1.4's holders, emulated in serq-simpy for the runner:
    a pool lists its holder once per admission, and a release drops every
    listing of the session (a session with two nested holds of the pool
    counts twice, then not at all while its outer hold still holds),
    which `mean_holders` and `holders(p)` read (Part 03 §1), and which
    orders the candidates of a preemption on a pool that is no engine's
    memory: one per listing, in the listing's order, each the session's
    innermost hold (Part 03 §7.3; generator seed 63755). On an engine's
    memory pool the candidates are the residents that are listed, so a
    resident whose inner hold of the pool has ended is none, and its growth
    may stall where serq-simpy preempts (generator seed 108574). A leg is
    listed as itself while it runs, and its listings pass to its session
    with its lease when it ends (so a release by the session then drops
    them: drawing program 1073968's program against 0.1.3,
    `LEASE_BESIDE_A_HOLD` in tests/test_differential_settle.py; while the
    leg runs, a release by the session leaves its listing: mixed fleet
    program 6629)."""
    add, victim = Pool.add_holder, HoldManager._victim

    def add_holder(self: Pool, session: Any) -> None:
        if type(self.holder_count) is not _Listings:
            self.holder_count = _Listings(self.holder_count)
        add(self, session)
        self.__dict__.setdefault("listed_013", []).append(session)

    def remove_holder(self: Pool, session: Any) -> None:
        self.holder_count.pop(session, None)
        _recount(self)
        for listing in (self.__dict__.get("listed_013"), self.listing):
            if listing:
                listing[:] = [s for s in listing if s is not session]

    def pass_holder(self: Pool, old: Any, new: Any) -> None:
        c = self.holder_count.pop(old, 0)
        if c:
            self.holder_count[new] = self.holder_count.get(new, 0) + c
        _recount(self)
        for listing in (self.__dict__.get("listed_013"), self.listing):
            if listing:
                listing[:] = [new if s is old else s for s in listing]

    def listed_victim(self: HoldManager, pool: Pool) -> Any:
        listing = pool.__dict__.get("listed_013")
        if pool.spec.preempt == "none" or listing is None:
            return victim(self, pool)
        if pool.memory_of:
            # the engine's residents among the listed holders: a resident
            # whose inner hold of the pool has ended is no candidate
            # (generator seed 108574), so its growth may stall instead
            listed = set(listing)
            residents = [f for f in self._candidates(pool) if f.session in listed]
            return pool.preempt_victim(residents) if residents else None
        live = {f.session for f in pool.frames}  # holders of a live hold (never a lease)
        candidates = [self._frame_of(s, pool, "preempt")[0] for s in listing if s in live]
        if not candidates:
            return None
        return self._frame_of(pool.preempt_victim(candidates).session, pool, "preempt")[0]
    with patch.multiple(Pool, add_holder=add_holder, remove_holder=remove_holder,
                        pass_holder=pass_holder), \
            patch.object(HoldManager, "_victim", listed_victim):
        yield


@dataclass
class Departure:
    """A known, documented difference (docs/departures.md).

    A departure is told apart either by the report fields it may change
    (`fields`: every difference is in one of them) or, when its effects
    spread, by `emulate`: a context in which serq-simpy behaves as the
    reference does in that one respect; the program is a case of the
    departure when serq-simpy's run under it equals the reference's."""

    name: str
    fields: tuple[str, ...]        # report fields it may change (none: not told apart)
    applies: Callable[[str], bool]  # whether a program can show it
    emulate: Optional[Callable[[], ContextManager[None]]] = None
    #: the reference versions that show it (docs/departures.md): a difference
    #: from another version is never put down to it
    versions: tuple[str, ...] = ("0.1.3", "0.1.4", "0.1.5")


#: the versions of the departures pyserq 0.1.5 no longer shows
OLD = ("0.1.3", "0.1.4")


DEPARTURES = [
    # Part 03 §1: holders are sessions; 0.1.3 counts a session once per admission
    # and forgets it when an inner hold of the same pool ends
    Departure("holders counted as sessions", ("mean_holders",),
              lambda t: bool(re.search(r"\bhold\b", t)), holders_listed, OLD),
    # Part 02 §10.3 step 4: a run that an admitted session starts at a `ps`
    # stage (or engine) declared before the admitting engine
    Departure("a stage declared before the admitting engine", (),
              lambda t: "admit via" in t),
    # Part 03 §14 / Part 04 §15: a growth granted after a stall does not
    # advance the position (0.1.3 and 0.1.4 advance it by the stalled amount)
    Departure("a stalled growth granted later", (), lambda t: "growing" in t,
              retried_growth_advances, OLD),
    # Part 04 §8.4 step 2: the decode batch runs when no prefilling resident
    # is unstalled (0.1.3 and 0.1.4 serve nothing while one is stalled)
    Departure("an exclusive prefill engine with every prefill stalled", (),
              lambda t: "exclusive prefill" in t and "growing" in t,
              stalled_prefills_hold_decodes, OLD),
    # Part 03 §9 step 3: a spill tier makes room for the piece before taking
    # it (0.1.3 and 0.1.4 make room for 0 units: the tier can end above its cap)
    Departure("a spill tier kept within its cap", (), lambda t: "spill" in t,
              spill_tier_unchecked, OLD),
    # Part 03 §5 (pyserq 0.1.5): `grow P` in a hold that released `P` grows
    # the session's lease of `P` (0.1.3 and 0.1.4 stop the run)
    Departure("a lease grown in a hold that released its pool", (),
              lambda t: bool(re.search(r"\brelease\b", t)) and "lease" in t and "grow" in t,
              released_hold_grows_nothing, OLD),
    # Part 03 §11: `over_cap`'s need is ru(max(u, r)), in blocks (0.1.3-0.1.5
    # report the units before rounding)
    Departure("over_cap's need before rounding", ("over_cap",),
              lambda t: bool(re.search(r"\bblock\b", t))),
    # Part 02 §10.3 step 1: a session made ready at an instant runs at that
    # instant (0.1.3 and 0.1.4 run a closed replacement made inside an
    # engine's attempt at the next event)
    Departure("a replacement made in an engine's attempt", (),
              lambda t: "closed" in t and "step" in t, replacement_at_next_event, OLD),
    # Part 02 §10.3 step 1 / Part 03 §4.3: a session's end runs the pool pass
    # at once (0.1.3-0.1.5 leave it to the next pass)
    Departure("a pool pass at a session's end", (), lambda t: bool(re.search(r"\bhold\b", t)),
              end_without_pass),
]
