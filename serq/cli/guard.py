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
import contextlib
import os
import signal
import sys
import threading
from typing import Any, Callable, Iterator, Optional, TypeVar

T = TypeVar("T")

EXIT_INTERRUPTED = 130
#: seconds after which a stop signal whose exception Python dropped is sent again
AGAIN = 0.02


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
    with _handling((signal.SIGINT, signal.SIGTERM), handler):
        return fn()


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
    """Run `fn` with Ctrl-C and SIGTERM raising `Terminated` in the main
    thread (a study stops, keeps its finished runs and ends its workers), as
    Python's own Ctrl-C raises `KeyboardInterrupt`, but not lost where Python
    drops exceptions (`_handling`)."""
    if threading.current_thread() is not threading.main_thread():
        return fn()

    def handler(signum: int, frame: Any) -> None:
        raise Terminated(signum)
    with _handling((signal.SIGINT, signal.SIGTERM), handler):
        return fn()


@contextlib.contextmanager
def _handling(signums: tuple[int, ...], handler: Callable[[int, Any], None]) -> Iterator[None]:
    """`handler` for `signums` in the block; a `Terminated` it raised that
    Python dropped is delivered again.

    Python runs a signal's handler in whatever code the main thread is
    running, and an exception raised inside a weak reference's callback, a
    `__del__` or a garbage collection is printed ("Exception ignored in …")
    and dropped. A SIGTERM that came while the import system released a
    module lock was lost that way: the sweep printed a traceback and ran on
    to its end. Such an exception goes to `sys.unraisablehook`; while the
    handler is installed, a `Terminated` that reaches it has its signal sent
    again, so the handler runs once more in the code that follows. (Sent
    from a timer's thread a moment later: sent at once, the handler would run
    inside the hook, where its exception is dropped too; should it be dropped
    again, it is sent again.)"""
    previous = sys.unraisablehook

    def redeliver(unraisable: Any) -> None:
        exc = unraisable.exc_value
        if isinstance(exc, Terminated):
            timer = threading.Timer(AGAIN, os.kill, (os.getpid(), exc.signum))
            timer.daemon = True
            timer.start()
        else:
            previous(unraisable)
    olds = [signal.signal(signum, handler) for signum in signums]
    sys.unraisablehook = redeliver
    try:
        yield
    finally:
        sys.unraisablehook = previous
        for signum, old in zip(signums, olds):
            signal.signal(signum, old)


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
