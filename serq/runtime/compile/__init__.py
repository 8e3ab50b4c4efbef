"""The IR translated into Python once per run: expressions (`exprs`),
session code (`codegen`), step-stage clauses (`schedule`) and pool and hold
specs (`poolspec`); the names generated code reads from its globals
(`names`, declared once for both sides).

May import: `serq.runtime.kernel`, `serq.runtime.random`,
`serq.runtime.resources`, `serq.core`.
"""
