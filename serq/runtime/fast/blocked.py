"""Admissions known to fail: an engine does not try its head again.

In a loaded replica the head of an engine's admission queue often cannot
fit for many iterations (its KV reservation waits for a long conversation
to finish), and each of those iterations tried it again: the head's
amounts evaluated, the fit rule asked, nothing admitted. Such a try changes
nothing, and it keeps failing while no room comes back: the engine's own
iterations only take room (a hold grows, a reservation turns into units),
other admissions take room, and the head's need stays what it was.

So after an admission step that admitted nothing, `blocked_head` records
what it tried -- the pool, its head, and the `Pool.freed` count of each of
the head's pools (units given back, a reservation gone, a new capacity)
-- and, while they stand, `admits_now` answers that the step would admit
nothing (`Burst.admit_one` then returns at once). Anything that could
change the answer changes them: room coming back in one of the head's
pools, a new head (a preempted hold goes to the front), a queue ahead of
it in the engine's pools. The record is made only when the answer cannot
move otherwise, and when the tries it saves could not have failed:

* the built-in admission choice, head choice and fit rule (`plain_order`,
  `Pool.plain_select` without `queue by`, `Pool.plain_room`): the step
  tries the first waiting pool's head and asks `used + reservations +
  units <= cap`, which only room coming back can turn to yes;
* for each of the head's pools, units of constants and session attributes
  (`HoldSpec.static`: they draw nothing, and the waiting session runs no
  code), or units of live state whose every possible value lies between 0
  and a reserve of attributes (`compile.bounds`): then the need is the
  reserve's, the same at every try, and no try could raise an amount
  error, as the first one, which did evaluate them, did not;
* no legs, whose statements could change a waiting session's attributes.

(Letting the closed runs and the leapfrog go on while such a head waits
took six in seven attempts off `replica.sq` at R = 16 but made it slower: in that
regime a closed run's iteration, a hold needing a block every few
iterations, costs about what an attempt does. The record serves the
attempts only.)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from ..resources.engine import StepStage


def blocked_head(st: "StepStage", plan: Any) -> Optional[tuple]:
    """After an admission step of `st` (planning `plan`) that admitted
    nothing: what it tried, when nothing but room coming back can change
    that (see the module text), else None. `st` decides with the built-in
    rules (`closed_ok`)."""
    if st.sim.legs is not None:
        return None
    pool = st.admission_pool(plan)  # (the built-in: the first served pool with a queue)
    if pool is None:
        return None
    if not pool.plain_select or pool.spec.queue_keys is not None:
        return None
    frame = pool.queue[0]
    spec = frame.spec
    s = frame.session
    k = 0
    for p in frame.pools:
        if not p.plain_room:
            return None
        units_static, reserve_static = spec.static[k]
        if not units_static:
            # units of live state: the need stays the reserve's only when
            # every value they may take lies in [0, reserve]
            bound = spec.bounds[k]
            if bound is None:
                return None
            lo, hi = bound(s)
            if not (lo >= 0.0 and hi <= spec.reserve[k](s)):
                return None
        elif spec.reserve[k] is not None and not reserve_static:
            return None
        k += 1
    return pool, frame, [p.freed for p in frame.pools]


def admits_now(st: "StepStage") -> bool:
    """Whether an attempt of `st` now could admit a waiting hold: a hold
    waits in a pool it admits from, and it is not the head `blocked_head`
    recorded, still unable to fit."""
    for q in st.served_queues:
        if q:
            break
    else:
        return False
    blocked = st.blocked
    if blocked is None:
        return True
    pool, frame, freed = blocked
    if q is pool.queue and q[0] is frame:
        k = 0
        for p in frame.pools:
            if p.freed != freed[k]:
                break
            k += 1
        else:
            return False
    st.blocked = None
    return True
