"""Syntax to syntax: the rewrites that remove sugar before linking.

`reserved` (supplied names refused as binding names), `expand`
(definitions), `queues`, `entries`, `calls`, `transfer` (the queue
constructs of Part 05, see docs/queues.md) and `engines` (`device` /
`engine … on` / `pool … on`, Part 04 §11).

May import: `serq.frontend.parse`, `serq.frontend.syntax`,
`serq.frontend.link.resolve` (constants the engine rewrite folds),
`serq.core`.
"""
