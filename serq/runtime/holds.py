"""Deprecated: `serq.runtime.holds` moved (issue 21). Import the hold frame from
`serq.policies` (the policy classes, `Job`, `StepJob`, `Plan`, `HoldFrame`,
`CacheEntry`, `PolicyError`, …); this module goes in the next release.
"""
from __future__ import annotations

from .deprecated import moved

#: Each old name and the module that has it now (relative to serq.runtime).
__getattr__ = moved(__name__, {
    "HoldFrame": ".resources.holds",
})
