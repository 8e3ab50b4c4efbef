"""serQ as a registered textX language.

textX's convention: a language is announced by the entry point
`textx_languages` (pyproject.toml) naming a `LanguageDesc`. With it,
`textx list-languages` lists `serq` and `textx check model.sq` (the `textx`
command comes with textX-dev) parses a program with the language's own
front end: the lexical pre-pass (comments, numbers, strings), the grammar of
`metamodel/*.tx`, the parser's structural rules, and serq-simpy's messages
(`expected `;`, found `run``, "did you mean `stage`?"), reported as textX
syntax errors at their line and column. It checks the syntax of one file;
`serq-simpy check` also links the program (names, moments, constants).
"""
from __future__ import annotations

import types
from typing import Any, Optional

from textx import TextXSyntaxError, language

__all__ = ["serq_language", "metamodel"]


def _model_from_str(self: Any, model_str: str, file_name: Optional[str] = None,
                    debug: Optional[bool] = None, **_: Any) -> Any:
    """Parse `model_str` as serq-simpy's front end does; a bad program raises
    `TextXSyntaxError` carrying the front end's message."""
    from ..core.errors import SerqError
    from ..frontend.parse.build import Builder
    from ..frontend.parse.parser import parse_source
    label = file_name or "<program>"
    try:
        model, tokens = parse_source(model_str, label)
        Builder(model_str, label, tokens).items(getattr(model, "items", []))
    except SerqError as exc:
        pos = exc.pos
        text = exc.format(label)
        where = f"{pos.file}:{pos.line}:{pos.col}: " if pos else ""
        if where and text.startswith(where):  # textX writes the position itself
            text = text[len(where):]
        raise TextXSyntaxError(text, line=pos.line if pos else None,
                               col=pos.col if pos else None, filename=label) from None
    return model


def _model_from_file(self: Any, file_name: str, encoding: str = "utf-8",
                     debug: Optional[bool] = None, **kw: Any) -> Any:
    from ..frontend.parse.source import read_source
    from ..core.errors import SerqError
    try:
        text = read_source(file_name, file_name)
    except SerqError as exc:
        raise TextXSyntaxError(exc.format(file_name), filename=file_name) from None
    return self.model_from_str(text, file_name=file_name, debug=debug)


def metamodel() -> Any:
    """A textX metamodel of the program grammar whose `model_from_str` and
    `model_from_file` run the front end's lexical pre-pass and messages
    (the grammar alone does not skip comments: the pre-pass blanks them)."""
    from ..frontend.parse import grammar
    mm = grammar.load("program")  # a metamodel of its own, not the front end's
    mm.model_from_str = types.MethodType(_model_from_str, mm)
    mm.model_from_file = types.MethodType(_model_from_file, mm)
    return mm


@language("serq", "*.sq")
def serq_language() -> Any:
    """serQ serving-specification programs (serq-simpy's front end)"""
    return metamodel()

