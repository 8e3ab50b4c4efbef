"""Deprecated: `serq.runtime.guards` moved (issue 21). Import binding and checking policies from
`serq.policies` (the policy classes, `Job`, `StepJob`, `Plan`, `HoldFrame`,
`CacheEntry`, `PolicyError`, …); this module goes in the next release.
"""
from __future__ import annotations

from .deprecated import moved

#: Each old name and the module that has it now (relative to serq.runtime).
__getattr__ = moved(__name__, {
    "PolicyError": ".policy.guards",
    "PolicyBindingError": ".policy.guards",
    "POLICY_METHODS": ".policy.guards",
    "load_policy": ".policy.guards",
})
