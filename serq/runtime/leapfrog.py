"""Two engines whose iterations alternate, handled in one loop.

When two step engines run at once and nothing else is due, their iteration
ends alternate on the calendar: the burst relays from one to the other at
every end (`Burst._burst`), and each relay finishes an iteration, goes on
with the kept plan and launches the next (`Burst._relay_kept`). While both
plans stay as they are -- no run finishes, no hold needs a block, the cost
reads nothing an iteration changes -- each relay only adds the iteration to
the engine's sums, records its decode tokens and puts the next end on the
calendar. `leapfrog` does that for both engines in one loop, for as long as
their ends strictly alternate before anything else is due:

* the sums are added at each end in the relay's order (each engine's own
  sums, so the interleaving is the calendar's as before);
* each launch takes the calendar sequence number (`env._eid`) it would have
  taken, so the two entries it leaves behind are the relay's;
* the runs' remaining tokens and the holds' positions move once at the
  end, by whole tokens (exact: `closed._whole_steps`), and the decode tokens
  are recorded then (`TokenLog.decode_run`; they only continue sequences).

When an engine's hold needs a block, the loop brings the engine's runs
and holds up to date and grows it as the relay would (`Regrow`: the block,
then the totals and the cost it changes) and goes on with the new cost.

It leaves when an end would not be a plain relay: before handling it when
a run would finish, something else is due at or before it, or it is past
the horizon; after it (as the relay leaves it for `_closed`) when the block
does not fit or the next iteration would end before the other engine's.
The burst goes on from there as before.
"""
from __future__ import annotations

from heapq import heapify, heappush
from typing import TYPE_CHECKING, Optional

from .closed import _hold_steps, _needs_block, _run_steps
from .instant import CALENDAR

if TYPE_CHECKING:
    from .engine import StepStage


def _side(st: "StepStage", stamp: int) -> Optional[list]:
    """What the loop needs of an engine whose kept plan goes on plainly
    (the fields below), or None when it may not."""
    kept = st.kept
    if kept is None or kept[0] != stamp or kept[11]:
        return None
    run = kept[10]
    if run is None:
        return None
    _cls, pairs, grows, sessions, moving, regrow = run
    spec = st.spec
    if moving or regrow is None or not spec.cost_steady or spec.cost_pools \
            or spec.serve_varies or not st.closed_ok or st.queue_waiting():
        return None
    rs = _run_steps(pairs)
    if rs is None or rs < 2:
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


def leapfrog(a: "StepStage", b: "StepStage") -> Optional[tuple]:
    """`a` has just launched an iteration (its end is on the calendar) and
    `b`'s iteration end is the calendar's next entry. Handle the ends of
    both while they alternate (see the module text). Returns None when no
    end was handled (nothing changed), else (engine, launched): the engine
    whose end was handled last, and whether it launched its next iteration
    (else `_closed` goes on from its kept plan)."""
    env = a.env
    q = env._queue
    ev_a, ev_b = a._end_ev, b._end_ev
    tx = q[0][0]  # b's end: the calendar's next entry
    # a's end is next after it only as a child of the root (a heap's parent
    # comes before its children); the next entry of anything else is then
    # the root's other child or one of a's children
    n = len(q)
    if n > 1 and q[1][3] is ev_a:
        i = 1
    elif n > 2 and q[2][3] is ev_a:
        i = 2
    else:
        return None
    ty, eid_a = q[i][0], q[i][2]
    q0 = float("inf")  # the next entry of anything else
    for k in (3 - i, 2 * i + 1, 2 * i + 2):
        if k < n and q[k][0] < q0:
            q0 = q[k][0]
    horizon = a.sim.horizon
    # worth it when at least b's, a's and b's next ends come before anything else
    kept_b = b.kept
    if not (tx < ty < q0 and ty <= horizon) or kept_b is None \
            or not tx + kept_b[9] < q0:
        return None
    sim = a.sim
    if sim.gauges or sim.drained is not None or a.instant.dirty:
        return None
    stamp = sim.stamp
    if sim.pool_list and not (sim.idle_stamp == stamp and sim.pools_idle):
        return None
    for st in sim.step_list:  # `_quiet`: no other engine idle with work
        if st.last_void and st.running is None and (st.residents or st.queue_waiting()):
            return None
    x = _side(b, stamp)
    if x is None:
        return None
    y = _side(a, stamp)
    if y is None:
        return None
    x[END], x[EID] = tx, q[0][2]
    y[END], y[EID] = ty, eid_a
    if not x[RUNS]:
        return None
    if x[BLOCKS]:
        ex = tx + x[COST]
        if not (ex >= ty or ex > horizon):
            return None  # not even b's end is a plain relay
    # both entries leave the calendar while the loop runs
    q[:] = [entry for entry in q if entry[3] is not ev_a and entry[3] is not ev_b]
    heapify(q)
    warmup = a.warmup
    eids = env._eid
    handled = 0
    launched = True
    while True:
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
            if not (ex >= (ty if ty < q0 else q0) or ex > horizon):
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
        x, y = y, x
        tx, ty = ty, ex
        # the other engine's end next, plainly?
        if not (tx < ty and tx < q0 and tx <= horizon and x[RUNS]):
            break
        if x[BLOCKS]:
            ex = tx + x[COST]
            if not (ex >= (ty if ty < q0 else q0) or ex > horizon):
                break  # its next iteration would end first: `_closed` runs it inline
    if launched:
        x, y = y, x  # y: the other engine
    else:
        st = x[ST]  # as the relay leaves it for `_closed`
        st.running = None
        st.last_void = True
        st.cur_cls = -1
        st.cur_decodes = 0
    for side in (x, y):
        _move(side)
        st = side[ST]
        sessions = side[KEPT][10][3]
        if sessions and side[TIMES]:
            sim.tokens.decode_run(sessions, st, side[TIMES])
    heappush(q, (y[END], CALENDAR, y[EID], y[ST]._end_ev))
    if launched:
        heappush(q, (x[END], CALENDAR, x[EID], x[ST]._end_ev))
    sim.events += handled
    env._now = now
    return x[ST], launched
