"""Compile session code into a Python generator function, once per run.

Each statement of the kernel IR becomes a few lines of Python; a `run`
becomes a `yield` of the stage's job event, so the session is a SimPy
process whose body is ordinary Python (spec Part 02 §7, §10). The `init`
block compiles into a plain function called at creation.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ...core import ir
from ...core.errors import SPIN_LIMIT, SimulationError, amount_error, shortest, unsettled_error
from .exprs import ExprCompiler, Namespace, Scope
from ..kernel.instant import requeue
from . import names as N



class RuntimeHooks:
    """Run-time services generated code calls (bound in the namespace)."""

    def __init__(self, env: Any):
        self.env = env

    def guard_error(self, value: float, text: str) -> None:
        hint = "; a draw is written `branch with (p)`" if text.startswith("`branch") else ""
        raise SimulationError(
            f"{text}: the guard is {shortest(value)}, not 0 or 1{hint}", self.env.now)

    def amount_error(self, value: float, text: str) -> None:
        raise amount_error(value, text, self.env.now)

    def count_error(self, value: float, text: str) -> None:
        raise SimulationError(
            f"{text}: the count is {shortest(value)}, not a whole number", self.env.now)

    def spin_error(self, session: Any) -> None:
        raise unsettled_error(session.serial, self.env.now,
                              "a `run` of zero work, or a `hold` admitted and released, "
                              "inside a loop")


def better_source(keys: list[str], best: list[str]) -> str:
    """`choose`'s test, inline: is the key tuple `keys` strictly smaller than
    `best` (Part 02 §7.8)? The first key that differs decides (`<`); a key
    that is neither smaller nor equal (NaN) makes it not smaller; equal
    tuples are not smaller. Source over the names of already evaluated keys,
    without building tuples (a fleet's routing evaluates it once a member)."""
    k, b = keys[-1], best[-1]
    src = f"{k} < {b}"
    for k, b in zip(reversed(keys[:-1]), reversed(best[:-1])):
        src = f"{k} < {b} or ({k} == {b} and ({src}))"
    return src


def _chosen_families(st: ir.Choose) -> tuple[list[tuple[str, str]], bool]:
    """The families `choose`'s keys index by the chosen attribute (each
    once), and whether the keys read that attribute in any other way."""
    indexed: list[tuple[str, str]] = []
    as_index = reads = 0
    for node in ir.walk(st.keys):
        if isinstance(node, ir.Ref) and node.index == ir.Attr(st.name):
            as_index += 1
            if (node.kind, node.name) not in indexed:
                indexed.append((node.kind, node.name))
        elif isinstance(node, ir.Attr) and node.name == st.name:
            reads += 1
    return indexed, reads > as_index


def _dedent(body: str) -> str:
    import textwrap
    return textwrap.dedent(body)


def _quoted(text: str) -> str:
    """A statement's text for messages, in backticks (Part 01 §8)."""
    return text if text.startswith("`") else f"`{text}`"


SPLIT_DEPTH = 40  # indentation levels before a nested block becomes a function of its own


def _at(pos: Optional[ir.Pos]) -> str:
    """`L:C` of a statement, for run-time messages."""
    return f"{pos.line}:{pos.col}" if pos is not None else "?"


class CodeWriter:
    def __init__(self, generator: bool = True, count: int = 0) -> None:
        self.lines: list[str] = []
        self.depth = 1
        self.count = count
        self.generator = generator
        self.marks: list[tuple[int, Any]] = []  # (line index, statement position)

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def fresh(self, base: str) -> str:
        """A new local name. Its `_` before the number keeps it apart from the
        globals `Namespace.bind` makes (`_st7`): a local of that name would
        shadow the global in the whole function."""
        self.count += 1
        return f"_{base}_{self.count}"


class SessionCompiler:
    """Turns statement lists into Python source over a `Namespace`.

    `observe_sink(name)` returns the Python names of the four append
    functions of a series; `turn_prologue(w, scope)` writes the trace load
    and the workload's turn block; `run_target(stmt, scope)` gives the
    expression whose value is the job event of a run."""

    def __init__(self, ns: Namespace, exprs: ExprCompiler, *, warmup: float,
                 attrs: dict[str, str], observe_sink: Callable[[str], tuple[str, ...]],
                 run_request: Callable[[ir.Run, Scope, "CodeWriter"], str],
                 turn_hook: Callable[["SessionCompiler", "CodeWriter"], None],
                 request_sink: Optional[str] = None,
                 hold_spec: Optional[Callable[[ir.Hold], Any]] = None):
        self.ns = ns
        self.exprs = exprs
        self.warmup = warmup
        self.attrs = attrs
        self.observe_sink = observe_sink
        self.run_request = run_request
        self.turn_hook = turn_hook
        self.request_sink = request_sink
        self.hold_spec = hold_spec
        self.tokens = False
        self.linemaps: dict[str, list[tuple[int, Any]]] = {}
        self.observe_all: Optional[Callable[[str], Optional[str]]] = None
        hooks = RuntimeHooks(ns.env)
        g = ns.globals
        g[N.GUARD_ERROR] = hooks.guard_error
        g[N.AMOUNT_ERROR] = hooks.amount_error
        g[N.COUNT_ERROR] = hooks.count_error
        g[N.SPIN_ERROR] = hooks.spin_error
        g[N.REQUEUE] = requeue

    # -- entry points --------------------------------------------------------
    def generator(self, name: str, body: list[ir.Stmt], scope: Scope,
                  prologue: list[str], epilogue: list[str]) -> Callable:
        """A generator function `name(s)` running `body` for session `s`."""
        w = CodeWriter()
        for line in prologue:
            w.emit(line)
        self.block(body, scope, w)
        for line in epilogue:
            w.emit(line)
        w.emit("return")
        w.emit("yield")  # makes it a generator even without runs
        src = f"def {name}(s):\n" + "\n".join(w.lines) + "\n"
        return self._define(src, name, w)

    def function(self, name: str, body: list[ir.Stmt], scope: Scope,
                 prologue: list[str]) -> Callable:
        """A plain function `name(s)` (the `init` block)."""
        w = CodeWriter(generator=False)
        for line in prologue:
            w.emit(line)
        self.block(body, scope, w)
        w.emit("return")
        src = f"def {name}(s):\n" + "\n".join(w.lines) + "\n"
        return self._define(src, name, w)

    # -- statements ------------------------------------------------------------
    def block(self, stmts: list[ir.Stmt], scope: Scope, w: CodeWriter) -> None:
        if not stmts:
            w.emit("pass")
        elif w.depth > SPLIT_DEPTH:
            self._split(stmts, scope, w)
            return
        for st in stmts:
            w.marks.append((len(w.lines), st.pos))
            getattr(self, "_" + type(st).__name__)(st, scope, w)

    def _define(self, src: str, name: str, w: CodeWriter) -> Callable:
        """Define generated code, keeping where each statement's lines start
        (the run-time diagnoses name the statement a session waits at)."""
        self.linemaps[f"<serq:{name}>"] = [(i + 2, pos) for i, pos in w.marks if pos]
        return self.ns.define(src, name)

    def position(self, frame: Any) -> Optional[str]:
        """`file:line:col` of the statement a frame of generated code is in."""
        marks = self.linemaps.get(frame.f_code.co_filename)
        if not marks:
            return None
        line = frame.f_lineno
        found = None
        for start, pos in marks:
            if start > line:
                break
            found = pos
        return None if found is None else f"{found.file}:{found.line}:{found.col}"

    def _split(self, stmts: list[ir.Stmt], scope: Scope, w: CodeWriter) -> None:
        """A block nested deeper than Python's indentation allows becomes a
        function of its own (a generator delegated to with `yield from`). It
        returns None where the session's code returns, else its locals, of
        which the request start `_rq` crosses back."""
        sub = CodeWriter(w.generator, w.count + 1000 * (w.depth + 1))
        for st in stmts:
            sub.marks.append((len(sub.lines), st.pos))
            getattr(self, "_" + type(st).__name__)(st, scope, sub)
        sub.emit("return locals()")
        if sub.generator:
            sub.emit("yield")
        w.count = max(w.count, sub.count)
        from .exprs import free_names
        body = "\n".join(sub.lines)
        params = free_names(_dedent(body), self.ns.globals)
        self.ns._count += 1
        name = f"_blk{self.ns._count}"
        self._define(f"def {name}({', '.join(params)}):\n{body}\n", name, sub)
        r = w.fresh("r")
        call = f"{name}({', '.join(params)})"
        w.emit(f"{r} = yield from {call}" if w.generator else f"{r} = {call}")
        w.emit(f"if {r} is None: return")
        if f"{N.REQUEST_START} = " in body:
            w.emit(f"if '{N.REQUEST_START}' in {r}: {N.REQUEST_START} = {r}['{N.REQUEST_START}']")

    def expr(self, e: ir.Expr, scope: Scope) -> str:
        return self.exprs.expr(e, scope)

    def _Set(self, st: ir.Set, scope: Scope, w: CodeWriter) -> None:
        w.emit(f"s.{self.attrs[st.name]} = {self.expr(st.value, scope)}")

    def _Observe(self, st: ir.Observe, scope: Scope, w: CodeWriter) -> None:
        vals, times, sessions, turns = self.observe_sink(st.name)
        v = w.fresh("v")
        w.emit(f"{v} = {self.expr(st.value, scope)}")
        every = self.observe_all(st.name) if self.observe_all else None
        if every:
            w.emit(f"{every}({v})")
        if self.warmup > 0:
            w.emit(f"if {N.ENV}.now >= {self.warmup!r}:")
            w.depth += 1
        w.emit(f"{vals}({v}); {times}({N.ENV}.now); {sessions}(s.sid); {turns}(s.turn_no)")
        if self.warmup > 0:
            w.depth -= 1

    def _Turn(self, st: ir.Turn, scope: Scope, w: CodeWriter) -> None:
        self.turn_hook(self, w)

    def _End(self, st: ir.End, scope: Scope, w: CodeWriter) -> None:
        w.emit(f"{N.END}(s)")
        w.emit("return")

    def _guard(self, guard: ir.Expr, text: str, scope: Scope, w: CodeWriter) -> str:
        g = w.fresh("g")
        w.emit(f"{g} = {self.expr(guard, scope)}")
        w.emit(f"if {g} != 1.0 and {g} != 0.0: {N.GUARD_ERROR}({g}, {text!r})")
        return g

    def _If(self, st: ir.If, scope: Scope, w: CodeWriter) -> None:
        text = _quoted(f"{st.keyword} ({st.text or '…'})")
        g = self._guard(st.guard, text, scope, w)
        w.emit(f"if {g} == 1.0:")
        w.depth += 1
        self.block(st.then, scope, w)
        w.depth -= 1
        if st.other:
            w.emit("else:")
            w.depth += 1
            self.block(st.other, scope, w)
            w.depth -= 1

    def _spin(self, w: CodeWriter) -> tuple[str, str]:
        t, k = w.fresh("t"), w.fresh("k")
        w.emit(f"{t} = -1.0; {k} = 0")
        return t, k

    def _spin_check(self, t: str, k: str, w: CodeWriter) -> None:
        w.emit(f"if {N.ENV}.now == {t}:")
        w.emit(f"    {k} += 1")
        w.emit(f"    if {k} > {SPIN_LIMIT}: {N.SPIN_ERROR}(s)")
        w.emit(f"else: {t} = {N.ENV}.now; {k} = 0")

    def _Loop(self, st: ir.Loop, scope: Scope, w: CodeWriter) -> None:
        t, k = self._spin(w)
        w.emit("while True:")
        w.depth += 1
        self._spin_check(t, k, w)
        self.block(st.body, scope, w)
        w.depth -= 1

    def _While(self, st: ir.While, scope: Scope, w: CodeWriter) -> None:
        t, k = self._spin(w)
        w.emit("while True:")
        w.depth += 1
        self._spin_check(t, k, w)
        g = self._guard(st.guard, _quoted(f"while ({st.text or '…'})"), scope, w)
        w.emit(f"if {g} == 0.0: break")
        self.block(st.body, scope, w)
        w.depth -= 1

    def _Choose(self, st: ir.Choose, scope: Scope, w: CodeWriter) -> None:
        """`choose` (Part 02 §7.8): every key of every member, in order; the
        first member, then a strictly smaller key tuple, wins. Where the keys
        read arrays at the chosen index (a router's `queued(reqs[j])`), the
        loop walks those arrays' members beside the index instead of looking
        each up by the attribute it sets (a fleet's routing reads R members
        a decision); a count beyond an array's size takes the plain loop,
        which reports the index."""
        slot = self.attrs[st.name]
        n, c, best = (w.fresh(x) for x in ("n", "c", "b"))
        keys = [w.fresh("key") for _ in st.keys]
        bks = [w.fresh("bk") for _ in st.keys]
        text = _quoted(st.text or f"choose {st.name} in …")
        w.emit(f"{n} = {self.expr(st.count, scope)}")
        w.emit(f"if not (0.0 <= {n} < {N.INF} and {n} == int({n})): {N.COUNT_ERROR}({n}, {text!r})")
        w.emit(f"{best} = 0")
        indexed, reads = _chosen_families(st)
        if indexed:
            members = [self.exprs.stages.families[f] for f in indexed]
            at = {(kind, name, st.name): w.fresh("m") for kind, name in indexed}
            lists = ", ".join(self.ns.bind(m, "ml") for m in members)
            w.emit(f"if {n} <= {min(len(m) for m in members)}:")
            w.depth += 1
            w.emit(f"for {c}, {', '.join(at.values())} in zip(range(int({n})), {lists}):")
            self.exprs.at_member.update(at)
            try:
                self._choose_member(st, slot, c, best, keys, bks, reads, scope, w)
            finally:
                for k in at:
                    del self.exprs.at_member[k]
            w.depth -= 1
            w.emit("else:")
            w.depth += 1
        w.emit(f"for {c} in range(int({n})):")
        self._choose_member(st, slot, c, best, keys, bks, True, scope, w)
        if indexed:
            w.depth -= 1
        w.emit(f"s.{slot} = float({best})")

    def _choose_member(self, st: ir.Choose, slot: str, c: str, best: str, keys: list[str],
                       bks: list[str], reads: bool, scope: Scope, w: CodeWriter) -> None:
        """The body of `choose`'s loop at member `c` (`reads`: the keys read
        the attribute itself, which then holds `c` as they are evaluated)."""
        w.depth += 1
        if reads:
            w.emit(f"s.{slot} = float({c})")
        for key, k in zip(keys, st.keys):
            w.emit(f"{key} = {self.expr(k, scope)}")
        w.emit(f"if {c} == 0 or {better_source(keys, bks)}:")
        w.emit(f"    {best} = {c}; {', '.join(bks)} = {', '.join(keys)}")
        w.depth -= 1

    def _Run(self, st: ir.Run, scope: Scope, w: CodeWriter) -> None:
        target = self.run_request(st, scope, w)
        v = w.fresh("w")
        w.emit(f"{v} = {self.expr(st.work, scope)}")
        w.emit(f"if not {v} >= 0.0: {N.AMOUNT_ERROR}({v}, {_quoted(st.text or 'run')!r})")
        w.emit(f"if {v} > 0.0: yield {target}(s, {v})")
        w.emit(f"else: yield {N.REQUEUE}({N.ENV})")

    def _pool(self, ref: ir.Ref, scope: Scope, w: CodeWriter) -> str:
        obj = self.exprs.ref(ref, scope)
        if ref.index is not None and not isinstance(ref.index, ir.Num):
            name = w.fresh("pl")
            w.emit(f"{name} = {obj}")
            return name
        return obj

    def _Hold(self, st: ir.Hold, scope: Scope, w: CodeWriter) -> None:
        spec = self.ns.bind(self.hold_spec(st), "hs")
        pools = [self._pool(hp.ref, scope, w) for hp in st.pools]
        lease = self._pool(st.lease.ref, scope, w) if st.lease is not None else "None"
        h, e = w.fresh("h"), w.fresh("e")
        w.emit(f"{h} = {N.HOLD_BEGIN}(s, {spec}, [{', '.join(pools)}], {lease})")
        w.emit(f"if {h} is None: return")
        w.emit("while True:")
        w.depth += 1
        w.emit("try:")
        w.depth += 1
        w.emit(f"if not {h}.admitted: yield {h}.event")
        self.block(st.body, scope, w)
        w.emit("break")
        w.depth -= 1
        w.emit(f"except {N.PREEMPTED} as {e}:")
        w.emit(f"    if {e}.frame is not {h}: raise")
        w.emit(f"    if {h}.rejected: return")
        w.depth -= 1
        w.emit(f"{N.HOLD_END}(s, {h})")

    def _Grow(self, st: ir.Grow, scope: Scope, w: CodeWriter) -> None:
        pool = self._pool(st.ref, scope, w)
        g = w.fresh("gr")
        text = _quoted(st.text or 'grow')
        w.emit(f"{g} = {N.GROW}(s, {pool}, {self.expr(st.amount, scope)}, {text!r})")
        w.emit(f"if {g} is not None: yield {g}")

    def _Load(self, st: ir.Load, scope: Scope, w: CodeWriter) -> None:
        pool = self._pool(st.ref, scope, w)
        text = _quoted(st.text or 'load')
        w.emit(f"{N.LOAD}(s, {pool}, {self.expr(st.amount, scope)}, {text!r})")

    def _Release(self, st: ir.Release, scope: Scope, w: CodeWriter) -> None:
        w.emit(f"{N.RELEASE}(s, {self._pool(st.ref, scope, w)})")

    def _Drop(self, st: ir.Drop, scope: Scope, w: CodeWriter) -> None:
        w.emit(f"{N.DROP}(s, {self._pool(st.ref, scope, w)})")

    def _Fork(self, st: ir.Fork, scope: Scope, w: CodeWriter) -> None:
        """A leg: its body is a generator of its own, started beside the session."""
        name = f"_leg{st.number}"
        self.generator(name, st.body, scope, prologue=[], epilogue=[f"{N.LEG_END}(s)"])
        w.emit(f"{N.FORK}(s, {name}, {_at(st.pos)!r})")

    def _Join(self, st: ir.Join, scope: Scope, w: CodeWriter) -> None:
        w.emit(f"if s.legs: yield {N.JOIN}(s, {_at(st.pos)!r})")

    def _RequestBegin(self, st: ir.RequestBegin, scope: Scope, w: CodeWriter) -> None:
        w.emit(f"{N.REQUEST_START} = {N.ENV}.now")
        w.emit("s.rq += 1")
        if self.tokens:
            w.emit(f"{N.REQUEST_BEGIN}(s, {N.REQUEST_START})")

    def _RequestEnd(self, st: ir.RequestEnd, scope: Scope, w: CodeWriter) -> None:
        if self.request_sink:
            w.emit(f"{self.request_sink}(s, {N.REQUEST_START})")
