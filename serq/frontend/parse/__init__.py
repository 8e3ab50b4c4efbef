"""Text to syntax tree: reading, lexing, parsing, building, layout.

`source` (reading a file), `lexer` (the lexical pre-pass, Part 01 §1),
`braces`, `grammar` (the textX metamodel, cached), `parser` (textX and its
error translation), `build`, `build_queue`, `build_step` (textX model to
syntax tree) and `layout` (flat or `fn main`, libraries, the workload file).

May import: `serq.frontend.syntax`, `serq.core`.
"""
