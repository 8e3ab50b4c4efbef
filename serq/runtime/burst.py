"""Quiet iterations of a step engine, handled without the event loop.

Between two events of the rest of the model an engine often runs many
iterations alone: each iteration's end is the next calendar entry, nothing
else is due at that instant, and the end of the instant only settles the
engine. The event loop would then pop the entry, find nothing else to do
and call the engine's attempt. `Burst` does exactly that work in place
(Part 02 §10, Part 04 §7), so that the results are those of the loop, event
for event:

* `_end` (the calendar entry of an iteration's end) finishes the iteration
  and, when the model is quiet, settles the engine itself (`_burst`);
* an iteration whose end comes strictly before the next calendar entry (and
  within the horizon) is not put on the calendar: `_burst` ends it inline;
* when every resident decodes and the in-order body would give each one
  token that fits its allocation, `_repeat_decodes` plans that iteration
  without a `Plan`, and `_replay` runs whole iterations of that steady batch
  (start and end) while none of them finishes a run or needs growth.

When the clock moves inside a burst, the gauges record the settled values
of the instant it leaves, as the event loop does. The event loop turns
bursts off only for the invariant checker, which looks at every event.
"""
from __future__ import annotations

from heapq import heappop
from typing import Optional

from simpy.events import Event

from .holds import TOL

EPS = 1e-9


class Burst:
    """The burst machinery of `StepStage` (a mixin; see the module text)."""

    # -- entry from the calendar ----------------------------------------------------------
    def _end(self, _ev: Event) -> None:
        """The iteration's end (a calendar entry); then, while the engine is
        the only thing that moves, the following iterations (`_burst`)."""
        self._finish()
        if self.burst and self._quiet():
            self._burst()

    def allow_burst(self, allowed: bool) -> None:
        """Let `_end` handle the following quiet iterations itself (the event
        loop allows it unless the invariant checker must see every event)."""
        spec = self.spec
        self.burst = allowed
        self.others = [st for st in self.sim.step_list if st is not self]
        self.repeatable = (spec.fixed is not None and spec.in_order and self.plain_order
                           and self.sim.claims is None)

    def _quiet(self) -> bool:
        """Whether the event loop, after this event, would only settle this
        stage: nothing else is due now, no pool pass could act, no other
        engine is idle with work, and this one has work."""
        q = self.env._queue
        if q and q[0][0] == self.env._now:
            return False
        if len(self.instant.dirty) != 1 or not (self.residents or self.queue_waiting()):
            return False
        sim = self.sim
        if sim.pool_list and sim.holds.waiting():
            return False
        for st in self.others:
            if st.last_void and st.running is None and (st.residents or st.queue_waiting()):
                return False
        return True

    def _burst(self) -> None:
        """Settle now, and handle the iteration ends that follow directly.

        The stage is the only dirty object, so the end of the instant is its
        attempt; when the iteration's end is the next calendar entry (and
        within the horizon) it is handled here. The burst leaves either
        after an attempt (`instant.closed`: the loop skips its own
        end-of-event work) or after an iteration end that is not quiet (the
        loop does that work at the current time)."""
        env = self.env
        q = env._queue
        instant = self.instant
        sim = self.sim
        horizon = sim.horizon
        gauges = bool(sim.gauges)
        self.bursting = True
        try:
            while True:
                instant.dirty.clear()
                self.dirty = False
                if not (self.repeatable and self._replay()) and not self._repeat_decodes():
                    self.attempt()
                running = self.running
                if running is None or sim.drained is not None:
                    break
                if running[1] is None:  # the iteration ends before anything else
                    t = self.inline_end
                else:
                    top = q[0]
                    if top[3] is not running[1] or top[0] > horizon:
                        break
                    heappop(q)
                    t = top[0]
                    top[3].callbacks = None
                if gauges and t != env._now:
                    sim.record_gauges(env._now)
                env._now = t
                self._finish()
                if not self._quiet():
                    return
        finally:
            self.bursting = False
        instant.closed = True

    # -- a steady decode batch ------------------------------------------------------------
    def _steady(self) -> bool:
        """Whether `attempt` would give every resident one decode token that
        fits its allocation, with nothing to admit."""
        res = self.residents
        k = len(res)
        if not self.repeatable or k == 0 or self.spec.fixed[0] < k or self.queue_waiting():
            return False
        for job in res:
            if job.mode != "decode" or job.stall is not None or job.remaining < 1.0:
                return False
            if job.growing is not None and job.session is not None:
                frame = job.frame
                if frame is None or frame.pos[job.fk] + 1.0 - frame.alloc[job.fk] > TOL:
                    return False
        return True

    def _launch_steady(self, kvd: float, cost: Optional[float] = None) -> None:
        """Start the steady batch's iteration (one decode token each), as
        `_start` would after `attempt` planned it; `kvd` is its `kv_decode`,
        `cost` its cost when already evaluated."""
        assign = []
        for job in self.residents:
            frame = job.frame
            pos = frame.pos[job.fk] if frame is not None and job.growing is not None else 0.0
            assign.append((job, 1.0, pos))
        self.last_void = False
        k = len(assign)
        n = float(k)
        self._launch(assign, n, k, 0.0, n, kvd, 0.0, 0.0, None, cost)

    def _repeat_decodes(self) -> bool:
        """Start the iteration `attempt` would plan for a steady decode
        batch; False (nothing done) when the batch is not steady."""
        if not self._steady():
            return False
        self._launch_steady(self.totals()[2])
        return True

    def _replay(self) -> bool:
        """Whole iterations of a steady decode batch, start to end, while
        none finishes a run or needs growth and each ends strictly before
        the next calendar entry (and within the horizon): `_repeat_decodes`,
        `_launch` and `_finish` with what cannot change in between (the
        batch, its allocations, the pools, the rest of the model) read once.

        Returns True when it started an iteration that is not handled here
        (its end is a calendar entry); False when the caller attempts next
        (the stage is then as `_finish` leaves it)."""
        if not self._steady():
            return False
        res = self.residents
        for job in res:
            if job.remaining - 1.0 <= EPS:
                return False
        env = self.env
        q = env._queue
        sim = self.sim
        horizon = sim.horizon
        warmup = self.warmup
        cost_fn = self.spec.cost
        checked = self._checked_cost
        decode = sim.tokens.decode
        R = self.registers
        k = len(res)
        n = float(k)
        kvd = self.totals()[2]  # every resident decodes
        grows = [(job.frame, job.fk) for job in res
                 if job.growing is not None and job.session is not None]
        cls_time = self.cls_time
        gauges = bool(sim.gauges)
        in_flight = ([(job, 1.0, 0.0) for job in res], None) if gauges else None
        now = env._now
        while True:
            cost = cost_fn(n, n, 0.0, n, kvd, 0.0, 0.0, R)
            if not cost > 0.0:
                cost = checked(cost, n)  # raises: a batch with tokens takes time
            end = now + cost
            if (q and q[0][0] <= end) or end > horizon:
                break
            self.iterations += 1
            for frame, fk in grows:
                frame.pos[fk] += 1.0
                frame.grown = True
            if now >= warmup:
                self.batch_count += 1
                self.batch_decodes += k
                self.batch_time += cost
            self.served_tokens += n
            sim.events += 1
            dt = end - now
            if dt:
                self.int_n += self.n * dt
                self.int_busy += dt
                cls_time[1] += dt
                self.int_decodes += k * dt
                self.t_last = end
            if gauges and end != now:
                self.running = in_flight  # the gauges see the iteration running
                sim.record_gauges(now)
                self.running = None
            env._now = now = end
            last = False
            for job in res:
                job.remaining -= 1.0
                if job.session is not None:
                    decode(job.session, self, end)
                if job.remaining - 1.0 <= EPS:
                    last = True
            for frame, fk in grows:
                if frame.pos[fk] + 1.0 - frame.alloc[fk] > TOL:
                    last = True
            if last:
                return False
        # this iteration's end is a calendar entry: start it with its cost
        self._launch_steady(kvd, cost)
        return True
