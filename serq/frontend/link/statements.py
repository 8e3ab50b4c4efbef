"""Linking session code (Part 02 §7, Part 04 §3–4; the pool statements of
Part 03 are in holds.py): syntax statements become kernel IR statements, with
the link-time checks of statements: attribute targets, constant guards,
counts and amounts (Part 01 §7.4), `cost` consumers (§4.5), multi-stage
runs, and the loop progress rule."""
from __future__ import annotations

from typing import Optional

from ...core import ir
from ...core.errors import LinkError, SerqError, shortest
from ...core.ir import Pos
from ..syntax import tree as S
from ..syntax.derive import ir_kind, link
from .holds import HoldFrame, HoldLinker
from .resolve import SESSION, Resolver, fold, whole
from .serving import find_stages
from .steps import constant_guard
from ..syntax.show import show

READ_ONLY = {"serial": "`serial` is the session's number, which the run assigns",
             "turn_no": "`turn_no` counts the session's turns, which the run assigns"}
TEST_OPS = {"<", "<=", ">", ">=", "==", "!=", "&&", "||"}


def is_test(e: S.Expr) -> bool:
    """An outermost comparison, `&&`, `||` or `!` (Part 06 §2)."""
    return (isinstance(e, S.EBinary) and e.op in TEST_OPS) or (
        isinstance(e, S.EUnary) and e.op == "!")


def target_error(res: Resolver, name: str, pos: Pos) -> Optional[LinkError]:
    """Why `name` may not be assigned as a session attribute, if it may not."""
    if name in READ_ONLY:
        return res.err(READ_ONLY[name], pos)
    if name in res.constants:
        return res.err(f"`{name}` is both a `let` constant and a session attribute", pos)
    return None


def passes_time(stmts: list) -> bool:
    """Every path through `stmts` lets time pass or ends (Part 02 §7.7)."""
    for s in stmts:
        if isinstance(s, ir.End):
            return True
        if isinstance(s, ir.Run) and fold(s.work) != 0:
            return True
        if isinstance(s, ir.If) and passes_time(s.then) and passes_time(s.other):
            return True
        if isinstance(s, (ir.Loop, ir.Hold)) and passes_time(s.body):
            return True
    return False


def add_via_notes(e: SerqError, via: tuple) -> None:
    """Add `note: in `f`, used at L:C` for each expansion the error lies in."""
    if e.pos is None:
        return
    at = (e.pos.file, e.pos.line, e.pos.col)
    for note, positions in via:
        if at in positions and note not in e.notes:
            e.notes.append(note)


class StatementLinker(HoldLinker):
    """Links the statements of session code at the Session moment.
    `leased` names the pools some hold leases (`release` may end a lease).
    Visits every statement kind of `tree.Stmt` with its `l_` method but those
    in `IGNORES` (tests/test_visitors.py)."""

    #: Kinds gone before linking: `f(args);` expanded, calls and `mark`
    #: rewritten by the queue rewrite, `request;` spliced by the shapes.
    IGNORES = frozenset({"SUse", "SCall", "SMarkTime", "SRequest"})

    def __init__(self, res: Resolver, leased: Optional[set[str]] = None):
        self.res = res
        self.multi_runs: list[tuple[ir.Run, S.SRun]] = []
        self.shared: set[str] = set()
        self.holds: list[HoldFrame] = []
        self.leased = leased or set()
        self.preemptible: set[str] = set()   # pools declared with `preempt`
        self.in_leg = False
        self.forks: list[ir.Fork] = []
        self.joins: list[ir.Join] = []

    def block(self, stmts: list) -> list[ir.Stmt]:
        return [self.stmt(s) for s in stmts]

    def stmt(self, s) -> ir.Stmt:
        try:
            m = getattr(self, "l_" + type(s).__name__, None)
            if m is None:  # a plain kind: to the IR node of its name (syntax/derive.py)
                return link(s, self.expr, self.block)
            return m(s)
        except SerqError as e:
            add_via_notes(e, s.via)
            raise

    @staticmethod
    def derives(cls: type) -> bool:
        """Whether a kind without an `l_` method is linked as a plain one."""
        return ir_kind(cls) is not None

    def expr(self, e: S.Expr) -> ir.Expr:
        self.check_cached(e)
        return self.res.expr(e, SESSION)

    # ---------------------------------------------------------- statements
    def l_SSet(self, s: S.SSet) -> ir.Stmt:
        err = target_error(self.res, s.name, s.name_pos)
        if err:
            raise err
        return ir.Set(s.name, self.expr(s.value), s.pos)

    def l_SObserve(self, s: S.SObserve) -> ir.Stmt:
        return ir.Observe(s.name, self.expr(s.value), is_test(s.value), s.pos)

    def l_STurn(self, s: S.STurn) -> ir.Stmt:
        self.not_in_leg("`turn`", s.pos)
        return ir.Turn(s.pos)

    def l_SEnd(self, s: S.SEnd) -> ir.Stmt:
        self.not_in_leg("`end`", s.pos)
        return ir.End(s.pos)

    # ------------------------------------------------------- concurrent legs
    def not_in_leg(self, what: str, pos: Pos) -> None:
        """A leg runs part of the request: no `turn`, `end`, fork or `join`."""
        if self.in_leg:
            raise self.res.err(f"a `fork`'s leg may not {what}: a leg runs part of the "
                               "request beside its session, which turns, ends, forks "
                               "and joins", pos,
                               "move the statement after the `fork { … }` block")

    def l_SFork(self, s: S.SFork) -> ir.Stmt:
        self.not_in_leg("fork", s.pos)
        for frame in self.holds:
            for name, _ in frame.pools:
                if name in self.preemptible:
                    raise self.res.err(
                        f"`fork` inside a hold of `{name}`, which may preempt it: a "
                        "preempted hold runs its body again from the top and would "
                        "send a second leg", s.pos,
                        "fork before the hold, or declare the pool without `preempt`")
        outer, self.holds, self.in_leg = self.holds, [], True
        try:
            body = self.block(s.body)
        finally:
            self.holds, self.in_leg = outer, False
        fork = ir.Fork(body, len(self.forks), s.pos)
        self.forks.append(fork)
        return fork

    def l_SJoin(self, s: S.SJoin) -> ir.Stmt:
        self.not_in_leg("`join`", s.pos)
        join = ir.Join(s.pos)
        self.joins.append(join)
        return join

    def check_legs(self) -> None:
        """A `join` needs a fork in the program, and a fork a `join`."""
        if self.joins and not self.forks:
            raise self.res.err("a `join` in a program that forks no leg waits for "
                               "nothing", self.joins[0].pos,
                               "remove the `join;`, or start a leg with `fork { … }`")
        if self.forks and not self.joins:
            raise self.res.err("a program that forks a leg and never joins: its session "
                               "would end while the leg runs", self.forks[0].pos,
                               "write `join;` where the session waits for its legs")

    def l_SMark(self, s: S.SMark) -> ir.Stmt:
        return ir.RequestBegin(s.pos) if s.kind == "begin" else ir.RequestEnd(s.pos)

    def guard(self, g: S.Expr, head: str, pos: Pos, loop: bool = False) -> ir.Expr:
        value = self.expr(g)
        constant_guard(self.res, value, head, pos, loop)
        return value

    def l_SIf(self, s: S.SIf) -> ir.Stmt:
        then, other = self.block(s.then), self.block(s.other)
        if s.with_:
            p = self.expr(s.guard)
            return ir.If(ir.Draw("bernoulli", [p]), then, other,
                         text=f"~bernoulli({show(s.guard)})", keyword="branch", pos=s.pos)
        guard = self.guard(s.guard, s.keyword, s.pos)
        return ir.If(guard, then, other, text=show(s.guard), keyword=s.keyword, pos=s.pos)

    def l_SLoop(self, s: S.SLoop) -> ir.Stmt:
        body = self.block(s.body)
        if not passes_time(body):
            raise self.res.err("a `loop` must let time pass on every pass through its "
                               "body: a `run`, a `hold` whose body does, or `end` on "
                               "every path", s.pos)
        return ir.Loop(body, s.pos)

    def l_SWhile(self, s: S.SWhile) -> ir.Stmt:
        guard = self.guard(s.guard, "while", s.pos, loop=True)
        body = self.block(s.body)
        if not passes_time(body):
            raise self.res.err("a `while` must let time pass on every pass through its "
                               "body: a `run`, a `hold` whose body does, or `end` on "
                               "every path", s.pos)
        return ir.While(guard, body, text=show(s.guard), pos=s.pos)

    def l_SChoose(self, s: S.SChoose) -> ir.Stmt:
        err = target_error(self.res, s.name, s.name_pos)
        if err:
            raise err
        count = self.expr(s.count)
        k = fold(count)
        if k is not None and not (whole(k) and k >= 0):
            raise self.res.err(f"`choose {s.name} in ({shortest(k)})`: the count is "
                               f"{shortest(k)}, not a whole number", s.pos)
        keys = [self.expr(k) for k in s.keys]
        text = f"choose {s.name} in {show(s.count)} by ({', '.join(map(show, s.keys))})"
        return ir.Choose(s.name, count, keys, text=text, pos=s.pos)

    def l_SRun(self, s: S.SRun) -> ir.Stmt:
        res = self.res
        first = s.stages[0]
        at = Pos(first.pos.file, first.pos.line, first.pos.col, len(first.name))
        refs = [res.ref(r, SESSION, {}) for r in s.stages]
        if len(s.stages) > 1:
            self.multi(s, at)
            if s.mode is not None or s.growing is not None:
                raise res.err("a run over several stages takes no mode and no `growing`",
                              at)
        growing = self.growing(s.growing) if s.growing is not None else None
        self.mode(s, at)
        mark = len(res.cost_marks)
        work = self.expr(s.work)
        res.consumer(mark, {r.name for r in s.stages}, s.pos)
        head = f"run {', '.join(show(r) for r in s.stages)}" + \
            (f" {s.mode}" if s.mode else "")
        res.amount(work, head, at)
        text = f"{head} ({show(s.work)})" + (f" growing {show(s.growing)}"
                                              if s.growing is not None else "")
        run = ir.Run(refs, work, s.mode, growing, text=text, pos=s.pos)
        if len(s.stages) > 1:
            self.multi_runs.append((run, s))
        return run

    def mode(self, s: S.SRun, at: Pos) -> None:
        """A mode is required on a step stage and forbidden elsewhere; `growing`
        belongs to a step stage (Part 04 §4)."""
        res, name = self.res, s.stages[0].name
        kind = res.stages[name].kind
        if kind == "step" and s.mode is None:
            raise res.err(f"`run {name} (…)`: a run on a step stage says what it computes: "
                          f"`run {name} prefill (T)` or `run {name} decode (T)`", at)
        if kind != "step" and s.mode is not None:
            raise res.err(f"`{s.mode}` is a mode of a step stage; `{name}` is a {kind} "
                          "stage", at)
        if kind != "step" and s.growing is not None:
            raise res.err(f"`growing` belongs to a run on a step stage; `{name}` is a "
                          f"{kind} stage", at)

    def l_SServing(self, s: S.SServing) -> ir.Stmt:
        """A serving form is the run on the stage it finds (Part 05 §1.2)."""
        stages = find_stages(self.res, s)
        mode = s.role if self.res.stages[stages[0].name].kind == "step" and \
            s.role in ("prefill", "decode") else None
        return self.l_SRun(S.SRun(stages, mode, s.work, s.growing, s.pos, via=s.via))

    def multi(self, s: S.SRun, at: Pos) -> None:
        """The rules of a run over several stages (Part 04 §3)."""
        seen: set[str] = set()
        for r in s.stages:
            info = self.res.stages[r.name]
            pos = Pos(r.pos.file, r.pos.line, r.pos.col, len(r.name))
            if r.name in seen:
                raise self.res.err(f"`{r.name}` appears twice in one run over several "
                                   "stages", pos)
            seen.add(r.name)
            if info.kind != "ps" or info.capacity is None or not info.capacity > 0:
                raise self.res.err(f"a run over several stages holds `ps` stages with a "
                                   f"constant positive capacity; `{r.name}` is not one", pos)
            self.shared.add(r.name)
