"""Fast paths of the step engine: iterations handled without the event
loop (`burst`), closed runs (`closed`) and interleaved engines
(`leapfrog`), and the plan a closed run keeps (`plan`). Attached only to
engines whose decisions are the built-in ones.

May import: `serq.runtime.resources`, `serq.runtime.kernel`, `serq.stats`,
`serq.core`.
"""
