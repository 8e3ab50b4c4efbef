"""Command-line guards of a run (docs/guide/limits.md): the `--max-live` and
`--max-memory` options, Ctrl-C that stops a run with the report of what was
simulated, and a standard output that is closed or full.

Exit statuses: 0 success; 1 a program that does not load, a run-time error,
a run stopped by `--max-memory`, an output that cannot be written; 2 a
usage error; 130 a run interrupted with Ctrl-C (its partial report is
printed first).
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any, Callable, Optional, TypeVar

T = TypeVar("T")

EXIT_INTERRUPTED = 130


class OutputError(Exception):
    """Standard output cannot take the report (closed, full, a broken pipe)."""


def _megabytes(text: str) -> int:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a number of megabytes") from None
    if not (0 < v < 2 ** 44):
        raise argparse.ArgumentTypeError(f"`{text}` is not a number of megabytes above 0")
    return int(v * 2 ** 20)


def add_limit_options(q: argparse.ArgumentParser, count: Callable[[str], int]) -> None:
    """`--max-live N` (read with `count`) and `--max-memory MB` of `run`."""
    q.add_argument("--max-live", type=count, metavar="N",
                   help="stop when more than N sessions are live at once (default 100000)")
    q.add_argument("--max-memory", type=_megabytes, metavar="MB",
                   help="stop with the report so far when the process uses more than MB "
                        "megabytes (default: three quarters of the machine's memory)")


def memory_limit(args: argparse.Namespace) -> Optional[int]:
    """The memory bound in bytes: the option, else the default."""
    from ..runtime.watch.watchdog import default_max_memory
    given = getattr(args, "max_memory", None)
    return given if given is not None else default_max_memory()


def interruptible(fn: Callable[[], T]) -> T:
    """Run `fn` with Ctrl-C stopping the simulation at its next event (the
    run then raises `RunStopped` with its report); a second Ctrl-C stops at
    once."""
    if threading.current_thread() is not threading.main_thread():
        return fn()
    from ..runtime.policy import policy_watch
    from ..runtime.watch.watchdog import interrupt_all
    presses = [0]
    owner = threading.get_ident()

    def handler(signum: int, frame: Any) -> None:
        presses[0] += 1
        if presses[0] > 1 or policy_watch.running(owner) is not None or not interrupt_all():
            raise Terminated(signum)  # (in a policy call, the loop cannot reach a stop)
    old = signal.signal(signal.SIGINT, handler)
    old_term = signal.signal(signal.SIGTERM, handler)
    try:
        return fn()
    finally:
        signal.signal(signal.SIGINT, old)
        signal.signal(signal.SIGTERM, old_term)


class Terminated(KeyboardInterrupt):
    """Ctrl-C (SIGINT) or SIGTERM: the command stops, keeping what finished."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signum)
        self.signum = signum

    @property
    def status(self) -> int:
        """The exit status: 128 + the signal's number (130 for Ctrl-C)."""
        return 128 + int(self.signum)


def stopping_on_signals(fn: Callable[[], T]) -> T:
    """Run `fn` with SIGTERM handled as Ctrl-C is (a `Terminated` raised in
    the main thread: a study stops, keeps its finished runs and ends its
    workers)."""
    if threading.current_thread() is not threading.main_thread():
        return fn()

    def handler(signum: int, frame: Any) -> None:
        raise Terminated(signum)
    old = signal.signal(signal.SIGTERM, handler)
    try:
        return fn()
    finally:
        signal.signal(signal.SIGTERM, old)


def check_stdout() -> None:
    """Refuse to start when standard output is closed (nowhere to report)."""
    closed = OutputError("standard output is closed: the report has nowhere to go")
    out = sys.stdout
    if out is None or getattr(out, "closed", False):
        raise closed
    try:
        fd = out.fileno()
    except (OSError, ValueError, AttributeError):
        return  # an in-memory stream (a test's capture, a notebook)
    try:
        os.fstat(fd)
    except OSError:
        raise closed from None


def write_stdout(text: str) -> None:
    """Write and flush the report; a closed, full or broken output is an `OutputError`."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError) as exc:
        _detach_stdout()
        reason = getattr(exc, "strerror", None) or str(exc)
        raise OutputError(f"cannot write the report to standard output: {reason}") from None


def _detach_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so that the interpreter's own
    flush at exit finds nothing left to fail on."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
        sys.stdout = open(1, "w", closefd=False)
    except OSError:
        pass


def stopped_text(text: str, stop: Any) -> str:
    """The text report of a run stopped early, marked on its first line."""
    from ..core.errors import shortest
    why = "interrupted" if stop.kind == "interrupt" else "stopped by --max-memory"
    return (f"stopped: {why} at t = {shortest(stop.time)}; the report covers the time "
            f"simulated up to there\n" + text)


def stopped_json(report: Any, stop: Any) -> str:
    """The JSON report of a run stopped early: `serq_simpy.stopped` says why and when."""
    from ..report.json_report import dumps, to_dict
    d = to_dict(report)
    block = d.get("serq_simpy")
    if isinstance(block, dict):
        block["stopped"] = {"reason": stop.kind, "time": stop.time}
    return dumps(d) + "\n"
