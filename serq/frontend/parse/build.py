"""Building the syntax tree (syntax.py) from a textX model.

Positions come from the textX objects' offsets, and, for names inside a
construct (the `x` of `set x = …`), from the lexer's tokens.
"""
from __future__ import annotations

import bisect
from typing import Any, Optional

from ...core.errors import ParseError
from ...core.ir import Pos
from ..syntax import tree as S
from ..syntax.derive import BLOCK, EXPR, OPT_EXPR, POS, plain_fields
from .lexer import Token, number_value
from .build_queue import QueueBuilder
from .build_step import StepBuilder
from ..syntax.hints import STATEMENT_KEYWORDS, did_you_mean
from .parser import parse_source

DISTRIBUTIONS = ("exp", "det", "uniform", "erlang", "h2", "bernoulli")


def kind(obj: Any) -> str:
    return type(obj).__name__


class Builder(StepBuilder, QueueBuilder):
    """Converts one parsed file's textX model into syntax nodes."""

    def __init__(self, text: str, file: str, tokens: list[Token]):
        self.text = text
        self.file = file
        self.tokens = tokens
        self.offsets = [t.offset for t in tokens]

    # ------------------------------------------------------------ positions
    def tok(self, offset: int, skip: int = 0) -> Token:
        i = bisect.bisect_left(self.offsets, offset) + skip
        return self.tokens[min(i, len(self.tokens) - 1)]

    def tpos(self, tok: Token) -> Pos:
        return Pos(self.file, tok.line, tok.col, max(len(tok.text), 1))

    def pos(self, obj: Any, skip: int = 0) -> Pos:
        """Position of the token `skip` places into the textX object."""
        return self.tpos(self.tok(obj._tx_position, skip))

    def error(self, message: str, pos: Pos, help: Optional[str] = None) -> ParseError:
        return ParseError(message, Pos(pos.file, pos.line, pos.col, 1),
                          help=help, source=self.text)

    # ---------------------------------------------------------- expressions
    def expr(self, o: Any) -> S.Expr:
        k = kind(o)
        method = getattr(self, "e_" + k)
        return method(o)

    def fold(self, o: Any, ops: list[str]) -> S.Expr:
        """A left-associative chain `operands[0] op operands[1] …`."""
        result = self.expr(o.operands[0])
        for op, operand in zip(ops, o.operands[1:]):
            result = S.EBinary(op, result, self.expr(operand), result.pos)
        return result

    def e_CondExpr(self, o: Any) -> S.Expr:
        cond = self.expr(o.cond)
        if o.then is None:
            return cond
        return S.ECond(cond, self.expr(o.then), self.expr(o.other), cond.pos)

    def e_OrExpr(self, o: Any) -> S.Expr:
        return self.fold(o, ["||"] * (len(o.operands) - 1))

    def e_AndExpr(self, o: Any) -> S.Expr:
        return self.fold(o, ["&&"] * (len(o.operands) - 1))

    def e_CmpExpr(self, o: Any) -> S.Expr:
        left = self.expr(o.left)
        if not o.op:
            return left
        return S.EBinary(o.op, left, self.expr(o.right), left.pos)

    def e_AddExpr(self, o: Any) -> S.Expr:
        return self.fold(o, list(o.ops))

    e_MulExpr = e_AddExpr

    def e_UnaryExpr(self, o: Any) -> S.Expr:
        if o.power is not None:
            return self.expr(o.power)
        return S.EUnary(o.op, self.expr(o.operand), self.pos(o))

    def e_PowerExpr(self, o: Any) -> S.Expr:
        base = self.expr(o.base)
        if o.exponent is None:
            return base
        return S.EBinary("^", base, self.expr(o.exponent), base.pos)

    def e_NumLit(self, o: Any) -> S.Expr:
        value = number_value(o.text)
        return S.ENum(float(value if value is not None else "nan"), self.pos(o))

    def e_ParenExpr(self, o: Any) -> S.Expr:
        return self.expr(o.inner)

    def e_DrawExpr(self, o: Any) -> S.Expr:
        name = self.pos(o, 1)  # errors mark the distribution's name (Part 01 §8.2)
        if o.dist not in DISTRIBUTIONS:
            raise self.error(f"unknown distribution `{o.dist}`", name,
                             help="the distributions are " + ", ".join(DISTRIBUTIONS))
        return S.EDraw(o.dist, [self.expr(a) for a in o.args],
                       Pos(self.file, name.line, name.col, len(o.dist)))

    def e_AggExpr(self, o: Any) -> S.Expr:
        return S.EAgg(o.op, o.var, self.expr(o.count), self.expr(o.body),
                      self.pos(o), self.pos(o, 1))

    def e_CallExpr(self, o: Any) -> S.Expr:
        return S.ECall(o.fn, [self.expr(a) for a in o.args], self.pos(o))

    def e_NameRef(self, o: Any) -> S.EName:
        index = self.expr(o.index) if o.index is not None else None
        return S.EName(o.ident, self.pos(o), index, tuple(getattr(o, "fields", ())))

    e_ResRef = e_NameRef

    # ------------------------------------------------------------ statements
    def block(self, o: Any) -> list[S.Stmt]:
        return [self.stmt(s) for s in o.stmts]

    def stmt(self, o: Any) -> S.Stmt:
        build = getattr(self, "s_" + kind(o), None)
        return build(o) if build is not None else self.derived(o)

    def derived(self, o: Any) -> S.Stmt:
        """The node `SX` of a plain statement kind from the rule `XStmt`'s
        attributes of the same names (syntax/derive.py)."""
        cls = getattr(S, "S" + kind(o).removesuffix("Stmt"), None)
        fields = plain_fields(cls) if isinstance(cls, type) else None
        if fields is None:
            raise TypeError(f"no syntax node is derived from the rule {kind(o)}: "
                            f"write Builder.s_{kind(o)} (docs/add-a-statement.md)")
        kwargs = {}
        for name, role in fields:
            value = self.pos(o) if role == POS else getattr(o, name)
            if role == EXPR or (role == OPT_EXPR and value is not None):
                value = self.expr(value)
            elif role == BLOCK:
                value = self.block(value)
            kwargs[name] = value
        return cls(**kwargs)

    def s_SetStmt(self, o: Any) -> S.Stmt:
        return S.SSet(o.ident, self.expr(o.value), self.pos(o), self.pos(o, 1))

    def s_ObserveStmt(self, o: Any) -> S.Stmt:
        return S.SObserve(o.ident, self.expr(o.value), self.pos(o), self.pos(o, 1))

    def s_TurnStmt(self, o: Any) -> S.Stmt:
        return S.STurn(self.pos(o))

    def s_RequestStmt(self, o: Any) -> S.Stmt:
        return S.SRequest(o.gateway or None, self.pos(o))

    def s_EndStmt(self, o: Any) -> S.Stmt:
        return S.SEnd(self.pos(o))

    def s_BranchStmt(self, o: Any) -> S.Stmt:
        other = self.block(o.other) if o.other is not None else []
        return S.SIf("branch", self.expr(o.guard), self.block(o.then), other,
                     self.pos(o), bool(o.draw))

    def s_IfStmt(self, o: Any) -> S.Stmt:
        if o.chain is not None:
            other = [self.stmt(o.chain)]
        elif o.other is not None:
            other = self.block(o.other)
        else:
            other = []
        return S.SIf("if", self.expr(o.guard), self.block(o.then), other, self.pos(o))

    def s_WhileStmt(self, o: Any) -> S.Stmt:
        return S.SWhile(self.expr(o.guard), self.block(o.body), self.pos(o))

    def s_ChooseStmt(self, o: Any) -> S.Stmt:
        return S.SChoose(o.ident, self.expr(o.count), [self.expr(k) for k in o.keys],
                         self.pos(o), self.pos(o, 1))

    def s_RunStmt(self, o: Any) -> S.Stmt:
        growing = self.e_NameRef(o.growing) if o.growing is not None else None
        return S.SRun([self.e_NameRef(s) for s in o.stages], o.mode or None,
                      self.expr(o.work), growing, self.pos(o))

    def opt(self, o: Any) -> Optional[S.Expr]:
        return self.expr(o) if o is not None else None

    def s_HoldStmt(self, o: Any) -> S.Stmt:
        pools = [S.SHoldPool(self.e_NameRef(h.ref), self.expr(h.units), self.opt(h.reserve))
                 for h in o.pools]
        bindings = [S.SBinding(b.ident, self.expr(b.value), self.pos(b)) for b in o.bindings]
        lease = self.e_NameRef(o.lease) if o.lease is not None else None
        return S.SHold(pools, self.opt(o.reuse), bindings, self.block(o.body),
                       self.opt(o.cache), lease, self.opt(o.duration), self.pos(o))

    def pool_stmt(self, o: Any) -> S.Stmt:
        amount = getattr(o, "amount", None)
        return S.SPoolStmt(self.tok(o._tx_position).text, self.e_NameRef(o.ref),
                           self.opt(amount), self.pos(o))

    s_GrowStmt = s_DropStmt = s_ReleaseStmt = s_LoadStmt = pool_stmt

    def s_DefUseStmt(self, o: Any) -> S.Stmt:
        return S.SUse(o.fn, [self.expr(a) for a in o.args], self.pos(o))

    def s_UnknownStmt(self, o: Any) -> S.Stmt:
        raise self.error(f"unknown statement `{o.word}`", self.pos(o),
                         did_you_mean(o.word, STATEMENT_KEYWORDS))

    # ----------------------------------------------------------------- items
    def items(self, objs: list[Any], in_main: bool = False) -> list:
        return [self.item(o, in_main) for o in objs]

    def item(self, o: Any, in_main: bool = False):
        k = kind(o)
        if k == "FnMain":
            idx = bisect.bisect_left(self.offsets, o._tx_position_end) - (2 if o.semi else 1)
            close = self.tokens[max(idx, 0)]
            semi = self.tpos(self.tokens[idx + 1]) if o.semi else None
            return S.IFnMain(o.fname, self.items(o.items, True), semi,
                             self.pos(o), self.pos(o, 1), self.tpos(close))
        if k == "LetItem":
            return self.i_let(o, in_main)
        return getattr(self, "i_" + k)(o)

    def i_UseItem(self, o: Any):
        return S.IUse(o.path[1:-1], self.pos(o, 1))

    def i_let(self, o: Any, in_main: bool):
        if o.input is not None:
            inp = o.input
            return S.ILet(o.ident, self.expr(inp.default), self.pos(o), self.pos(o, 1),
                          ext=inp.ext[1:-1], ext_pos=self.pos(inp, 4),
                          args_pos=self.pos(inp), in_main=in_main)
        return S.ILet(o.ident, self.expr(o.value), self.pos(o), self.pos(o, 1),
                      in_main=in_main)

    def i_DefItem(self, o: Any):
        eq = self.tok(o._tx_position, 4 + max(2 * len(o.params) - 1, 0)).text == "="
        stmts = [self.stmt(s) for s in o.stmts]
        if o.tail is not None and stmts:
            raise self.error("a definition contains either one expression without "
                             "a semicolon or statements", self.pos(o.tail))
        value = o.value if o.value is not None else o.tail
        expr = self.expr(value) if value is not None else None
        return S.IDef(o.ident, list(o.params), expr, stmts, self.pos(o),
                      self.pos(o, 1), eq, [self.pos(o, 3 + 2 * i) for i in range(len(o.params))])

    def i_StageDecl(self, o: Any):
        self.refuse_latency(o)
        size = self.expr(o.size) if o.size is not None else None
        k = kind(o.kind)
        if k == "StepKind":
            return S.IStage(o.ident, size, "step", None, self.pos(o), self.pos(o, 1),
                            self.step_clauses(o.kind), self.pos(o.kind))
        if k == "FifoKind":
            kd, arg = "fifo", (self.expr(o.kind.servers) if o.kind.servers is not None else None)
        elif k == "PsKind":
            kd, arg = "ps", self.expr(o.kind.capacity)
        else:
            kd, arg = "delay", None
        return S.IStage(o.ident, size, kd, arg, self.pos(o), self.pos(o, 1))

    def i_PoolDecl(self, o: Any):
        size = self.opt(o.size)
        pool = S.IPool(o.ident, size, [self.pool_option(x) for x in o.options],
                       self.pos(o), self.pos(o, 1))
        if o.on:
            pool.on, pool.on_device, pool.on_pos = o.on, o.device or None, self.after(o, "on")
        return pool

    def pool_option(self, o: Any) -> S.POption:
        k = kind(o)
        opt = S.POption(o.key, self.pos(o), getattr(o, "form", "") or "")
        if k in ("CapOpt", "BlockOpt"):
            opt.exprs = [self.expr(o.value)]
        elif k in ("EvictOpt", "PreemptOpt", "QueueOpt"):
            opt.exprs = [self.expr(x) for x in o.keys]
            opt.requeue = getattr(o, "requeue", "") or "head"
        elif k == "AdmitViaOpt":
            opt.refs = [self.e_NameRef(o.stage)]
        elif k == "SpillOpt":
            opt.refs = [self.e_NameRef(o.tier), self.e_NameRef(o.link)]
            opt.exprs = [self.expr(o.work), self.expr(o.when)]
        return opt

    def i_ShareDecl(self, o: Any):
        return S.IShare(o.policy, self.pos(o))

    def i_WorkloadBlock(self, o: Any):
        clauses = []
        for c in o.clauses:
            k = kind(c)
            if k == "ArriveClause":
                arg = self.expr(c.arrival.arg) if c.arrival.arg is not None else None
                clauses.append(S.CArrive(c.arrival.kind, arg, self.pos(c, 1), self.pos(c)))
            elif k == "TraceClause":
                clauses.append(S.CTrace(c.path[1:-1], bool(c.ordered), self.pos(c),
                                        self.pos(c, 1)))
            elif k == "HiddenClause":
                names = [(n, self.pos(c, 1 + 2 * i)) for i, n in enumerate(c.names)]
                clauses.append(S.CHidden(names, self.pos(c)))
            else:
                word = {"InitClause": "init", "TurnClause": "turn", "WlSession": "session"}[k]
                clauses.append(S.CBlock(word, self.block(c.body), self.pos(c)))
        return S.IWorkload(clauses, self.pos(o))

    def i_SessionBlock(self, o: Any):
        return S.IBlock("session", self.block(o.body), self.pos(o))

    def i_ServerBlock(self, o: Any):
        return S.IBlock("server", self.block(o.body), self.pos(o))

    def i_RunSettings(self, o: Any):
        return S.ISettings([(s.key, self.expr(s.value), self.pos(s)) for s in o.settings],
                           self.pos(o))

    def i_GaugeDecl(self, o: Any):
        return S.IGauge(o.ident, self.expr(o.value), self.pos(o), self.pos(o, 1))


def parse_file_text(text: str, label: str) -> S.SourceFile:
    """Parse a program or library text into a SourceFile (items not yet checked)."""
    model, tokens = parse_source(text, label)
    b = Builder(text, label, tokens)
    return S.SourceFile(label, text, b.items(getattr(model, "items", [])))


def parse_expression(text: str, label: str) -> S.Expr:
    """Parse the text of an override (`--set`/`--def` value) as an expression."""
    model, tokens = parse_source(text, label, root="override")
    return Builder(text, label, tokens).expr(model.value)
