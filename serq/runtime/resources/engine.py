"""The step engine: continuous batching (spec Part 04 §5–§9, §12).

A step stage is a resource whose residents are runs measured in tokens.
Once an instant has settled (no other event due now), an idle stage with
work attempts an iteration: it serves residents in its serve order (a
decode takes one token, a prefill up to `chunk`, until the budget is spent),
grows their holds first (which may preempt), admits from the pools that
name it in `admit via`, evaluates `cost`, and schedules the iteration's end,
where the tokens are applied. The policy seam: `serving_order(keys)`,
`in_batch(job, plan, only)` and `admission_pool(plan)` are methods a
subclass may override (checked by `guards.py` when it does).
"""
from __future__ import annotations

import math
from heapq import heappush
from operator import itemgetter
from typing import Any, Callable, Iterable, Optional, Sequence

from ...core.errors import SimulationError, shortest
from ...stats.gauges import LogHistogram
from ..kernel.instant import CALENDAR, READY, Instant, run_ready, timer_event
from ...core.numeric import seq_sum
from ...core.tolerance import TOL
from .decision import decision, overridden
from .stages import Job, Stage
from .steprun import Plan, StepJob


def share(rem: float, decoding: bool, chunk: float, left: float) -> float:
    """A resident's tokens in an iteration with `left` budget left (§7 step
    3): one for a decode, up to `chunk` (when positive) for a prefill,
    never more than it has left to do."""
    if decoding:
        t = 1.0 if rem >= 1.0 else rem
    else:
        t = chunk if 0 < chunk < rem else rem
    return left if t > left else t


#: `admission` at the Serve moment for a resident whose owner was never
#: admitted by a hold (Part 04 §5: it sorts after every admitted one): 2**64,
#: pyserq 0.1.3's value (its largest unsigned 64-bit number as a float;
#: `serve only (admission == 18446744073709551616)` serves such a run there)
NEVER_ADMITTED = float(2**64)

#: The decisions a policy may override (`serq.policies.StepStage`).
DECISIONS = ("serving_order", "in_batch", "admission_pool")


class StepStage(Stage):
    """A `step { … }` stage member.

    Without fast paths: every iteration's end is a calendar entry handled by
    the event loop. `serq.runtime.fast.with_fast_paths` mixes the burst and
    closed-run machinery in ahead of this class for an engine whose decisions
    are the built-in ones (the simulation does so)."""

    kind = "step"

    # The fields an iteration's end and launch read or write (the event loop,
    # the relay, the leapfrog) sit in the object itself, side by side, and
    # the others in its dictionary: in a large fleet each event reaches one
    # engine among hundreds, whose fields have left the processor's caches,
    # and a field in the object costs fewer memory reads than one in the
    # dictionary's values (a subclass, a policy, still has a dictionary).
    __slots__ = ("sim", "env", "instant", "warmup", "running", "kept", "frog", "unplain",
                 "closed_ok", "burst", "bursting", "own_stamp", "own_plans", "_end_ev", "blocked",
                 "served_queues", "residents", "last_void", "dirty", "n", "t_last", "int_n",
                 "int_busy", "cls_time", "int_decodes", "cur_cls", "cur_decodes", "iterations",
                 "batch_count", "batch_decodes", "batch_time", "served_tokens")

    def __init__(self, sim: Any, name: str, index: Optional[int], spec: Any,
                 instant: Instant, order: int):
        super().__init__(sim, name, index)
        self.spec = spec
        self.instant = instant
        self.order = order
        self.dirty = False
        self.residents: list[StepJob] = []
        self.running: Optional[tuple] = None
        self.registers: dict[str, float] = dict(spec.registers) if spec is not None else {}
        self.memory: Any = None
        self.served_pools: list[Any] = []
        self.served_queues: list[list] = []  # their queues (`Pool.queue` lists), in order
        self.admit_left: Optional[float] = None
        self.plan: Optional[Plan] = None
        self.last_void = True  # idle: any event may start an attempt
        # the built-in serve order, batch choice and admission: the fast paths
        # of `_serve_in_order` and `burst.py` may plan for them
        cls = type(self)
        self.plain_order = not any(overridden(cls, m) for m in DECISIONS)
        self._end_cbs = [self._end]  # the end entry's callbacks (never changed)
        self._end_ev = timer_event(self.env)
        self.burst = False  # set by the event loop when it allows `_burst`
        self.bursting = False  # inside `_burst`
        self.kept: Optional[tuple] = None  # `fast.plan.KeptPlan`, a closed run's iteration
        # what changed this engine's residents (`ClosedRuns._plan_stamp`)
        self.own_stamp = 0
        self.own_plans = False  # kept plans are checked against `own_stamp` (`allow_burst`)
        self.unplain: Optional[tuple] = None  # a run `leapfrog` does not take (`_side`)
        self.frog: Optional[list] = None  # `leapfrog`'s side of this engine, kept across calls
        self.closed_ok = False  # `_closed` may plan for `attempt` (set by `allow_burst`)
        self.blocked: Optional[tuple] = None  # an admission known to fail (`fast.blocked`)
        self.inline_end = 0.0  # the end of an iteration `_burst` handles itself
        self.paused = 0  # pauses in force (`pause`): no iteration starts while > 0
        # statistics
        self.iterations = 0
        self.cls_time = [0.0, 0.0, 0.0]   # prefill only, decode only, mixed
        self.int_decodes = 0.0
        self.cur_cls = -1
        self.cur_decodes = 0
        self.batch_count = 0
        self.batch_decodes = 0.0
        self.batch_time = 0.0
        self.itl = LogHistogram()
        self.itl_sum = 0.0
        self.itl_n = 0
        self.served_tokens = 0.0

    # -- time averages --------------------------------------------------------------
    def _advance(self, now: float) -> None:
        dt = now - self.t_last
        if dt:
            if self.n:
                self.int_n += self.n * dt
                self.int_busy += dt
            if self.cur_cls >= 0:
                self.cls_time[self.cur_cls] += dt
                self.int_decodes += self.cur_decodes * dt
            self.t_last = now

    def reset_measurement(self, now: float) -> None:
        super().reset_measurement(now)
        self.cls_time = [0.0, 0.0, 0.0]
        self.int_decodes = 0.0

    # -- residents ------------------------------------------------------------------------
    def request(self, session: Any, work: float, mode: str = "prefill",
                growing: Any = None) -> StepJob:
        """A run of `work` tokens joins the residents (Part 04 §5 order)."""
        env = self.env
        self.sim.stamp += 1
        self.own_stamp += 1
        self._advance(env.now)
        job = StepJob(env, session, work, self)
        job.mode = mode
        job.remaining = work
        job.growing = growing
        job.stall = None
        job.frame = None
        job.cell = None
        job.ticks = None  # its deferred decode tokens' times (`TokenLog.decode_deferred`)
        job.joined = env.now
        if mode == "prefill" and session is not None:
            self.sim.tokens.prefill_run(session, work)
        adm = session.adm_seq if session is not None and session.adm_seq else math.inf
        job.adm = adm
        res = self.residents
        k = len(res)
        while k > 0 and res[k - 1].adm > adm:
            k -= 1
        res.insert(k, job)
        self.n += 1
        self.instant.mark(self)
        self.sim.fleet.idle.add(self)  # it may be idle with work now
        return job

    def cancel(self, job: StepJob) -> None:
        """A resident leaves unfinished (its owner was preempted or ended)."""
        self.sim.stamp += 1
        self.own_stamp += 1
        self._advance(self.env.now)
        if job in self.residents:
            self.residents.remove(job)
            self.n -= 1
        plan = self.plan
        if plan is not None:
            for a in plan.assign:
                if a[0] is job:  # its recorded tokens are dropped (§7)
                    plan.tokens -= a[1]
                    if plan.growing:  # (not when an admitted session's `grow`
                        plan.left += a[1]  # preempted it: 0.1.3, generator seed 169046)
                    if job.mode == "prefill":
                        plan.prefilled -= a[1]
                        # and its attention: the cost counts the scheduled
                        # residents only (§7 step 7; pyserq 0.1.3, issue 22)
                        plan.attention -= a[1] * (a[2] + a[1] / 2.0)
            plan.assign = [a for a in plan.assign if a[0] is not job]
        if self.running is not None:
            self.running[0][:] = [a for a in self.running[0] if a[0] is not job]
        if job.stall is not None:
            job.stall.cancel()

    def work(self) -> float:
        """Tokens left in the residents' runs."""
        return seq_sum(j.remaining for j in self.residents)

    def busy_count(self) -> int:
        """Jobs scheduled in the running iteration (0 between iterations)."""
        return len(self.running[0]) if self.running is not None else 0

    def idle_with_work(self) -> bool:
        """Whether the stage is idle (its last attempt started nothing and no
        iteration runs) while it has residents or a waiting hold: the event
        loop's settle would start it."""
        return self.last_void and self.running is None and \
            bool(self.residents or self.queue_waiting())

    def queue_waiting(self) -> bool:
        """Whether a pool this stage admits from has a waiting hold."""
        for q in self.served_queues:
            if q:
                return True
        return False

    # -- moments ---------------------------------------------------------------------------
    def totals(self, jobs: Optional[Iterable[StepJob]] = None) -> tuple[float, float, float, float]:
        """(residents, decoders, kv_decode, kv_prefill) over `jobs` (all residents).

        A sum is 0.0 when nothing that reads these totals reads it (over all
        residents `spec.resident_kv` and `spec.resident_dec`, over a plan's
        jobs `spec.needs_kv`): a value an expression does not read cannot
        change its result."""
        spec = self.spec
        if jobs is None:
            jobs = self.residents
            if spec.resident_kv:
                mem = self.memory
            elif spec.resident_dec:
                mem = None
            else:
                return float(len(jobs)), 0.0, 0.0, 0.0
        else:
            mem = self.memory if spec.needs_kv else None
        dec = kvd = kvp = 0.0
        if mem is None:
            for j in jobs:
                if j.mode == "decode":
                    dec += 1
            return float(len(self.residents)), dec, 0.0, 0.0
        holders = mem.holder_count  # session -> its holds and leases on `mem`
        for j in jobs:
            # the units the session holds in `mem` (a hold takes a pool once)
            held = 0.0
            s = j.session
            cell = j.cell
            if cell is not None and j.growing is mem and (not mem.multi or holders.get(s) == 1):
                # the hold the run grows is the session's only one on `mem`
                # (the common case, without walking the session's holds; while
                # no session holds `mem` twice, without reading the session)
                held = cell.alloc
            elif s is not None:
                for frame in s.holds:
                    pools = frame.pools
                    if mem in pools:  # (pools compare by identity)
                        held += frame.cells[pools.index(mem)].alloc
            if j.mode == "decode":
                dec += 1
                kvd += held
            else:
                kvp += held
        return float(len(self.residents)), dec, kvd, kvp

    def _want(self, job: StepJob, chunk: float) -> float:
        if job.mode == "decode":
            return min(1.0, job.remaining)
        if chunk > 0:
            return min(job.remaining, chunk)
        return job.remaining

    def _budget_chunk(self) -> tuple[float, float]:
        fixed = self.spec.fixed
        if fixed is not None:
            return fixed
        if self.spec.pre_totals:
            res, dec, kvd, kvp = self.totals()
        else:
            res = dec = kvd = kvp = 0.0
        R = self.registers
        b = self.spec.budget(res, dec, kvd, kvp, R)
        c = self.spec.chunk(res, dec, kvd, kvp, R)
        return b, c

    def budget_left(self) -> float:
        """`budget_left(S)` (Part 04 §7.1)."""
        if self.admit_left is not None:
            return self.admit_left
        b, c = self._budget_chunk()
        want = self._want
        wants = 0.0  # the residents' wants, added left to right
        for j in self.residents:
            wants += want(j, c)
        return max(0.0, b - wants)

    def _serve_ctx(self, job: StepJob, totals: Optional[tuple] = None) -> tuple:
        """The Serve-moment values of a resident (totals as they stand)."""
        if totals is None:
            totals = self.totals() if self.spec.serve_totals else (0.0, 0.0, 0.0, 0.0)
        return (job.session, 1.0 if job.mode == "decode" else 0.0,
                job.adm if job.adm < math.inf else NEVER_ADMITTED, job.remaining,
                *totals, self.registers)

    # -- policy seam --------------------------------------------------------------------------
    #: Whether `in_batch` is overridden (the serving pass then asks it for every resident).
    batch_policy = False
    #: Whether `serving_order` is overridden (else the serving pass reads the
    #: residents themselves when there are no keys).
    order_policy = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.batch_policy = overridden(cls, "in_batch")
        cls.order_policy = overridden(cls, "serving_order")

    @decision
    def serving_order(self, keys: Optional[Callable[..., tuple]]) -> list[StepJob]:
        """Policy: the residents in serving order (`serve admission`/`by`).

        Receives the compiled keys of the serve statement (None: admission
        order); a key function takes `*self.serve_context(job)`. Read
        `self.residents` (admission order): each `StepJob` has `mode`
        ("prefill"/"decode"), `remaining` tokens, `adm` (admission number)
        and `session` (`session.attribute("name")` reads an attribute).
        Returns the residents in the order they are served, each exactly
        once. Re-asked before each resident is picked (§7 step 2), so it
        sees newcomers and preemptions; not consulted under `serve exclusive
        prefill`. Checked when overridden: the result lists every current
        resident exactly once. Default: ties keep admission order."""
        if keys is None:
            return list(self.residents)
        totals = self.totals() if self.spec.serve_totals else (0.0, 0.0, 0.0, 0.0)
        return sorted(self.residents, key=lambda j: keys(*self._serve_ctx(j, totals)))

    @decision
    def in_batch(self, job: StepJob, plan: Plan, only: Optional[Callable[..., float]]) -> bool:
        """Policy: whether `job`, the next resident in serving order, gets tokens now.

        Receives the resident, the iteration's `Plan` (`plan.left` budget
        left, `plan.tokens`, `plan.prefilled`, `plan.assign` so far) and the
        serve statement's compiled `only` predicate (None without one).
        Returns True to serve it (it then gets `min(want, left)` tokens,
        growing its hold first), False to skip it for this iteration.
        Checked when overridden: the result is a bool. Default: the `only`
        predicate (`serve only (p)`), True without one."""
        return only is None or only(*self._serve_ctx(job)) != 0

    @decision
    def admission_pool(self, plan: Plan) -> Optional[Any]:
        """Policy: the pool the engine admits its next waiting hold from, or None.

        Asked while the iteration may still admit (budget left, nothing
        preempted, Part 04 §7 step 5). Receives the `Plan`; the candidates
        are `self.served_pools` (the pools naming this stage in `admit
        via`, declaration order). Returns one with a non-empty `queue`, or
        None to admit nobody more in this iteration; the pool's
        `select_candidate` and the fit rule then decide which hold, if any,
        is admitted. Checked when overridden: None, or a served pool with a
        waiting hold. Default: the first served pool with a waiting hold."""
        for pool in self.served_pools:
            if pool.queue:
                return pool
        return None

    # -- the iteration ------------------------------------------------------------------------
    def _end(self, _ev: Any) -> None:
        """The iteration's end (a calendar entry)."""
        self.sim.stamp -= 1  # the event loop counted this entry: it is the engine's own
        self._finish()

    def allow_burst(self, allowed: bool) -> None:
        """Without fast paths an engine never handles iterations itself."""

    def end_of_instant(self) -> None:
        """The instant has settled: attempt an iteration if idle with work
        (and not paused)."""
        if self.running is None and (self.residents or self.queue_waiting()) \
                and not self.paused:
            self.attempt()

    def pause(self) -> None:
        """Start no iteration until as many `resume`s (a user process's
        failure injector, docs/guide/simpy.md): the running iteration
        finishes; nothing is preempted. The engine's fast paths are off from
        now on (they would launch iterations without asking)."""
        self.paused += 1
        self.allow_burst(False)

    def resume(self) -> None:
        """End one `pause`; the last one lets the engine attempt at once."""
        self.paused -= 1
        if not self.paused:
            self.instant.mark(self)

    def attempt(self) -> None:
        """Plan an iteration (§7); start it unless it schedules nothing."""
        self.sim.stamp += 1
        self.own_stamp += 1
        saved = dict(self.registers) if self.registers else None
        fixed = self.spec.fixed  # (`_budget_chunk`'s common case, inline)
        b, c = fixed if fixed is not None else self._budget_chunk()
        plan = self.plan = Plan(b, c)
        try:
            if self.spec.in_order and self.plain_order and not self.queue_waiting():
                self._serve_in_order(plan)
            else:
                self.spec.body(self, plan)
        finally:
            self.plan = None
            self.admit_left = None
        if not plan.assign and not plan.preempted:
            if not plan.admitted and saved is not None:
                self.registers = saved
            self.last_void = True
            self.sim.fleet.idle.add(self)  # idle, perhaps with work
            return
        self.last_void = False
        assign = plan.assign
        sums = plan.sums
        if sums is not None and sums[3] == len(assign) and not plan.preempted:
            # (no run joined the plan since `_serve_in_order` added them up,
            # and no hold lost its allocation)
            res, (dec, kvd, kvp, _n) = float(len(self.residents)), sums
        else:
            res, dec, kvd, kvp = self.totals(map(itemgetter(0), assign))
        self._launch(assign, plan.tokens, int(dec), plan.prefilled, res, kvd, kvp,
                     plan.attention, plan)

    def _launch(self, assign: list, tokens: float, decoders: int, prefilled: float,
                res: float, kvd: float, kvp: float, attention: float,
                plan: Optional[Plan], cost: Optional[float] = None) -> None:
        """Start the planned iteration: its cost (unless already evaluated),
        the holds' positions, the statistics; its end is a calendar entry
        (or, in a burst, handled inline when nothing else comes first)."""
        env = self.env
        now = env.now
        if cost is None:
            cost = self.spec.cost(tokens, float(decoders), prefilled, res, kvd, kvp, attention,
                                  self.registers)
            if not cost > 0.0:
                cost = self._checked_cost(cost, tokens)  # raises when tokens > 0
        self.iterations += 1
        advance = None
        for job, t, _k in assign:
            if job.growing is not None and job.session is not None:
                cell = job.cell
                if cell is None:
                    if advance is None:
                        advance = self.sim.holds.advance
                    advance(job, t)
                else:  # the hold it grew while planning: its position advances
                    cell.pos += t
                    if not cell.marked:
                        job.frame.grown = cell.marked = True
        if now - self.t_last:  # (else `_advance` has nothing to add)
            self._advance(now)
        if not assign:
            self.cur_cls = -1
        elif prefilled > 0:
            self.cur_cls = 2 if decoders else 0
        else:
            self.cur_cls = 1
        self.cur_decodes = decoders
        if decoders and now >= self.warmup:
            self.batch_count += 1
            self.batch_decodes += decoders
            self.batch_time += cost
        sim = self.sim
        if sim.claims is None:
            self.served_tokens += tokens
        else:
            sim.claims_iteration(self, plan, decoders, res, kvd, kvp)
        end = now + cost
        q = env.queue
        if self.bursting and (not q or q[0][0] > end) and end <= sim.horizon \
                and sim.drained is None:
            self.running = (assign, None)  # `_burst` ends it at `end`
            self.inline_end = end
            return
        self.end_on_calendar(assign, end)

    def end_on_calendar(self, assign: list, end: float) -> None:
        """Put the running iteration's end on the calendar at `end`: the
        stage's one iteration-end entry, put on the calendar again (an
        iteration starts only after the previous one's end was handled; the
        loop and `_burst` only read its callback list)."""
        env = self.env
        ev = self._end_ev
        ev.callbacks = self._end_cbs
        heappush(env.queue, (end, CALENDAR, next(env.eids), ev))  # schedule_at, inline
        self.running = (assign, ev)

    def _checked_cost(self, cost: float, tokens: float) -> float:
        """An iteration's duration: a positive number when it schedules tokens."""
        if not cost > 0 and tokens > 0 or cost != cost:
            raise SimulationError(
                f"stage `{self.label}`: the cost is {shortest(cost)}; an iteration that "
                "schedules tokens lasts a positive time", self.env.now)
        return cost if cost >= 0.0 else 0.0

    def _finish(self) -> None:
        sim = self.sim
        sim.events += 1
        now = self.env.now
        if now - self.t_last:  # (else `_advance` has nothing to add)
            self._advance(now)
        assign = self.running[0]
        self.running = None
        self.last_void = True  # idle again until an attempt schedules
        sim.fleet.idle.add(self)
        self.cur_cls = -1
        self.cur_decodes = 0
        decode = None
        done: Optional[list[StepJob]] = None
        for job, t, _k in assign:
            rem = job.remaining = job.remaining - t
            if job.mode == "decode":
                ticks = job.ticks
                if ticks is not None:  # (a decode token it had deferred its later ones)
                    ticks.append(now)
                else:
                    s = job.session
                    if s is not None:
                        if decode is None:
                            decode = sim.tokens.decode_deferred
                        decode(s, self, now, job)
            if rem <= TOL:
                if done is None:
                    done = [job]
                else:
                    done.append(job)
        if done is not None:
            sim.stamp += 1
            self.own_stamp += 1
            for job in done:
                self.residents.remove(job)
                self.n -= 1
                self._record(job, now)
                if job.mode == "prefill" and job.session is not None:
                    sim.tokens.token(job.session, self, False, now)
                self.env.schedule(job, READY)
        instant = self.instant  # `instant.mark(self)`, its common case inline
        if not self.dirty:
            self.dirty = True
            instant.dirty.append(self)
        if not instant.inline:
            instant.mark(self)

    def _record(self, job: Job, now: float) -> None:
        self.count_request(job, now)
        if now >= self.warmup:
            self.completed += 1
            self.service_sum += now - job.joined

    def add_gaps(self, gaps: Sequence[float]) -> None:
        """Inter-token gaps ending on this stage after warm-up, in order (the
        histogram's sum is `itl_sum`: the same additions)."""
        itl = self.itl
        itl.add_many(gaps)
        self.itl_sum = itl._sum
        self.itl_n += len(gaps)

    def _serve_in_order(self, plan: Plan) -> None:
        """`serve_pass` over every resident in admission order (the default
        body's first pass; with nothing waiting to be admitted, the whole
        body): over a snapshot of the residents (which can only lose members
        while it runs), with the common case -- a token that fits the
        resident's allocation -- inline. It leaves `plan.served` empty: only
        a later pass over the newcomers an admission brings reads it, and a
        newcomer is a run that was not a resident in this pass. It is the
        plan's first pass: `plan.assign` is empty when it starts."""
        left = plan.left
        chunk = plan.chunk
        assign = plan.assign
        tokens = plan.tokens
        residents = self.residents
        removed = False
        # `totals` of what it assigns (`plan.sums`), added as `totals` adds
        # them, in the order of `assign`: while each run grows the engine's
        # memory in its session's only hold on it (`totals`' direct case,
        # copied below), from the allocation the fit reads; `attempt` uses
        # them when nothing changed them since. test_engine_planning's
        # kv_decode/kv_prefill tests hold the copy to `totals`' answer.
        mem = self.memory if self.spec.needs_kv else None
        holders = mem.holder_count if mem is not None else None
        summed = True
        dec = kvd = kvp = 0.0
        for job in residents[:]:
            if left <= 0:
                break
            if removed and job not in residents:
                continue
            if job.stall is not None:
                continue
            # `share`, inline (the call cost 3% of an event's instructions at
            # issue 28's load); test_engine_planning's decode of 2.5 tokens
            # holds this copy and the closed runs' `share` to the same answer
            rem = job.remaining
            prefill = job.mode != "decode"
            if prefill:
                t = chunk if 0 < chunk < rem else rem
            else:
                t = 1.0 if rem >= 1.0 else rem
            if t > left:
                t = left
            if t <= 0:
                continue
            k = 0.0
            if (growing := job.growing) is not None and job.session is not None:
                cell = job.cell
                # (the tokens fit the allocation: K is the hold's position)
                if cell is not None and (k := cell.pos) + t - (held := cell.alloc) <= TOL:
                    pass
                else:
                    plan.left, plan.tokens = left, tokens
                    before = plan.preempted
                    k = self._grow(job, t, plan)
                    # a cancelled victim gave its tokens back
                    left, tokens, assign = plan.left, plan.tokens, plan.assign
                    if plan.stop:
                        break
                    removed = removed or plan.preempted != before
                    if k is None:
                        continue
                    held = job.cell.alloc  # (grown)
            assign.append((job, t, k))
            left -= t
            tokens += t
            if prefill:
                plan.prefilled += t
                plan.attention += t * (k + t / 2.0)
            if summed:
                if mem is None:
                    if not prefill:
                        dec += 1
                elif growing is not mem or job.session is None or \
                        (mem.multi and holders.get(job.session) != 1):
                    # (not the session's only holding of `mem`; while no
                    # session holds `mem` twice, known without reading it)
                    summed = False
                elif prefill:  # (`held`: its allocation, read as it was served)
                    kvp += held
                else:
                    dec += 1
                    kvd += held
        plan.left, plan.tokens = left, tokens
        if summed:
            plan.sums = (dec, kvd, kvp, len(assign))

    def _grow(self, job: StepJob, t: float, plan: Plan) -> Optional[float]:
        """Grow the resident's hold for `t` more tokens (preempting others if
        need be): the position K before the chunk, or None when the resident
        is not served now (it stalls, or its owner was preempted, which
        ends the pass: `plan.stop`)."""
        plan.growing = True
        outcome, k = self.sim.holds.engine_grow(job, t, self)
        plan.growing = False
        if outcome == "self":
            plan.preempted += 1
            plan.stop = True
            return None
        if outcome == "stall":
            # (k: its victims, other engines' residents: this attempt
            # preempted, Part 04 §7 step 6; pyserq 0.1.3, fleet program 562)
            plan.preempted += k
            return None
        plan.preempted += outcome  # victims other than the owner
        return k

    # -- serving one resident (§7 steps 3–4) ----------------------------------------------------
    def serve_one(self, job: StepJob, plan: Plan) -> None:
        """Give `job` its tokens in `plan`, growing its hold first."""
        plan.served.add(job)
        if job.stall is not None:
            return
        want = self._want(job, plan.chunk)
        t = min(want, plan.left)
        g = self.spec.granule
        if job.mode == "prefill" and g is not None and t < job.remaining:
            t = math.floor(t / g) * g if math.isfinite(g) else 0.0
            if t <= 0:
                plan.no_admit = True
                return
        if t <= 0:
            return
        k = 0.0
        if job.growing is not None and job.session is not None:
            k = self._grow(job, t, plan)
            if k is None:
                return
        plan.assign.append((job, t, k))
        plan.left -= t
        plan.tokens += t
        if job.mode == "prefill":
            plan.prefilled += t
            plan.attention += t * (k + t / 2.0)

    def serve_pass(self, plan: Plan, only: Optional[Callable], keys: Optional[Callable],
                   among: Optional[set] = None) -> None:
        """`serve [only (p)] [order]`: residents not yet served, in order."""
        if among is None and self.spec.in_order and self.plain_order:
            # the default body's pass over every resident in admission order
            # (`in_order`: no `only`, no keys; a hold waits to be admitted
            # after it): the same pass, inline
            self._serve_in_order(plan)
            return
        skipped: set = set()
        served = plan.served
        # admission order: the residents as they stand (not changed while one is picked)
        plain = keys is None and not self.order_policy
        while plan.left > 0 and not plan.stop:
            nxt = None
            for job in self.residents if plain else self.serving_order(keys):
                if job in served or job in skipped:
                    continue
                if among is not None and job not in among:
                    continue
                nxt = job
                break
            if nxt is None:
                return
            if (only is not None or self.batch_policy) and not self.in_batch(nxt, plan, only):
                skipped.add(nxt)
                continue
            self.serve_one(nxt, plan)

    def admit_one(self, plan: Plan, left: Optional[float] = None) -> Optional[list[StepJob]]:
        """Admit one waiting hold from the served pools (§7 step 5); returns
        the newcomers (None when nothing was admitted)."""
        pool = self.admission_pool(plan)
        if pool is None:
            return None
        self.admit_left = plan.left if left is None else left
        holds = self.sim.holds
        preemptions = holds.preemptions
        try:
            before = self.residents[:]  # (a set only when something was admitted)
            # the admitted session runs at once until it blocks, then what it
            # made ready, in order, before the admission ends
            admitted = holds.admit_from(pool)
            if admitted:
                run_ready(self.env)
        finally:
            self.admit_left = None
            # the admitted session's statements ran at once: a preemption
            # they caused (a `grow` that preempted itself or another holder)
            # is one of this iteration's too (Part 04 §7 steps 5-6: no
            # admission after it, and the attempt is an iteration; pyserq
            # 0.1.3 counts every pool's preemptions while it plans, issue 22,
            # generator seed 4620)
            plan.preempted += holds.preemptions - preemptions
        if not admitted:
            return None
        plan.admitted += 1
        before = set(before)
        return [j for j in self.residents if j not in before]

    def row_values(self, span: float) -> dict[str, Any]:
        nan = float("nan")
        row = super().row_values(span)
        row["mean_wait"] = 0.0 if self.completed else nan
        row.update({
            "iterations": self.iterations,
            "prefill_only": self.cls_time[0] / span, "decode_only": self.cls_time[1] / span,
            "mixed": self.cls_time[2] / span, "mean_decodes": self.int_decodes / span,
            "mean_decode_batch": self.batch_decodes / self.batch_count if self.batch_count else nan,
            "mean_decode_step": self.batch_time / self.batch_count if self.batch_count else nan,
            "mean_itl": self.itl_sum / self.itl_n if self.itl_n else nan,
            "itl_p50": self.itl.quantile(0.5) if self.itl_n else nan,
            "itl_p99": self.itl.quantile(0.99) if self.itl_n else nan,
            "idle_with_work": self.idle_with_work(),
        })
        return row
