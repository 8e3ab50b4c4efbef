"""The lexical pre-pass (Part 01 §1).

The textX grammar parses the text; this module reports the exact lexical
errors first (`unexpected character`, `bad number`, unterminated comments and
strings), produces the token list used to name the token an error is found
at, and returns a *clean* copy of the text in which comments and exotic
white space are replaced by spaces (newlines kept), so that positions in the
clean text are positions in the source.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...core.errors import ParseError
from ...core.ir import Pos

TWO_CHAR = ("<=", ">=", "==", "!=", "&&", "||")
ONE_CHAR = set("{}()[],;:.=~?+-*/^<>!")


@dataclass(frozen=True)
class Token:
    """One token: kind is "num", "id", "str", "op" or "eof"."""

    kind: str
    text: str
    offset: int
    line: int
    col: int


def is_ident_start(ch: str) -> bool:
    """A letter (any Unicode alphabetic character) or `_`."""
    return ch == "_" or ch.isalpha()


def is_ident_char(ch: str) -> bool:
    """A letter, a digit (alphanumeric) or `_`."""
    return ch == "_" or ch.isalnum()


class Lexer:
    """Tokenizes one source text, raising ParseError on lexical errors."""

    def __init__(self, text: str, file: str):
        self.text = text
        self.file = file
        self.tokens: list[Token] = []
        self.clean: list[str] = list(text)
        self.line = 1
        self.col = 1
        self.i = 0

    def error(self, message: str, line: int, col: int,
              help: str | None = None) -> ParseError:
        """A lexical error; like every parse error it marks one character."""
        return ParseError(message, Pos(self.file, line, col, 1), help=help,
                          source=self.text)

    def advance(self, n: int = 1, blank: bool = False) -> None:
        for _ in range(n):
            ch = self.text[self.i]
            if blank and ch != "\n":
                self.clean[self.i] = " "
            if ch == "\n":
                self.line += 1
                self.col = 1
            else:
                self.col += 1
            self.i += 1

    def emit(self, kind: str, start: int, line: int, col: int) -> None:
        self.tokens.append(Token(kind, self.text[start:self.i], start, line, col))

    def run(self) -> list[Token]:
        """Tokenize the whole text; the list ends with an "eof" token."""
        text, n = self.text, len(self.text)
        while self.i < n:
            ch = text[self.i]
            line, col, start = self.line, self.col, self.i
            if ch.isspace():
                self.advance(blank=ch != "\n")
            elif text.startswith("//", self.i):
                while self.i < n and text[self.i] != "\n":
                    self.advance(blank=True)
            elif text.startswith("/*", self.i):
                end = text.find("*/", self.i + 2)
                if end < 0:
                    raise self.error("unterminated block comment", line, col,
                                     help="close this comment with `*/`")
                self.advance(end + 2 - self.i, blank=True)
            elif ch == '"':
                end = text.find('"', self.i + 1)
                if end < 0:
                    raise self.error("unterminated string", line, col)
                self.advance(end + 1 - self.i)
                self.emit("str", start, line, col)
            elif ch.isdigit() or (ch == "." and self.i + 1 < n and text[self.i + 1].isdigit()):
                self.number(line, col, start)
            elif is_ident_start(ch):
                while self.i < n and is_ident_char(text[self.i]):
                    self.advance()
                self.emit("id", start, line, col)
            elif text[self.i:self.i + 2] in TWO_CHAR:
                self.advance(2)
                self.emit("op", start, line, col)
            elif ch in ONE_CHAR:
                self.advance()
                self.emit("op", start, line, col)
            else:
                raise self.error(f"unexpected character `{ch}`", line, col)
        self.tokens.append(Token("eof", "", n, self.line, self.col))
        return self.tokens

    def number(self, line: int, col: int, start: int) -> None:
        text, n = self.text, len(self.text)
        while self.i < n and (text[self.i].isdigit() or text[self.i] in "._"):
            self.advance()
        j = self.i
        if j < n and text[j] in "eE":
            k = j + 1
            if k < n and text[k] in "+-":
                k += 1
            if k < n and text[k].isdigit():
                while k < n and text[k].isdigit():
                    k += 1
                self.advance(k - self.i)
        literal = text[start:self.i]
        if number_value(literal) is None:
            raise self.error(f"bad number `{literal}`", line, col)
        self.emit("num", start, line, col)


def number_value(literal: str) -> float | None:
    """The value of a NUMBER token, or None when it is not a decimal literal."""
    body = literal.replace("_", "")
    if not body or not all(c.isascii() for c in body):
        try:
            body = "".join(str(int(c)) if c.isdigit() else c for c in body)
        except ValueError:
            return None
    if body.count(".") > 1 or body.startswith(("e", "E")):
        return None
    try:
        return float(body)
    except ValueError:
        return None


def lex(text: str, file: str) -> tuple[list[Token], str]:
    """Tokens and the cleaned text (comments blanked) of a source text."""
    lx = Lexer(text, file)
    tokens = lx.run()
    return tokens, "".join(lx.clean)
