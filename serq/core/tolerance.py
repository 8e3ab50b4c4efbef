"""The one numeric tolerance of the runtime and the front end.

`TOL` (1e-9) is the capacity tolerance of spec Part 03 (conventions: `a ≤
cap` means `a ≤ cap + 1e-9`, and a cache entry of at most `TOL` units is
gone) and, by Part 04's conventions (§7: a run whose remaining work is
≤ 1e-9 completes), the tolerance of an engine's remaining work. Every module
that compares against it imports it from here.
"""
from __future__ import annotations

#: the tolerance of capacity and remaining-work comparisons (Parts 03, 04)
TOL = 1e-9
