"""Which user policy call each thread is in, for the watchdog
(`serq.runtime.watchdog`): a policy method that does not return (it
sleeps, waits or spins) is diagnosed by its class and method, and Ctrl-C
stops it at once.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Optional

#: Seconds of wall time a policy call may take before the run is stopped.
POLICY_WALL = 2.0


class PolicyCall:
    """One call of a user policy method in progress."""

    __slots__ = ("obj", "method", "started")

    def __init__(self, obj: Any, method: str):
        self.obj = obj
        self.method = method
        self.started = time.monotonic()

    @property
    def policy(self) -> str:
        """The policy's class name."""
        return type(self.obj).__name__

    def describe(self) -> str:
        """`policy MyPool.has_room of pool `kv``."""
        kind = getattr(self.obj, "kind", "stage")
        kind = "pool" if kind == "pool" else "stage"
        label = getattr(self.obj, "label", "?")
        return f"policy {self.policy}.{self.method} of {kind} `{label}`"


#: The outermost policy call of each thread (by thread id).
CURRENT: dict[int, PolicyCall] = {}


def enter(obj: Any, method: str) -> Optional[int]:
    """Note a policy call starting in this thread; the token for `leave`
    (None when the thread is already in one: the outer call is watched)."""
    ident = threading.get_ident()
    if ident in CURRENT:
        return None
    CURRENT[ident] = PolicyCall(obj, method)
    return ident


def leave(token: Optional[int]) -> None:
    """The call `enter` returned `token` for has returned (or raised)."""
    if token is not None:
        CURRENT.pop(token, None)


def stuck(ident: int, limit: float = POLICY_WALL) -> Optional[PolicyCall]:
    """The policy call thread `ident` has been in for over `limit` seconds."""
    call = CURRENT.get(ident)
    if call is not None and time.monotonic() - call.started > limit:
        return call
    return None


def running(ident: int) -> Optional[PolicyCall]:
    """The policy call thread `ident` is in now, if any."""
    return CURRENT.get(ident)
