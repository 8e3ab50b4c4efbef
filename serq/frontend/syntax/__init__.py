"""The syntax tree and the tools that read it.

`tree` (the syntax nodes the front end works on between parsing and
lowering), `walk` (traversals), `show` (source text of expressions for
messages), `names` (the language's vocabulary: functions, observables,
context variables) and `kernel_text` (a program after the rewrites, as text).

May import: `serq.core`; nothing else of the front end.
"""
