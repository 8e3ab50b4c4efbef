"""Parsing: lexical pre-pass, the textX metamodel, syntax-error translation.

`parse_source` turns a text into a textX model (or raises ParseError with the
position of the offending token and a message in the spec's words: "expected
`;`, found `run`", "expected an expression, found `)`", "unexpected `foo` at
top level", ...). Constructs that belong to parts of the language this build
is not part of (`server (…) reply (…)` request signatures) is refused by a
token pre-scan before parsing, so that the refusal is reported at the
construct even when later text would not parse.
"""
from __future__ import annotations

import bisect
import re
from typing import Any

from textx.exceptions import TextXError, TextXSyntaxError

from ...core.deep import MAX_NESTING, call_deep
from ...core.errors import ParseError
from ...core.ir import Pos
from . import grammar
from .braces import unclosed_brace
from ..syntax.hints import ITEM_KEYWORDS, STATEMENT_KEYWORDS, did_you_mean
from .lexer import Token, lex

STATEMENT_WORDS = {"set", "observe", "turn", "request", "end", "branch", "if",
                   "loop", "while", "choose", "run"}
ITEM_WORDS = {"stage", "workload", "session", "server", "gauge", "share", "use",
              "let", "def", "device", "engine", "claim", "queue"}
SETTING_WORDS = {"horizon", "warmup", "seed", "arrivals"}
POOL_OPTION_WORDS = {"cap", "block", "evict", "preempt", "queue", "reserve", "admit", "spill"}
STEP_CLAUSE_WORDS = {"budget", "cost", "chunk", "granule", "memory", "state", "serve",
                     "iteration"}
OPERATORS = {"^", "*", "/", "+", "-", "<=", ">=", "==", "!=", "<", ">", "&&", "||", "?"}
CLOSERS = (")", "]", "}", ":", "(", "{", "=", ",")
NAMED = {"Ident": "identifier", "Num": "number", "Str": "string", "Assign": "=", "Not": "!"}


_METAMODELS: dict[str, Any] = {}


def metamodel(root: str = "program"):
    """The textX metamodel whose root rule is in `<grammar>/<root>.tx`
    (built once per installation, see `grammar.py`; once per process here)."""
    mm = _METAMODELS.get(root)
    if mm is None:
        mm = _METAMODELS[root] = grammar.load(root)
    return mm


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
    """Refuse the constructs of other dialects before parsing."""
    for i, tok in enumerate(tokens[:-1]):
        nxt = tokens[i + 1]
        prev = tokens[i - 1].text if i else ";"
        if tok.kind != "id":
            continue
        if tok.text == "server" and nxt.text == "(" and prev in (";", "{", "}"):
            raise ParseError("request signatures (`server (…) reply (…)`, pyserq 0.1.6) "
                             "are not part of this language",
                             Pos(file, nxt.line, nxt.col, 1), source=text,
                             help="a server reads the session's attributes directly: "
                                  "write `server { … }`")


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
        elif name in NAMED:
            s = NAMED[name]
        else:
            s = name or getattr(r, "name", cls)
            m = re.fullmatch(r"RegExMatch\((\w+)\)", s)
            if m:  # a keyword matched with autokwd
                s = m.group(1)
        if s not in out:
            out.append(s)
    return out


def syntax_message(expected: list[str], tokens: list[Token], i: int) -> str:
    """The message for a syntax error at tokens[i]: what was expected there."""
    tok = tokens[i]
    found = describe(tok)
    exp = set(expected)
    prev = [t.text for t in tokens[max(i - 3, 0):i]]
    if exp & STATEMENT_WORDS and "stage" not in exp:
        if tok.kind == "id":
            return f"unknown statement `{tok.text}`"
        return f"expected a statement, found {found}"
    if exp & SETTING_WORDS and tok.kind == "id":
        return f"unknown run option `{tok.text}`"
    if POOL_OPTION_WORDS <= exp and tok.kind == "id":
        return f"unknown pool option `{tok.text}`"
    if STEP_CLAUSE_WORDS <= exp and tok.kind == "id":
        return f"unknown step stage clause `{tok.text}`"
    if "eof" in exp or exp & ITEM_WORDS:
        if tok.kind == "eof":
            return "expected `}`, found end of input"
        return f"unexpected {found} at top level"
    if len(prev) == 3 and prev[0] in ("sum", "max", "min") and prev[2] == "in":
        return (f"`{prev[0]} {prev[1]} in` takes a number, a constant's name or "
                f"`( expr )`, found {found}")
    if ";" in exp:
        return f"expected `;`, found {found}"
    for closer in CLOSERS:
        if closer in exp and not (closer == "(" and "number" in exp):
            return f"expected `{closer}`, found {found}"
    if "number" in exp:
        return f"expected an expression, found {found}"
    if "identifier" in exp:
        return f"expected a name, found {found}"
    wanted = [e for e in expected if e not in OPERATORS and e != "eof"] or \
        [e for e in expected if e != "eof"]
    listed = " or ".join(f"`{e}`" for e in wanted)
    return f"expected {listed or 'something else'}, found {found}"


def keyword_hint(expected: list[str], tok: Token) -> str | None:
    """"did you mean `stage`?" for a word near a keyword that may stand where
    the syntax error is (the same cases as `syntax_message`)."""
    if tok.kind != "id":
        return None
    exp = set(expected)
    if exp & STATEMENT_WORDS and "stage" not in exp:
        words: Any = STATEMENT_KEYWORDS
    elif exp & SETTING_WORDS:
        words = SETTING_WORDS
    elif POOL_OPTION_WORDS <= exp:
        words = POOL_OPTION_WORDS
    elif STEP_CLAUSE_WORDS <= exp:
        words = STEP_CLAUSE_WORDS
    elif "eof" in exp or exp & ITEM_WORDS:
        words = ITEM_KEYWORDS
    else:
        words = [e for e in expected if e.isidentifier()]
    return did_you_mean(tok.text, words)


def token_index(tokens: list[Token], offset: int) -> int:
    """Index of the first token starting at or after `offset`."""
    offsets = [t.offset for t in tokens]
    return min(bisect.bisect_left(offsets, offset), len(tokens) - 1)


OPENERS = {"(": ")", "[": "]", "{": "}"}


def check_nesting(tokens: list[Token], file: str, text: str) -> None:
    """Refuse brackets and blocks open more than `MAX_NESTING` levels deep,
    at the bracket that goes one level too deep (docs/guide/limits.md)."""
    depth = 0
    for tok in tokens:
        if tok.kind != "op":
            continue
        if tok.text in OPENERS:
            depth += 1
            if depth > MAX_NESTING:
                raise ParseError(f"the program nests more than {MAX_NESTING} levels deep "
                                 f"here (brackets and blocks open at once)",
                                 Pos(file, tok.line, tok.col, 1), source=text,
                                 help="move part of the expression into a `let` or a `def`, "
                                      "or flatten the nested blocks")
        elif tok.text in (")", "]", "}") and depth:
            depth -= 1


def parse_source(text: str, file: str, root: str = "program"):
    """Parse `text`; returns the textX model and the lexer's tokens."""
    tokens, clean = lex(text, file)
    check_nesting(tokens, file, text)
    index = LineIndex(text)
    if root == "program":
        prescan(tokens, file, text)
    try:
        model = call_deep(metamodel(root).model_from_str, clean)
    except TextXSyntaxError as e:
        starts = index.starts
        line = max(1, min(e.line or 1, len(starts)))
        offset = starts[line - 1] + max((e.col or 1) - 1, 0)
        i = token_index(tokens, offset)
        tok = tokens[i]
        expected = rule_names(e.expected_rules or [])
        if set(expected) <= {"pull", "push"} and i > 0:
            # a word at top level that is no item: not the start of a relation
            i, expected = i - 1, ["eof", "stage"]
            tok = tokens[i]
        message = syntax_message(expected, tokens, i)
        brace = unclosed_brace(tokens, text, starts)
        if brace is not None:
            raise ParseError("this `{` is never closed", Pos(file, brace.line, brace.col, 1),
                             source=text,
                             help=f"add the `}}` that ends this block (the text stops making "
                                  f"sense at {tok.line}:{tok.col}: {message})") from None
        raise ParseError(message, Pos(file, tok.line, tok.col, 1), source=text,
                         help=keyword_hint(expected, tok)) from None
    except (TextXError, RecursionError, ValueError) as e:  # pragma: no cover
        raise ParseError(f"cannot parse: {e}", Pos(file, 1, 1, 1), source=text) from None
    return model, tokens
