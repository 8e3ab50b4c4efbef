"""Deeply nested programs: run a pass on a thread with a large stack.

The parser (Arpeggio's recursive descent), the front end's tree walks and
Python's own compiler recurse once per nesting level. `call_deep(fn, ...)`
runs `fn` on a helper thread whose stack is `STACK_BYTES` with a recursion
limit of `RECURSION_LIMIT`, enough for `MAX_NESTING` levels (see
docs/guide/limits.md); the main thread's limits are left as they are.
"""
from __future__ import annotations

import sys
import threading
from typing import Any, Callable, TypeVar

T = TypeVar("T")

MAX_NESTING = 1000          # brackets and blocks open at once (checked by the lexer)
RECURSION_LIMIT = 200_000   # Python frames on the helper thread
STACK_BYTES = 1 << 30       # its stack (virtual memory; only the pages used are touched)

_local = threading.local()


def call_deep(fn: Callable[..., T], *args: Any, **kw: Any) -> T:
    """`fn(*args, **kw)` on a thread with a large stack; its result or its exception."""
    if getattr(_local, "deep", False):
        return fn(*args, **kw)
    box: dict[str, Any] = {}

    def target() -> None:
        _local.deep = True
        try:
            box["value"] = fn(*args, **kw)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    old_limit = sys.getrecursionlimit()
    if old_limit < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)  # process-wide in CPython 3.11
    try:
        old_size = threading.stack_size(STACK_BYTES)
    except (ValueError, RuntimeError):  # a platform without settable stacks
        old_size = None
    try:
        worker = threading.Thread(target=target, name="serq-deep", daemon=True)
        worker.start()
    finally:
        if old_size is not None:
            threading.stack_size(old_size)
    try:
        worker.join()
    finally:
        sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]
