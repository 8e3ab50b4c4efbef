"""Reserved names (Part 01 §6.2, Part 02 §7.1–7.2, Part 04 §10): the names the
language supplies (`inf`, `now`, the context variables, the engine lists)
may not be the name of anything the program binds.

One pass over the syntax tree as written, before definitions are expanded
and queue entries are rewritten (so a name keeps the position it was written
at, and an entry's `set now = …` is refused before it would become the
attribute `Q.now`). `check_reserved` is the only place this rule is checked;
the loader calls it on the program and on each `--def` body.
"""
from __future__ import annotations

from typing import Iterator, Optional

from ...core.errors import LinkError
from ...core.ir import Pos
from ..syntax import tree as S
from ..syntax.names import RESERVED, reserved_message
from ..syntax.walk import nodes

# node type -> (attribute holding the name, attribute holding its position,
# what the name names, with its article)
NAMED = {
    S.ILet: ("name", "name_pos", "a constant"),
    S.IDef: ("name", "name_pos", "a definition"),
    S.IStage: ("name", "name_pos", "a stage"),
    S.IPool: ("name", "name_pos", "a pool"),
    S.IDevice: ("name", "name_pos", "a device"),
    S.DevCap: ("name", "pos", "a pool"),
    S.DevResource: ("name", "pos", "a time resource"),
    S.IEngine: ("name", "name_pos", "an engine"),
    S.IQueue: ("name", "name_pos", "a queue"),
    S.IGauge: ("name", "name_pos", "a gauge"),
    S.IClaim: ("name", "name_pos", "a claim"),
    S.SSet: ("name", "name_pos", "a session attribute"),
    S.SChoose: ("name", "name_pos", "a session attribute"),
    S.SMarkTime: ("name", "name_pos", "a session attribute"),
    S.SObserve: ("name", "name_pos", "an observation"),
    S.SBinding: ("name", "pos", "an `at admission` binding"),
    S.TSet: ("name", "name_pos", "a register"),
    S.EAgg: ("var", "var_pos", "an aggregate's index"),
}
# node type -> (attribute holding a list of names, the list of positions, what)
LISTED = {
    S.IDef: ("params", "param_pos", "a parameter"),
    S.QEntry: ("params", "param_pos", "a parameter"),
    S.DevResource: ("params", "param_pos", "a parameter"),
}


def bindings(tree) -> Iterator[tuple[str, Optional[Pos], str]]:
    """Every name `tree` binds, in source order: (name, position, what)."""
    schedule_lets = {id(b) for n in nodes(tree) if isinstance(n, S.StepClause)
                     for b in n.lets}
    for n in nodes(tree):
        kind = type(n)
        if kind in NAMED:
            name, pos, what = NAMED[kind]
            if kind is S.SBinding and id(n) in schedule_lets:
                what = "a schedule's `let`"
            yield getattr(n, name), getattr(n, pos), what
        if kind in LISTED:
            names, positions, what = LISTED[kind]
            at = getattr(n, positions) or []
            for i, x in enumerate(getattr(n, names)):
                yield x, at[i] if i < len(at) else getattr(n, "pos", None), what
        if kind is S.QEntry and n.src is not None:
            yield n.src, n.src_pos, "an entry's source"
        if kind is S.StepClause and n.key == "state":
            yield n.name, n.name_pos, "a register"


def check_reserved(tree, sources: dict) -> None:
    """Refuse the first binding in `tree` (items, or any syntax nodes) whose
    name the language supplies: link error at the name, §6.2's message."""
    for name, pos, what in bindings(tree):
        if name in RESERVED:
            noun = what.split(" ", 1)[1]
            at = Pos(pos.file, pos.line, pos.col, len(name)) if pos is not None else None
            raise LinkError(reserved_message(name, what), at,
                            help=f"give the {noun} a name of its own",
                            source=sources.get(pos.file) if pos is not None else None)
