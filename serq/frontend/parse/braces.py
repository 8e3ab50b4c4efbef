"""Which `{` is not closed, when a program has more `{` than `}`.

The parser fails where the missing `}` starts to matter, often many lines
after the block that lacks it (an unclosed `if` block swallows the rest of
its session, and the parser stops at the next item). This module finds the
brace to blame from the tokens alone, as people read code: a `}` that stands
first on its line is meant to close the block whose line is indented as
much; the first `{` whose matching `}` (by nesting) is indented differently
is the one left open. Without such a hint the innermost `{` still open at
the end of the text is blamed.
"""
from __future__ import annotations

from typing import Optional, Sequence

from .lexer import Token


def _indent(text: str, starts: Sequence[int], line: int) -> int:
    """Columns of white space before the first character of `line` (1-based)."""
    start = starts[line - 1]
    end = text.find("\n", start)
    row = text[start:] if end < 0 else text[start:end]
    return len(row) - len(row.lstrip(" \t"))


def _first_on_line(tokens: Sequence[Token], i: int) -> bool:
    return i == 0 or tokens[i - 1].line != tokens[i].line


def unclosed_brace(tokens: Sequence[Token], text: str,
                   starts: Sequence[int]) -> Optional[Token]:
    """The `{` that is not closed, or None when braces balance (or close too often)."""
    opened = sum(1 for t in tokens if t.kind == "op" and t.text == "{")
    closed = sum(1 for t in tokens if t.kind == "op" and t.text == "}")
    if opened <= closed:
        return None
    stack: list[int] = []
    for i, tok in enumerate(tokens):
        if tok.kind != "op" or tok.text not in "{}":
            continue
        if tok.text == "{":
            stack.append(i)
            continue
        if not stack:
            return None  # a `}` too many comes first: the parser's message is the right one
        j = stack.pop()
        brace = tokens[j]
        if (brace.line != tok.line and _first_on_line(tokens, i)
                and _indent(text, starts, tok.line) != _indent(text, starts, brace.line)):
            return brace
    return tokens[stack[-1]] if stack else None
