"""Runs over several stages: flows and `share` (spec Part 04 §3).

Every job on a *shared* stage (a `ps` stage some multi-stage run holds) is
a flow with one remaining work that decreases at one rate on all its
stages. After every settle in which a flow started or ended (as a `ps`
stage's: `FlowNetwork.each_settle`), the rates are recomputed by the
program's policy and the earliest completion is scheduled; an entry made
obsolete by a later change does nothing.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from simpy.events import Event

from ...core import ir
from ...core.numeric import seq_sum
from ..kernel.calendar import fire_entry, trigger
from ..kernel.instant import CALENDAR
from .stages import Job, Stage, left

#: a stage is full once its residual rate is at most this share of its `phi`
#: (a relative round-off bound of the water-filling, not a tolerance of the spec)
FULL_SHARE = 1e-12


class SharedStage(Stage):
    """A `ps(φ)` stage served by the flow policy; φ is a constant."""

    kind = "ps"

    def __init__(self, sim: Any, net: "FlowNetwork", name: str, index: Optional[int],
                 phi: float):
        super().__init__(sim, name, index)
        self.net = net
        self.phi = phi
        self.flows: list[Job] = []
        self.carried = 0.0  # Σ rate / φ

    def _advance(self, now: float) -> None:
        dt = now - self.t_last
        if dt:
            if self.n:
                self.int_n += self.n * dt
                self.int_busy += self.carried * dt
            self.t_last = now

    def request(self, session: Any, work: float) -> Job:
        """A single-stage run on a shared stage is a flow of one stage."""
        return self.net.start((self,), session, work)

    def cancel(self, job: Job) -> None:
        """A preempted session's flow leaves every stage it holds."""
        self.net.remove(job)

    def work(self) -> float:
        self.net.sync(self.env.now)
        return seq_sum(left(f.remaining) for f in self.flows)


class FlowNetwork:
    """All shared stages of a program and the flows on them."""

    #: the rates are recomputed after every settle in which a flow started or
    #: ended, as a `ps` stage's are (`Instant.settle_each`), not once the
    #: instant is over: a completion scheduled by an earlier settle of the
    #: instant comes first among the completions that tie with it (pyserq
    #: 0.1.3 and 0.1.4, generator seed 84985)
    each_settle = True

    def __init__(self, sim: Any, policy: str):
        self.sim = sim
        self.env = sim.env
        self.policy = policy
        self.stages: list[SharedStage] = []
        self.flows: list[Job] = []
        self.t_last = 0.0
        self.gen = 0
        self.dirty = False
        self.seq = 0
        #: recomputed after every stage at the end of a settle (the stages go
        #: in declaration order, Part 02 §10.3 step 4; pyserq 0.1.3, issue 22)
        self.order = float("inf")

    def add_stage(self, decl: ir.Stage, index: Optional[int]) -> SharedStage:
        """Create a member of a shared stage family."""
        phi = decl.capacity.value if isinstance(decl.capacity, ir.Num) else 1.0
        stage = SharedStage(self.sim, self, decl.name, index, phi)
        self.stages.append(stage)
        return stage

    def request_for(self, stages: tuple[SharedStage, ...]) -> Callable[[Any, float], Job]:
        """The `request(session, work)` of a run over `stages`."""
        return lambda session, work: self.start(stages, session, work)

    def sync(self, now: float) -> None:
        """Advance every flow's remaining work to `now`."""
        dt = now - self.t_last
        if dt:
            for f in self.flows:
                f.remaining -= f.rate * dt
            self.t_last = now

    def start(self, stages: tuple[SharedStage, ...], session: Any, work: float) -> Job:
        now = self.env.now
        self.sync(now)
        job = Job(self.env, session, work, stages[0])
        job.remaining = work
        job.rate = 0.0
        job.stages = stages
        job.seq = self.seq
        self.seq += 1
        for st in stages:
            st._advance(now)
            st.n += 1
            st.flows.append(job)
        self.flows.append(job)
        self._changed()
        return job

    def _changed(self) -> None:
        self.gen += 1
        self.sim.instant.mark(self)

    def end_of_instant(self) -> None:
        """Recompute every rate and schedule the earliest completion."""
        now = self.env.now
        self.sync(now)
        for st in self.stages:
            st._advance(now)
        if self.policy == "maxmin":
            self._maxmin()
        else:
            self._bottleneck()
        for st in self.stages:
            st.carried = seq_sum(f.rate for f in st.flows) / st.phi if st.flows else 0.0
        # the earliest completion time, `now + remaining / rate`: flows whose
        # times are equal (as floats: their remaining work may differ in the
        # last bits) go in start order (pyserq 0.1.3 and 0.1.4, generator
        # seed 132724)
        best = None
        best_t = best_dt = 0.0
        for f in self.flows:
            if f.rate > 0:
                dt = f.remaining / f.rate
                t = now + dt  # (the time the calendar entry gets)
                if best is None or t < best_t:
                    best, best_t, best_dt = f, t, dt
        if best is None:
            return
        ev = Event(self.env)
        ev.callbacks.append(self._timer)
        trigger(self.env, ev, CALENDAR, max(best_dt, 0.0), (self.gen, best))

    def _bottleneck(self) -> None:
        for f in self.flows:
            f.rate = min(st.phi / st.n for st in f.stages)

    def _maxmin(self) -> None:
        residual = {st: st.phi for st in self.stages}
        unfrozen = list(self.flows)
        for f in unfrozen:
            f.rate = 0.0
        while unfrozen:
            counts: dict[SharedStage, int] = {}
            for f in unfrozen:
                for st in f.stages:
                    counts[st] = counts.get(st, 0) + 1
            inc = min(residual[st] / c for st, c in counts.items())
            for f in unfrozen:
                f.rate += inc
            full = set()
            for st, c in counts.items():
                residual[st] -= inc * c
                if residual[st] <= FULL_SHARE * st.phi:
                    full.add(st)
            unfrozen = [f for f in unfrozen if not any(st in full for st in f.stages)]

    def remove(self, job: Job, finished: bool = False) -> None:
        """Take a flow out of every stage it holds (`finished`: it completed)."""
        now = self.env.now
        self.sync(now)
        self.flows.remove(job)
        for st in job.stages:
            st._advance(now)
            st.n -= 1
            st.flows.remove(job)
            if finished:
                st._record(job, now)
        self._changed()

    def _timer(self, ev: Event) -> None:
        self.sim.events += 1
        gen, job = ev.value
        if gen != self.gen:
            return
        self.remove(job, finished=True)
        fire_entry(job)
