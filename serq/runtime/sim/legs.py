"""Concurrent legs: `fork { … }`, `join;` (upstream's push mode).

A leg is a part of its session's request that runs beside it: another SimPy
process over a copy of the session object (the attributes as they stand at
the fork), with holds of its own and a stream of its own (Part 07 keys: the
session's serial, the number of the fork among the session's forks as `t`,
kind 3), and the session's serial, so its holds meet the session's cached
prefix. A leg is no session: no arrival, no end, no `turn`; the tokens of
its runs on step stages form a sequence of their own, apart from the
session's (Part 06 §6.2). When it ends,
what it leases passes to its session (the lease keeps evaluating its
`cache` clause over the leg's attributes). `join;` waits until every leg
the session forked so far has ended.

Run-time errors: a session that ends while a leg runs, and sessions and
legs that wait only for each other with one of them at a `join` (checked
once an instant has settled with at most two calendar entries left, such
as the next arrival, and when the run stops), so a deadlocked program ends
at once instead of at its horizon.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Optional

from simpy.events import Event

from ...core.errors import SimulationError
from ..random import rng as rngmod
from ..kernel.calendar import trigger
from ..kernel.instant import READY
from ..kernel.process import stop as stop_process
from ..compile import names as N
from ...core.tolerance import TOL

KIND_LEG = 3  # Part 07 §3.2 `c` of a leg's stream (pyserq 0.1.3–0.1.5)


def leg_stream(seed: int, serial: int, number: int, scheme: str) -> rngmod.Stream:
    """The stream of the `number`-th leg (0-based) session `serial` forks."""
    derive = rngmod.derive if scheme == "0.1.5" else rngmod.derive_013
    return rngmod.Stream(derive(seed, serial, number, KIND_LEG))


def party(s: Any) -> str:
    """`session 3` or `a leg of session 3`, for messages."""
    return f"session {s.sid}" if s.parent is None else f"a leg of session {s.sid}"


class Legs:
    """The fork/join services of one simulation (bound in generated code)."""

    def __init__(self, sim: Any):
        self.sim = sim
        self.env = sim.env
        self.joining: dict[Any, str] = {}   # session -> where its `join` is written
        g = sim.ns.globals
        g[N.FORK] = self.fork
        g[N.LEG_END] = self.leg_end
        g[N.JOIN] = self.join

    def fork(self, s: Any, body: Callable, at: str) -> None:
        """Start a leg of `s` running `body` (it becomes ready behind the
        sessions already ready at this instant; forked in a step engine's
        admission, it runs before the admission ends: `run_ready`)."""
        leg = copy.copy(s)
        leg.parent = s
        leg.legs = []
        leg.forks = 0
        leg.holds = []
        leg.leases = []
        leg.pending = None
        leg.preempt_pos = {}
        leg.stuck = False
        leg.ended = False
        leg.at = at
        leg.tok = None  # its tokens are a sequence of their own (pyserq 0.1.3, 0.1.4)
        # no hold has admitted the leg: its runs on a step stage sort after
        # every admitted owner's, in the order they joined, until the leg's
        # own hold admits it (Part 04 §5; pyserq 0.1.3 and 0.1.4, issue 22)
        leg.adm_seq = 0
        sim = self.sim
        leg.rng = leg_stream(sim.seed, s.sid, s.forks, sim.scheme)
        s.forks += 1
        s.legs.append(leg)
        leg.proc = sim.process_class(self.env, body(leg))  # a session's kind: it can be preempted

    def leg_end(self, leg: Any) -> None:
        """The leg's body has ended: its leases pass to the session (or end,
        when the session has ended), and a `join` waiting for it may pass."""
        if leg.ended:
            return
        leg.ended = True
        s = leg.parent
        if s.ended:
            self.sim.holds.end_session(leg)
            self.sim.holds.pool_pass()
        else:
            for lease in leg.leases:
                # the session is now the lease's holder: one holder with its
                # own holds of the pool (pyserq 0.1.5; drawing program 1073968)
                lease.pool.pass_holder(leg, s)
                lease.owner = s
                s.leases.append(lease)
            leg.leases = []
        s.legs.remove(leg)
        ev = s.join_ev
        if ev is not None and not s.legs:
            s.join_ev = None
            self.joining.pop(s, None)
            trigger(self.env, ev, READY)

    def join(self, s: Any, where: str) -> Event:
        """`join;` with legs still running: the event their last end fires."""
        ev = Event(self.env)
        s.join_ev = ev
        self.joining[s] = where
        return ev

    # -- ends ---------------------------------------------------------------------
    def session_ends(self, s: Any) -> None:
        """`end;` or the end of the session code: no leg may still run."""
        if s.legs:
            leg = s.legs[0]
            raise SimulationError(
                f"session {s.sid} ends while a leg it forked runs (the leg of the "
                f"`fork` at {leg.at}, {where(leg)})", self.env.now,
                help="write `join;` where the session waits for its legs, before it ends")

    def refused(self, s: Any) -> None:
        """A hold of `s` was refused: a refused leg ends its session (whose
        process stops where it waits); a refused session's legs run on."""
        sim = self.sim
        if s.parent is None:
            self.joining.pop(s, None)
            s.join_ev = None
            return
        s.ended = True
        sim.holds.end_session(s)
        parent = s.parent
        parent.legs.remove(s)
        if not parent.ended:
            self.stop(parent)
            sim.end_session(parent)

    def stop(self, s: Any) -> None:
        """Stop the process of session `s` where it waits."""
        self.joining.pop(s, None)
        s.join_ev = None
        self.sim.holds._detach(s)
        proc = s.proc
        if proc is not None and proc.is_alive:
            stop_process(proc)

    # -- sessions and legs that wait for each other ----------------------------------
    def check_deadlock(self) -> None:
        """Raise when sessions and legs wait only for each other, one of them
        at a `join` (upstream's push-mode rule)."""
        if not self.joining:
            return
        waits: dict[Any, tuple[str, list[Any]]] = {}
        for s, at in self.joining.items():
            waits[s] = (f"the `join` at {at}", list(s.legs))
        for pool in self.sim.pool_list:
            for frame in pool.queue:
                waits[frame.session] = (f"`{pool.label}`", _holders_in_the_way(frame))
            # (a stalled `grow` is no such wait: pyserq 0.1.3 and 0.1.4 run on
            # to the horizon and report the stall, `growing_stalled`)
        stuck = set(waits)
        changed = True
        while changed:
            changed = False
            for s in list(stuck):
                deps = waits[s][1]
                if not deps or any(d not in stuck for d in deps):
                    stuck.discard(s)
                    changed = True
        if not any(s in stuck for s in self.joining):
            return
        order = sorted(stuck, key=lambda s: (s.parent is not None, s.sid))
        lines = [f"{party(s)} waits at {waits[s][0]}" for s in order]
        raise SimulationError(
            "the run ends with sessions and legs that wait for each other: "
            + "; ".join(lines), self.env.now,
            help="a leg waits for units a lease holds until its session's copy while the "
                 "session waits for the leg inside a hold another leg needs; a finite "
                 "`lease`, larger pools, or the `join` before the hold breaks the cycle")


def _holders_in_the_way(frame: Any) -> list[Any]:
    """The holders a waiting hold waits for: those of every pool its units
    do not fit now (its reservation does not count, even once an admission
    has read it: pyserq 0.1.3 runs `hold p0 (1) reserve (2)` beside a lease
    of 5 of 6 on to the horizon, tests/test_holds.py). None when it fits
    every pool (it waits for the queue's order only), or when a pool it does
    not fit has no holder or a lease that expires: an event will free it
    (pyserq 0.1.3 and 0.1.4, generator seed 3749; issue 22)."""
    holders: list[Any] = []
    for k, p in enumerate(frame.pools):
        units = p.ru(frame.units[k])
        if p.used + p.reserved() + units <= p.cap + TOL:
            continue
        if any(lease.expires for lease in p.leases):
            return []
        # the pool's holders (`Pool.holder_count`; a lease of a leg that has
        # ended is its session's: `leg_end`)
        if not p.holder_count:
            return []
        holders += p.holder_count
    return holders


def where(leg: Any) -> str:
    """Where a running leg stands, for messages."""
    frame: Optional[Any] = leg.pending
    if frame is not None and getattr(frame, "pools", None):
        return f"waiting at `{frame.pools[0].label}`"
    return "still running"

