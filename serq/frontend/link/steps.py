"""Step stages (Part 04 §5, §8, §9): their clauses at their moments, the
registers (`state`), the iteration body, `memory` and the member pairing of
a family reference (Part 03 §2.3), lowered to `ir.Step`.

A body's `serve` without an order serves in the stage's `serve` order when
the stage has one (pyserq 0.1.3 does the same); `decode first` is the key
`decoding ? 0 : 1` (§8.3)."""
from __future__ import annotations

import math
from typing import Optional

from ...core import ir
from ...core.errors import ParseError, shortest
from ...core.ir import Pos
from ..syntax import tree as S
from .moments import BUDGET, ONLY, PLAN, SERVE, STEP, of_stage
from .resolve import CONSTANT, Moment, Resolver, StageInfo, fold
from ..syntax.show import show

DECODE_FIRST = [ir.Cond(ir.Ctx("decoding"), ir.Num(0.0), ir.Num(1.0))]
ONCE = {"budget", "cost", "chunk", "granule", "memory", "serve", "iteration"}


def constant_guard(res: Resolver, value: ir.Expr, head: str, pos: Pos,
                   loop: bool = False) -> None:
    """A guard that folds to a constant other than 0 and 1 (Part 01 §7.4)."""
    k = fold(value)
    if k is None or k in (0.0, 1.0):
        return
    text = f"`{head} ({shortest(k)})`"
    if loop:
        raise res.err(f"{text}: the guard is not 0 or 1", pos)
    if 0 < k < 1:
        raise res.err(f"{text} is not a test: a guard is 0 or 1; a constant strictly "
                      f"between them is a probability. Write `branch with ({shortest(k)})`",
                      pos)
    raise res.err(f"{text} is not a test: a guard is 0 or 1", pos)


def pair(res: Resolver, owner: str, size: Optional[int], clause: str, ref: S.EName,
         kind: str) -> ir.Ref:
    """A declaration-level family reference (`admit via S`, `memory P`): a
    constant index names one member; otherwise the families pair member for
    member, or the reference is a single declaration (Part 03 §2.3)."""
    out = res.ref(ref, CONSTANT, {}, evaluate=ref.index is not None, kind=kind)
    if ref.index is not None:
        return out
    table = res.stages if kind == "stage" else res.pools
    theirs = table[ref.name].size
    if theirs is not None and theirs != 1 and theirs != (size or 1):
        raise res.err(f"`{owner}`: `{clause}` names a family of {theirs}, and `{owner}` is "
                      f"a family of {size or 1}: one for one, or one for all", out.pos)
    return out


def at_most_chunk(res: Resolver, value: ir.Expr, pos: Pos) -> ir.Expr:
    """The chunk of an engine's `each at most (c)` (Part 04 §11.2): a constant, a
    choice among constants, or `max(k, e)` with a constant k > 0; a value ≤ 0
    does not link, and `inf` (no cap) is chunk 0."""
    k = fold(value)
    if k is not None:
        if not k > 0:
            raise res.err(f"`each at most ({shortest(k)})`: a cap is above 0 (`inf` for "
                          "none)", pos)
        return ir.Num(0.0 if math.isinf(k) else k)
    if isinstance(value, ir.Cond):
        return ir.Cond(value.cond, at_most_chunk(res, value.then, pos),
                       at_most_chunk(res, value.other, pos))
    if isinstance(value, ir.Call) and value.fn == "max":
        for a in value.args:
            ka = fold(a)
            if ka is not None and ka > 0:
                return ir.Num(0.0) if math.isinf(ka) else value
    raise res.err("`each at most (…)` is a constant, a choice among constants (as `c ? 4 : "
                  "inf` with a schedule's `let c = …`), or `max(k, e)` with a constant "
                  "k > 0", pos)


def serves(stmts: list) -> bool:
    """Every path through an iteration body reaches a `serve` or an `admit`."""
    for t in stmts:
        if isinstance(t, (S.TServe, S.TAdmit)):
            return True
        if isinstance(t, S.TIf) and serves(t.then) and serves(t.other):
            return True
    return False


class StepLinker:
    """Declares the registers of step stages and lowers their clauses."""

    def __init__(self, res: Resolver):
        self.res = res

    # ------------------------------------------------------------ registers
    def declare_registers(self, st: S.IStage, info: StageInfo) -> None:
        """The `state` clauses of one step stage (after the attributes are known)."""
        res = self.res
        names: list[str] = []
        for c in st.clauses:
            if c.key != "state":
                continue
            head = f"stage `{st.name}`: `state {c.name}`"
            taken = ("a `let` constant" if c.name in res.constants else
                     "a session attribute" if c.name in res.attributes else
                     "a stage" if c.name in res.stages else
                     "a pool" if c.name in res.pools else
                     f"a register of stage `{res.registers[c.name][0]}`"
                     if c.name in res.registers else None)
            if taken:
                raise res.err(f"{head}: the name is taken by {taken}; a register's name "
                              "is its own", c.name_pos)
            if info.size is not None:
                raise res.err(f"{head} on a stage array: which member's register an "
                              "expression read would be a guess", c.name_pos)
            res.registers[c.name] = (st.name, c.name_pos)
            names.append(c.name)
        if names and not any(c.key == "iteration" for c in st.clauses):
            first = next(c for c in st.clauses if c.key == "state")
            raise res.err(f"stage `{st.name}`: `state {first.name}`: a register of a stage "
                          "without an `iteration` body, which nothing sets", first.name_pos)
        info.registers = tuple(names)

    # -------------------------------------------------------------- clauses
    def clauses(self, st: S.IStage) -> dict[str, S.StepClause]:
        """The clauses by key; a clause other than `state` is written once."""
        out: dict[str, S.StepClause] = {}
        for c in st.clauses:
            if c.key in out and c.key in ONCE:
                if c.key == "serve":
                    raise self.res.err(f"stage `{st.name}`: `serve` twice: a step stage "
                                       "serves its residents in one way", c.pos)
                raise self.res.err(f"stage `{st.name}`: `{c.key}` is written twice", c.pos,
                                   "write each clause of a step stage once")
            out.setdefault(c.key, c)
        if "cost" not in out:
            pos = st.kind_pos or st.name_pos
            raise ParseError(f"stage `{st.name}`: a step stage needs `cost`: the clock time "
                             "of one iteration", Pos(pos.file, pos.line, pos.col, 1),
                             source=self.res.sources.get(pos.file),
                             help="write `cost 1;` for the step clock")
        return out

    def lower(self, st: S.IStage, info: StageInfo) -> ir.Step:
        """The `ir.Step` of one step stage."""
        res = self.res
        c = self.clauses(st)
        regs = info.registers
        if st.engine is not None:
            self.check_device(st, info)

        def at(m: Moment) -> Moment:
            return of_stage(m, st.name, regs)

        step = ir.Step(cost=res.expr(c["cost"].value, at(STEP)))
        if "budget" in c:
            step.budget = res.expr(c["budget"].value, at(BUDGET))
        if "chunk" in c:
            step.chunk = self.chunk(c["chunk"], at(BUDGET))
        if "memory" in c:
            step.memory = pair(res, st.name, info.size, "memory", c["memory"].ref, "pool")
        serve = c.get("serve")
        if serve is not None and serve.exclusive:
            step.serve = "exclusive"
        elif serve is not None:
            step.only = res.expr(serve.only, at(ONLY)) if serve.only is not None else None
            step.keys = self.keys(serve.order, at(SERVE))
        step.registers = [(x.name, self.register_value(x)) for x in st.clauses
                          if x.key == "state"]
        if "granule" in c:
            step.granule = self.granule(st.name, c["granule"], step)
        if "iteration" in c:
            self.check_body(st.name, c["iteration"], serve)
            step.iteration = self.body(c["iteration"].stmts, st.name, at, step.keys)
        return step

    def check_device(self, st: S.IStage, info: StageInfo) -> None:
        """Member i of an engine family runs on member i of its device (§11.2)."""
        eng = st.engine
        assert eng is not None
        dsize = None
        if eng.device_size is not None:
            dsize = int(self.res.constant(eng.device_size, "a device's array size"))
        if (dsize or 1) != (info.size or 1):
            raise self.res.err(f"engine `{st.name}` has {info.size or 1} member(s) and its "
                               f"device `{eng.device}` {dsize or 1}: member i of an engine "
                               "runs on member i of its device", st.name_pos)

    def chunk(self, c: S.StepClause, m: Moment) -> ir.Expr:
        value = self.res.expr(c.value, m)
        return at_most_chunk(self.res, value, c.pos) if c.at_most else value

    def keys(self, order: Optional[S.SOrder], m: Moment) -> Optional[list[ir.Expr]]:
        """None for admission order, else the key expressions (§8.1–8.3)."""
        if order is None or order.kind == "admission":
            return None
        if order.kind == "first":
            return list(DECODE_FIRST)
        return [self.res.expr(k, m) for k in order.keys]

    def register_value(self, c: S.StepClause) -> float:
        value = self.res.constant(c.value, f"`state {c.name}`")
        if value != value:
            raise self.res.err(f"`state {c.name}` is NaN", c.name_pos)
        return value

    def granule(self, stage: str, c: S.StepClause, step: ir.Step) -> float:
        res = self.res
        g = res.constant(c.value, "`granule`")
        if not g > 0:
            raise res.err(f"stage `{stage}`: `granule {shortest(g)}`: a prefill takes a "
                          "multiple of the granule, so it is above 0 (`inf` for whole or "
                          "nothing)", c.pos)
        if step.serve == "exclusive":
            raise res.err(f"stage `{stage}`: `granule` with `serve exclusive prefill`: a "
                          "prefill the granule refuses would still block every decode, and "
                          "the engine would stop", c.pos)
        k = fold(step.chunk)
        if math.isinf(g) and k is not None and k > 0:
            raise res.err(f"stage `{stage}`: `granule inf` with `chunk {shortest(k)}`: a "
                          "prompt longer than the chunk would never get a token", c.pos)
        return g

    # ------------------------------------------------------- iteration body
    def check_body(self, stage: str, body: S.StepClause,
                   serve: Optional[S.StepClause]) -> None:
        res = self.res
        if serve is not None and serve.only is not None:
            raise res.err(f"stage `{stage}`: `serve only` and an `iteration` body: `serve "
                          "only (p) ORDER;` is the body `serve only (p) ORDER; admit only "
                          "(p) while (!preempted);`, so the two would be two bodies", body.pos,
                          "write `only` in the body")
        if serve is not None and serve.exclusive:
            raise res.err(f"stage `{stage}`: an `iteration` body with `serve exclusive "
                          "prefill`: the rule takes back decodes already chosen, which a "
                          "body cannot", body.pos)
        if not serves(body.stmts):
            raise res.err(f"stage `{stage}`: an `iteration` body with a path that neither "
                          "serves nor admits: an engine whose body takes that path "
                          "schedules nothing, and waits for an event that may never come",
                          body.pos)

    def body(self, stmts: list, stage: str, at, keys: Optional[list[ir.Expr]]) -> list:
        """The iteration statements at the Plan moment (`at` specialises a moment)."""
        res = self.res
        out: list[ir.IterStmt] = []
        for t in stmts:
            if isinstance(t, S.TServe):
                only = res.expr(t.only, at(ONLY)) if t.only is not None else None
                own = self.keys(t.order, at(SERVE)) if t.order is not None else keys
                out.append(ir.IServe(only, own))
            elif isinstance(t, S.TAdmit):
                only = res.expr(t.only, at(ONLY)) if t.only is not None else None
                cond = res.expr(t.cond, at(PLAN)) if t.cond is not None else None
                out.append(ir.IAdmit(only, cond))
            elif isinstance(t, S.TIf):
                guard = res.expr(t.guard, at(PLAN))
                constant_guard(res, guard, t.keyword, t.pos)
                out.append(ir.IIf(guard, self.body(t.then, stage, at, keys),
                                  self.body(t.other, stage, at, keys),
                                  text=f"`{t.keyword} ({show(t.guard)})`"))
            elif isinstance(t, S.TSet):
                owner = res.registers.get(t.name, (None,))[0]
                if owner != stage:
                    why = (f"the register is stage `{owner}`'s; a body sets its own stage's"
                           if owner else "not one of its registers; a body sets a register, "
                           f"not a session attribute (declare it with `state {t.name} = "
                           "…;`)")
                    raise res.err(f"stage `{stage}`: `set {t.name}` in its iteration: {why}",
                                  t.name_pos)
                out.append(ir.ISet(t.name, res.expr(t.value, at(PLAN))))
            else:  # pragma: no cover - `exclusive prefill` is lowered by engines.py
                raise TypeError(type(t).__name__)
        return out
