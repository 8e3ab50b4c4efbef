"""Engines whose iteration ends interleave, handled in one loop.

When several step engines run at once and nothing else is due, their
iteration ends interleave on the calendar: the burst relays from one to the
next at every end (`Burst._burst`), and each relay finishes an iteration,
goes on with the kept plan and launches the next (`Burst._relay_kept`).
While the plans stay as they are -- no run finishes, no hold needs a block
that does not fit, the cost reads nothing an iteration changes -- each relay
only adds the iteration to the engine's sums, records its decode tokens and
puts the next end on the calendar. `leapfrog` does that for all such
engines in one loop, in calendar order, for as long as each end is such a
relay and comes strictly before anything else:

* the sums are added at each end in the relay's order (each engine's own
  sums; the interleaving is the calendar's, as before);
* each launch takes the calendar sequence number (`env.eids`) it would have
  taken, so the entries it leaves behind are the relay's;
* the runs' remaining tokens and the holds' positions move when needed, by
  whole tokens (exact: `closed._whole_steps`), and the decode tokens are
  recorded at the end (`TokenLog.decode_run`; they only continue sequences);
* a hold that needs a block is grown as the relay grows it (`Regrow`: the
  block, then the totals and the cost it changes), and its engine goes on
  with the new cost.

It leaves before handling an end when a run would finish in the iteration
after it, an end or entry ties with it, it is past the horizon, or the
engine's next iteration would end before the next end (`_closed` runs such
iterations inline); after handling it, as the relay leaves it for
`_closed`, when the block does not fit or, with the new cost, the next
iteration ends first. The burst goes on from there as before.

What the loop works out for an engine (its side: how many ends it may
handle before a run finishes or a hold needs a block) stays on the engine
(`StepStage.frog`) and serves the next call as long as the engine's plan
stands and it launched no iteration since (`_plain_side`): in a large
fleet each call takes most engines for a single end, and setting each up
afresh made the work of an end grow with the fleet.
"""
from __future__ import annotations

from heapq import heappop, heappush
from typing import TYPE_CHECKING, Optional

from .closed import hold_steps, needs_block, run_steps
from ..kernel.instant import CALENDAR
from .plan import KeptPlan

if TYPE_CHECKING:
    from ..resources.engine import StepStage


def _may_go_on(st: "StepStage") -> bool:
    """Whether `st` has a kept plan that nothing but engines' iterations
    followed (`_plan_stamp`), whose checks `_relay_kept` has not done already
    (`ready`), and whose run `_side` has not refused (`unplain`)."""
    kept = st.kept
    return kept is not None and kept.stamp == st._plan_stamp() and not kept.ready and \
        (kept.run is None or kept.run is not st.unplain)


def _side(st: "StepStage") -> Optional[list]:
    """What the loop needs of an engine whose kept plan goes on plainly
    (the fields below), or None when it may not."""
    return _plain_side(st) if _may_go_on(st) else None


def _plain_side(st: "StepStage") -> Optional[list]:
    """`_side` of an engine that `_may_go_on` (asked already): the side a
    call left on the engine (`StepStage.frog`) when nothing but the calendar
    moved it since (`_again`), else a new one (`_new_side`)."""
    side = st.frog
    if side is not None and side[RUNS] and side[KEPT] is st.kept and \
            side[ITERS] == st.iterations:
        return _again(side)
    return _new_side(st)


def _again(side: list) -> Optional[list]:
    """The side a call left on its engine, for the next call. Its plan is
    the engine's kept one, and the engine has launched no iteration since
    (`_plain_side`): its runs' remaining tokens and its holds' positions are
    what the call left them, so the ends it may handle before a run finishes
    or a hold needs a block are the side's counts, as `_new_side` would find
    them (whole steps: `closed._whole_steps`). What other events may change
    is asked again: a waiting hold, the sessions' token sequences, whether
    the fast paths are allowed."""
    st = side[ST]
    if not st.closed_ok or not st.burst or st.queue_waiting():
        return None
    if not _continued(side[KEPT].run.decoders):
        return None
    if side[TIMES]:
        side[TIMES] = []
    return side


def _continued(decoders: list) -> bool:
    """Whether each decode token of the runs continues their sessions'
    sequences (`TokenLog.decode_run` records them so). A run whose tokens
    are deferred (`job.ticks`, its session's `pend`) does: its first decode
    token was recorded, and whatever records or reads the session's tokens
    since would have settled them (`TokenLog.state`); so only the other
    runs' sessions are read."""
    for job in decoders:
        if job.ticks is not None:
            continue
        s = job.session
        tok = s.tok
        if tok is None or s.turn_no != tok.turn_no or not tok.turn.count or \
                (tok.active and not tok.request.count):
            return False
    return True


def _new_side(st: "StepStage") -> Optional[list]:
    """`_plain_side` made afresh (and left on the engine for the next call)."""
    kept = st.kept
    run = kept.run
    if run is None:  # (a plan's first launch: its run is made when it goes on)
        run = st._run_of(kept.assign, kept.tokens, float(kept.dec), kept.prefilled,
                         kept.attention)
        kept = st.kept = kept._replace(run=run, ready=False)
    _cls, pairs, grows, decoders, moving, regrow = run
    spec = st.spec
    if moving or regrow is None or not spec.cost_steady or spec.cost_pools \
            or spec.serve_varies or not st.closed_ok or not st.burst:
        st.unplain = run  # (not asked again while the plan stands)
        return None
    if st.queue_waiting():
        return None
    rs = run_steps(pairs)
    if rs is None or rs < 2:
        if rs is None:
            st.unplain = run
        return None
    if grows and needs_block(grows):
        blocks = 0  # its next end grows a hold
    else:
        blocks = hold_steps(grows, rs - 1)
        if blocks is None:
            return None
    if not _continued(decoders):
        return None
    side = st.frog = [st, kept.cost, kept.tokens, kept.dec, run.cls, [], blocks, 0, 0.0, None,
                      rs - 1, 0, kept, st.iterations]
    return side


# the fields of a side: the engine, its plan's cost, tokens, decoders and class,
# the times of its decode tokens, the ends it may handle before a hold needs a
# block and before a run finishes, the ends it handled and the iterations it
# launched since its runs and holds last moved, its iteration's end and
# calendar sequence number, its kept plan, and the engine's iteration count
# when the side's counts were last true (`_plain_side`)
ST, COST, TOKENS, DEC, CLS, TIMES, BLOCKS, ENDS, END, EID, RUNS, LAUNCHES, KEPT, ITERS = \
    range(14)


def _move(side: list) -> None:
    """Bring the runs' remaining tokens and the holds' positions up to date
    (each end took 1.0 from every run, each launch added 1.0 to every hold:
    exact, `closed._whole_steps`)."""
    run = side[KEPT][10]
    n = side[ENDS]
    if n:
        fn = float(n)
        for job, _t in run.pairs:
            job.remaining = job.remaining - fn
        side[ENDS] = 0
    n = side[LAUNCHES]
    if n:
        fn = float(n)
        for frame, cell, _t in run.grows:
            cell.pos += fn
            if not cell.marked:
                frame.grown = cell.marked = True
        side[LAUNCHES] = 0


def _end_of(entry: tuple, by_end: dict) -> Optional["StepStage"]:
    """The engine whose iteration end the calendar entry is, or None when it
    is another entry (or an end no longer running)."""
    ev = entry[3]
    st = by_end.get(ev)
    if st is None or st.running is None or st.running[1] is not ev:
        return None
    return st


def _other_at(q: list, by_end: dict, t: float) -> bool:
    """Whether an entry at time `t` that is not an engine's end is on the
    calendar `q` (a heap; only the entries at or before `t` are walked)."""
    n = len(q)
    todo = [0]
    while todo:
        i = todo.pop()
        entry = q[i]
        if entry[0] > t:
            continue
        if entry[0] == t and _end_of(entry, by_end) is None:
            return True
        i = 2 * i + 1
        if i < n:
            todo.append(i)
            if i + 1 < n:
                todo.append(i + 1)
    return False


def _take(q: list, by_end: dict, heap: list) -> float:
    """Take the calendar's first entry `q[0]` into the loop's `heap` when it
    is an engine's end whose plan goes on plainly (INF), else leave it and
    return its time (nothing passes it)."""
    entry = q[0]
    st = _end_of(entry, by_end)
    side = _side(st) if st is not None else None
    if side is None:
        return entry[0]
    heappop(q)
    side[END], side[EID] = entry[0], entry[2]
    heappush(heap, (entry[0], entry[2], side))
    return INF


def leapfrog(b: "StepStage") -> Optional[tuple]:
    """`b`'s iteration end is the calendar's next entry, and other engines'
    ends follow before anything else. Handle the ends of all engines whose
    plans go on plainly, in calendar order, while each is a plain relay (see
    the module text). Returns None when no end was handled (nothing
    changed), else (engine, launched): the engine whose end was handled
    last, and whether it launched its next iteration (else `_closed` goes on
    from its kept plan)."""
    sim = b.sim
    env = b.env
    q = env.queue
    by_end = sim.engine_ends
    stamp = sim.stamp
    if not _may_go_on(b):  # (as `_side` would, before the calendar's walk)
        return None
    if sim.gauges or sim.drained is not None or b.instant.dirty:
        return None
    if sim.pool_list and not (sim.idle_stamp == stamp and sim.pools_idle):
        return None
    if sim.fleet.idle_other(None):  # as `_quiet`: no engine idle with work
        return None
    n = len(q)
    if n < 2 or _end_of(q[0], by_end) is None:
        return None
    e1 = q[1] if n == 2 or q[1] < q[2] else q[2]  # the calendar's second entry
    st1 = _end_of(e1, by_end)
    if st1 is None:
        return None
    horizon = sim.horizon
    tx = q[0][0]  # b's end (the calendar's next)
    t2 = e1[0]  # the next end after it
    if not tx < t2 or tx > horizon or _other_at(q, by_end, t2):
        # (an end at the same time as another entry but before it in the
        # calendar's order does not come before it)
        return None
    x = _plain_side(b)  # (`_may_go_on(b)` was asked above; nothing has changed since)
    if x is None or not x[RUNS]:
        return None
    if x[BLOCKS]:
        ex = tx + x[COST]
        if not (ex >= t2 or ex > horizon):
            return None  # not even b's end is a plain relay
    side = _side(st1)
    if side is None:
        return None
    # the engines' entries leave the calendar as the loop takes them: b's,
    # then the next end's, then each end (smallest first) as soon as it may
    # be one of the loop's next two; the first entry that is not an end or
    # whose engine does not go on plainly stops that (q0: its time)
    x[END], x[EID] = tx, heappop(q)[2]
    side[END], side[EID] = t2, heappop(q)[2]
    # the others, by end and sequence number (a heap: an end costs O(log k))
    heap = [(t2, side[EID], side)]
    q0 = INF
    while q and q[0][0] <= heap[0][0]:  # (ties with the next end)
        q0 = _take(q, by_end, heap)
        if q0 < INF:
            break
    stop = t2 if t2 < q0 else q0
    warmup = b.warmup
    eids = env.eids
    handled = 0
    launched = True
    now = tx
    while True:
        # (x, the first, has left `heap`)
        st, dec, cls = x[ST], x[DEC], x[CLS]
        # `_finish` of the iteration ending at tx (its runs' tokens: `_move`)
        dt = tx - st.t_last
        if dt:
            if st.n:
                st.int_n += st.n * dt
                st.int_busy += dt
            st.cls_time[cls] += dt
            st.int_decodes += dec * dt
            st.t_last = tx
        x[TIMES].append(tx)
        now = tx
        x[ENDS] += 1
        x[RUNS] -= 1
        handled += 1
        if x[BLOCKS]:
            x[BLOCKS] -= 1
            cost = x[COST]
            ex = tx + cost
        else:  # a hold needs a block: as the relay grows it
            _move(x)
            env.now = tx
            kept = x[KEPT]
            regrow = kept.run.regrow
            regrow.attention = kept.attention
            cost = regrow()
            if cost is None:  # it does not fit: `_closed` plans again
                launched = False
                break
            regrow.cost = None
            kept = x[KEPT] = st.kept = KeptPlan(*kept[:6], regrow.r, regrow.kvd, regrow.kvp,
                                                  cost, *kept[10:])
            x[COST] = cost
            ex = tx + cost
            if not (ex >= stop or ex > horizon):
                # it ends first: `_closed` runs it inline, its cost known
                st.kept = kept._replace(ready=True)
                launched = False
                break
            blocks = hold_steps(kept.run.grows, x[RUNS] + 1)
            # (None: the positions leave the binade; it stops at its next end)
            x[BLOCKS] = blocks - 1 if blocks is not None else 0
            if blocks is None:
                x[RUNS] = 0
        # `_launch` of the next one, ending at ex (its holds' positions: `_move`)
        st.iterations += 1
        if dec and tx >= warmup:
            st.batch_count += 1
            st.batch_decodes += dec
            st.batch_time += cost
        st.served_tokens += x[TOKENS]
        x[LAUNCHES] += 1
        x[END] = ex
        x[EID] = next(eids)
        heappush(heap, (ex, x[EID], x))
        last = x
        while q0 == INF and q and (len(heap) < 2 or q[0][0] <= (
                heap[1] if len(heap) == 2 or heap[1] < heap[2] else heap[2])[0]):
            q0 = _take(q, by_end, heap)  # it may be one of the next two ends
        # the next end: a plain relay?
        x = heap[0][2]
        tx = x[END]
        t2 = (heap[1] if len(heap) == 2 or heap[1] < heap[2] else heap[2])[0]
        stop = t2 if t2 < q0 else q0
        if not (tx < t2 and tx < q0 and tx <= horizon and x[RUNS]):
            break
        if x[BLOCKS]:
            ex = tx + x[COST]
            if not (ex >= stop or ex > horizon):
                break  # its next iteration would end first: `_closed` runs it inline
        heappop(heap)
    if launched:
        x = last
    else:  # as the relay leaves it for `_closed`
        st.frog = None  # (it plans again before its next launch)
        st.running = None
        st.last_void = True
        sim.fleet.idle.add(st)
        st.cur_cls = -1
        st.cur_decodes = 0
        _move(x)
        decoders = x[KEPT][10][3]
        if decoders and x[TIMES]:
            sim.tokens.decode_run(decoders, st, x[TIMES])
    for _end, _eid, side in sorted(heap):
        _move(side)
        side[ITERS] = side[ST].iterations  # (its counts hold for the next call)
        decoders = side[KEPT][10][3]
        if decoders and side[TIMES]:
            sim.tokens.decode_run(decoders, side[ST], side[TIMES])
        heappush(q, (side[END], CALENDAR, side[EID], side[ST]._end_ev))
    sim.events += handled
    env.now = now
    return x[ST], launched


INF = float("inf")
