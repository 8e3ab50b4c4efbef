"""Building the syntax of step stages, engines, devices, claims and the
serving forms (Part 04 §5, §9, §11; Part 05 §1; Part 06 §8) from the textX
model. A mixin of `build.Builder`: it uses the builder's `expr`, `pos`,
`e_NameRef`, `opt` and `error`.

The statements of an `iteration { … }` body and of an engine's `schedule`
share one grammar rule; each form's spelling is checked here, so that
`advance running` in a kernel body (or `serve` in a schedule) is a parse
error that names the right spelling.
"""
from __future__ import annotations

from typing import Any, Optional

from ...core.errors import ParseError
from ...core.ir import Pos
from ..syntax import tree as S
from .lexer import Token


def kind(obj: Any) -> str:
    return type(obj).__name__


class StepBuilder:
    """Builder methods for the constructs of Part 04 §5–§11 and claims."""

    def expr(self, o: Any) -> S.Expr:  # pragma: no cover - the builder's
        raise NotImplementedError

    def pos(self, obj: Any, skip: int = 0) -> Pos:  # pragma: no cover - the builder's
        raise NotImplementedError

    def e_NameRef(self, o: Any) -> S.EName:  # pragma: no cover - the builder's
        raise NotImplementedError

    def opt(self, o: Any) -> Optional[S.Expr]:  # pragma: no cover - the builder's
        raise NotImplementedError

    def error(self, message: str, pos: Pos, help: Optional[str] = None) -> ParseError:
        raise NotImplementedError  # pragma: no cover - the builder's

    def tok(self, offset: int, skip: int = 0) -> Token:  # pragma: no cover - the builder's
        raise NotImplementedError

    def tpos(self, tok: Token) -> Pos:  # pragma: no cover - the builder's
        raise NotImplementedError

    # ----------------------------------------------------------- step stage
    def step_clauses(self, o: Any) -> list[S.StepClause]:
        """The clauses of `step { … }`, in order (repeats are link errors)."""
        out = []
        for c in o.clauses:
            k = kind(c)
            clause = S.StepClause(c.key, self.pos(c))
            if k == "ValueClause":
                clause.value = self.expr(c.value)
            elif k == "MemoryClause":
                clause.ref = self.e_NameRef(c.ref)
            elif k == "StateClause":
                clause.name, clause.name_pos = c.ident, self.pos(c, 1)
                clause.value = self.expr(c.value)
            elif k == "ServeClause":
                clause.exclusive = bool(c.exclusive)
                clause.only = self.opt(c.only)
                clause.order = self.order(c.order)
            else:
                clause.stmts = self.it_stmts(c.stmts, engine=False)
            out.append(clause)
        return out

    def order(self, o: Any) -> Optional[S.SOrder]:
        if o is None:
            return None
        keys = [self.expr(k) for k in getattr(o, "keys", [])]
        return S.SOrder("first" if o.kind == "decode" else o.kind, keys, self.pos(o))

    def it_stmts(self, objs: list, engine: bool) -> list:
        return [self.it_stmt(o, engine) for o in objs]

    def spelling(self, o: Any, engine: bool, kernel: str, eng: str) -> None:
        """Refuse the other form's spelling of a statement."""
        if engine:
            raise self.error(f"`{kernel}` is a step stage's iteration statement; an "
                             f"engine's schedule writes `{eng}`", self.pos(o))
        raise self.error(f"`{eng}` is an engine's schedule statement; a step stage's "
                         f"`iteration` writes `{kernel}`", self.pos(o))

    def at_most(self, o: Any, engine: bool) -> Optional[S.Expr]:
        if o.atmost is None:
            return None
        if not engine:
            raise self.error("`each at most` belongs to an engine's schedule; a step "
                             "stage writes `chunk c;`", self.pos(o.atmost))
        return self.expr(o.atmost.value)

    def it_stmt(self, o: Any, engine: bool):
        k = kind(o)
        if k == "ItServe":
            if (o.kw == "advance") != engine:
                self.spelling(o, engine, "serve", "advance running")
            return S.TServe(o.kw, self.opt(o.only), self.order(o.order),
                            self.at_most(o, engine), self.pos(o))
        if k == "ItAdmit":
            if bool(o.waiting) != engine:
                self.spelling(o, engine, "admit", "admit waiting")
            return S.TAdmit("admit waiting" if o.waiting else "admit", self.opt(o.only),
                            self.opt(o.cond), self.at_most(o, engine), self.pos(o))
        if k == "ItExclusive":
            if not engine:
                raise self.error("`exclusive prefill` is an engine's schedule statement; "
                                 "a step stage writes the clause `serve exclusive prefill;`",
                                 self.pos(o))
            return S.TExclusive(self.at_most(o, engine), self.pos(o))
        if k in ("ItBranch", "ItIf"):
            chain = getattr(o, "chain", None)
            other = [self.it_stmt(chain, engine)] if chain is not None else \
                self.it_stmts(o.other, engine)
            return S.TIf(o.kw, self.expr(o.guard), self.it_stmts(o.then, engine), other,
                         self.pos(o))
        return S.TSet(o.ident, self.expr(o.value), self.pos(o), self.pos(o, 1))

    # --------------------------------------------------- devices and engines
    def dev_cap(self, c: Any) -> S.DevCap:
        return S.DevCap(c.ident, self.opt(getattr(c, "size", None)), self.expr(c.value),
                        self.pos(c))

    def i_DeviceDecl(self, o: Any) -> S.IDevice:
        caps = [self.dev_cap(c) for c in o.items if kind(c) == "DevCap"]
        resources = [S.DevResource(c.ident, list(c.params), self.expr(c.value), self.pos(c),
                                   [self.pos(c, 2 + 2 * i) for i in range(len(c.params))])
                     for c in o.items if kind(c) == "DevResource"]
        return S.IDevice(o.ident, self.opt(o.size), caps, resources, self.pos(o),
                         self.pos(o, 1))

    def i_EngineDecl(self, o: Any) -> S.IEngine:
        caps, clauses = [], []
        for c in o.items:
            k = kind(c)
            if k == "EngCap":
                caps.append(self.dev_cap(c))
                continue
            key = {"scheduler": "schedule", "worker": "execute"}.get(c.key, c.key)
            clause = S.StepClause(key, self.pos(c))
            if k == "EngState":
                clause.name, clause.name_pos = c.ident, self.pos(c, 1)
            if k == "EngSchedule":
                clause.lets = [S.SBinding(x.ident, self.expr(x.value), self.pos(x, 1))
                               for x in c.lets]
                clause.stmts = self.it_stmts(c.stmts, engine=True)
            else:
                clause.value = self.expr(c.value)
            clauses.append(clause)
        return S.IEngine(o.ident, self.opt(o.size), o.device, self.after(o, "on"),
                         caps, clauses, self.pos(o), self.pos(o, 1))

    def after(self, o: Any, word: str) -> Pos:
        """The position of the token after the first `word` of the object."""
        k = 0
        while self.tok(o._tx_position, k).text not in (word, ""):
            k += 1
        return self.tpos(self.tok(o._tx_position, k + 1))

    # --------------------------------------------------------------- claims
    def i_ClaimDecl(self, o: Any) -> S.IClaim:
        body = o.body
        if kind(body) == "ClaimEnd":
            kd, stage = "at_end", None
        else:
            kd, stage = f"{body.kind}_iteration", self.e_NameRef(body.stage)
        return S.IClaim(o.ident, kd, stage, self.expr(body.value), self.opt(o.given),
                        self.pos(o), self.pos(o, 1))

    # --------------------------------------------------------- serving forms
    def s_ServingStmt(self, o: Any) -> S.Stmt:
        growing = self.e_NameRef(o.growing) if o.growing is not None else None
        if growing is not None and o.role == "tool":
            raise self.error("`tool` takes no `growing` clause: a tool call waits outside "
                             "the engine and grows no hold",
                             self.tpos(self.tok(o.growing._tx_position, -1)),
                             "grow the hold in a `prefill` or `decode`")
        on = self.e_NameRef(o.on) if o.on is not None else None
        return S.SServing(o.role, self.opt(o.index), on, self.expr(o.work), growing,
                          self.pos(o))
