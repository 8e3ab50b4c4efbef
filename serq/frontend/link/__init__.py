"""Syntax to kernel IR: names resolved, moments checked, constants
folded, statements linked and the program lowered.

`resolve` (names of expressions at a moment), `moments`, `consts`,
`shapes` (K/R/T/N), `serving` (which stage a serving form runs on),
`bindings` (`at admission`), `statements` (session code), `holds`, `steps`,
`pools`, `claims`, `trace` (the CSV corpus) and `lower` (the whole program).

May import: `serq.frontend.rewrite.expand` (substitution), `serq.frontend.parse`,
`serq.frontend.syntax`, `serq.core`.
"""
