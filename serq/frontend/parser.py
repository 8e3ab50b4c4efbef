"""Parsing: lexical pre-pass, the textX metamodel, syntax-error translation.

`parse_source` turns a text into a textX model (or raises ParseError with the
position of the offending token and a message in the spec's words: "expected
`;`, found `run`", "expected an expression, found `)`", "unexpected `foo` at
top level", ...). Constructs that belong to parts of the language this build
does not implement (pools, holds, queues, serving forms, step stages,
devices, engines, claims) are refused by a token pre-scan before parsing, so
that the refusal is reported at the construct even when later text would
not parse.
"""
from __future__ import annotations

import bisect
import os
import re
from functools import lru_cache
from typing import Any, Optional

from textx import metamodel_from_file
from textx.exceptions import TextXError, TextXSyntaxError

from ..errors import ParseError
from ..ir import Pos
from .lexer import Token, lex

GRAMMAR_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "metamodel")

# construct keyword -> (what the next token must be, description)
UNSUPPORTED = {
    "pool": ("id", "pools (Part 03)"),
    "hold": ("id", "holds (Part 03)"),
    "grow": ("id", "`grow` (Part 03)"),
    "drop": ("id", "`drop` (Part 03)"),
    "release": ("id", "`release` (Part 03)"),
    "load": ("id", "`load` (Part 03)"),
    "queue": ("id", "queues (Part 05)"),
    "claim": ("id", "claims (Part 06)"),
    "device": ("id", "devices (Part 04 §11)"),
    "engine": ("id", "engines (Part 04 §11)"),
    "prefill": ("id(", "the serving form `prefill` (Part 05)"),
    "decode": ("id(", "the serving form `decode` (Part 05)"),
    "tool": ("id(", "the serving form `tool` (Part 05)"),
    "transfer": ("id(", "the serving form `transfer` (Part 05)"),
}

STATEMENT_WORDS = {"set", "observe", "turn", "request", "end", "branch", "if",
                   "loop", "while", "choose", "run"}
ITEM_WORDS = {"stage", "workload", "session", "server", "gauge", "share", "use",
              "let", "def"}
EXPR_START = {"identifier", "number", "(", "-", "!", "~"}
CLOSERS = (")", "]", "}", ",", ":", "(", "{", "=")


@lru_cache(maxsize=None)
def metamodel(root: str = "program"):
    """The textX metamodel whose root rule is in `metamodel/<root>.tx`."""
    return metamodel_from_file(os.path.join(GRAMMAR_DIR, f"{root}.tx"),
                               autokwd=True, memoization=True)


class LineIndex:
    """Maps offsets of a text to 1-based (line, column)."""

    def __init__(self, text: str):
        self.starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def linecol(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        return line + 1, offset - self.starts[line] + 1


def describe(tok: Token) -> str:
    """How an error message names a token: "`run`", "`;`", "end of input"."""
    return "end of input" if tok.kind == "eof" else f"`{tok.text}`"


def prescan(tokens: list[Token], file: str, text: str) -> None:
    """Refuse the constructs of parts not implemented in this build."""
    for i, tok in enumerate(tokens[:-1]):
        nxt = tokens[i + 1]
        prev = tokens[i - 1].text if i else ";"
        if tok.kind != "id":
            continue
        if tok.text == "step" and prev == ":" and nxt.text == "{":
            what = "step stages (`stage … : step { … }`, Part 04 §5)"
        elif tok.text in UNSUPPORTED and prev in (";", "{", "}"):
            need, what = UNSUPPORTED[tok.text]
            ok = nxt.kind == "id" or (need == "id(" and nxt.text == "(")
            if not ok:
                continue
        else:
            continue
        raise ParseError(f"`{tok.text}` is not available in this build: {what} "
                         "are not implemented",
                         Pos(file, tok.line, tok.col, len(tok.text)), source=text,
                         help="this build runs stages, runs, workloads and gauges")


def rule_names(rules: list[Any]) -> list[str]:
    """Readable names of the rules Arpeggio expected at a failure."""
    out: list[str] = []
    for r in rules:
        name = getattr(r, "rule_name", "") or ""
        cls = type(r).__name__
        if cls == "EndOfFile":
            s = "eof"
        elif cls == "StrMatch":
            s = r.to_match
        elif name == "Ident":
            s = "identifier"
        elif name == "Num":
            s = "number"
        elif name == "Str":
            s = "string"
        else:
            s = name or getattr(r, "name", cls)
            m = re.fullmatch(r"RegExMatch\((\w+)\)", s)
            if m:  # a keyword matched with autokwd
                s = m.group(1)
        if s not in out:
            out.append(s)
    return out


def syntax_message(expected: list[str], tok: Token) -> str:
    """The message for a syntax error: what was expected, what was found."""
    found = describe(tok)
    exp = set(expected)
    if exp & STATEMENT_WORDS and "stage" not in exp:
        if tok.kind == "id":
            return f"unknown statement `{tok.text}`"
        return f"expected a statement, found {found}"
    if "eof" in exp or exp & ITEM_WORDS:
        if tok.kind == "eof":
            return "expected `}`, found end of input"
        return f"unexpected {found} at top level"
    if ";" in exp:
        return f"expected `;`, found {found}"
    for closer in CLOSERS:
        if closer in exp and not (closer == "(" and exp & EXPR_START - {"("}):
            return f"expected `{closer}`, found {found}"
    if exp and exp <= EXPR_START | {"max", "min", "sum"}:
        return f"expected an expression, found {found}"
    if "identifier" in exp:
        return f"expected a name, found {found}"
    listed = " or ".join(f"`{e}`" for e in expected if e != "eof")
    return f"expected {listed or 'something else'}, found {found}"


def token_at(tokens: list[Token], offset: int) -> Token:
    """The first token starting at or after `offset`."""
    offsets = [t.offset for t in tokens]
    i = bisect.bisect_left(offsets, offset)
    return tokens[min(i, len(tokens) - 1)]


def parse_source(text: str, file: str, root: str = "program"):
    """Parse `text`; returns (textX model, tokens, LineIndex)."""
    tokens, clean = lex(text, file)
    index = LineIndex(text)
    if root == "program":
        prescan(tokens, file, text)
    try:
        model = metamodel(root).model_from_str(clean)
    except TextXSyntaxError as e:
        starts = index.starts
        line = max(1, min(e.line or 1, len(starts)))
        offset = starts[line - 1] + max((e.col or 1) - 1, 0)
        tok = token_at(tokens, offset)
        message = syntax_message(rule_names(e.expected_rules or []), tok)
        raise ParseError(message, Pos(file, tok.line, tok.col, 1), source=text) from None
    except (TextXError, RecursionError, ValueError) as e:  # pragma: no cover
        raise ParseError(f"cannot parse: {e}", Pos(file, 1, 1, 1), source=text) from None
    return model, tokens, index


def find_token(tokens: list[Token], offset: int, skip: int = 0) -> Optional[Token]:
    """The token `skip` places after the first token at or after `offset`."""
    offsets = [t.offset for t in tokens]
    i = bisect.bisect_left(offsets, offset) + skip
    return tokens[i] if i < len(tokens) else None
