"""Arrival processes (spec Part 02 §3, Part 07 §4.1).

`poisson` and `renewal` are chains of calendar entries on the arrival
stream: at each arrival the next gap is drawn and scheduled first, then the
session is created. `batch` and `closed` create their sessions at start-up;
`closed` replaces every session that ends (see `Simulation.end_session`).
"""
from __future__ import annotations

import math
from heapq import heappush
from typing import Any, Callable, Optional


from ...core.errors import SimulationError, shortest
from ..kernel.calendar import Entry, schedule_at
from ..kernel.instant import CALENDAR


class OpenArrivals(Entry):
    """`poisson(λ)` (gap = −ln(1 − U)/λ, first arrival at 0) or
    `renewal(g)` (first arrival one gap after 0)."""

    def __init__(self, sim: Any, stream: Any, *, rate: Optional[float] = None,
                 gap: Optional[Callable[[], float]] = None,
                 limit: Optional[int] = None):
        self.sim = sim
        self.stream = stream
        self.rate = rate
        self.gap_fn = gap
        self.limit = limit
        self.count = 0
        self.done = False
        # the process is its own calendar entry (one at a time), as an event
        self._callbacks = [self._arrive]
        self.callbacks: Optional[list] = None

    def _schedule(self, delay: float) -> None:
        env = self.sim.env
        self.callbacks = self._callbacks
        schedule_at(env, env.now + delay, CALENDAR, self)

    def start(self) -> None:
        """Schedule the first arrival."""
        self._schedule(0.0 if self.rate is not None else self._gap())

    def _gap(self) -> float:
        if self.rate is not None:
            return -math.log(1.0 - self.stream.uniform()) / self.rate
        g = self.gap_fn()
        if not (0.0 < g < math.inf):
            raise SimulationError(
                f"`arrive renewal(…)`: the interarrival time is {shortest(g)}, "
                "not a positive time", self.sim.env.now)
        return g

    def _arrive(self, _ev: Any) -> None:
        sim = self.sim
        sim.events += 1
        self.count += 1
        if self.limit is not None and self.count >= self.limit:
            self.done = True
        elif self.rate is not None:  # poisson: `_schedule(_gap())`, inline (the hot path)
            env = sim.env
            self.callbacks = self._callbacks
            gap = -math.log(1.0 - self.stream.uniform()) / self.rate
            heappush(env.queue, (env.now + gap, CALENDAR, next(env.eids), self))  # schedule_at
        else:
            self._schedule(self._gap())
        # in the plain loop no session is ready while a calendar entry is
        # handled, so the new session's start entry would be handled next
        sim.create_session(start_now=sim.simple)
