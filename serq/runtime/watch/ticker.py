"""A run's progress callback, driven by wall time from a helper thread.

The event loop does no progress work at all: a daemon thread wakes every
`interval` seconds and reads the clock and the event counter (plain
attribute reads), so a run with a progress bar keeps its fast paths (the
simple loop, engine bursts) and is no slower than one without.
"""
from __future__ import annotations

import inspect
import threading
from typing import Any, Callable

#: Seconds between two calls of the progress callback (four a second).
INTERVAL = 0.25


def _arity(fn: Callable[..., Any]) -> int:
    """1 for `fn(now)`, 2 for `fn(now, events)`."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return 2
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return 2 if len(positional) >= 2 else 1


class Ticker:
    """Call `progress(now)` (or `progress(now, events)`) every `interval`
    seconds of wall time while a simulation runs (`start()` … `stop()`)."""

    def __init__(self, sim: Any, progress: Callable[..., Any], interval: float = INTERVAL):
        self.sim = sim
        self.progress = progress
        self.interval = interval
        self.two = _arity(progress) == 2
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="serq-progress", daemon=True)

    def tick(self) -> None:
        """Call the callback with the clock and the event count as they stand."""
        now = self.sim.env.now
        if self.two:
            self.progress(now, self.sim.events)
        else:
            self.progress(now)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.tick()

    def start(self) -> "Ticker":
        """Start calling the callback every `interval` seconds."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the calls (the thread ends before this returns)."""
        self._stop.set()
        self._thread.join()
