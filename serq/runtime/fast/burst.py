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
* when the next calendar entry is another engine's iteration end, the loop
  would only hand it to that engine's `_end`: `_burst` relays to that
  engine and goes on with it;
* `_closed` (`closed.py`) plans the default body itself while nobody can
  be admitted, and runs the iterations that follow inline while their plan
  cannot change;
* a pool queue whose head cannot enter (the built-in FIFO choice and fit
  rule, a demand of constants and attributes) does not stop a burst: the
  pool pass the loop would run finds nothing to do, and keeps finding
  nothing while only the engine moves (`_pass_idle`).

A policy that overrides a decision of the engine, claims over iterations,
an iteration body, `serve exclusive prefill`, `granule` and a budget that
draws or reads the clock keep the general path (`attempt`).

When the clock moves inside a burst, the gauges record the settled values
of the instant it leaves, as the event loop does. The event loop turns
bursts off only for the invariant checker, which looks at every event.
"""
from __future__ import annotations

from heapq import heappop, heappush
from typing import Any, Optional

from simpy.events import Event

from ...core.tolerance import TOL
from .blocked import admits_now, blocked_head
from .plan import KeptPlan
from .closed import ClosedRuns, attention_of, needs_block
from ..kernel.instant import CALENDAR
from .leapfrog import leapfrog


class Burst(ClosedRuns):
    """The burst machinery of `StepStage` (a mixin; see the module text)."""

    # -- entry from the calendar ----------------------------------------------------------
    def _end(self, _ev: Event) -> None:
        """The iteration's end (a calendar entry); then, while the engine is
        the only thing that moves, the following iterations (`_burst`)."""
        self.sim.stamp -= 1  # the event loop counted this entry: it is the engine's own
        self._finish()
        if self.burst and self._quiet():
            self._burst()

    def allow_burst(self, allowed: bool) -> None:
        """Let `_end` handle the following quiet iterations itself (the event
        loop allows it unless the invariant checker must see every event)."""
        spec = self.spec
        self.burst = allowed
        # `_closed` plans the default body itself (no policy, no claims)
        self.closed_ok = spec.closed and self.plain_order and self.sim.claims is None
        # a kept plan that reads only this engine's residents outlives other events
        # (`_plan_stamp`; not with legs, whose sessions may change a resident's holds)
        self.own_plans = self.closed_ok and spec.plans_own and self.sim.legs is None

    def admit_one(self, plan: Any, left: Optional[float] = None) -> Optional[list]:
        """`StepStage.admit_one`, answered at once while the head it tried
        last is known not to fit; when it admits nothing, that head is
        recorded (`blocked`: `blocked_head`, `admits_now`)."""
        if self.blocked is not None and not admits_now(self):
            return None  # the head it tried last still cannot fit: nothing to do
        newcomers = super().admit_one(plan, left)
        if newcomers is None and self.closed_ok:
            self.blocked = blocked_head(self, plan)
        return newcomers

    def _quiet(self) -> bool:
        """Whether the event loop, after this event, would only settle this
        stage: nothing else is due now, no pool pass could act, no other
        engine is idle with work, and this one has work."""
        q = self.env.queue
        if q and q[0][0] == self.env.now:
            return False
        if len(self.instant.dirty) != 1 or not (self.residents or self.queue_waiting()):
            return False
        sim = self.sim
        if sim.pool_list:  # (`FleetIndex`: the pools with waiting holds or growers)
            # the pool pass finds nothing to do; found again only when something
            # else than engines' own iterations happened (`Simulation.stamp`):
            # these only take room (growth), so a head that did not fit still
            # does not, and a pass that could act is handed to the loop anyway
            if sim.idle_stamp != sim.stamp:
                sim.idle_stamp = sim.stamp
                sim.pools_idle = not sim.holds.waiting() or self._pass_idle()
            if not sim.pools_idle:
                return False
        # (`FleetIndex`: the engines that may be idle with work, not all of them)
        return not sim.fleet.idle_other(self)

    def _pass_idle(self) -> bool:
        """Whether the pool pass the loop would run now does nothing, and
        keeps doing nothing while only this engine's iterations happen: no
        growth waits, and the head of each queue the pass tries (the built-in
        choice `queue fifo` and fit rule, a demand of constants and
        attributes, fixed while no session code runs) does not fit. (The
        pools the pass would act on: `FleetIndex.passable`.)"""
        for pool in self.sim.fleet.passable:
            if pool.growers:
                return False
            if not pool.queue or pool.spec.admit_via is not None:
                continue
            if pool.spec.queue_keys is not None or not pool.plain_select:
                return False
            frame = pool.queue[0]
            spec = frame.spec
            s = frame.session
            for k, p in enumerate(frame.pools):
                units_static, reserve_static = spec.static[k]
                r = spec.reserve[k]
                if not units_static or (r is not None and not reserve_static) or \
                        not p.plain_room:
                    return False
                need = spec.units[k](s)
                if r is not None:
                    rv = r(s)
                    if not rv >= 0.0:
                        return False  # the pass reports the amount
                    need = max(need, rv)
                if not need >= 0.0:
                    return False
                if not p.has_room(p.ru(need)):
                    break  # the head waits: head-of-line blocking
            else:
                return False  # the head fits: the pass admits it
        return True

    def _burst(self) -> None:
        """Settle now, and handle the iteration ends that follow directly.

        The stage is the only dirty object, so the end of the instant is its
        attempt; when the iteration's end is the next calendar entry (and
        within the horizon) it is handled here. So is the next entry when it
        is another engine's iteration end: the event loop would hand it to
        that engine's `_end` and do nothing else, so the burst goes on with
        that engine (a relay). The burst leaves either after an attempt
        (`instant.closed`: the loop skips its own end-of-event work; an
        attempt that left work for the instant's settle has done it) or
        after an iteration end that is not quiet (the loop does that work at
        the current time)."""
        env = self.env
        q = env.queue
        instant = self.instant
        sim = self.sim
        horizon = sim.horizon
        gauges = bool(sim.gauges)
        ends = sim.engine_ends  # the engines a burst may relay to, by their end event
        st = self  # the engine whose iteration just ended
        st.bursting = True
        launched = False  # `_relay_kept` did the loop's first steps itself
        try:
            while True:
                if launched:
                    launched = False
                else:
                    instant.dirty.clear()
                    st.dirty = False
                    if not st._closed():
                        st.attempt()
                    if instant.dirty:  # a session it admitted joined a stage, or was
                        # preempted: the instant's settle goes on at once, as the
                        # loop's `Instant.settled` would go on after this attempt,
                        # with no pool pass between (Part 02 §10.3 step 4)
                        st._hand_back()
                        st.bursting = False
                        instant.settled()
                        break
                running = st.running
                if running is None or sim.drained is not None:
                    break
                if running[1] is None:  # the iteration ends before anything else
                    t = st.inline_end
                else:
                    top = q[0]
                    if top[0] > horizon:
                        break
                    ev = top[3]
                    if ev is not running[1]:
                        other = ends.get(ev)
                        if other is None or not other.burst or other.running is None \
                                or other.running[1] is not ev:
                            break
                        st.bursting = False
                        # (worth a look when the entry after `other`'s, the
                        # smaller child of the heap's root, is an engine's end)
                        n = len(q)
                        frog = None
                        if n > 1 and other.kept is not None:  # (as `_may_go_on` asks first)
                            nxt = q[1] if n == 2 or q[1] < q[2] else q[2]
                            if nxt[3] in ends:
                                frog = leapfrog(other)
                        if frog is not None:  # engines' ends handled, up to frog[0]'s
                            st, launched = frog
                            st.bursting = True
                            continue
                        st = other
                        st.bursting = True
                    heappop(q)
                    t = top[0]
                    ev.callbacks = None
                if gauges and t != env.now:
                    sim.record_gauges(env.now)
                env.now = t
                kept = st.kept
                if kept is not None and kept.stamp == st._plan_stamp():
                    step = st._relay_kept(kept)
                    if step < 0:
                        return
                    launched = step > 0
                    continue
                st._finish()
                if not st._quiet():
                    return
        finally:
            st.bursting = False
        instant.closed = True

    def _hand_back(self) -> None:
        """Leave the burst to the event loop: an iteration `_burst` would
        end inline goes on the calendar after all."""
        running = self.running
        if running is not None and running[1] is None:
            self.end_on_calendar(running[0], self.inline_end)

    # -- a kept plan going on after a relay --------------------------------------------------
    def _relay_kept(self, kept: KeptPlan) -> int:
        """The end of an iteration of a closed run whose plan is kept (nothing
        but engines' iterations happened since its launch), at the current
        time: what `_finish`, `_quiet` and `_closed` do, in their order, with
        the plan known. Returns -1 when the model is not quiet (`_finish`
        done: `_burst` leaves), 1 when the plan's next iteration is launched
        onto the calendar (`_closed`'s common case with several engines), 0
        when `_closed` (or `attempt`) must go on from here: a run finishes, a
        hold's block does not fit, or the next iteration ends before anything
        else (then the kept plan carries the checks and the cost done here)."""
        _stamp, assign, tokens, dec, prefilled, attention, r, kvd, kvp, cost, run, _ready = kept
        if run is None:
            run = self._run_of(assign, tokens, float(dec), prefilled, attention)
        cls, pairs, grows, decoders, moving, regrow = run
        for job, t in pairs:
            if job.remaining - t <= TOL:  # a run finishes: `_finish` in full
                self._finish()
                return 0 if self._quiet() else -1
        sim = self.sim
        env = self.env
        now = env.now
        # `_finish`
        sim.events += 1
        if now - self.t_last:
            self._advance(now)
        self.running = None
        self.last_void = True
        sim.fleet.idle.add(self)
        self.cur_cls = -1
        self.cur_decodes = 0
        finishing = False
        for job, t in pairs:
            rem = job.remaining = job.remaining - t
            if rem - t <= TOL:
                finishing = True
        if decoders:
            sim.tokens.decode_run(decoders, self, [now])
        instant = self.instant
        if not self.dirty:
            self.dirty = True
            instant.dirty.append(self)
        if not instant.inline:
            instant.mark(self)
        if not self._quiet():
            return -1
        # `_burst`'s loop, then `_closed` with the kept plan
        instant.dirty.clear()
        self.dirty = False
        spec = self.spec
        if finishing or spec.serve_varies or not self.closed_ok or self.queue_waiting():
            self.kept = KeptPlan(_stamp, assign, tokens, dec, prefilled, attention, r, kvd, kvp,
                                 cost, run, False)
            return 0
        if moving:
            attention = attention_of(assign)
        if grows and needs_block(grows):
            if regrow is not None:
                regrow.attention = attention
            if regrow is None or regrow() is None:  # (nothing allocated)
                self.kept = KeptPlan(_stamp, assign, tokens, dec, prefilled, attention, r, kvd,
                                     kvp, cost, run, False)
                return 0
            r, kvd, kvp, cost = regrow.r, regrow.kvd, regrow.kvp, regrow.cost
            regrow.cost = None
        elif spec.cost_pools or moving or not spec.cost_steady:
            cost = spec.cost(tokens, float(dec), prefilled, r, kvd, kvp, attention,
                             self.registers)
            if not cost > 0.0:
                cost = self._checked_cost(cost, tokens)  # raises when tokens > 0
        end = now + cost
        q = env.queue
        if not ((q and q[0][0] <= end) or end > sim.horizon or sim.drained is not None):
            # it ends before anything else: `_closed` runs on inline from here
            self.kept = KeptPlan(_stamp, assign, tokens, dec, prefilled, attention, r, kvd, kvp,
                                 cost, run, True)
            return 0
        # `_launch_kept`: the next iteration, its end on the calendar, its plan kept
        self.last_void = False
        self.iterations += 1
        for frame, cell, t in grows:
            cell.pos += t
            if not cell.marked:
                frame.grown = cell.marked = True
        self.cur_cls = cls
        self.cur_decodes = dec
        if dec and now >= self.warmup:
            self.batch_count += 1
            self.batch_decodes += dec
            self.batch_time += cost
        self.served_tokens += tokens
        ev = self._end_ev
        ev.callbacks = self._end_cbs
        heappush(q, (end, CALENDAR, next(env.eids), ev))
        self.running = (assign, ev)
        self.kept = KeptPlan(_stamp, assign, tokens, dec, prefilled, attention, r, kvd, kvp, cost,
                             run, False)
        return 1


_FAST: dict[type, type] = {}


def with_fast_paths(cls: type) -> type:
    """The step engine class `cls` with the burst and closed-run machinery
    mixed in ahead of it (one class per `cls`, made once). For an engine whose
    decisions are the built-in ones only (`StepStage.plain_order`): the fast
    paths plan for the built-in serve order, batch choice and admission."""
    fast = _FAST.get(cls)
    if fast is None:
        fast = _FAST[cls] = type(cls.__name__, (Burst, cls), {
            "__module__": cls.__module__, "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__})
    return fast
