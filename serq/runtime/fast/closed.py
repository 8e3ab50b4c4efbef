"""Closed runs of a step engine's iterations (the `ClosedRuns` mixin).

While nobody can be admitted and no policy is asked, the iterations a
quiet engine runs are fixed by its residents, their remaining tokens and
allocations, and the cost and budget expressions. `_closed` plans the
default body as `attempt` would (every built-in serve order, `only`,
budgets and chunks over the residents' totals, the registers and the
pools) and runs the iterations that follow inline while their plan cannot
change, until a run finishes, a hold needs a block it cannot get without
preempting or stalling, or an iteration would end at or after the next
calendar entry (or past the horizon):

* a block that fits is allocated where planning again would allocate it
  (`Regrow`, `_grow_inline`), evicting as the general path does; the plan
  then goes on with the totals and the cost the block changes;
* `_quick` runs the iterations of a plan with a fixed cost in a tight loop,
  and `_stretch` long stretches as NumPy cumulative sums (which add left to
  right as the loop does), with a search for the stop;
* the plan an iteration was launched with is kept (`kept`) while only
  engines' own iterations happen: when that iteration ends, the engine goes
  on from it without planning again (`Simulation.stamp` counts everything
  else that happens).

Every floating-point operation is the one the per-iteration path does, in
the same order: the reports are identical (tests/test_closed_runs.py).
"""
from __future__ import annotations

import math
from typing import Callable, Optional

from ...stats.summary import sum_in_order
from ...core.tolerance import TOL
from ..resources.decision import overridden
from ..resources.engine import share
from ..resources.pools import Pool
from .plan import ClosedRun, KeptPlan

ZERO4 = (0.0, 0.0, 0.0, 0.0)
STRETCH_MIN = 24  # fewer iterations than this run one by one (measured: the
STRETCH_MAX = 1 << 16  # vector's set-up costs about as much); at most this many at once


def _grows_plainly(pool: Pool) -> bool:
    """Whether a growth on `pool` is the built-in fit rule (no reservations
    held against it) and eviction without spill: `_closed` may then grow a
    hold itself when the block fits. (Fixed for a pool: its class and spec
    do not change; found once.)"""
    plain = pool.__dict__.get("_grows_plainly")
    if plain is None:
        plain = pool._grows_plainly = (
            pool.plain_room and not overridden(type(pool), "evict_victim")
            and not pool.spec.reserve_held and pool.spec.spill is None)
    return plain


def _block(job, t: float, growths: list) -> bool:
    """As `engine_grow` decides it for a resident that takes `t` tokens: the
    block its hold needs now, if any, appended to `growths` as (allotment,
    pool, need); False when the block would not fit next to what the pool
    uses plus the growths before it (`attempt` then preempts or stalls) or
    the pool's growth is not the built-in one."""
    cell = job.cell
    a = cell.alloc
    d = cell.pos + t - a
    if not d > TOL:
        return True
    pool = job.growing
    if not _grows_plainly(pool):
        return False
    need = pool.ru(a + d) - a
    u = pool.used
    for _c, p, n in growths:
        if p is pool:
            u += n
    if not u + need <= pool.cap + TOL:
        return False
    growths.append((cell, pool, need))
    return True


def attention_of(assign: list) -> float:
    """A plan's `attention` with its growing prefills at their holds'
    current positions (they move with every iteration)."""
    attention = 0.0
    for job, t, k in assign:
        if job.mode == "prefill":
            if job.growing is not None and job.session is not None:
                k = job.cell.pos
            attention += t * (k + t / 2.0)
    return attention


def _room(pairs: list, grows: list) -> float:
    """About how many iterations of a plan before a run's tokens change or
    a hold needs a block (at most `STRETCH_MAX`)."""
    room = STRETCH_MAX
    for job, t in pairs:
        n_left = (job.remaining - TOL) / t
        if n_left < room:
            room = n_left
    for _frame, cell, t in grows:
        n_left = (cell.alloc - cell.pos + TOL) / t
        if n_left < room:
            room = n_left
    return room


def needs_block(grows: list) -> bool:
    """Whether a hold of the plan needs a block for its next tokens."""
    for _frame, cell, t in grows:
        if cell.pos + t - cell.alloc > TOL:
            return True
    return False


WHOLE = float(1 << 52)  # below this, adding or taking 1.0 from a whole number is exact


def _whole_steps(pairs: list, grows: list) -> Optional[int]:
    """When every run gets one token per iteration, its remaining tokens
    are below `WHOLE`, and the holds' positions are whole numbers below it
    or keep their binade until they grow, the number of iterations after
    which the loop of `_quick` stops for them (else None). Every step of the
    loop is then exact: a run has more than one token before each step, and
    taking 1.0 from such a float leaves a float; adding 1.0 to a whole number
    gives one, and to a fraction whose sum keeps its exponent gives the
    exact sum. So after j steps a run holds exactly `r - j`: it finishes
    after the first j with `(r - j) - 1.0 <= TOL` (the loop's own test, found
    from r - 1 and checked as the loop computes it), and a hold at position
    p of a grows after the first j with `(p + j) + 1.0 - a > TOL` (a - p
    when both are whole)."""
    k = run_steps(pairs)
    return None if k is None else hold_steps(grows, k)


def run_steps(pairs: list) -> Optional[int]:
    """The runs' part of `_whole_steps`: after how many steps a run is
    about to finish (None: they do not move by whole steps)."""
    k = None
    for job, t in pairs:
        r = job.remaining
        if t != 1.0 or not 1.0 < r < WHOLE:
            return None
        if r.is_integer():
            steps = int(r) - 1  # r - j is exact: it finishes at r - j = 1
        else:
            steps = max(int(r - 1.0), 1)
            while steps > 1 and (r - (steps - 1)) - 1.0 <= TOL:
                steps -= 1
            while not (r - steps) - 1.0 <= TOL:
                steps += 1
        if k is None or steps < k:
            k = steps
    return k


def hold_steps(grows: list, k: int) -> Optional[int]:
    """The holds' part of `_whole_steps`, given the runs' `k`."""
    n = len(grows)
    if n > 1:  # two runs that move one hold move it by two a step
        if n == 2:
            (_f0, c0, _t0), (_f1, c1, _t1) = grows
            if c0 is c1:
                return None
        elif len({id(cell) for _f, cell, _t in grows}) < n:
            return None
    for _frame, cell, _t in grows:
        p = cell.pos
        a = cell.alloc
        if not (0.0 <= p < WHOLE and 0.0 <= a < WHOLE):
            return None
        if float(p).is_integer() and float(a).is_integer():
            steps = int(a - p)
        else:
            # (fractional tokens) the hold needs a block after the first j
            # with (p + j) + 1.0 - a > TOL, the loop's own test; p + j is
            # what j additions of 1.0 give while it stays in p's binade
            steps = max(int(a - p), 1)
            while steps > 1 and ((p + (steps - 1)) + 1.0) - a > TOL:
                steps -= 1
            while not ((p + steps) + 1.0) - a > TOL:
                steps += 1
            if math.ulp(p + steps) != math.ulp(p):
                return None
        if steps < k:
            k = steps
    return k if k >= 1 else None


class Regrow:
    """Called when a hold of an unchanged plan needs a block: allocates the
    blocks as planning again would (`ClosedRuns._grow_inline`), then reads the
    totals and evaluates the cost they change, as the new plan's first
    iteration does. Returns the cost (and keeps it, with the totals, for
    the caller's launch), or None when a block would preempt or stall
    (nothing allocated). `attention` is the plan's as it stands (it moves
    with the positions of growing prefills)."""

    __slots__ = ("stage", "assign", "jobs", "args", "attention", "r", "kvd", "kvp", "cost")

    def __init__(self, stage: "ClosedRuns", assign: list, tokens: float, fdec: float,
                 prefilled: float, attention: float):
        self.stage = stage
        self.assign = assign
        self.jobs = [a[0] for a in assign]
        self.args = (tokens, fdec, prefilled)
        self.attention = attention
        self.cost: Optional[float] = None

    def __call__(self) -> Optional[float]:
        st = self.stage
        if not st._grow_inline(self.assign):
            return None
        r, _d, kvd, kvp = st.totals(self.jobs)
        tokens, fdec, prefilled = self.args
        cost = st.spec.cost(tokens, fdec, prefilled, r, kvd, kvp, self.attention, st.registers)
        if not cost > 0.0:
            cost = st._checked_cost(cost, tokens)  # raises when tokens > 0
        self.r, self.kvd, self.kvp, self.cost = r, kvd, kvp, cost
        return cost


class ClosedRuns:
    """Planning and running closed runs (a mixin of `StepStage`; see the module text)."""

    def _plan_closed(self) -> Optional[tuple]:
        """The iteration `attempt` would plan now, when it admits nobody,
        preempts nobody and asks no policy: (assign, tokens, decoders,
        prefilled, attention, grown), or None when that is not so (a resident
        stalls, a hold needs a block its pool cannot give without preempting,
        or nothing is scheduled) -- then nothing has changed. The same
        decisions, in the same order, as `_budget_chunk`, `serve_pass`,
        `serve_one`, `_serve_in_order` and `engine_grow`; the blocks are
        allocated (`_allocate`, which may evict) once the plan is known to
        hold, in the order the general path allocates them."""
        spec = self.spec
        res = self.residents
        R = self.registers
        totals = self.totals() if spec.pre_totals or spec.serve_totals else ZERO4
        fixed = spec.fixed
        if fixed is not None:
            b, c = fixed
        else:
            pre = totals if spec.pre_totals else ZERO4
            b = spec.budget(*pre, R)
            c = spec.chunk(*pre, R)
        keys = spec.keys
        only = spec.only
        if keys is None:
            order = res
        else:
            tot = totals if spec.serve_totals else ZERO4
            ctx = self._serve_ctx
            order = sorted(res, key=lambda j: keys(*ctx(j, tot)))
        left = b
        tokens = prefilled = attention = 0.0
        assign = []
        growths = None
        dec = 0
        for job in order:
            if left <= 0:
                break
            if job.stall is not None:
                return None
            # the totals stand still until the plan is allocated: read once above
            if only is not None and only(*self._serve_ctx(
                    job, totals if spec.serve_totals else ZERO4)) == 0:
                continue
            decoding = job.mode == "decode"
            t = share(job.remaining, decoding, c, left)
            if t <= 0:
                continue
            k = 0.0
            if job.growing is not None and job.session is not None:
                cell = job.cell
                if cell is None:
                    return None  # `attempt` finds its hold
                k = cell.pos
                if growths is None:
                    growths = []
                if not _block(job, t, growths):
                    return None  # it would preempt or stall: `attempt`
            if decoding:
                dec += 1
            assign.append((job, t, k))
            left -= t
            tokens += t
            if not decoding:
                prefilled += t
                attention += t * (k + t / 2.0)
        if not assign:
            return None
        if growths:
            allocate = self.sim.holds._allocate
            for cell, pool, need in growths:
                allocate(cell, pool, need)
        return assign, tokens, dec, prefilled, attention, bool(growths)

    def _grow_inline(self, assign: list) -> bool:
        """The blocks the holds of an unchanged plan need for its next
        iteration, allocated as `_plan_closed` would allocate them (in serve
        order, after checking that every one fits); False, with nothing
        allocated, when one would preempt or stall (the caller plans again
        and leaves to `attempt`)."""
        growths: list = []
        for job, t, _k in assign:
            if job.growing is not None and job.session is not None:
                if not _block(job, t, growths):
                    return False
        allocate = self.sim.holds._allocate
        for cell, pool, need in growths:
            allocate(cell, pool, need)
        return True

    def _stretch(self, assign: list, grows: list, tokens: float, dec: int, cls: int,
                 cost: float) -> int:
        """Iterations of a fixed plan with a fixed cost, as one vector: the
        ends are a cumulative sum, the remaining tokens and hold positions
        cumulative differences and sums (NumPy accumulates left to right, as
        the loop of `_closed` adds, so every value is the loop's), the stop
        is the first iteration that ends at or after the next calendar entry
        or past the horizon, or follows one after which a run would finish or
        a hold would grow. Applies them as `_closed` would and returns how
        many (0: too few to be worth it; the caller runs them one by one).

        The first iteration is known to be inline (its end is before the
        next entry, no run finishes in it, its blocks are allocated)."""
        import numpy as np  # (only long stretches need it; loaded once)
        env = self.env
        now = env.now
        q = env.queue
        sim = self.sim
        limit = sim.horizon
        q0 = q[0][0] if q else math.inf
        span = (q0 if q0 < limit else limit) - now
        M = int(min(span / cost, STRETCH_MAX)) + 2
        for job, t, _k in assign:
            n_left = (job.remaining - TOL) / t + 2
            if n_left < M:
                M = int(n_left)
        for _frame, cell, t in grows:
            n_left = (cell.alloc - cell.pos + TOL) / t + 2
            if n_left < M:
                M = int(n_left)
        if M < STRETCH_MIN:
            return 0
        steps = np.full(M + 1, cost)
        steps[0] = now
        ends = np.add.accumulate(steps)
        tail = ends[1:]
        ok = (tail < q0) & (tail <= limit)
        ts = np.array([t for _job, t, _k in assign])
        rems = np.empty((M + 1, len(assign)))
        rems[0] = [job.remaining for job, _t, _k in assign]
        rems[1:] = ts
        rems = np.subtract.accumulate(rems, axis=0)
        ok[1:] &= ((rems[1:M] - ts) > TOL).all(axis=1)
        if grows:
            gts = np.array([t for _f, _c, t in grows])
            pos = np.empty((M + 1, len(grows)))
            pos[0] = [cell.pos for _f, cell, _t in grows]
            pos[1:] = gts
            pos = np.add.accumulate(pos, axis=0)
            alloc = np.array([cell.alloc for _f, cell, _t in grows])
            ok[1:] &= ((pos[1:M] + gts) - alloc <= TOL).all(axis=1)
        m = int(ok.argmin()) if not ok.all() else M
        # apply m iterations (m >= 1: the first is known to be inline)
        self.iterations += m
        sim.events += m
        if dec and now >= self.warmup:
            self.batch_count += m
            self.batch_decodes += dec * m  # integers: exact, as m additions are
            self.batch_time = sum_in_order(self.batch_time, np.full(m, cost))
        self.served_tokens = sum_in_order(self.served_tokens, np.full(m, tokens))
        dts = np.diff(ends[:m + 1])
        if self.n:
            self.int_n = sum_in_order(self.int_n, self.n * dts)
            self.int_busy = sum_in_order(self.int_busy, dts)
        self.cls_time[cls] = sum_in_order(self.cls_time[cls], dts)
        self.int_decodes = sum_in_order(self.int_decodes, dec * dts)
        end = float(ends[m])
        self.t_last = end
        for i, (job, _t, _k) in enumerate(assign):
            job.remaining = float(rems[m, i])
        for i, (frame, cell, _t) in enumerate(grows):
            cell.pos = float(pos[m, i])
            if not cell.marked:
                frame.grown = cell.marked = True
        if dec:
            decoders = [job for job, _t, _k in assign
                        if job.mode == "decode" and job.session is not None]
            if decoders:
                sim.tokens.decode_run(decoders, self, tail[:m].tolist())
        env.now = end
        return m

    def _quick(self, pairs: list, grows: list, decoders: list, times: list, tokens: float,
               dec: int, cls: int, cost: float, now: float,
               regrow: Optional[Callable[[], Optional[float]]]) -> tuple[float, bool]:
        """The iterations of a plan with a fixed cost from `now`, one by one
        as the loop of `_closed` runs them (the same operations in the same
        order) with the stage's sums held in locals, until the next one ends
        at or after the next calendar entry or past the horizon (returns the
        clock and True: `_closed` launches it) or a run finishes or a hold
        needs a block that `regrow` (when given) cannot allocate (False:
        plan again). `regrow` allocates the blocks and returns the new cost
        (the plan is otherwise unchanged), or None. Nothing else moves
        meanwhile. When the runs and holds move by whole tokens
        (`_whole_steps`) they are moved once at the end of each stretch
        between blocks, by the number of iterations run."""
        sim = self.sim
        q = self.env.queue
        q0 = q[0][0] if q else math.inf
        horizon = sim.horizon
        # an iteration is due (`_closed` launches it) when it ends at or after
        # the next entry or past the horizon: at or after `stop`
        stop = q0 if q0 <= horizon else math.nextafter(horizon, math.inf)
        warmup = self.warmup
        n = self.n
        k = 0  # iterations run
        bc = 0  # ... of which in the batch statistics (after the warm-up, with decodes)
        b_time = self.batch_time
        served = self.served_tokens
        int_n, busy, in_cls, int_dec = self.int_n, self.int_busy, self.cls_time[cls], \
            self.int_decodes
        t_last = self.t_last
        rsteps = run_steps(pairs)  # (less the iterations run, as they run)
        whole = None if rsteps is None else hold_steps(grows, rsteps)
        each = whole is None  # the runs and holds move iteration by iteration
        m = 0
        due = False
        grow = False  # (one by one) a hold needs a block
        while True:
            if m == whole or grow:
                if grow:
                    grow = False
                else:  # (whole steps) a run is about to finish or a hold needs a block
                    fm = float(whole)  # whole subtractions (additions) of 1.0, each exact
                    for job, _t in pairs:
                        job.remaining = job.remaining - fm
                    for frame, cell, _t in grows:
                        cell.pos += fm
                        if not cell.marked:
                            frame.grown = cell.marked = True
                    for job, t in pairs:
                        if job.remaining - t <= TOL:
                            regrow = None
                k += m
                if rsteps is not None:
                    rsteps -= m  # each run took m tokens of 1.0, exactly
                m = 0
                if regrow is None:
                    break
                self.env.now = now
                cost = regrow()
                if cost is None:
                    break
                whole = None if rsteps is None else hold_steps(grows, rsteps)
                each = whole is None
                continue
            end = now + cost
            if end >= stop:
                due = True
                break
            m += 1
            if each:
                for frame, cell, t in grows:
                    cell.pos += t
                    if not cell.marked:
                        frame.grown = cell.marked = True
            if dec and now >= warmup:
                bc += 1
                b_time += cost
            served += tokens
            dt = end - now
            if dt:
                if n:
                    int_n += n * dt
                    busy += dt
                in_cls += dt
                int_dec += dec * dt
                t_last = end
            now = end
            if decoders:
                times.append(end)
            if not each:
                continue
            finishing = False
            for job, t in pairs:
                rem = job.remaining = job.remaining - t
                if rem - t <= TOL:
                    finishing = True
            if finishing:
                break
            grow = needs_block(grows)
        k += m
        if not each and m:
            fm = float(m)  # m subtractions (additions) of 1.0, each exact (`_whole_steps`)
            for job, _t in pairs:
                job.remaining = job.remaining - fm
            for frame, cell, _t in grows:
                cell.pos += fm
                if not cell.marked:
                    frame.grown = cell.marked = True
        self.iterations += k
        sim.events += k
        if bc:  # integers: exact, as bc additions are
            self.batch_count += bc
            self.batch_decodes += dec * bc
        self.batch_time = b_time
        self.served_tokens = served
        self.int_n, self.int_busy, self.int_decodes = int_n, busy, int_dec
        self.cls_time[cls] = in_cls
        self.t_last = t_last
        self.env.now = now
        return now, due

    def _closed(self) -> bool:
        """Start the iteration `attempt` would start, and run the following
        ones inline while nothing but this engine moves: the residents, their
        remaining tokens and allocations and the budget (which reads only the
        residents' totals) fix every iteration until one finishes a run,
        needs a block it cannot get, or ends at or after the next calendar
        entry (or past the horizon). Each inline iteration does what
        `_launch` and `_finish` do, in their order, with the plan, the totals
        and the cost read once (the totals and the cost again when a block
        is allocated, the plan again when a run's tokens change, or every
        iteration when the serve order reads what an iteration changes; the
        cost every iteration when it may change).

        The plan of the iteration it launches is kept (`kept`): when that
        iteration ends and nothing but engines' own iterations happened
        meanwhile (`Simulation.stamp` unchanged), the run goes on from it as
        if the iteration had ended inline.

        Returns True when it started an iteration that it does not end (its
        end is a calendar entry or `_burst`'s inline end); False when the
        caller attempts next (the stage is as `_finish` leaves it)."""
        kept = self.kept
        self.kept = None
        if not self.closed_ok or not self.residents or self.queue_waiting():
            return False
        spec = self.spec
        env = self.env
        q = env.queue
        sim = self.sim
        horizon = sim.horizon
        warmup = self.warmup
        cost_fn = spec.cost
        R = self.registers
        decode_run = sim.tokens.decode_run
        cls_time = self.cls_time
        gauges = bool(sim.gauges)
        varies = spec.serve_varies
        # a plan is kept when only its own growth and iterations change it
        keepable = not varies and not spec.grow_moves
        now = env.now
        self._advance(now)  # as `_launch` does first
        if kept is not None and kept.stamp != self._plan_stamp():
            kept = None  # something else happened since it was launched
        while True:
            if kept is None:
                planned = self._plan_closed()
                if planned is None:
                    return False
                assign, tokens, dec, prefilled, attention, grown = planned
                # blocks allocated now change the totals the next budget reads
                again = grown and spec.grow_moves
                r, _d, kvd, kvp = self.totals([a[0] for a in assign])
                cost = cost_fn(tokens, float(dec), prefilled, r, kvd, kvp, attention, R)
                if not cost > 0.0:
                    cost = self._checked_cost(cost, tokens)  # raises when tokens > 0
                end = now + cost
                if (q and q[0][0] <= end) or end > horizon or sim.drained is not None:
                    # the common case with several engines: the first iteration
                    # ends at or after the next entry (checked before the rest)
                    self._launch_kept(assign, tokens, dec, prefilled, r, kvd, kvp, attention,
                                      cost, None, keepable and not again)
                    return True
                after = False  # this plan's first iteration: its cost is known
                run = None
            else:
                # the kept plan, its launched iteration just ended (`_finish`)
                _stamp, assign, tokens, dec, prefilled, attention, r, kvd, kvp, cost, run, \
                    ready = kept
                kept = None
                again = False
                # (`ready`: `_relay_kept` did this iteration's checks and cost)
                after = not ready
                # (a cost that reads a pool reads it again: another engine's
                # blocks may have changed it meanwhile)
            fdec = float(dec)
            if run is None:
                run = self._run_of(assign, tokens, fdec, prefilled, attention)
            cls, pairs, grows, decoders, moving, regrow = run
            finishing = False
            for job, t in pairs:
                if job.remaining - t <= TOL:
                    finishing = True
            in_flight = (assign, None)
            steady = spec.cost_steady and not moving
            fast = steady and not varies and not again and not gauges
            pick = fast  # choose between `_stretch` and `_quick` when needed
            stretch = quick = False
            room = 0.0
            fresh = not after  # the cost is known for the first iteration
            stale = after and spec.cost_pools  # a kept plan's cost that reads a pool: again
            keep = keepable and not again
            times: list[float] = []  # decode tokens not recorded yet (`decode_run`)
            try:
                while True:
                    if after:
                        # the next iteration: the same plan unless a run's tokens change
                        # (it finishes), a hold needs a block that does not fit, the
                        # order may change, or the budget reads what this plan's growth
                        # changed
                        if finishing or varies or again:
                            break
                        if moving:
                            attention = attention_of(assign)
                        if grows and needs_block(grows):
                            # as planning again would: the blocks now, then the
                            # totals and the cost they change
                            if regrow is None:
                                break
                            regrow.attention = attention
                            if regrow() is None:
                                break
                            r, kvd, kvp, cost = regrow.r, regrow.kvd, regrow.kvp, regrow.cost
                            regrow.cost = None
                            fresh = True
                            stale = False
                            pick = fast
                    after = True
                    if fresh:
                        fresh = False
                    elif stale or not steady:
                        stale = False
                        cost = cost_fn(tokens, fdec, prefilled, r, kvd, kvp, attention, R)
                        if not cost > 0.0:
                            cost = self._checked_cost(cost, tokens)  # raises when tokens > 0
                    end = now + cost
                    if finishing or (q and q[0][0] <= end) or end > horizon or sim.drained is not None:
                        self._launch_kept(assign, tokens, dec, prefilled, r, kvd, kvp, attention,
                                          cost, run, keep)
                        return True
                    if pick:
                        pick = False
                        room = _room(pairs, grows)
                        stretch = room >= STRETCH_MIN
                        quick = not stretch
                    if stretch and times:
                        decode_run(decoders, self, times)
                        times = []
                    m = 0
                    if quick:
                        now, due = self._quick(pairs, grows, decoders, times, tokens, dec, cls,
                                               cost, now, regrow)
                        if regrow is not None and regrow.cost is not None:  # it grew holds
                            r, kvd, kvp, cost = regrow.r, regrow.kvd, regrow.kvp, regrow.cost
                            regrow.cost = None
                        if due:  # the next iteration ends at or after the next entry
                            self._launch_kept(assign, tokens, dec, prefilled, r, kvd, kvp,
                                              attention, cost, run, keep)
                            return True
                        m = 1  # a run finishes or a hold needs a block (checked below)
                    elif stretch:
                        m = self._stretch(assign, grows, tokens, dec, cls, cost)
                    if m:
                        now = env.now
                        if stretch:
                            room -= m
                            stretch = room >= STRETCH_MIN
                            quick = not stretch
                        for job, t in pairs:
                            if job.remaining - t <= TOL:
                                finishing = True
                        continue
                    # `_launch` at `now`
                    self.iterations += 1
                    for frame, cell, t in grows:
                        cell.pos += t
                        if not cell.marked:
                            frame.grown = cell.marked = True
                    if dec and now >= warmup:
                        self.batch_count += 1
                        self.batch_decodes += dec
                        self.batch_time += cost
                    self.served_tokens += tokens
                    # `_finish` at `end`
                    sim.events += 1
                    if gauges and end != now:
                        self.running = in_flight  # the gauges see the iteration running
                        self.cur_cls = cls
                        self.cur_decodes = dec
                        sim.record_gauges(now)
                        self.running = None
                        self.cur_cls = -1
                        self.cur_decodes = 0
                    dt = end - now
                    if dt:
                        if self.n:
                            self.int_n += self.n * dt
                            self.int_busy += dt
                        cls_time[cls] += dt
                        self.int_decodes += dec * dt
                        self.t_last = end
                    env.now = now = end
                    for job, t in pairs:
                        rem = job.remaining = job.remaining - t
                        if rem - t <= TOL:
                            finishing = True
                    if decoders:
                        times.append(end)
            finally:
                if times:  # the tokens of the iterations run one by one
                    decode_run(decoders, self, times)
            kept = None  # plan again

    def _plan_stamp(self) -> int:
        """What a kept plan is checked against: the count of everything but
        engines' own iterations (`Simulation.stamp`) or, when the plan reads
        nothing but the residents, their totals and the registers (`own_plans`),
        the count of what changed this engine's residents (`own_stamp`: a run
        joins, leaves, finishes or may be served again, an attempt): then other
        engines' and sessions' events leave the plan kept, however many replicas
        there are."""
        return self.own_stamp if self.own_plans else self.sim.stamp

    def _launch_kept(self, assign: list, tokens: float, dec: int, prefilled: float, r: float,
                     kvd: float, kvp: float, attention: float, cost: float,
                     run: Optional[ClosedRun], keep: bool) -> None:
        """Launch an iteration of a closed run and, when `keep`, keep its plan
        and `run` (`_run_of`; None: not made yet) for when it ends."""
        self.last_void = False
        self._launch(assign, tokens, dec, prefilled, r, kvd, kvp, attention, None, cost)
        if keep:
            self.kept = KeptPlan(self._plan_stamp(), assign, tokens, dec, prefilled, attention,
                                 r, kvd, kvp, cost, run, False)

    def _run_of(self, assign: list, tokens: float, fdec: float, prefilled: float,
                attention: float) -> ClosedRun:
        """What a closed run needs of a plan, in one pass over it: its class
        (prefill only, decode only, mixed), the runs with their tokens, the
        growing holds, the decoding runs, whether a prefill moves a hold
        (its attention changes), and the growth step (`Regrow`; None when the
        plan reads what growth changes)."""
        cls = 2 if prefilled > 0 and fdec else 0 if prefilled > 0 else 1
        grows = []
        moving = False
        pairs = []
        decoders = []
        for job, t, _k in assign:
            pairs.append((job, t))
            s = job.session
            if s is not None:
                mode = job.mode
                if job.growing is not None:
                    grows.append((job.frame, job.cell, t))
                    if mode == "prefill":
                        moving = True
                if mode == "decode":
                    decoders.append(job)
        regrow = None if self.spec.grow_moves else Regrow(self, assign, tokens, fdec, prefilled,
                                                          attention)
        return ClosedRun(cls, pairs, grows, decoders, moving, regrow)
