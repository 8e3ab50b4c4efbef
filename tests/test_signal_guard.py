"""A stop signal is not lost where Python drops exceptions (serq/cli/guard.py).

Python runs a signal's handler in whatever code the main thread is running.
When that is a weak reference's callback (the import system's module locks
have one), the handler's `Terminated` is printed as "Exception ignored in …"
and dropped. The chaos test of sweeps met it: a SIGTERM that came 0.08 s after
the sweep locked its store printed a traceback, and the sweep ran to its end
with status 0. The guards deliver such a signal again.
"""
from __future__ import annotations

import signal
import sys
import time
import weakref

import pytest

from serq.cli.guard import Terminated, interruptible, stopping_on_signals


class _Thing:
    pass


def _signal_inside_a_callback(signum: int) -> str:
    """`signum` raised while a weak reference's callback runs (its handler
    runs there, as it did inside the import system's), then more work."""
    thing = _Thing()
    ref = weakref.ref(thing, lambda _ref: signal.raise_signal(signum))
    del thing  # the callback runs here
    assert ref() is None
    time.sleep(5)  # the code that follows: the signal must stop it
    return "ran to its end"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("guard", [stopping_on_signals, interruptible])
def test_a_signal_whose_exception_a_callback_dropped_is_delivered_again(guard, signum, capsys):
    hook = sys.unraisablehook
    handler = signal.getsignal(signum)
    with pytest.raises(Terminated) as stop:
        guard(lambda: _signal_inside_a_callback(signum))
    assert stop.value.signum == signum and stop.value.status == 128 + signum  # 143, 130
    assert "Exception ignored" not in capsys.readouterr().err
    # the hook and the handler are the caller's again
    assert sys.unraisablehook is hook and signal.getsignal(signum) is handler


def test_other_dropped_exceptions_still_reach_the_previous_hook(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_type))

    def body() -> str:
        thing = _Thing()
        ref = weakref.ref(thing, lambda _ref: 1 / 0)
        del thing
        assert ref() is None
        return "done"
    assert stopping_on_signals(body) == "done"
    assert seen == [ZeroDivisionError]
