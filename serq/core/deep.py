"""Deeply nested programs: run a pass on a thread with a large stack.

The parser (Arpeggio's recursive descent), the front end's tree walks and
Python's own compiler recurse once per nesting level. `call_deep(fn, ...)`
runs `fn` on a helper thread whose stack is `STACK_BYTES` with a recursion
limit of one frame per `FRAME_BYTES` of it, enough for `MAX_NESTING` levels (see
docs/guide/limits.md); the main thread's limits are left as they are.
"""
from __future__ import annotations

import contextvars
import sys
import threading
from typing import Any, Callable, TypeVar

T = TypeVar("T")

MAX_NESTING = 1000          # brackets and blocks open at once (parser.check_nesting)
STACK_BYTES = 1 << 30       # the helper's stack (virtual memory; only pages used are touched)
FRAME_BYTES = 5000          # stack per Python frame allowed for: the recursion limit
SMALLER = (1 << 28, 1 << 26)  # stacks to try when the address space is limited (ulimit -v)

_local = threading.local()


def call_deep(fn: Callable[..., T], *args: Any, **kw: Any) -> T:
    """`fn(*args, **kw)` on a thread with a large stack; its result or its exception."""
    if getattr(_local, "deep", False):
        return fn(*args, **kw)
    box: dict[str, Any] = {}
    context = contextvars.copy_context()  # the caller's context variables (serq.core.caches)

    go = threading.Event()

    def target() -> None:
        go.wait()  # the recursion limit is raised first
        _local.deep = True
        try:
            box["value"] = context.run(fn, *args, **kw)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    worker = None
    for size in (STACK_BYTES,) + SMALLER:
        worker = _start(target, size)
        if worker is not None:
            break
    if worker is None:  # no thread can be started: the caller's own stack
        _local.deep = True
        try:
            return fn(*args, **kw)
        finally:
            _local.deep = False
    old_limit = sys.getrecursionlimit()
    limit = max(old_limit, _size_of(worker) // FRAME_BYTES)
    sys.setrecursionlimit(limit)  # process-wide in CPython 3.11; the caller waits
    go.set()
    try:
        worker.join()
    finally:
        sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]


def _size_of(worker: threading.Thread) -> int:
    return getattr(worker, "_serq_stack", STACK_BYTES)


def _start(target: Callable[[], None], size: int) -> "threading.Thread | None":
    """A started helper thread with a stack of `size` bytes, or None."""
    try:
        old = threading.stack_size(size)
    except (ValueError, RuntimeError):  # a platform without settable stacks
        old = None
    try:
        worker = threading.Thread(target=target, name="serq-deep", daemon=True)
        worker._serq_stack = size if old is not None else 1 << 23  # type: ignore[attr-defined]
        worker.start()
        return worker
    except (RuntimeError, MemoryError):  # address space too small for this stack
        return None
    finally:
        if old is not None:
            threading.stack_size(old)
