"""The calendar: SimPy's environment and the operations the runtime does on it.

The rest of the runtime reaches SimPy's internals only through this module
and `process` (a test scans for SimPy's private names outside the kernel:
tests/test_architecture.py). What it offers:

* `Calendar`, the run's `simpy.Environment`: its clock `now` is a plain
  attribute (read on every hot path; SimPy's own code reads and sets it
  through `_now`), `queue` is its heap of entries `(time, priority, eid,
  event)` and `eids` the counter of their sequence numbers. The event loop
  and the fast paths (which replay entries without the loop) pop and push
  entries of `queue` in place, keeping the heap's order;
* `schedule_at(env, t, priority, event)`: an entry at time `t` (the hottest
  paths write it inline: `heappush(env.queue, (t, priority,
  next(env.eids), event))`, the same entry without a call);
* `trigger(env, event, priority, delay, value)`: a success at `now + delay`
  (the event's callbacks run when the loop reaches it);
* `succeeded(event, value)`: mark an event a success without scheduling it
  (a calendar entry that is its own event, or one fired inline by `fire`);
* `run_until(env, horizon)`: handle entries up to `horizon`; `is_ok` and
  `raise_failure` for a loop that runs an entry's callbacks itself;
* `schedule_first`, `entries_made`: for the watchdog;
* `Entry`: the base of runtime objects that are their own calendar entry
  (a job, an arrival process): a success with no value; `fire_entry` runs
  its callbacks inline.
"""
from __future__ import annotations

from heapq import heappop, heappush
from operator import attrgetter
from typing import Any

from simpy.core import Environment
from simpy.events import NORMAL


class Calendar(Environment):
    """The run's `simpy.Environment`, with its clock as a plain attribute."""

    #: the current time (a plain attribute: `Environment.now` is a property)
    now: float = 0.0

    def __init__(self, initial_time: float = 0.0):
        super().__init__(initial_time)
        #: the heap of entries `(time, priority, eid, event)` (SimPy's queue)
        self.queue: list = self._queue
        #: the sequence numbers of entries, in the order they are made
        self.eids = self._eid

    @property
    def _now(self) -> float:  # SimPy's name for the clock, for SimPy's own code
        return self.now

    @_now.setter
    def _now(self, t: float) -> None:
        self.now = t

    def schedule(self, event: Any, priority: Any = NORMAL, delay: float = 0) -> None:
        """SimPy's `schedule`: `event` at `now + delay`."""
        heappush(self.queue, (self.now + delay, priority, next(self.eids), event))


def schedule_at(env: Calendar, t: float, priority: int, event: Any) -> None:
    """A calendar entry for `event` at time `t` with `priority`."""
    heappush(env.queue, (t, priority, next(env.eids), event))


def succeeded(event: Any, value: Any = None) -> Any:
    """Mark `event` a success with `value` (nothing is scheduled); returns it."""
    event._ok = True
    event._value = value
    return event


def trigger(env: Calendar, event: Any, priority: int, delay: float = 0.0,
            value: Any = None) -> None:
    """`event` succeeds with `value` at `now + delay` (an entry with `priority`)."""
    event._ok = True
    event._value = value
    heappush(env.queue, (env.now + delay, priority, next(env.eids), event))


def fire_entry(entry: Entry) -> None:
    """Run the callbacks of `entry` now (it is already a success: `Entry`),
    as if the calendar had just handled it (`instant.fire` without the value)."""
    callbacks, entry.callbacks = entry.callbacks, None
    for cb in callbacks:
        cb(entry)


#: `is_ok(event)`: whether a handled entry succeeded (a C-level read, for the
#: event loop's every entry; `raise_failure` when it did not)
is_ok = attrgetter("_ok")


def raise_failure(event: Any) -> None:
    """Raise the error of the failed entry `event` unless it was defused."""
    if not hasattr(event, "_defused"):
        raise event._value


def run_until(env: Calendar, horizon: float) -> None:
    """Handle the calendar's entries up to `horizon` (SimPy's `step`, inlined)."""
    q = env.queue
    while q and q[0][0] <= horizon:
        now, _priority, _eid, event = heappop(q)
        env.now = now
        todo = event.callbacks
        event.callbacks = None
        for fn in todo:
            fn(event)
        if not event._ok and not hasattr(event, "_defused"):
            raise event._value


def entries_made(env: Calendar) -> int:
    """How many entries the calendar has made (the next sequence number),
    without advancing the counter (the watchdog's progress measure)."""
    text = repr(env.eids)  # `count(n)`
    try:
        return int(text[text.index("(") + 1:text.rindex(")")])
    except ValueError:
        return 0


def schedule_first(env: Calendar, priority: int, event: Any) -> None:
    """An entry for `event` now, before every other entry of its priority
    at this time (sequence number -1: the watchdog's stop)."""
    heappush(env.queue, (env.now, priority, -1, event))


class Entry:
    """An object that is its own calendar entry and event: always a success
    with no value (SimPy's event fields as class attributes, no per-object
    work). A subclass sets `callbacks` before each entry."""

    __slots__ = ()
    _ok = True
    _value = None
