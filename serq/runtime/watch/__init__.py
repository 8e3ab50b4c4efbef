"""Watching a run from outside the event loop: run-time limits
(`watchdog`) and the progress callback (`ticker`).

May import: `serq.runtime.kernel`, `serq.core`.
"""
