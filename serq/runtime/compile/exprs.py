"""Compile IR expressions into Python source, once per program.

An expression becomes a Python expression string evaluated inside generated
code (a session's generator function, a stage's capacity closure). Names
the string needs (helpers, stage objects, streams) are bound in one shared
namespace, `Namespace`. Evaluation order, short-circuiting and the IEEE
rules are those of spec Part 01 §3 and Part 07 §6.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ...core import ir
from ...core.errors import SimulationError, shortest
from ..random import distributions
from ...core import numeric
from . import names as N

_COMPARE = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "==", "!=": "!="}


class Namespace:
    """The globals of generated code: helpers plus objects bound by name."""

    def __init__(self, env: Any):
        self.env = env
        self.globals: dict[str, Any] = {
            N.ENV: env, N.INF: math.inf, N.NAN: math.nan,
            N.SIM_ERROR: SimulationError, N.LOG: math.log,
        }
        for name, (fn, _arity) in numeric.FUNCTIONS.items():
            self.globals[f"{N.FUNCTION}{name}"] = fn
        self.globals[N.DIV] = numeric.div
        self.globals[N.POW] = numeric.power
        for name, (fn, _arity) in distributions.DISTRIBUTIONS.items():
            self.globals[f"{N.DISTRIBUTION}{name}"] = fn
        self.globals[N.DET] = distributions.det
        self._ids: dict[int, str] = {}
        self._count = 0

    def bind(self, obj: Any, hint: str = "o") -> str:
        """Bind `obj` under a fresh global name (the same name for one object)."""
        key = id(obj)
        name = self._ids.get(key)
        if name is None:
            self._count += 1
            name = f"_{hint}{self._count}"
            self._ids[key] = name
            self.globals[name] = obj
        return name

    def define(self, src: str, name: str) -> Any:
        """Execute generated source `src` and return the object it defines."""
        code = compile(src, f"<serq:{name}>", "exec")
        exec(code, self.globals)
        return self.globals[name]

    def function(self, params: str, body_expr: str, hint: str = "fn") -> Callable:
        """A function `lambda params: body_expr` over the namespace."""
        self._count += 1
        name = f"_{hint}{self._count}"
        return self.define(f"def {name}({params}):\n    return {body_expr}\n", name)


@dataclass
class Scope:
    """Where an expression is evaluated (its moment).

    `session`: Python expression of the session object, or None;
    `stream`: Python expression of the stream draws read, or None (no draws);
    `ctx`: context-variable name -> Python expression;
    `attrs`: attribute name -> slot name on the session object."""

    session: Optional[str]
    stream: Optional[str]
    attrs: dict[str, str]
    ctx: dict[str, str] = field(default_factory=dict)


class StageDirectory:
    """Maps IR stage/pool references to runtime objects (set by the runtime)."""

    def __init__(self) -> None:
        self.families: dict[tuple[str, str], list[Any]] = {}

    def add(self, kind: str, name: str, members: list[Any]) -> None:
        self.families[(kind, name)] = members


def index_checker(env: Any) -> Callable[[float, int, str], int]:
    """A function checking a computed array index: a whole number in
    0 … size−1 (spec Part 01 §4.3); a run-time error otherwise."""

    def _ix(value: float, size: int, what: str) -> int:
        if 0.0 <= value < size and value == int(value):
            return int(value)
        raise SimulationError(
            f"`{what}[…]`: the index is {shortest(value)}, not a whole number "
            f"from 0 to {size - 1}", env.now)

    return _ix


class Members(dict):
    """A family's members by index value (0.0, 1.0, …): generated code reads
    `members[index]`, one lookup; an index that is not a whole number in
    range is reported by the index checker (`__missing__`)."""

    __slots__ = ("members", "ix", "what")

    def __init__(self, members: list[Any], ix: Callable[[float, int, str], int], what: str):
        super().__init__((float(k), m) for k, m in enumerate(members))
        self.members = members
        self.ix = ix
        self.what = what

    def __missing__(self, value: float) -> Any:
        return self.members[self.ix(value, len(self.members), self.what)]  # (raises)


HOIST_DEPTH = 60  # brackets of generated source before a subexpression is hoisted


def nesting(src: str) -> int:
    """The deepest bracket nesting of generated source."""
    depth = top = 0
    for ch in src:
        if ch in "([{":
            depth += 1
            if depth > top:
                top = depth
        elif ch in ")]}":
            depth -= 1
    return top


def free_names(src: str, globals_: dict[str, Any]) -> list[str]:
    """Local names generated source reads (neither bound globals nor builtins)."""
    import ast
    import builtins
    tree = ast.parse(src, mode="eval" if "\n" not in src else "exec")
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Store)}
    stored |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler) and n.name}
    out: list[str] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in stored \
                and n.id not in globals_ and not hasattr(builtins, n.id) and n.id not in out:
            out.append(n.id)
    return sorted(out)


class ExprCompiler:
    """Turns IR expressions into Python source strings."""

    def __init__(self, ns: Namespace, stages: StageDirectory):
        self.ns = ns
        self.stages = stages
        self.obs_lists: dict[str, str] = {}  # observation -> bound list of all its values
        self.registers: dict[str, str] = {}  # register name -> Python expression
        ns.globals[N.INDEX] = index_checker(ns.env)
        self.members: dict[int, Members] = {}  # id of a family's list -> its `Members`
        # (kind, family, attribute) -> the local name of the member a `choose`
        # loop is at: a reference indexed by the loop's attribute reads it
        self.at_member: dict[tuple[str, str, str], str] = {}

    # -- references ------------------------------------------------------
    def ref(self, ref: ir.Ref, scope: Scope) -> str:
        """Python expression of the runtime object a reference names."""
        members = self.stages.families[(ref.kind, ref.name)]
        if ref.index is None:
            return self.ns.bind(members[0], "st")
        if isinstance(ref.index, ir.Num):
            v = ref.index.value
            return self.ns.bind(members[int(v)], "st")
        if isinstance(ref.index, ir.Attr):
            local = self.at_member.get((ref.kind, ref.name, ref.index.name))
            if local is not None:
                return local
        by_index = self.members.get(id(members))
        if by_index is None:
            by_index = self.members[id(members)] = Members(members, self.ns.globals[N.INDEX],
                                                            ref.name)
        fam = self.ns.bind(by_index, "fam")
        idx = self.expr(ref.index, scope)
        return f"{fam}[{idx}]"

    # -- expressions -----------------------------------------------------
    def expr(self, e: ir.Expr, scope: Scope) -> str:
        """Python source of `e` (a float-valued expression)."""
        method = getattr(self, "_" + type(e).__name__)
        src = method(e, scope)
        if len(src) > 2 * HOIST_DEPTH and nesting(src) > HOIST_DEPTH:
            src = self._hoist(src)
        return src

    def _hoist(self, src: str) -> str:
        """A deeply nested expression becomes a call of a function of its
        own (Python's parser takes at most 200 nested brackets); the call is
        evaluated where the expression was, so draws and short circuits keep
        their order."""
        params = free_names(src, self.ns.globals)
        self.ns._count += 1
        name = f"_deep{self.ns._count}"
        self.ns.define(f"def {name}({', '.join(params)}):\n    return {src}\n", name)
        return f"{name}({', '.join(params)})"

    def _Num(self, e: ir.Num, scope: Scope) -> str:
        v = e.value
        if v != v:
            return N.NAN
        if v == math.inf:
            return N.INF
        if v == -math.inf:
            return f"(-{N.INF})"
        return repr(float(v))

    def _Now(self, e: ir.Now, scope: Scope) -> str:
        return f"{N.ENV}.now"

    def _Attr(self, e: ir.Attr, scope: Scope) -> str:
        if scope.session is None:
            return "0.0"  # no session at this moment (a ps capacity): reads 0
        return f"{scope.session}.{scope.attrs[e.name]}"

    def _Ctx(self, e: ir.Ctx, scope: Scope) -> str:
        found = scope.ctx.get(e.name)
        if found is not None:
            return found
        return self.registers[e.name]  # a step stage's register, read by name

    def _Unary(self, e: ir.Unary, scope: Scope) -> str:
        x = self.expr(e.operand, scope)
        if e.op == "-":
            return f"(-{x})"
        return f"(1.0 if {x} == 0.0 else 0.0)"

    def _Binary(self, e: ir.Binary, scope: Scope) -> str:
        a = self.expr(e.left, scope)
        b = self.expr(e.right, scope)
        op = e.op
        if op in ("+", "-", "*"):
            return f"({a} {op} {b})"
        if op == "/":
            if isinstance(e.right, ir.Num) and e.right.value not in (0.0,) \
                    and e.right.value == e.right.value:
                return f"({a} / {b})"
            return f"{N.DIV}({a}, {b})"
        if op == "^":
            return f"{N.POW}({a}, {b})"
        if op in _COMPARE:
            return f"(1.0 if {a} {op} {b} else 0.0)"
        if op == "&&":
            return f"(0.0 if {a} == 0.0 else (1.0 if {b} != 0.0 else 0.0))"
        if op == "||":
            return f"(1.0 if {a} != 0.0 else (1.0 if {b} != 0.0 else 0.0))"
        raise ValueError(f"unknown operator {op}")

    def _Cond(self, e: ir.Cond, scope: Scope) -> str:
        c = self.expr(e.cond, scope)
        return f"({self.expr(e.then, scope)} if {c} != 0.0 else {self.expr(e.other, scope)})"

    def _Call(self, e: ir.Call, scope: Scope) -> str:
        args = ", ".join(self.expr(a, scope) for a in e.args)
        if e.fn == "abs":
            return f"abs({args})"
        return f"{N.FUNCTION}{e.fn}({args})"

    def _Draw(self, e: ir.Draw, scope: Scope) -> str:
        args = [self.expr(a, scope) for a in e.args]
        if e.dist == "det":
            return f"{N.DET}({args[0]})"
        if scope.stream is None:
            raise ValueError("a draw where no stream is bound")
        if e.dist == "exp":  # distributions.exp written out: its operations, in its order
            return f"(-({args[0]}) * {N.LOG}(1.0 - {scope.stream}.uniform()))"
        return f"{N.DISTRIBUTION}{e.dist}({scope.stream}, {', '.join(args)})"

    def _ObsAggregate(self, e: ir.ObsAggregate, scope: Scope) -> str:
        return f"{N.AGGREGATE}{e.fn}({self.obs_lists[e.name]})"

    def _Observable(self, e: ir.Observable, scope: Scope) -> str:
        obj = self.ref(e.target, scope)
        fn = e.fn
        if fn == "queue":
            return f"float({obj}.n)"
        if fn == "busy":
            return f"float({obj}.busy_count())"
        if fn in ("work", "est_lambda", "est_rho", "est_wait"):
            return f"{obj}.{fn}()"
        if fn == "used":
            return f"{obj}.used"
        if fn == "free":
            return f"({obj}.cap - {obj}.used)"
        if fn == "cachedin":
            if scope.session is None:
                return "0.0"
            return f"{obj}.own_entry({scope.session})"
        if fn == "holders":
            return f"float(len({obj}.holder_count))"
        if fn == "queued":
            return f"float(len({obj}.queue))"
        if fn == "budget_left":
            return f"{obj}.budget_left()"
        if fn == "price":
            args = ", ".join(self.expr(a, scope) for a in e.args)
            return f"{obj}.price({args})"
        raise ValueError(f"observable {fn} is not available here")
