"""The resources a session uses, as SimPy resources: stages (`fifo`,
`ps`, `delay`), step engines, pools, holds, flows. The classes a policy
subclasses (`serq.policies`) are defined here.

`stages`, `engine`, `pools`, `holds`, `flows`.

May import: `serq.runtime.kernel`, `serq.stats`, `serq.core`.
"""
