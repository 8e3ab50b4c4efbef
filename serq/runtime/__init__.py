"""The runtime: a kernel IR program (`serq.core.ir.Program`) run as a SimPy
simulation.

`kernel/` (the calendar on SimPy: event priorities, the session process),
`resources/` (stages, step engines, pools, holds: the SimPy resources a
session uses), `policy/` (the policy classes `serq.policies` exports, binding
them and checking their decisions), `fast/` (the step engine's fast paths),
`compile/` (the IR translated into Python once per run), `random/` (the
random streams of Part 07), `sim/` (building and running a simulation,
sessions, arrivals, claims) and `watch/` (limits and progress from outside
the event loop).

May import: `serq.report`, `serq.stats`, `serq.core` (never `serq.frontend`).
Inside: `resources` never imports `fast` (the fast paths are mixed in only
for the built-in decisions).
"""
