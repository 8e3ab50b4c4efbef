"""Run-time limits, watched from outside the event loop (docs/guide/limits.md).

A `Watchdog` thread looks at a running `Simulation` every `TICK` seconds of
wall time — the event loop itself does no extra work per event. When it
finds a runaway it asks the loop to stop: it pushes a *stop entry* onto the
calendar at the current time with a priority ahead of every other entry, so
the loop handles it next, between two events, where the state is
consistent. What it finds:

- memory in use above `max_memory` bytes: the run stops with the report of
  what was simulated (`RunStopped`, kind "memory");
- the clock staying at one instant while events keep being handled (a
  zero-time cycle): a `SimulationError` naming the statements the sessions
  of that instant wait at;
- the clock advancing by less than its resolution at the horizon over a
  stretch of wall time (increments that cannot move it): the same.

`interrupt_all()` (Ctrl-C in the command line) stops every running
simulation the same way with kind "interrupt". A run that does not reach
its stop entry within `GRACE` seconds (a single step that never returns)
gets the stop raised asynchronously.
"""
from __future__ import annotations

import ctypes
import math
import os
import signal
import sys
import threading
import time
from collections import Counter
from typing import Any, Callable, Optional

from simpy.events import Event, Process

from ...core.errors import PolicyError, SimulationError, shortest
from ..kernel.calendar import entries_made, schedule_first, succeeded
from ..kernel.process import SessionProcess, generator_of, generator_position
from ..policy import policy_watch

TICK = 0.05                 # seconds of wall time between two looks
GRACE = 3.0                 # seconds the loop has to reach a stop entry
INSTANT_WALL = 0.25         # wall time at one instant before a zero-time cycle is suspected
INSTANT_EVENTS = 20_000     # ... and events handled there, plus 20 per live session
CLOCK_WINDOW = 0.5          # wall time over which the clock must move past its resolution
CLOCK_EVENTS = 10_000       # ... while at least this many events were handled
STOP_PRIORITY = -1          # ahead of SimPy's URGENT (0)
PLACED = ("cycle", "clock")  # the stops whose message names where the sessions are
WAKE = getattr(signal, "SIGUSR2", signal.SIGINT)  # wakes a loop in the main thread


class RunStopped(SimulationError):
    """The run stopped early (`kind` "memory" or "interrupt"); `report` is
    the report of the simulated time up to `time` (None when the warm-up had
    not ended, so nothing was measured)."""

    def __init__(self, message: str, time: float = 0.0, *args: Any, kind: str = "interrupt",
                 report: Any = None, **kw: Any):
        super().__init__(message, time, *args, **kw)
        self.kind = kind
        self.report = report

    def header(self, file: Optional[str] = None) -> str:
        where = file or (self.pos.file if self.pos else "<program>")
        return f"{where}: run stopped at t={shortest(self.time)}: {self.message.splitlines()[0]}"


class _StopNow(Exception):
    """Raised by the stop entry: carries the kind and the message."""

    def __init__(self, kind: str, message: str, help: Optional[str] = None):
        super().__init__(kind, message, help)
        self.kind = kind
        self.message = message
        self.help = help


class _StopAsync(BaseException):
    """Raised asynchronously when the loop did not reach its stop entry."""


class PolicyHang(BaseException):
    """Raised in the loop's thread when a user policy call did not return
    within `policy_watch.POLICY_WALL` seconds (`Watchdog.hung` says which)."""


#: The watchdog's own stops: a policy's guard lets them pass.
STOPS: tuple[type[BaseException], ...] = (_StopNow, _StopAsync, PolicyHang)


def rss_bytes() -> int:
    """Memory of this process in use now (resident set), in bytes."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if os.uname().sysname == "Darwin" else peak * 1024


def physical_memory() -> Optional[int]:
    """The machine's memory in bytes, when the platform says."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def default_max_memory() -> Optional[int]:
    """The default bound: three quarters of the machine's memory."""
    total = physical_memory()
    return None if total is None else total * 3 // 4


def megabytes(n: int) -> str:
    return f"{n / 2 ** 20:.1f} MB"


_ACTIVE: set["Watchdog"] = set()
_ACTIVE_LOCK = threading.Lock()


def interrupt_all() -> bool:
    """Ask every running simulation to stop with its report (Ctrl-C);
    False when none is running."""
    with _ACTIVE_LOCK:
        dogs = list(_ACTIVE)
    for dog in dogs:
        dog.request("interrupt", "interrupted (Ctrl-C): the run stopped before its end; "
                                 "the report covers the time simulated so far")
    return bool(dogs)


class Watchdog:
    """Watches one simulation while `with Watchdog(sim, max_memory):` runs it."""

    def __init__(self, sim: Any, max_memory: Optional[int] = None,
                 where: Optional[Callable[[], list[str]]] = None):
        self.sim = sim
        self.max_memory = max_memory
        self.where = where or (lambda: [])
        self.pending: Optional[_StopNow] = None
        self.samples: Counter = Counter()
        self.requested_at = 0.0
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.owner = threading.get_ident()
        self.resolution = math.ulp(sim.horizon)
        now = time.monotonic()
        self.inst = (sim.env.now, 0, now)
        self.window = (sim.env.now, 0, now)
        self.thread = threading.Thread(target=self._watch, name="serq-watchdog", daemon=True)
        self.hung: Optional[Any] = None   # the policy call that did not return
        self.forced: Optional[type] = None
        self.wake: Any = None             # the signal handler replaced (main thread only)

    def __enter__(self) -> "Watchdog":
        with _ACTIVE_LOCK:
            _ACTIVE.add(self)
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(WAKE) in (signal.SIG_DFL, None):
            self.wake = signal.signal(WAKE, self._woken)
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.done.set()
        with _ACTIVE_LOCK:
            _ACTIVE.discard(self)
        if self.thread is not threading.current_thread():
            self.thread.join()
        if self.wake is not None:
            signal.signal(WAKE, self.wake)
            self.wake = None

    def _woken(self, signum: int, frame: Any) -> None:
        """The `WAKE` signal's handler: raise the forced stop in the loop's
        thread (a signal also ends a `time.sleep` there)."""
        forced, self.forced = self.forced, None
        if forced is not None:
            raise forced

    # -- stopping ------------------------------------------------------------
    def request(self, kind: str, message: str, help: Optional[str] = None) -> None:
        """Stop the run at the next event boundary (the message of a kind in
        `PLACED` ends with where the sessions are, read there)."""
        if self.pending is not None or self.done.is_set():
            return
        self.pending = _StopNow(kind, message, help)
        self.requested_at = time.monotonic()
        env = self.sim.env
        ev = Event(env)
        ev.callbacks = [self._fire]
        schedule_first(env, STOP_PRIORITY, succeeded(ev))

    def _fire(self, _ev: Any) -> None:
        with self.lock:
            self.done.set()  # reached: no asynchronous stop may follow
        stop = self.pending
        assert stop is not None
        if stop.kind in PLACED:  # at an event boundary, in the loop's thread: every
            # waiting session's entry is on the calendar with its callback
            try:
                stop.message += self._places()
            except Exception:  # (the message stands without them)
                pass
        raise stop

    def _force(self, exc: type = _StopAsync) -> None:
        if self.wake is not None:  # the loop runs in the main thread: a signal wakes it
            self.forced = exc
            signal.pthread_kill(self.owner, WAKE)
            return
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.owner),
                                                   ctypes.py_object(exc))

    # -- looking -------------------------------------------------------------
    def _watch(self) -> None:
        while not self.done.wait(TICK):
            call = policy_watch.stuck(self.owner)
            if call is not None:  # a policy call that does not return: stop it there
                with self.lock:
                    if not self.done.is_set():
                        self.hung = call
                        self._force(PolicyHang)
                return
            if self.pending is not None:
                if time.monotonic() - self.requested_at > GRACE:
                    with self.lock:
                        if not self.done.is_set():
                            self._force()
                    return
                continue
            try:
                self._look()
            except Exception:  # a look at a state in motion; the next one will do
                continue

    def _look(self) -> None:
        sim = self.sim
        env = sim.env
        now, eid, wall = env.now, entries_made(env), time.monotonic()
        if self.max_memory is not None:
            used = rss_bytes()
            if used > self.max_memory:
                self.request("memory", f"memory in use ({megabytes(used)}) passed the limit "
                             f"of {megabytes(self.max_memory)} (--max-memory); the report "
                             "covers the time simulated so far",
                             help="raise the limit with --max-memory MB, or shorten the "
                                  "horizon; samples kept for the report grow with the run")
                return
        t0, e0, w0 = self.inst
        if now != t0:  # the clock moved: a new instant
            self.inst = (now, eid, wall)
            self.samples.clear()
        else:
            self._sample()
            if wall - w0 >= INSTANT_WALL and eid - e0 > INSTANT_EVENTS + 20 * sim.live:
                self.request("cycle", self._cycle_message(now, eid - e0),
                             help="a loop at one instant needs a `run` of positive work, or "
                                  "a hold that is not preempted again at once")
                return
        t1, e1, w1 = self.window
        if wall - w1 >= CLOCK_WINDOW:
            if t1 < now and now - t1 < self.resolution and eid - e1 > CLOCK_EVENTS:
                if sim.live > 1000:  # arrivals faster than the clock can tell apart
                    err = population_error(sim)
                    self.request("population", err.message, err.help)
                    return
                self.request("clock", self._clock_message(t1, now, eid - e1),
                             help="work amounts that small cannot move the clock; "
                                  "measure time in larger units")
                return
            self.window = (now, eid, wall)

    def _sample(self) -> None:
        """Where the loop's thread is now, in generated session code."""
        frame = sys._current_frames().get(self.owner)
        compiler = getattr(self.sim, "compiler", None)
        while frame is not None and compiler is not None:
            pos = compiler.position(frame)
            if pos is not None:
                self.samples[pos] += 1
                return
            frame = frame.f_back

    def _places(self) -> str:
        """Where the sessions are: the places sampled in the loop's frames
        (most frequent first), then where the waiting sessions wait."""
        places = [p for p, _n in self.samples.most_common(3)]
        places += [p for p in self.where() if p not in places]
        places = places[:3]
        if not places:
            return ""
        return "; the sessions are at " + ", ".join(places)

    def _cycle_message(self, now: float, events: int) -> str:
        return (f"the run makes no progress: the clock stays at t = {shortest(now)} "
                f"while events are handled (more than {events} at that instant; a "
                f"zero-time cycle)")

    def _clock_message(self, t1: float, now: float, events: int) -> str:
        return (f"the clock cannot advance: {events} events moved it from "
                f"t = {shortest(t1)} to t = {shortest(now)}, less than its resolution at "
                f"the horizon ({self.resolution:.3g})")


def waiting_positions(sim: Any, linemap: Callable[[Any], Any], limit: int = 3) -> list[str]:
    """Where the sessions with calendar entries at the current instant (or
    the next one) wait,
    most frequent first, as `file:line:col` (read from their generators)."""
    env = sim.env
    now = env.now
    seen: Counter = Counter()
    items = list(env.queue)[:20_000]
    first = min((it[0] for it in items), default=now)
    for item in items:
        if item[0] != now and item[0] != first:
            continue
        for cb in list(item[3].callbacks or ()):
            proc = getattr(cb, "__self__", None)
            if isinstance(proc, (Process, SessionProcess)):
                pos = generator_position(generator_of(proc), linemap)
                if pos is not None:
                    seen[pos] += 1
    return [p for p, _n in seen.most_common(limit)]


DEFAULT_MAX_LIVE = 100_000  # live sessions (--max-live)


def _where(pos: Any) -> str:
    return "" if pos is None else f" ({pos.file}:{pos.line}:{pos.col})"


def population_error(sim: Any) -> SimulationError:
    """More than `max_live` sessions at once: the arrival rate and the stage
    (or pool) where the sessions pile up."""
    now = sim.env.now
    wl = sim.program.workload
    if wl.arrival == "poisson":
        rate = f"arrive at rate {shortest(wl.rate)}"
    else:
        rate = f"arrive at about {sim.arrivals / now:.4g} per unit of time" if now > 0 else \
            "arrive at one instant"
    decls = {d.name: d.pos for d in sim.program.stages}
    piles = [(getattr(st, "n", 0), st.label, decls.get(st.name)) for st in sim.stage_list]
    piles += [(len(p.queue), f"pool {p.label}", None) for p in sim.pool_list]
    n, label, pos = max(piles, key=lambda x: x[0], default=(0, "", None))
    over = f" (more than --max-live {sim.max_live})" if sim.live > sim.max_live else \
        " (arrivals faster than the clock can tell apart)"
    culprit = (f"; `{label}`{_where(pos)} cannot keep up: {n} of them are there"
               if n else "")
    return SimulationError(
        f"the population grows without bound: {sim.live} sessions live at "
        f"t = {shortest(now)}{over}; sessions {rate}{_where(wl.pos)}{culprit}", now,
        help="lower the arrival rate or add servers; --max-live N raises the limit")


def watched_loop(sim: Any) -> None:
    """`sim._loop()` under a watchdog: stops become errors, with the report
    of the simulated time for a memory limit or an interrupt."""
    compiler = getattr(sim, "compiler", None)

    def where() -> list[str]:
        return waiting_positions(sim, compiler.position) if compiler is not None else []

    with Watchdog(sim, sim.max_memory, where) as dog:
        try:
            sim._loop()
        except PolicyHang:
            call = dog.hung
            name = call.policy if call is not None else "?"
            method = call.method if call is not None else "?"
            what = call.describe() if call is not None else "a policy call"
            raise PolicyError(f"{what} did not return within {policy_watch.POLICY_WALL:g} s "
                              "of wall time: the run stopped there", sim.env.now,
                              help="a policy method returns its decision at once; it does "
                                   "not sleep, wait for anything or loop forever",
                              policy=name, method=method, rule="returns") from None
        except _StopNow as stop:
            now = sim.env.now
            if stop.kind == "population":
                raise population_error(sim) from None
            if stop.kind not in ("memory", "interrupt"):
                raise SimulationError(stop.message, now, help=stop.help) from None
            report = sim.partial_report(now)
            raise RunStopped(stop.message, now, help=stop.help, kind=stop.kind,
                             report=report) from None
        except _StopAsync:
            raise RunStopped("the run did not reach a stop within seconds: it stopped without a "
                             "report", sim.env.now, kind="interrupt") from None
