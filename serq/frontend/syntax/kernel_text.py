"""The program after the rewrites, as source text (`serq-simpy check --kernel`).

Renders the item list the front end hands to the linker: queues, pull
relations, calls, `mark`, `transfer` and `request Q;` already rewritten into
kernel declarations and statements (Part 05 §2.11), every serving form shown
as the `run` it resolves to (§1.3), engines on devices as the step stages
they became. Generated names contain a dot (`P.kv`, `D.nic.latency`), so the
text shows what a queue became but is not itself a program to load.
"""
from __future__ import annotations

from typing import Callable, Optional

from . import tree as S
from .derive import BLOCK, EXPR, OPT_EXPR, plain_fields
from .show import show

Resolve = Callable[[S.SServing], list]


def _size(e: Optional[S.Expr]) -> str:
    return f"[{show(e)}]" if e is not None else ""


def _order(o: Optional[S.SOrder]) -> str:
    if o is None:
        return ""
    if o.kind == "first":
        return " decode first"
    if o.kind == "by":
        return f" by ({', '.join(map(show, o.keys))})"
    return f" {o.kind}"


class KernelText:
    """Renders items; `resolve` gives the stages a serving form runs on.

    Visits every item kind of `tree.Item` (`i_`) and statement kind of
    `tree.Stmt` (`s_`) but those in `IGNORES` (tests/test_visitors.py)."""

    #: Kinds gone before the kernel text is rendered: definitions and their
    #: uses are expanded, `fn main` and `use` of libraries laid out, devices
    #: and engines rewritten into stages and pools, queues, the pull relation,
    #: calls and `mark` into kernel declarations and statements.
    IGNORES = frozenset({"IUse", "IDef", "IFnMain", "IDevice", "IEngine", "IQueue", "IPull",
                         "SUse", "SCall", "SMarkTime"})

    def __init__(self, resolve: Resolve, step_stages: set[str]):
        self.resolve = resolve
        self.step_stages = step_stages
        self.lines: list[str] = []

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def render(self, items: list) -> str:
        for item in items:
            m = getattr(self, "i_" + type(item).__name__, None)
            if m is not None:
                m(item)
        return "\n".join(self.lines) + "\n"

    # ---------------------------------------------------------------- items
    def i_ILet(self, i: S.ILet) -> None:
        self.emit(0, f"let {i.name} = {show(i.value)};")

    def i_IShare(self, i: S.IShare) -> None:
        self.emit(0, f"share {i.policy};")

    def i_IGauge(self, i: S.IGauge) -> None:
        self.emit(0, f"gauge {i.name} = {show(i.value)};")

    def i_IClaim(self, i: S.IClaim) -> None:
        self.emit(0, f"// claim {i.name} (unchanged by the rewrites)")

    def i_ISettings(self, i: S.ISettings) -> None:
        self.emit(0, "run { " + " ".join(f"{k} {show(v)};" for k, v, _ in i.settings) + " }")

    def i_IStage(self, i: S.IStage) -> None:
        head = f"stage {i.name}{_size(i.size)} : "
        if i.kind != "step":
            arg = f"({show(i.arg)})" if i.arg is not None else ""
            self.emit(0, f"{head}{i.kind}{arg};")
            return
        self.emit(0, head + "step {")
        for c in i.clauses:
            self.clause(c)
        self.emit(0, "}")

    def clause(self, c: S.StepClause) -> None:
        if c.key == "memory":
            self.emit(1, f"memory {show(c.ref)};")
        elif c.key == "state":
            self.emit(1, f"state {c.name} = {show(c.value)};")
        elif c.key == "serve":
            if c.exclusive:
                self.emit(1, "serve exclusive prefill;")
            else:
                only = f" only ({show(c.only)})" if c.only is not None else ""
                self.emit(1, f"serve{only}{_order(c.order)};")
        elif c.key == "iteration":
            self.emit(1, "iteration {")
            for t in c.stmts:
                self.it_stmt(t, 2)
            self.emit(1, "}")
        else:
            self.emit(1, f"{c.key} {show(c.value)};")

    def it_stmt(self, t, d: int) -> None:
        if isinstance(t, S.TServe):
            only = f" only ({show(t.only)})" if t.only is not None else ""
            self.emit(d, f"{t.keyword}{only}{_order(t.order)};")
        elif isinstance(t, S.TAdmit):
            only = f" only ({show(t.only)})" if t.only is not None else ""
            cond = f" while ({show(t.cond)})" if t.cond is not None else ""
            self.emit(d, f"{t.keyword}{only}{cond};")
        elif isinstance(t, S.TIf):
            self.emit(d, f"{t.keyword} ({show(t.guard)}) {{")
            for x in t.then:
                self.it_stmt(x, d + 1)
            if t.other:
                self.emit(d, "} else {")
                for x in t.other:
                    self.it_stmt(x, d + 1)
            self.emit(d, "}")
        elif isinstance(t, S.TSet):
            self.emit(d, f"set {t.name} = {show(t.value)};")
        else:
            self.emit(d, "exclusive prefill;")

    def i_IPool(self, i: S.IPool) -> None:
        opts = " ".join(self.option(o) for o in i.options)
        self.emit(0, f"pool {i.name}{_size(i.size)} {{ {opts} }}")

    def option(self, o: S.POption) -> str:
        if o.key in ("cap", "block"):
            return f"{o.key} {show(o.exprs[0])};"
        if o.key == "admit":
            return f"admit via {show(o.refs[0])};"
        if o.key == "reserve":
            return "reserve held;"
        if o.key == "spill":
            return (f"spill {show(o.refs[0])} via {show(o.refs[1])} ({show(o.exprs[0])}) "
                    f"when ({show(o.exprs[1])});")
        if o.form == "by":
            requeue = f" requeue {o.requeue}" if o.key == "preempt" and o.requeue != "head" \
                else ""
            return f"{o.key} by ({', '.join(map(show, o.exprs))}){requeue};"
        return f"{o.key} {o.form};"

    def i_IWorkload(self, i: S.IWorkload) -> None:
        self.emit(0, "workload {")
        for c in i.clauses:
            if isinstance(c, S.CArrive):
                arg = f"({show(c.arg)})" if c.arg is not None else ""
                self.emit(1, f"arrive {c.kind}{arg};")
            elif isinstance(c, S.CTrace):
                self.emit(1, f'trace "{c.path}"{" ordered" if c.ordered else ""};')
            elif isinstance(c, S.CHidden):
                self.emit(1, f"hidden {', '.join(n for n, _ in c.names)};")
            else:
                self.emit(1, f"{c.kind} {{")
                self.block(c.body, 2)
                self.emit(1, "}")
        self.emit(0, "}")

    def i_IBlock(self, i: S.IBlock) -> None:
        self.emit(0, f"{i.kind} {{")
        self.block(i.body, 1)
        self.emit(0, "}")

    # ----------------------------------------------------------- statements
    def block(self, stmts: list, d: int) -> None:
        for s in stmts:
            m = getattr(self, "s_" + type(s).__name__, None)
            if m is None:  # a plain kind with its `TEXT` (syntax/derive.py)
                self.emit(d, self.derived(s))
            else:
                m(s, d)

    @staticmethod
    def derived(s: S.SBase) -> str:
        """A plain statement's line: its node's `TEXT` with its fields
        (expressions shown as source)."""
        values = {}
        for name, role in plain_fields(type(s)):
            value = getattr(s, name)
            values[name] = show(value) if role in (EXPR, OPT_EXPR) and value is not None \
                else value
        return type(s).TEXT.format(**values)

    @staticmethod
    def derives(cls: type) -> bool:
        """Whether a kind without an `s_` method is printed from its `TEXT`."""
        fields = plain_fields(cls)
        return fields is not None and hasattr(cls, "TEXT") and \
            all(role != BLOCK for _, role in fields)

    def s_SSet(self, s: S.SSet, d: int) -> None:
        self.emit(d, f"set {s.name} = {show(s.value)};")

    def s_SObserve(self, s: S.SObserve, d: int) -> None:
        self.emit(d, f"observe {s.name} = {show(s.value)};")

    def s_STurn(self, s: S.STurn, d: int) -> None:
        self.emit(d, "turn;")

    def s_SEnd(self, s: S.SEnd, d: int) -> None:
        self.emit(d, "end;")

    def s_SMark(self, s: S.SMark, d: int) -> None:
        self.emit(d, f"// request {s.kind}s")

    def s_SRequest(self, s: S.SRequest, d: int) -> None:
        if s.route is None:
            self.emit(d, "request;")
            return
        self.emit(d, f"// gateway {s.gateway}: its route")
        self.block(s.route, d)
        self.emit(d, f"// end of {s.gateway}'s route")

    def nested(self, head: str, body: list, d: int, tail: str = "") -> None:
        self.emit(d, head + " {")
        self.block(body, d + 1)
        self.emit(d, "}" + tail)

    def s_SIf(self, s: S.SIf, d: int) -> None:
        head = f"branch with ({show(s.guard)})" if s.with_ else \
            f"{s.keyword} ({show(s.guard)})"
        self.emit(d, head + " {")
        self.block(s.then, d + 1)
        if s.other:
            self.emit(d, "} else {")
            self.block(s.other, d + 1)
        self.emit(d, "}")

    def s_SLoop(self, s: S.SLoop, d: int) -> None:
        self.nested("loop", s.body, d)

    def s_SFork(self, s: S.SFork, d: int) -> None:
        self.nested("fork", s.body, d)

    def s_SWhile(self, s: S.SWhile, d: int) -> None:
        self.nested(f"while ({show(s.guard)})", s.body, d)

    def s_SChoose(self, s: S.SChoose, d: int) -> None:
        self.emit(d, f"choose {s.name} in {show(s.count)} by "
                     f"({', '.join(map(show, s.keys))});")

    def run_text(self, stages: list, mode: Optional[str], work: S.Expr,
                 growing: Optional[S.EName]) -> str:
        text = f"run {', '.join(map(show, stages))}{' ' + mode if mode else ''} ({show(work)})"
        return text + (f" growing {show(growing)}" if growing is not None else "") + ";"

    def s_SRun(self, s: S.SRun, d: int) -> None:
        self.emit(d, self.run_text(s.stages, s.mode, s.work, s.growing))

    def s_SServing(self, s: S.SServing, d: int) -> None:
        stages = self.resolve(s)
        mode = s.role if stages[0].name in self.step_stages and \
            s.role in ("prefill", "decode") else None
        self.emit(d, self.run_text(stages, mode, s.work, s.growing))

    def s_SHold(self, s: S.SHold, d: int) -> None:
        pools = ", ".join(f"{show(p.ref)} ({show(p.units)})" +
                          (f" reserve ({show(p.reserve)})" if p.reserve is not None else "")
                          for p in s.pools)
        head = f"hold {pools}"
        if s.reuse is not None:
            head += f" reuse ({show(s.reuse)})"
        if s.bindings:
            head += " at admission (" + ", ".join(f"{b.name} = {show(b.value)}"
                                                  for b in s.bindings) + ")"
        tail = ""
        if s.cache is not None:
            tail += f" cache ({show(s.cache)})"
        if s.lease is not None:
            tail += f" lease {show(s.lease)} ({show(s.lease_time)})"
        self.nested(head, s.body, d, tail + ";" if tail else "")

    def s_SPoolStmt(self, s: S.SPoolStmt, d: int) -> None:
        amount = f" ({show(s.amount)})" if s.amount is not None else ""
        self.emit(d, f"{s.keyword} {show(s.ref)}{amount};")
