"""A user policy that raises: one message with the policy's file and line.

`policy_failure(exc, policies, now)` turns an exception raised inside a
user's policy class (its constructor or any method) into a `PolicyError`
that names the class, the file and line of the policy code the exception
came from, and the exception itself — instead of a traceback through
serq-simpy's runtime.
"""
from __future__ import annotations

import inspect
import os
import traceback
from typing import Any, Mapping, Optional

from .guards import PolicyError


def _policy_files(policies: Mapping[str, Any]) -> dict[str, str]:
    """Source file of each policy class given as a class → the class name."""
    out: dict[str, str] = {}
    for cls in policies.values():
        if not isinstance(cls, type):
            continue
        for klass in cls.__mro__:
            if klass.__module__.startswith(("serq.", "builtins")):
                continue
            try:
                path = inspect.getsourcefile(klass)
            except (TypeError, OSError):
                continue
            if path:
                out[os.path.abspath(path)] = klass.__name__
    return out


def policy_failure(exc: BaseException, policies: Optional[Mapping[str, Any]],
                   now: float) -> Optional[PolicyError]:
    """The `PolicyError` for `exc` when its traceback passes through policy
    code (the innermost such frame is named), else None."""
    if not policies:
        return None
    files = _policy_files(policies)
    if not files:
        return None
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        name = files.get(os.path.abspath(frame.filename))
        if name is not None:
            found = (name, frame)
    if found is None:
        return None
    name, frame = found
    where = f"{frame.filename}:{frame.lineno}"
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return PolicyError(f"policy `{name}` raised an exception in `{frame.name}` at {where}: "
                       f"{detail}", now, policy=name, method=frame.name, rule="raised")
