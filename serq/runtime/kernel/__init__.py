"""The calendar on SimPy: event priorities, the end-of-instant hook and
the session process (spec Part 02 §10).

`instant`, `process`.

May import: `simpy`, `serq.core`.
"""
