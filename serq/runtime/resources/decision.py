"""Which decisions of a resource a policy overrides: the one test for it.

A resource's built-in decisions (`Fifo.select_next`, `Pool.has_room`, …) are
marked `@decision`; a method that is not marked is a policy's own. The
runtime asks `overridden(cls, name)` wherever a built-in rule may be assumed
(the fast paths, the checks of `serq.runtime.policy.guards`, eviction's
snapshots) instead of comparing methods with one another.
"""
from __future__ import annotations

from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)


def decision(fn: F) -> F:
    """Mark `fn` as a built-in decision (the rule a policy may replace)."""
    fn.builtin_decision = True  # type: ignore[attr-defined]
    return fn


def overridden(cls: type, name: str) -> bool:
    """Whether `cls` decides `name` with a method of its own (a policy's)."""
    return not getattr(getattr(cls, name), "builtin_decision", False)
