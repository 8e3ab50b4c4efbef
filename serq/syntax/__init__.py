"""Tools around the language's text, outside the simulator: a Pygments
lexer (`serq.syntax.lexer`, for the docs site and any Pygments user) and the
textX language registration (`serq.syntax.language`, for `textx check` and
`textx list-languages`). Both are found through entry points; neither
imports the runtime.

May import: `serq.frontend` (the textX check runs the front end's lexer and
parser), `serq.core`.
"""
