"""The core: what every layer shares and nothing else.

`ir` (the kernel IR the front end produces and the runtime consumes),
`nodes` (`@node`, the lazily compiled dataclasses of the IR and the syntax
tree), `errors` (the error types and their `file:line:col` layout),
`arithmetic` and `numeric` (the language's IEEE-754 number rules, Part 01
§3–4), `tolerance` (the one tolerance, `TOL`), `caches` (the user's cache directory) and `deep` (running a pass on a
thread with a large stack).

May import: the standard library only; no other `serq` package.
"""
