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
* each launch takes the calendar sequence number (`env._eid`) it would have
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
"""
from __future__ import annotations

from heapq import heappop, heappush
from typing import TYPE_CHECKING, Optional

from .closed import _hold_steps, _needs_block, _run_steps
from ..kernel.instant import CALENDAR

if TYPE_CHECKING:
    from ..resources.engine import StepStage


def _may_go_on(st: "StepStage", stamp: int) -> bool:
    """Whether `st` has a kept plan that nothing but engines' iterations
    followed (`stamp`), whose checks `_relay_kept` has not done already
    (`ready`), and whose run `_side` has not refused (`unplain`)."""
    kept = st.kept
    return kept is not None and kept[0] == stamp and not kept[11] and \
        (kept[10] is None or kept[10] is not st.unplain)


def _side(st: "StepStage", stamp: int) -> Optional[list]:
    """What the loop needs of an engine whose kept plan goes on plainly
    (the fields below), or None when it may not."""
    return _plain_side(st) if _may_go_on(st, stamp) else None


def _plain_side(st: "StepStage") -> Optional[list]:
    """`_side` of an engine that `_may_go_on` (asked already)."""
    kept = st.kept
    run = kept[10]
    if run is None:  # (a plan's first launch: its run is made when it goes on)
        run = st._run_of(kept[1], kept[2], float(kept[3]), kept[4], kept[5])
        kept = st.kept = kept[:10] + (run, False)
    _cls, pairs, grows, sessions, moving, regrow = run
    spec = st.spec
    if moving or regrow is None or not spec.cost_steady or spec.cost_pools \
            or spec.serve_varies or not st.closed_ok or not st.burst:
        st.unplain = run  # (not asked again while the plan stands)
        return None
    if st.queue_waiting():
        return None
    rs = _run_steps(pairs)
    if rs is None or rs < 2:
        if rs is None:
            st.unplain = run
        return None
    if grows and _needs_block(grows):
        blocks = 0  # its next end grows a hold
    else:
        blocks = _hold_steps(grows, rs - 1)
        if blocks is None:
            return None
    for s in sessions:  # each decode token continues its sequences
        tok = s.tok
        if tok is None or s.turn_no != tok.turn_no or not tok.turn.count or \
                (tok.active and not tok.request.count):
            return None
    return [st, kept[9], kept[2], kept[3], run[0], [], blocks, 0, 0.0, None, rs - 1, 0, kept]


# the fields of a side: the engine, its plan's cost, tokens, decoders and class,
# the times of its decode tokens, the ends it may handle before a hold needs a
# block and before a run finishes, the ends it handled and the iterations it
# launched since its runs and holds last moved, its iteration's end and
# calendar sequence number, its kept plan
ST, COST, TOKENS, DEC, CLS, TIMES, BLOCKS, ENDS, END, EID, RUNS, LAUNCHES, KEPT = range(13)


def _move(side: list) -> None:
    """Bring the runs' remaining tokens and the holds' positions up to date
    (each end took 1.0 from every run, each launch added 1.0 to every hold:
    exact, `closed._whole_steps`)."""
    run = side[KEPT][10]
    n = side[ENDS]
    if n:
        fn = float(n)
        for job, _t in run[1]:
            job.remaining = job.remaining - fn
        side[ENDS] = 0
    n = side[LAUNCHES]
    if n:
        fn = float(n)
        for frame, fk, _t in run[2]:
            frame.pos[fk] += fn
            frame.grown = True
        side[LAUNCHES] = 0


def _insert(sides: list, side: list) -> None:
    """Put `side` back among `sides` (sorted by end, then sequence number;
    its sequence number is the newest, so it goes after equal ends)."""
    end = side[END]
    i = 0
    for other in sides:
        if other[END] > end:
            break
        i += 1
    sides.insert(i, side)


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
    q = env._queue
    by_end = sim.engine_ends
    stamp = sim.stamp
    if not _may_go_on(b, stamp):  # (as `_side` would, before the calendar's walk)
        return None
    if sim.gauges or sim.drained is not None or b.instant.dirty:
        return None
    if sim.pool_list and not (sim.idle_stamp == stamp and sim.pools_idle):
        return None
    for st in sim.step_list:  # as `_quiet`: no other engine idle with work
        if st.idle_with_work():
            return None
    # the engines' iteration ends that come before anything else: a subtree
    # at the heap's root (an entry's parents come before it), walked down
    # while its entries are engines' ends
    q0 = INF
    found = []
    n = len(q)
    stack = [0]
    while stack:
        i = stack.pop()
        entry = q[i]
        st = by_end.get(entry[3])
        if st is None or st.running is None or st.running[1] is not entry[3]:
            if entry[0] < q0:
                q0 = entry[0]
            continue
        found.append((entry, st))
        i = 2 * i + 1
        if i < n:
            stack.append(i)
            if i + 1 < n:
                stack.append(i + 1)
    found = [f for f in found if f[0][0] < q0]
    if len(found) < 2:
        return None
    found.sort(key=_first)
    horizon = sim.horizon
    tx = found[0][0][0]  # b's end (the calendar's next)
    t2 = found[1][0][0]  # the next end after it
    if not tx < t2 or tx > horizon:
        return None
    x = _plain_side(b)  # (`_may_go_on(b)` was asked above; nothing has changed since)
    if x is None or not x[RUNS]:
        return None
    if x[BLOCKS]:
        ex = tx + x[COST]
        if not (ex >= t2 or ex > horizon):
            return None  # not even b's end is a plain relay
    x[END], x[EID] = tx, found[0][0][2]
    sides = [x]
    for entry, st in found[1:]:
        side = _side(st, stamp)
        if side is None:  # it stays on the calendar: nothing passes it
            q0 = entry[0]
            break
        side[END], side[EID] = entry[0], entry[2]
        sides.append(side)
    if len(sides) < 2:
        return None
    stop = t2 if t2 < q0 else q0
    # their entries leave the calendar while the loop runs: they are its
    # first (every other entry comes at or after q0)
    for _side_ in sides:
        heappop(q)
    warmup = b.warmup
    eids = env._eid
    handled = 0
    launched = True
    now = tx
    while True:
        del sides[0]
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
            env._now = tx
            kept = x[KEPT]
            regrow = kept[10][5]
            regrow.attention = kept[5]
            cost = regrow()
            if cost is None:  # it does not fit: `_closed` plans again
                launched = False
                break
            regrow.cost = None
            kept = x[KEPT] = st.kept = kept[:6] + (regrow.r, regrow.kvd, regrow.kvp, cost) \
                + kept[10:]
            x[COST] = cost
            ex = tx + cost
            if not (ex >= stop or ex > horizon):
                # it ends first: `_closed` runs it inline, its cost known
                st.kept = kept[:11] + (True,)
                launched = False
                break
            blocks = _hold_steps(kept[10][2], x[RUNS] + 1)
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
        _insert(sides, x)
        last = x
        # the next end: a plain relay?
        x = sides[0]
        tx = x[END]
        t2 = sides[1][END]
        stop = t2 if t2 < q0 else q0
        if not (tx < t2 and tx < q0 and tx <= horizon and x[RUNS]):
            break
        if x[BLOCKS]:
            ex = tx + x[COST]
            if not (ex >= stop or ex > horizon):
                break  # its next iteration would end first: `_closed` runs it inline
    if launched:
        x = last
    else:  # as the relay leaves it for `_closed`
        st.running = None
        st.last_void = True
        st.cur_cls = -1
        st.cur_decodes = 0
        _move(x)
        sessions = x[KEPT][10][3]
        if sessions and x[TIMES]:
            sim.tokens.decode_run(sessions, st, x[TIMES])
    for side in sides:
        _move(side)
        sessions = side[KEPT][10][3]
        if sessions and side[TIMES]:
            sim.tokens.decode_run(sessions, side[ST], side[TIMES])
        heappush(q, (side[END], CALENDAR, side[EID], side[ST]._end_ev))
    sim.events += handled
    env._now = now
    return x[ST], launched


def _first(found: tuple) -> tuple:
    entry = found[0]
    return entry[0], entry[2]


INF = float("inf")
