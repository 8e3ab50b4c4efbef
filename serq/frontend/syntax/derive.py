"""What the passes derive for a plain statement kind (docs/add-a-statement.md).

A statement kind is *plain* when each field of its syntax node is one of:
its position `pos`, an expression (`Expr` or `Optional[Expr]`), a block
(`list[Stmt]`) or a plain value (`str`, `int`, `float`, `bool`, optional or
not). For a plain kind the passes need no method of their own:

* building (`parse/build.py`): the grammar rule `XStmt` builds the node
  `SX` from its attributes of the same names;
* the queue rewrite (`rewrite/entries.py`): its expressions and blocks are
  rewritten, the rest kept;
* linking (`link/statements.py`): its expressions are resolved at the
  Session moment and its blocks linked, into the IR node of the same name
  without the `S` (`SPause` → `ir.Pause`), whose fields have the same names;
* the kernel text (`syntax/kernel_text.py`): the node's `TEXT`, a format
  of its fields (expressions shown as source), when it declares one.

A pass visits a kind with its own method when it does more (checks, names,
other IR); the derived one is the default. `tests/test_visitors.py` checks
that every kind is visited, ignored or derived by every pass.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Optional

from ...core import ir

POS = "pos"
EXPR = "expr"
OPT_EXPR = "opt_expr"
BLOCK = "block"
VALUE = "value"

_ROLES = {
    "Expr": EXPR, "Optional[Expr]": OPT_EXPR, "list[Stmt]": BLOCK,
    "str": VALUE, "int": VALUE, "float": VALUE, "bool": VALUE,
    "Optional[str]": VALUE, "Optional[int]": VALUE, "Optional[float]": VALUE,
}


@functools.lru_cache(maxsize=None)
def plain_fields(cls: type) -> Optional[tuple[tuple[str, str], ...]]:
    """The (name, role) of each field of the statement node `cls` (its
    `via` aside), or None when the kind is not plain."""
    out = []
    for f in dataclasses.fields(cls):
        if f.name == "via":
            continue
        hint = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        hint = hint.replace("'", "").replace('"', "")  # (forward references)
        role = POS if (f.name == "pos" and hint == "Pos") else _ROLES.get(hint)
        if role is None:
            return None
        out.append((f.name, role))
    return tuple(out)


def ir_kind(cls: type) -> Optional[type]:
    """The IR statement a plain syntax kind links to (`SPause` → `ir.Pause`),
    when there is one with the same fields."""
    fields = plain_fields(cls)
    target = getattr(ir, cls.__name__[1:], None) if cls.__name__.startswith("S") else None
    if fields is None or not isinstance(target, type) or not issubclass(target, ir.Stmt):
        return None
    names = {f.name for f in dataclasses.fields(target)}
    return target if {n for n, _ in fields} == names else None


def rebuild(node: Any, expr: Any, block: Any) -> Any:
    """`node` with each expression replaced by `expr(e)` and each block by
    `block(stmts)` (an optional expression that is None stays None)."""
    changes = {}
    for name, role in plain_fields(type(node)):
        value = getattr(node, name)
        if role == EXPR or (role == OPT_EXPR and value is not None):
            changes[name] = expr(value)
        elif role == BLOCK:
            changes[name] = block(value)
    return dataclasses.replace(node, **changes)


def link(node: Any, expr: Any, block: Any) -> Any:
    """The IR statement of the plain syntax `node` (`ir_kind`), its
    expressions linked by `expr` and its blocks by `block`."""
    kwargs = {}
    for name, role in plain_fields(type(node)):
        value = getattr(node, name)
        if role == EXPR or (role == OPT_EXPR and value is not None):
            value = expr(value)
        elif role == BLOCK:
            value = block(value)
        kwargs[name] = value
    return ir_kind(type(node))(**kwargs)
