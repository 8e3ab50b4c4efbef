"""Statistics of a run: summaries of sample series (batch means, Student's t;
`summary`, `tdist`), compact sample storage (`samples`) and time-averaged
signals (`gauges`).

May import: `serq.core` only.
"""
