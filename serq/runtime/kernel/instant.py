"""Event priorities and the end-of-instant hook (spec Part 02 §10).

The calendar is SimPy's event queue, ordered by (time, priority, insertion).
Three priorities give the language's execution model:

* `READY` (SimPy's URGENT, 0): a session that became ready (its process
  starts); these run before any further calendar entry at the instant, in
  the order they became ready — the ready queue of a settle;
* `CALENDAR` (SimPy's NORMAL, 1): timed events (job completions, arrivals,
  the warm-up boundary);
* `LATE` (2): the end of an instant: once no other event is due at the
  current time, flows recompute their rates and engines attempt iterations
  (`ps` stages recompute theirs earlier, after every settle:
  `Instant.settle_each`).
"""
from __future__ import annotations

from heapq import heappop, heappush
from typing import Any, Callable, Protocol

from simpy.events import Event

from .calendar import raise_failure

READY = 0
CALENDAR = 1
LATE = 2


class EndOfInstant(Protocol):
    """Something that recomputes once its instant has settled."""

    dirty: bool

    def end_of_instant(self) -> None: ...


def timer_event(env: Any) -> Event:
    """A triggered event with no callbacks yet, for a calendar entry."""
    ev = Event(env)
    ev._ok = True
    ev._value = None
    return ev


def timer(env: Any, delay: float, callback: Callable[[Event], None],
          priority: int = CALENDAR) -> Event:
    """Schedule `callback` as a calendar entry `delay` from now."""
    ev = timer_event(env)
    ev.callbacks.append(callback)
    heappush(env._queue, (env._now + delay, priority, next(env._eid), ev))
    return ev


def requeue(env: Any) -> Event:
    """An event that resumes the waiting session behind the sessions
    already ready at this instant (a run of zero work, Part 04 §2). In a
    step engine's admission those run before the admission ends
    (`run_ready`), so such a session can still join the engine there."""
    ev = Event(env)
    ev._ok = True
    ev._value = None
    heappush(env._queue, (env._now, READY, next(env._eid), ev))
    return ev


def run_ready(env: Any) -> None:
    """Handle now, in order, every entry of the current instant with READY
    priority, and those they add in turn: the ready queue of a step
    engine's admission. The admitted session runs at once until it blocks
    (Part 04 §7 step 5), and what its statements made ready -- a leg it
    forked, a session a release of it let through a pool -- runs in the
    admission too, before the engine serves the newcomers (pyserq 0.1.3:
    such a run joins the iteration being planned). An engine attempts only
    when no other entry of the instant is left (the end of an instant, or a
    quiet iteration end), so every entry handled here was made during the
    attempt."""
    q = env.queue
    now = env.now
    while q and q[0][0] == now and q[0][1] == READY:
        event = heappop(q)[3]
        callbacks, event.callbacks = event.callbacks, None
        for callback in callbacks:
            callback(event)
        if not event._ok:
            raise_failure(event)


def fire(event: Event, value: Any = None) -> None:
    """Trigger `event` and run its callbacks now, as if the calendar had
    just handled it (the waiting session resumes inside the current event)."""
    event._ok = True
    event._value = value
    callbacks, event.callbacks = event.callbacks, None
    for cb in callbacks:
        cb(event)


def _order(obj: Any) -> float:
    return getattr(obj, "order", 0)


class Instant:
    """Collects objects to recompute at the end of the current instant."""

    def __init__(self, env: Any):
        self.env = env
        self.pending = False
        self.inline = False  # the event loop calls `settled()` itself
        self.closed = False  # an event already did the loop's end-of-event work
        self.dirty: list[EndOfInstant] = []

    def mark(self, obj: EndOfInstant) -> None:
        """Ask for `obj.end_of_instant()` once the instant has settled."""
        if not obj.dirty:
            obj.dirty = True
            self.dirty.append(obj)
        if not self.pending and not self.inline:
            self.pending = True
            timer(self.env, 0.0, self._fire, LATE)

    def settle_each(self) -> None:
        """The settle of one event has ended (no ready session is left):
        recompute now, in declaration order, what re-evaluates after every
        settle rather than once the instant is over (`ps` stages, Part 04 §2:
        `each_settle`)."""
        now = [obj for obj in self.dirty if getattr(obj, "each_settle", False)]
        if not now:
            return
        self.dirty = [obj for obj in self.dirty if not getattr(obj, "each_settle", False)]
        now.sort(key=_order)
        for obj in now:
            obj.dirty = False
            obj.end_of_instant()

    def _fire(self, _ev: Event) -> None:
        self.pending = False
        self.settled()

    def settled(self) -> None:
        """No other event is due at this instant: recompute what changed.

        What a recomputation marks in turn is recomputed in the same settle
        (Part 02 §10.3 step 4): a session that a step engine admits runs at
        once (Part 04 §7 step 5), and the `ps` stage or engine it joins must
        not wait for an unrelated later event to start its job."""
        while self.dirty:
            items, self.dirty = self.dirty, []
            if len(items) > 1:
                items.sort(key=_order)  # stages in declaration order (Part 02 §10.3 step 4)
            for obj in items:
                obj.dirty = False
                obj.end_of_instant()
