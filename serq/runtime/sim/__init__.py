"""A simulation: built from a kernel program, run, turned into a report.

`simulation` (build and run), `sessions`, `arrivals`, `legs` (`fork`/
`join`), `tokens` (the token model) and `claims`.

May import: the other runtime packages, `serq.report`, `serq.stats`,
`serq.core`.
"""
