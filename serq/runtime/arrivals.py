"""Arrival processes (spec Part 02 §3, Part 07 §4.1).

`poisson` and `renewal` are chains of calendar entries on the arrival
stream: at each arrival the next gap is drawn and scheduled first, then the
session is created. `batch` and `closed` create their sessions at start-up;
`closed` replaces every session that ends (see `Simulation.end_session`).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

from ..errors import SimulationError, shortest
from .instant import timer


class OpenArrivals:
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

    def start(self) -> None:
        """Schedule the first arrival."""
        if self.rate is not None:
            timer(self.sim.env, 0.0, self._arrive)
        else:
            timer(self.sim.env, self._gap(), self._arrive)

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
        else:
            timer(sim.env, self._gap(), self._arrive)
        sim.create_session()
