"""The calendar on SimPy: the run's environment and its entries, event
priorities, the end-of-instant hook and the session process (spec Part 02
§10). The only package that touches SimPy's internals (tests/test_architecture.py
scans the others).

`calendar`, `instant`, `process`.

May import: `simpy`, `serq.core`.
"""
