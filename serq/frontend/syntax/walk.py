"""Generic traversal helpers over syntax nodes (dataclasses)."""
from __future__ import annotations

import copy
import dataclasses
import functools
from typing import Callable, Iterator

from ...core.ir import Pos
from . import tree as S
from .derive import BLOCK, plain_fields

EXPR_TYPES = (S.ENum, S.EName, S.ECall, S.EDraw, S.EAgg, S.EUnary, S.EBinary, S.ECond)


def children(node) -> Iterator:
    """Direct child nodes (expressions, statements) of a syntax node."""
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, list):
            for v in value:
                if dataclasses.is_dataclass(v) and not isinstance(v, Pos):
                    yield v
        elif dataclasses.is_dataclass(value) and not isinstance(value, Pos):
            yield value


def nodes(node) -> Iterator:
    """The node and all its descendants, in source order (a list: each item's)."""
    if isinstance(node, list):
        for n in node:
            yield from nodes(n)
        return
    yield node
    for c in children(node):
        yield from nodes(c)


def size(node) -> int:
    """Number of syntax nodes (the expansion bound counts these as tokens)."""
    return sum(1 for _ in nodes(node))


def clone(node):
    return copy.deepcopy(node)


def exprs_in(node) -> Iterator:
    """Every expression node under `node` (statements included)."""
    for n in nodes(node):
        if isinstance(n, EXPR_TYPES):
            yield n


def names_read(node) -> set[str]:
    """Names (and stage references) read anywhere under `node`."""
    return {n.name for n in nodes(node) if isinstance(n, S.EName)}


def stmts_in(stmts: list) -> Iterator:
    """Every statement in a block, nested blocks included (a plain kind's
    blocks are its `list[Stmt]` fields: syntax/derive.py)."""
    for s in stmts:
        yield s
        for attr in _blocks(type(s)):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                yield from stmts_in(inner)


@functools.lru_cache(maxsize=None)
def _blocks(cls: type) -> tuple[str, ...]:
    fields = plain_fields(cls) if dataclasses.is_dataclass(cls) else None
    if fields is None:
        return ("then", "other", "body")
    return tuple(name for name, role in fields if role == BLOCK)


def map_exprs(node, fn: Callable):
    """Rebuild `node` with every maximal expression field replaced by fn(expr)."""
    changes = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, EXPR_TYPES):
            changes[f.name] = fn(value)
        elif isinstance(value, list) and value and isinstance(value[0], EXPR_TYPES):
            changes[f.name] = [fn(v) for v in value]
    return dataclasses.replace(node, **changes) if changes else node


def first(node, pred: Callable):
    """The first node under `node` (in source order) for which pred holds, or None."""
    return next((n for n in nodes(node) if pred(n)), None)


def first_draw(node):
    """The first draw `~d(…)` under `node`, or None."""
    return first(node, lambda n: isinstance(n, S.EDraw))


def first_read(node, names):
    """The first plain name under `node` that is one of `names`, or None."""
    return first(node, lambda n: isinstance(n, S.EName) and n.name in names)


def first_call(node, fns):
    """The first call under `node` of a function in `fns`, or None."""
    return first(node, lambda n: isinstance(n, S.ECall) and n.fn in fns)


def rewrite(node, fn: Callable):
    """A copy of `node` in which every node n, children first, is replaced by fn(n)."""
    if isinstance(node, list):
        return [rewrite(n, fn) for n in node]
    if not dataclasses.is_dataclass(node) or isinstance(node, Pos):
        return node
    changes = {f.name: rewrite(getattr(node, f.name), fn) for f in dataclasses.fields(node)}
    return fn(dataclasses.replace(node, **changes))
