"""Deprecated: `serq.runtime.holds` moved (issue 21). Import the hold frame from
`serq.policies` (the policy classes, `Job`, `StepJob`, `Plan`, `HoldFrame`,
`CacheEntry`, `PolicyError`, …); this module goes in the next release.
"""
from __future__ import annotations

import warnings
from importlib import import_module
from typing import Any

#: Each old name and the module that has it now (relative to serq.runtime).
_MOVED = {
    "HoldFrame": ".resources.holds",
}


def __getattr__(name: str) -> Any:
    """The moved name, with a `DeprecationWarning` naming where it is now."""
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"serq.runtime.holds.{name} is deprecated: import it from serq.policies",
                  DeprecationWarning, stacklevel=2)
    return getattr(import_module(_MOVED[name], "serq.runtime"), name)
