"""Name resolution of expressions at a moment (Part 01 §3.5, §4, §5, §6;
Part 03 §10; Part 04 §10): syntax expressions become IR expressions;
constants are folded to numbers, aggregates written out, `cost(…)` removed,
`blocksize(p)` folded.

A `Moment` says what an expression may read where it is written (session
code, a hold's header, a pool's keys, a ps capacity, a gauge, a renewal gap,
a constant position).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from ...core import ir
from ...core.errors import LinkError, ParseError, shortest
from ...core.ir import Pos
from ...core import arithmetic as arith
from ..syntax import tree as S
from ..syntax.names import (ARITH, CONTEXT, DRAWS, ENGINE_LISTS, OBS_AGGREGATES, POOL_OBSERVABLES,
                    STAGE_OBSERVABLES, STEP_OBSERVABLES, moments_text, suggest)

#: Every function a call may name, for "did you mean" on an unknown one (the
#: aggregates of observations only where they are read: a claim `at end`).
FUNCTION_NAMES = frozenset(ARITH) | frozenset(STAGE_OBSERVABLES) | frozenset(POOL_OBSERVABLES) \
    | frozenset(STEP_OBSERVABLES) | frozenset(OBS_AGGREGATES) | {"cost"}


@dataclass(frozen=True)
class Moment:
    """Where an expression is evaluated, and what it may therefore read.

    `ctx` is the moment whose context variables it reads (default `name`);
    `registers` the step-stage registers it may read (Part 04 §9); `obs` the
    observables it may read (None: all); `no_obs` why one is refused; `own`
    the step stage whose `budget_left` it may not read; `const_index` that
    a stage or pool it reads is named by a number (gauges, claims)."""

    name: str
    draws: bool = True
    attrs: bool = True
    observables: bool = True
    hidden: bool = True
    refuse: Optional[str] = None  # one message for everything not a constant/draw
    ctx: Optional[str] = None
    now: bool = True
    registers: frozenset = frozenset()
    obs: Optional[frozenset] = None
    no_obs: str = ""
    no_draw: Optional[str] = None
    own: Optional[str] = None
    const_index: bool = False


SESSION = Moment("session")
PS = Moment("ps", hidden=False)
GAUGE = Moment("gauge", draws=False, attrs=False, hidden=False, now=False,
               obs=(frozenset(STAGE_OBSERVABLES) | frozenset(POOL_OBSERVABLES))
               - {"work", "cachedin"}, const_index=True,
               no_obs="a gauge cannot read `{fn}(…)`")
RENEWAL = Moment("renewal", attrs=False, observables=False, hidden=False,
                 refuse="renewal arrival may use only constants and sampled distributions")
CONSTANT = Moment("constant", draws=False, attrs=False, observables=False, hidden=False)
ADMIT = Moment("admit", draws=False, hidden=False)
SELECT = Moment("select", draws=False, hidden=False)
EVICT = Moment("evict", hidden=False)
VICTIM = Moment("victim", draws=False, hidden=False)

NOW_HELP = {"only": "an engine whose residents `only` all excludes waits for an event, "
                    "and the clock moving is none",
            "plan": "an engine whose body schedules nothing waits for an event, and the "
                    "clock moving is none"}

HELP = {"stage": "declare it with `stage NAME : fifo;` (or ps, delay, step)",
        "pool": "declare it with `pool NAME { cap N; }`"}


@dataclass
class StageInfo:
    """A declared stage; `order` is where it is declared (Part 05 §1.3)."""

    name: str
    kind: str
    size: Optional[int]
    pos: Pos
    capacity: Optional[float] = None  # a ps stage's constant capacity
    order: tuple = ()
    registers: tuple = ()             # a step stage's register names


@dataclass
class PoolInfo:
    name: str
    size: Optional[int]
    pos: Pos
    cap: float = math.inf
    block: Optional[float] = None
    admit_via: Optional[str] = None   # the stage named by `admit via`


def fold(e: ir.Expr) -> Optional[float]:
    """The value of an expression built only from numbers and arithmetic."""
    if isinstance(e, ir.Num):
        return e.value
    if isinstance(e, ir.Unary):
        x = fold(e.operand)
        return None if x is None else arith.unary(e.op, x)
    if isinstance(e, ir.Binary):
        a, b = fold(e.left), fold(e.right)
        return None if a is None or b is None else arith.binary(e.op, a, b)
    if isinstance(e, ir.Cond):
        c, a, b = fold(e.cond), fold(e.then), fold(e.other)
        if c is None or a is None or b is None:
            return None
        return a if arith.truth(c) else b
    if isinstance(e, ir.Call):
        args = [fold(a) for a in e.args]
        return None if any(a is None for a in args) else arith.call(e.fn, args)
    return None


def whole(x: float) -> bool:
    return x == x and not math.isinf(x) and float(x).is_integer()


@dataclass
class Resolver:
    """Resolves names against the program's declarations."""

    sources: dict
    constants: dict = field(default_factory=dict)       # name -> value
    constant_pos: dict = field(default_factory=dict)    # name -> Pos
    attributes: dict = field(default_factory=dict)      # name -> Pos (None: built-in)
    stages: dict = field(default_factory=dict)          # name -> StageInfo
    pools: dict = field(default_factory=dict)           # name -> PoolInfo
    hidden: set = field(default_factory=set)
    cost_marks: list = field(default_factory=list)      # families named by cost(…)
    registers: dict = field(default_factory=dict)       # register -> (stage, Pos)
    observations: set = field(default_factory=set)      # observe names (claims)
    resources: dict = field(default_factory=dict)       # device time resource -> device
    file_rank: dict = field(default_factory=dict)       # file -> rank (workload file 0)

    def order_key(self, pos: Pos) -> tuple:
        """Where `pos` stands in the program text: a --workload file's items come
        before the program's (Part 01 §2.8)."""
        return (self.file_rank.get(pos.file, 1), pos.line, pos.col)

    # --------------------------------------------------------------- errors
    def err(self, message: str, pos: Optional[Pos], help: Optional[str] = None,
            notes: Optional[list[str]] = None) -> LinkError:
        return LinkError(message, pos, help=help, notes=notes,
                         source=self.sources.get(pos.file) if pos else None)

    def unknown(self, what: str, name: str, pos: Pos, candidates: dict,
                help: str) -> LinkError:
        near = suggest(name, candidates)
        if near is None:
            return self.err(f"unknown {what} `{name}`", pos, help)
        where = candidates[near]
        notes = [f"`{near}` declared at {where.line}:{where.col}"] if where else []
        kind = what if what != "name" else ("constant" if near in self.constants
                                            else "attribute")
        return self.err(f"unknown {what} `{name}`", pos, f"did you mean {kind} `{near}`?",
                        notes)

    # ---------------------------------------------------------- expressions
    def expr(self, e: S.Expr, m: Moment, scope: Optional[dict] = None) -> ir.Expr:
        scope = scope or {}
        method = getattr(self, "r_" + type(e).__name__)
        return method(e, m, scope)

    def r_ENum(self, e: S.ENum, m: Moment, scope: dict) -> ir.Expr:
        return ir.Num(e.value)

    def r_EUnary(self, e: S.EUnary, m: Moment, scope: dict) -> ir.Expr:
        return ir.Unary(e.op, self.expr(e.operand, m, scope))

    def r_EBinary(self, e: S.EBinary, m: Moment, scope: dict) -> ir.Expr:
        return ir.Binary(e.op, self.expr(e.left, m, scope), self.expr(e.right, m, scope))

    def r_ECond(self, e: S.ECond, m: Moment, scope: dict) -> ir.Expr:
        return ir.Cond(self.expr(e.cond, m, scope), self.expr(e.then, m, scope),
                       self.expr(e.other, m, scope))

    def register_error(self, n: str, m: Moment, pos: Pos) -> LinkError:
        stage = self.registers[n][0]
        return self.err(f"`{n}` is stage `{stage}`'s register (`state`), read in "
                        f"{moments_text([m.name])}, apart from `{stage}`'s iterations", pos,
                        "a register is read by its stage, the `queue by` keys of a pool "
                        "it admits, the header of a hold whose first pool it admits, a "
                        "gauge or a claim")

    def r_EName(self, e: S.EName, m: Moment, scope: dict) -> ir.Expr:
        if e.fields and e.name in ENGINE_LISTS:
            raise self.err(f"`{e.name}.{'.'.join(e.fields)}` is a value of an engine, read "
                           "in its `tokens cap`, `schedule` and `execute`",
                           Pos(e.pos.file, e.pos.line, e.pos.col, len(e.name)))
        if e.fields:
            raise ParseError(f"`{e.name}.{'.'.join(e.fields)}`: dotted reads of queues "
                             "(Part 05 §2) are not available in this build",
                             Pos(e.pos.file, e.pos.line, e.pos.col, 1),
                             source=self.sources.get(e.pos.file))
        n = e.name
        if e.index is not None:
            if n in self.stages:
                raise self.err(f"`{n}[…]` names a stage; read it with an observable such "
                               f"as `queue({n}[…])`", e.pos)
            if n in self.pools:
                raise self.err(f"`{n}[…]` names a pool; read it with an observable such "
                               f"as `used({n}[…])`", e.pos)
            raise self.err(f"unknown name `{n}`", e.pos, "only stages and pools are indexed")
        if n in scope:
            return ir.Num(float(scope[n]))
        if n in self.constants:
            return ir.Num(self.constants[n])
        if n == "inf":
            return ir.Num(math.inf)
        if m.refuse and (n == "now" or n in CONTEXT or n in self.attributes):
            raise self.err(m.refuse, e.pos)
        if n == "now":
            if m.name == "constant":
                raise self.err("`now` is not a constant", e.pos)
            if not m.now:
                raise self.err(f"`now` is not available in {moments_text([m.name])}", e.pos,
                               NOW_HELP.get(m.name))
            return ir.Now()
        if n in CONTEXT:
            if (m.ctx or m.name) not in CONTEXT[n]:
                raise self.err(f"`{n}` is read in {moments_text([m.name])}, but it exists "
                               f"only in {moments_text(CONTEXT[n])}", e.pos)
            return ir.Ctx(n)
        if n in ENGINE_LISTS:
            raise self.err(f"`{n}` is an engine list: an engine reads one of its values, as "
                           f"`{n}.count`, in its `tokens cap`, `schedule` or `execute`",
                           e.pos)
        if n in self.registers:
            if n not in m.registers:
                raise self.register_error(n, m, e.pos)
            return ir.Ctx(n)
        if n in self.attributes:
            if m.name == "constant":
                raise self.err(f"`{n}` is not a constant", e.pos,
                               f"`{n}` is a session attribute")
            if not m.attrs:
                raise self.err(f"{moments_text([m.name])} cannot read the session "
                               f"attribute `{n}`", e.pos)
            if n in self.hidden and not m.hidden:
                raise self.err(f"`{n}` is hidden from the scheduler, but is read in "
                               f"{moments_text([m.name])}", e.pos)
            return ir.Attr(n)
        if m.name == "constant":
            near = suggest(n, self.constant_pos)
            raise self.err(f"`{n}` is not a constant", e.pos,
                           f"did you mean constant `{near}`?" if near else None)
        names = {**{k: None for k in self.attributes}, **self.constant_pos}
        names.update({k: v for k, v in self.attributes.items() if v})
        raise self.unknown("name", n, e.pos, names,
                           "declare a `let` constant or assign a session attribute "
                           "before using it")

    def r_EDraw(self, e: S.EDraw, m: Moment, scope: dict) -> ir.Expr:
        if not m.draws:
            msg = "a constant cannot sample" if m.name == "constant" else \
                m.no_draw or f"{moments_text([m.name])} cannot sample"
            raise self.err(msg, e.pos)
        want = DRAWS[e.dist]
        if len(e.args) != want:
            raise self.err(f"`~{e.dist}` takes {want} argument(s), got {len(e.args)}", e.pos)
        return ir.Draw(e.dist, [self.expr(a, m, scope) for a in e.args])

    def r_ECall(self, e: S.ECall, m: Moment, scope: dict) -> ir.Expr:
        fn, pos = e.fn, Pos(e.pos.file, e.pos.line, e.pos.col, len(e.fn))
        if fn == "cost":
            return self.cost(e, m, scope)
        table = ARITH if fn in ARITH else STAGE_OBSERVABLES if fn in STAGE_OBSERVABLES \
            else POOL_OBSERVABLES if fn in POOL_OBSERVABLES else STEP_OBSERVABLES \
            if fn in STEP_OBSERVABLES else None
        if table is None and fn in OBS_AGGREGATES:
            return self.aggregate(e, m, pos)
        if table is None and fn in self.resources:
            raise self.err(f"`{fn}` is a time resource of device `{self.resources[fn]}`, "
                           "read only in the `execute` of the engine on it", pos)
        if table is None:
            near = suggest(fn, FUNCTION_NAMES if m.name == "end"
                           else FUNCTION_NAMES - frozenset(OBS_AGGREGATES))
            raise self.err(f"unknown function `{fn}`", pos,
                           f"did you mean `{near}`?" if near else None)
        if len(e.args) != table[fn]:
            raise self.err(f"`{fn}` takes {table[fn]} argument(s), got {len(e.args)}", pos)
        if table is ARITH:
            return ir.Call(fn, [self.expr(a, m, scope) for a in e.args])
        if m.refuse:
            raise self.err(m.refuse, pos)
        if m.name == "constant":
            raise self.err(f"`{fn}(…)` reads the state of the program and is not a "
                           "constant", pos)
        if not m.observables or (m.obs is not None and fn not in m.obs and fn != "blocksize"):
            raise self.err(m.no_obs.format(fn=fn, moment=moments_text([m.name])), pos)
        arg = e.args[0]
        if not isinstance(arg, S.EName) or arg.fields:
            raise self.err(f"`{fn}` reads a stage or a pool: give its name", pos)
        ref = self.ref(arg, m, scope, kind="pool" if table is POOL_OBSERVABLES else "stage")
        if table is STEP_OBSERVABLES:
            self.budget_left(arg.name, m, pos)
        if fn == "blocksize":
            block = self.pools[arg.name].block
            if block is None:
                raise self.err(f"`blocksize({arg.name})`: pool `{arg.name}` has no `block`",
                               ref.pos)
            return ir.Num(block)
        extra = [self.expr(a, m, scope) for a in e.args[1:]]
        return ir.Observable(fn, ref, extra)

    def budget_left(self, stage: str, m: Moment, pos: Pos) -> None:
        """`budget_left(S)` names a step stage, and not at S's own plan (§7.1)."""
        kind = self.stages[stage].kind
        if kind != "step":
            raise self.err(f"`budget_left({stage})`: `{stage}` is a {kind} stage; only a "
                           "step stage has a token budget", pos)
        if m.own == stage:
            raise self.err(f"{moments_text([m.name])} may not read its own stage's "
                           f"`budget_left({stage})`: it plans an iteration, and the body is "
                           "the plan", pos)

    def aggregate(self, e: S.ECall, m: Moment, pos: Pos) -> ir.Expr:
        """`total(o)` … `prefix_total(o)`, read only by a claim `at end` (Part 06 §8.2)."""
        fn = e.fn
        if m.name != "end":
            raise self.err(f"`{fn}(…)` aggregates the run's observations and is read only "
                           f"by a claim `at end`, but is read in {moments_text([m.name])}",
                           pos)
        arg = e.args[0] if len(e.args) == 1 else None
        if not isinstance(arg, S.EName) or arg.fields or arg.index is not None:
            raise self.err(f"`{fn}` takes the name of an `observe`, as `{fn}(latency)`", pos)
        if arg.name not in self.observations:
            raise self.err(f"`{fn}({arg.name})`: `{arg.name}` is not an `observe` of the "
                           "program", Pos(arg.pos.file, arg.pos.line, arg.pos.col,
                                          len(arg.name)))
        return ir.ObsAggregate(fn, arg.name)

    def cost(self, e: S.ECall, m: Moment, scope: dict) -> ir.Expr:
        pos = Pos(e.pos.file, e.pos.line, e.pos.col, 4)
        if len(e.args) < 2:
            raise self.err("`cost` takes a resource and a quantity: "
                           "`cost(resource, expression)`", pos)
        families = set()
        for r in e.args[:-1]:
            if not isinstance(r, S.EName) or r.fields:
                raise self.err("`cost` names a stage or a pool before its quantity", pos)
            if r.name not in self.pools and r.name not in self.stages:
                at = Pos(r.pos.file, r.pos.line, r.pos.col, len(r.name))
                known = {**{k: v.pos for k, v in self.stages.items()},
                         **{k: v.pos for k, v in self.pools.items()}}
                raise self.unknown("stage or pool", r.name, at, known,
                                   "`cost` names the stage or pool its quantity is used "
                                   "on: name a declared one")
            kind = "pool" if r.name in self.pools and r.name not in self.stages else "stage"
            self.ref(r, m, scope, evaluate=False, kind=kind)
            families.add(r.name)
        value = e.args[-1]
        mark = len(self.cost_marks)
        result = self.expr(value, m, scope)
        if len(self.cost_marks) > mark:
            raise self.err("a resource cost is not an ordinary quantity", pos)
        self.cost_marks.append((families, pos))
        return result

    def r_EAgg(self, e: S.EAgg, m: Moment, scope: dict) -> ir.Expr:
        v = e.var
        head = f"`{e.op} {v} in`"
        clash = ("also a session attribute" if v in self.attributes else
                 "also a `let` constant" if v in self.constants else
                 "already an aggregate's index" if v in scope else None)
        if clash:
            raise self.err(f"{head}: `{v}` is {clash}", e.pos,
                           "give the index a name of its own")
        count = self.constant(e.count, f"{head}'s count", scope)
        if not whole(count) or count < 1:
            raise self.err(f"{head}'s count must be a positive integer, found "
                           f"{shortest(count)}", e.count.pos if hasattr(e.count, "pos") else e.pos)
        terms = [self.expr(e.body, m, {**scope, v: j}) for j in range(int(count))]
        result = terms[0]
        for t in terms[1:]:
            result = ir.Binary("+", result, t) if e.op == "sum" else ir.Call(e.op, [result, t])
        return result

    # ------------------------------------------------------ amounts, costs
    def amount(self, value: ir.Expr, head: str, pos: Pos) -> None:
        """A constant amount must be a number ≥ 0 (Part 01 §7.4); `head` is the
        statement as written up to the amount, e.g. `run d` or `grow kv`."""
        k = fold(value)
        if k is not None and (k != k or k < 0):
            what = ("the amount is NaN, not a number of units, tokens or seconds"
                    if k != k else "an amount of units, tokens or seconds is a number, "
                    "and not negative")
            raise self.err(f"`{head} ({shortest(k)})`: {what}", pos)

    def consumer(self, mark: int, families: set[str], pos: Pos) -> None:
        """Every `cost(…)` resolved since `mark` names one of `families` (§4.5)."""
        for named, _ in self.cost_marks[mark:]:
            if not families & named:
                raise self.err("resource use requires its cost type; convert the "
                               "quantity with cost(resource, expression)", pos)

    # ------------------------------------------------------------ constants
    def constant(self, e: S.Expr, what: str, scope: Optional[dict] = None) -> float:
        """The value of a constant position (Part 01 §2.4)."""
        value = fold(self.expr(e, CONSTANT, scope))
        assert value is not None, what
        return value

    # ----------------------------------------------------------- references
    def ref(self, e: S.EName, m: Moment, scope: dict, evaluate: bool = True,
            kind: str = "stage") -> ir.Ref:
        """A stage (or, with kind "pool", a pool) reference `s` or `s[i]`."""
        pos = Pos(e.pos.file, e.pos.line, e.pos.col, len(e.name))
        table = self.stages if kind == "stage" else self.pools
        info = table.get(e.name)
        if info is None:
            raise self.unknown(kind, e.name, pos, {k: v.pos for k, v in table.items()},
                               HELP[kind])
        if info.size is None:
            if e.index is not None:
                # as pyserq 0.1.3: a single stage is the one member `s[0]`
                k = fold(self.expr(e.index, m, scope))
                if k is None:
                    raise self.err(f"`{e.name}` is a single {kind}: its only member is "
                                   f"`{e.name}[0]`; a computed index needs an array", pos)
                if k != 0:
                    raise self.err(f"index {shortest(k)} is out of range for `{e.name}`: "
                                   "a member is 0 … 0", pos)
            return ir.Ref(kind, e.name, None, pos)
        if e.index is None:
            if not evaluate:  # `cost(s, …)` names the whole family
                return ir.Ref(kind, e.name, None, pos)
            raise self.err(f"`{e.name}` is an array of {info.size} {kind}s: name one "
                           f"member, `{e.name}[i]`", pos)
        if not evaluate:
            try:
                index = self.expr(e.index, m, scope)
            except LinkError:
                return ir.Ref(kind, e.name, None, pos)
        else:
            index = self.expr(e.index, m, scope)
        k = fold(index)
        if k is None and m.const_index:
            what = "a gauge" if m.name == "gauge" else moments_text([m.name])
            raise self.err(f"{what}'s index is a number or an aggregate's index, not "
                           "read from the state", pos)
        if k is not None:
            if not whole(k) or not 0 <= k < info.size:
                raise self.err(f"index {shortest(k)} is out of range for `{e.name}`: a "
                               f"member is 0 … {info.size - 1}", pos)
            index = ir.Num(float(k))
        return ir.Ref(kind, e.name, index, pos)

