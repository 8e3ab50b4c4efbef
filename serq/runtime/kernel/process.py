"""A session's process: its generator driven by the calendar (spec Part 02 §10).

`SessionProcess` does what SimPy's `Process` does for a session, with less
work per session: it is its own start entry (a `READY` calendar entry that
resumes the generator), it resumes the generator when the event it yielded
fires, and when the generator returns nothing is scheduled, since no one
waits for a session to end (in the general event loop, which does its
end-of-event work after every entry, `AnnouncedSessionProcess` still puts
an empty entry on the calendar at the end, as SimPy's `Process` did). A
session that raises is scheduled as a failed event at the current time, as
SimPy schedules a failed process, so the event loop raises the error as it
did before.

It keeps SimPy's attribute names (`_generator`, `_target`, `_resume`,
`_ok`, `_value`, `callbacks`), so that the functions below treat it and a
SimPy `Process` (a `fork` leg's) alike; the rest of the runtime uses its
public members: `target` (the event it waits on), `start`, `detach` and
`throw` (preemption, `resources/holds.py`), and `stop` and `generator_of`.
"""
from __future__ import annotations

from heapq import heappush
from typing import Any, Callable, Generator, Optional

from .instant import CALENDAR, READY


class SessionProcess:
    """The process of one session; starts at the current instant, behind
    the sessions already ready (a `READY` entry)."""

    __slots__ = ("env", "callbacks", "_generator", "_target", "_ok", "_value", "_defused")

    #: whether the end of the session is an (empty) calendar entry
    end_entry = False

    def __init__(self, env: Any, generator: Generator):
        self.env = env
        self._generator = generator
        self._ok = True
        self._value = None
        self.callbacks: Any = [self._resume]
        self._target: Any = self  # the start entry, as SimPy's `Initialize`
        heappush(env._queue, (env._now, READY, next(env._eid), self))

    @classmethod
    def unstarted(cls, env: Any, generator: Generator) -> "SessionProcess":
        """A process without a start entry; `start()` runs it. Only for a
        session created as the last act of a calendar entry while no other
        session is ready at the instant (an open arrival in the plain
        loop): the start entry would be the very next entry handled."""
        self = _new(cls)
        self.env = env
        self._generator = generator
        self._ok = True
        self._value = None
        self.callbacks = None
        self._target = None
        return self

    @property
    def is_alive(self) -> bool:
        """Whether the session still waits on an event (SimPy's `Process.is_alive`)."""
        return self._target is not None

    @property
    def target(self) -> Any:
        """The event the session waits on (None: none; SimPy's `Process.target`)."""
        return self._target

    def detach(self) -> None:
        """Stop waiting on the target event: leave its callbacks and, if it
        has not fired and can be cancelled (a job at a stage), cancel it."""
        target = self._target
        if target is None:
            return
        if target.callbacks is not None:
            try:
                target.callbacks.remove(self._resume)
            except ValueError:
                pass
            cancel = getattr(target, "cancel", None)
            if cancel is not None:
                cancel()
        self._target = None

    def throw(self, exc: BaseException) -> None:
        """Throw `exc` into the (detached) generator where it waits; it then
        waits on the event it yields, or has ended."""
        try:
            ev = self._generator.throw(exc)
        except StopIteration as stop:
            self.ended(stop.value)
            return
        ev.callbacks.append(self._resume)
        self._target = ev

    def start(self) -> None:
        """Run the session now, up to its first wait."""
        self._resume(STARTED)

    def _resume(self, event: Any) -> None:
        """Send the value of `event` into the generator (or throw its error)
        until it yields an event that has not fired yet."""
        gen = self._generator
        while True:
            try:
                if event._ok:
                    event = gen.send(event._value)
                else:
                    event._defused = True
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    event = gen.throw(exc)
            except StopIteration as stop:
                self.ended(stop.value)
                return
            except BaseException as err:
                self._fail(err)
                return
            callbacks = event.callbacks
            if callbacks is not None:
                callbacks.append(self._resume)
                self._target = event
                return

    #: `resume(event)`: go on with `event`'s value (the callback a fired event calls)
    resume = _resume

    def ended(self, value: Any = None) -> None:
        """The generator returned `value`."""
        self._value = value
        self._target = None
        if self.end_entry:
            self.callbacks = []
            env = self.env
            heappush(env._queue, (env._now, CALENDAR, next(env._eid), self))

    def _fail(self, err: BaseException) -> None:
        """The session raised: the event loop raises `err` at this instant."""
        if err.__traceback__ is not None:
            err.__traceback__ = err.__traceback__.tb_next
        self._ok = False
        self._value = err
        self._target = None
        self.callbacks = []
        env = self.env
        heappush(env._queue, (env._now, CALENDAR, next(env._eid), self))


_new = object.__new__


def stop(proc: Any) -> None:
    """End `proc` (a `SessionProcess` or a SimPy `Process`) where it waits:
    its generator is closed; it has ended with no value, waiting on nothing."""
    proc._generator.close()
    proc._ok = True
    proc._value = None
    proc._target = None


def generator_of(proc: Any) -> Any:
    """The generator `proc` (a `SessionProcess` or a SimPy `Process`) runs."""
    return proc._generator


def generator_position(gen: Any, linemap: Callable[[Any], Any]) -> Optional[str]:
    """Where generator `gen` is (or waits), as `linemap` names a frame of
    generated code: the innermost such frame along its `yield from`s."""
    found = None
    while gen is not None:
        frame = getattr(gen, "gi_frame", None)
        if frame is None:
            break
        pos = linemap(frame)
        if pos is not None:
            found = pos
        gen = getattr(gen, "gi_yieldfrom", None)
    return found


class _Started:
    """The value a session starts with (as the start entry's)."""

    _ok = True
    _value = None


STARTED = _Started()


class AnnouncedSessionProcess(SessionProcess):
    """A session process whose end is an empty calendar entry (the general loop)."""

    __slots__ = ()
    end_entry = True


def unwatched_end(entry: Any) -> bool:
    """Whether the calendar entry `entry` is the end of a session in the
    general loop that succeeded and that nobody waits for (no event in
    pyserq: the loop may take it off unhandled)."""
    return type(entry) is AnnouncedSessionProcess and not entry.callbacks and entry._ok
