"""Queue statements rewritten into kernel statements (Part 05 §2.4–2.8, §2.11
steps 4–7): `request Q;`, calls `Q[i].verb (…) from … to …`, entry bodies
with their own names, parameters, `self`, locals, `mark` and `from` names
mapped, dotted reads `Q.x` / `Q[i].p`, and the three rules with their
errors. `transfer` forms are handed to transfer.py.

The rewriter walks a block in a `Context`: the top level (server, session,
workload blocks) or the body of one entry as called (queue, member index,
arguments, source). Arguments and indexes are mapped in the caller's
context before they are substituted, so the callee never re-reads them.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ...core.errors import ParseError
from ...core.ir import Pos
from ..syntax import tree as S
from ..syntax.derive import plain_fields, rebuild
from ..syntax.names import CONTEXT, ENGINE_LISTS, OBSERVABLES
from .calls import expand_call
from .context import Context
from .queues import Queue, QueueDecls
from .transfer import Transfers
from ..syntax.show import show
from ..syntax.walk import clone, nodes, size, stmts_in

MAX_STATEMENTS = 100_000
ALWAYS = {"now", "inf", "cached", "computed"}


class Rewriter:
    """Rewrites the code blocks of a program whose queues are `decls`.

    Visits every statement kind of `syntax.tree.Stmt` with its `s_` method
    but those in `IGNORES` (tests/test_visitors.py checks it)."""

    #: Statement kinds gone before this pass: `f(args);` is expanded (expand.py).
    IGNORES = frozenset({"SUse"})

    def __init__(self, decls: QueueDecls, items: list, sources: dict):
        self.d = decls
        self.sources = sources
        self.lets = {i.name for i in items if isinstance(i, S.ILet)}
        self.stages = {i.name for i in items if isinstance(i, (S.IStage, S.IEngine))}
        self.pools = {i.name for i in items if isinstance(i, S.IPool)}
        self.hidden: set[str] = set()
        for i in items:
            if isinstance(i, S.IWorkload):
                for c in i.clauses:
                    if isinstance(c, S.CHidden):
                        self.hidden.update(n for n, _ in c.names)
        self.count = 0
        self.binds: set[str] = set()   # the bindings of the hold whose header is read
        self.transfers = Transfers(self)

    def err(self, message: str, pos: Pos, help: Optional[str] = None,
            ctx: Optional[Context] = None) -> ParseError:
        notes = [note for note, _ in reversed(ctx.via)] if ctx is not None else []
        return ParseError(message, Pos(pos.file, pos.line, pos.col, 1), help=help,
                          notes=notes, source=self.sources.get(pos.file))

    # ------------------------------------------------------------ blocks
    def block(self, stmts: list, ctx: Context, where: str = "server") -> list:
        out: list = []
        for s in stmts:
            out.extend(self.stmt(s, ctx, where))
        return out

    def stmt(self, s, ctx: Context, where: str) -> list:
        m = getattr(self, "s_" + type(s).__name__, None)
        if m is None:  # a plain kind: its expressions and blocks (syntax/derive.py)
            return [rebuild(s, lambda e: self.expr(e, ctx),
                            lambda b: self.block(b, ctx, where))]
        return m(s, ctx, where)

    @staticmethod
    def derives(cls: type) -> bool:
        """Whether a kind without an `s_` method is rewritten as a plain one."""
        return plain_fields(cls) is not None

    def s_SSet(self, s: S.SSet, ctx: Context, where: str) -> list:
        return [dataclasses.replace(s, name=self.assign(s.name, s.name_pos, ctx),
                                    value=self.expr(s.value, ctx))]

    def s_SObserve(self, s: S.SObserve, ctx: Context, where: str) -> list:
        return [dataclasses.replace(s, value=self.expr(s.value, ctx))]

    def s_STurn(self, s: S.STurn, ctx: Context, where: str) -> list:
        if ctx.queue is not None:
            raise self.err("`turn` is the workload's: an entry does not start turns",
                           s.pos, ctx=ctx)
        return [s]

    def s_SEnd(self, s: S.SEnd, ctx: Context, where: str) -> list:
        if ctx.queue is not None:
            raise self.err("`end` is the workload's: an entry does not end the session",
                           s.pos, ctx=ctx)
        return [s]

    def s_SRequest(self, s: S.SRequest, ctx: Context, where: str) -> list:
        if ctx.queue is not None:
            raise self.err("an entry does not request: `request` is the workload "
                           "session's", s.pos, ctx=ctx)
        if s.gateway is None:
            return [s]
        if where == "server":
            raise self.err("a server does not request itself: `request` is the "
                           "workload session's", s.pos)
        if where != "session":
            raise self.err(f"`request {s.gateway};` is the statement of the session inside "
                           "`workload`", s.pos)
        q = self.d.queues.get(s.gateway)
        if q is None:
            raise self.err(f"no queue `{s.gateway}` is declared", s.pos,
                           "declare `queue NAME : gateway { route { … } }`")
        if not q.gateway:
            raise self.err(f"queue `{s.gateway}` does not play `gateway`", s.pos,
                           f"declare `queue {s.gateway} : gateway` with a `route`")
        entry = q.entries[("route", False)]
        inner = Context(q, entry, None, {}, None, (("route", q.name, False),),
                        (self.note(q.name, "route", s.pos, entry, "requested"),))
        body = self.block(clone(entry.body), inner)
        for st in stmts_in(body):
            st.via = st.via + inner.via
        return [dataclasses.replace(s, route=body)]

    def s_SChoose(self, s: S.SChoose, ctx: Context, where: str) -> list:
        return [dataclasses.replace(s, name=self.assign(s.name, s.name_pos, ctx),
                                    count=self.expr(s.count, ctx),
                                    keys=[self.expr(k, ctx) for k in s.keys])]

    def s_SRun(self, s: S.SRun, ctx: Context, where: str) -> list:
        if not s.stages:
            q = ctx.queue
            if q is None:
                raise self.err("`run (…)` without a stage runs a queue's own stage: "
                               "name the stage", s.pos, "write `run STAGE (…);`")
            if q.decl.serve is None:
                raise self.err(f"`run (…)`: queue `{q.name}` has no `serve`", s.pos,
                               f"give queue `{q.name}` a `serve …;`, or name the stage",
                               ctx=ctx)
            stages = [S.EName(q.name, s.pos, clone(ctx.index))]
        else:
            stages = [self.stage_ref(r, ctx) for r in s.stages]
        growing = self.pool_ref(s.growing, ctx, "grows") if s.growing is not None else None
        return [dataclasses.replace(s, stages=stages, work=self.expr(s.work, ctx),
                                    growing=growing)]

    def s_SServing(self, s: S.SServing, ctx: Context, where: str) -> list:
        if s.role == "transfer":
            return self.transfers.rewrite(s, ctx)
        return [self.serving(s, ctx)]

    def serving(self, s: S.SServing, ctx: Context) -> S.SServing:
        """A prefill/decode/tool form (or the run of a transfer) with its names
        mapped; inside an entry it resolves against the queue's own stage."""
        entry = None
        if ctx.queue is not None:
            q = ctx.queue
            own = S.EName(q.name, s.pos, clone(ctx.index)) if q.decl.serve else None
            entry = S.EntryContext(q.name, own, q.stage_kind() == "step")
        return dataclasses.replace(
            s, index=self.expr(s.index, ctx, "index") if s.index is not None else None,
            on=self.stage_ref(s.on, ctx) if s.on is not None else None,
            ons=[self.stage_ref(r, ctx) for r in s.ons],
            work=self.expr(s.work, ctx),
            growing=self.pool_ref(s.growing, ctx, "grows") if s.growing else None,
            entry=entry)

    def s_SMarkTime(self, s: S.SMarkTime, ctx: Context, where: str) -> list:
        if ctx.queue is None:
            raise self.err("`mark` is a queue entry's: it sets the queue's attribute to "
                           "the time", s.pos, f"write `set {s.name} = now;`")
        name = s.name if ctx.gateway else f"{ctx.queue.name}.{s.name}"
        return [S.SSet(name, S.EName("now", s.pos), s.pos, s.name_pos, via=s.via)]

    def s_SHold(self, s: S.SHold, ctx: Context, where: str) -> list:
        outer, self.binds = self.binds, {b.name for b in s.bindings}
        try:
            return self.hold(s, ctx)
        finally:
            self.binds = outer

    def hold(self, s: S.SHold, ctx: Context) -> list:
        pools = [S.SHoldPool(self.pool_ref(h.ref, ctx, "holds"),
                             self.expr(h.units, ctx, "header"),
                             self.expr(h.reserve, ctx, "header") if h.reserve else None)
                 for h in s.pools]
        bindings = [S.SBinding(self.local(b.name, ctx), self.expr(b.value, ctx, "header"),
                               b.pos) for b in s.bindings]
        return [dataclasses.replace(
            s, pools=pools, bindings=bindings,
            reuse=self.expr(s.reuse, ctx, "header") if s.reuse is not None else None,
            body=self.block(s.body, ctx),
            cache=self.expr(s.cache, ctx) if s.cache is not None else None,
            lease=self.pool_ref(s.lease, ctx, "leases") if s.lease is not None else None,
            lease_time=self.expr(s.lease_time, ctx) if s.lease_time is not None else None)]

    def s_SPoolStmt(self, s: S.SPoolStmt, ctx: Context, where: str) -> list:
        verb = {"grow": "grows", "drop": "drops", "load": "loads",
                "release": "releases"}[s.keyword]
        return [dataclasses.replace(
            s, ref=self.pool_ref(s.ref, ctx, verb),
            amount=self.expr(s.amount, ctx) if s.amount is not None else None)]

    def s_SCall(self, s: S.SCall, ctx: Context, where: str) -> list:
        return expand_call(self, s, ctx)

    # ------------------------------------------------------------- names
    def note(self, queue: str, verb: str, pos: Pos, entry: S.QEntry,
             how: str = "called") -> tuple:
        """The `via` entry of statements expanded from `entry` (Part 01 §8's
        `note: in …` lines): the note and the positions of the body."""
        positions = frozenset((p.file, p.line, p.col) for n in nodes(entry.body)
                              for a in ("pos", "name_pos", "var_pos")
                              for p in [getattr(n, a, None)] if isinstance(p, Pos))
        return (f"in `{queue}.{verb}`, {how} at {pos.line}:{pos.col}", positions)

    def entry_names(self, ctx: Context) -> set[str]:
        """Names an entry reads as its own (aggregates may not rebind them)."""
        if ctx.entry is None:
            return set()
        names = set(ctx.params) | ctx.queue.sets | ctx.queue.marks
        if ctx.entry.src:
            names.add(ctx.entry.src)
        if ctx.queue.family:
            names.add("self")
        return names

    def local(self, name: str, ctx: Context) -> str:
        """The attribute an entry's local `name` is (`Q.name`; a route keeps it)."""
        if ctx.queue is None or ctx.gateway:
            return name
        return f"{ctx.queue.name}.{name}"

    def assign(self, name: str, pos: Pos, ctx: Context) -> str:
        if ctx.queue is not None and not ctx.gateway:
            if name in ctx.params:
                raise self.err(f"the entry sets its parameter `{name}`", pos,
                               "set another name", ctx=ctx)
            if name in self.lets:
                raise self.err(f"the entry sets `{name}`, a `let` constant: the header "
                               "would read the constant and the body the attribute", pos,
                               "set another name", ctx=ctx)
        return self.local(name, ctx)

    def expr(self, e: S.Expr, ctx: Context, place: str = "body",
             bound: frozenset = frozenset()) -> S.Expr:
        """`e` with the names of `ctx` mapped; `place` is body, header or index."""
        if isinstance(e, S.EName):
            return self.name(e, ctx, place, bound)
        if isinstance(e, S.ECall) and e.fn == "cost" and len(e.args) >= 2:
            names = [self.cost_resource(r, ctx) if isinstance(r, S.EName)
                     else self.expr(r, ctx, place, bound) for r in e.args[:-1]]
            return dataclasses.replace(
                e, args=[*names, self.expr(e.args[-1], ctx, place, bound)])
        if isinstance(e, S.ECall) and e.fn in OBSERVABLES and e.args and \
                isinstance(e.args[0], S.EName):
            first = self.observed(e.args[0], ctx)
            rest = [self.expr(a, ctx, place, bound) for a in e.args[1:]]
            return dataclasses.replace(e, args=[first, *rest])
        if isinstance(e, S.EAgg):
            if e.var in self.entry_names(ctx):
                raise self.err(f"the aggregate's variable `{e.var}` is a name of the "
                               "entry", e.var_pos, "use another variable", ctx=ctx)
            inner = bound | {e.var}
            return dataclasses.replace(e, count=self.expr(e.count, ctx, place, bound),
                                       body=self.expr(e.body, ctx, place, inner))
        if isinstance(e, S.ENum):
            return e
        changes = {}
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            if isinstance(v, list):
                changes[f.name] = [self.expr(x, ctx, place, bound) for x in v]
            elif isinstance(v, (S.ENum, S.EName, S.ECall, S.EDraw, S.EAgg, S.EUnary,
                                S.EBinary, S.ECond)):
                changes[f.name] = self.expr(v, ctx, place, bound)
        return dataclasses.replace(e, **changes)

    def name(self, e: S.EName, ctx: Context, place: str, bound: frozenset) -> S.Expr:
        if e.fields:
            return self.dotted(e, ctx, place)
        n, q = e.name, ctx.queue
        if n in bound:
            return e
        if n == "self":
            if q is None:
                raise self.err("`self` is a queue entry's word: the member index of the "
                               "call", e.pos)
            if not q.family:
                raise self.err(f"`self`: queue `{q.name}` is not a family", e.pos,
                               ctx=ctx)
            return clone(ctx.index)
        if q is None:
            return self.indexed(e, ctx)
        if n in ctx.params:
            if e.index is not None:
                raise self.err(f"`{n}` is a parameter; it takes no index", e.pos, ctx=ctx)
            return clone(ctx.params[n])
        if ctx.entry is not None and n == ctx.entry.src:
            return self.src_read(e, ctx, place)
        if n in q.pools or n == q.name:
            raise self.err(f"`{n}` names {'a pool' if n in q.pools else 'the stage'} of "
                           f"queue `{q.name}`; read it with an observable such as "
                           f"`{'used' if n in q.pools else 'work'}({n})`", e.pos, ctx=ctx)
        if not ctx.gateway and (n in q.sets or n in q.marks):
            if place == "header" and n not in self.binds:
                raise self.err(f"the header of a hold in `{q.name}`'s entry reads `{n}`, "
                               "an attribute the entry sets: a header reads the "
                               "parameters, the queue's own pools and stage, `let` "
                               "constants, `cached` and `computed`", e.pos,
                               f"bind it at admission (`at admission ({n} = …)`) or pass "
                               "it as a parameter", ctx=ctx)
            return dataclasses.replace(e, name=f"{q.name}.{n}",
                                       index=self.expr(e.index, ctx, "index")
                                       if e.index is not None else None)
        if ctx.strict:
            self.rule1(n, e, ctx, place)
        return self.indexed(e, ctx)

    def indexed(self, e: S.EName, ctx: Context) -> S.EName:
        if e.index is None:
            return e
        return dataclasses.replace(e, index=self.expr(e.index, ctx, "index"))

    def rule1(self, n: str, e: S.EName, ctx: Context, place: str) -> None:
        """What an entry may read (Part 05 §2.8, rule 1)."""
        if n in self.lets or n in ALWAYS - {"now"}:
            return
        if n in self.stages or n in self.pools:
            if e.index is None:
                return  # a stage or pool name where the kernel expects one
            raise self.err(f"the entry reads `{n}`, which is not its queue's: a queue "
                           "sees its own; the deployment reads across queues", e.pos,
                           ctx=ctx)
        q = ctx.queue.name
        if place == "header":
            what = "a hidden attribute" if n in self.hidden else "a name"
            raise self.err(f"the header of a hold in `{q}`'s entry reads `{n}`, {what} "
                           "that is not the entry's: a header reads the parameters, the "
                           "queue's own pools and stage, `let` constants, `cached` and "
                           "`computed`", e.pos, f"pass `{n}` as a parameter", ctx=ctx)
        if n == "now" or n in CONTEXT or n in self.hidden:
            return
        raise self.err(f"the entry of `{q}` reads `{n}`, a session attribute set outside "
                       "the queue", e.pos, f"pass `{n}` as a parameter, or `mark` a moment "
                       "for the caller to read", ctx=ctx)

    def src_read(self, e: S.EName, ctx: Context, place: str) -> S.Expr:
        src = ctx.entry.src
        if e.index is not None:
            raise self.err(f"`{src}[…]`: the source takes no index", e.pos, ctx=ctx)
        if place != "index":
            raise self.err(f"the entry reads `{src}` as a number: `{src}` is the source "
                           "pool (or, as an index, its member)", e.pos, ctx=ctx)
        source = ctx.source
        if source is None or source.index is None:
            pool = source.pool.name if source is not None else "?"
            raise self.err(f"`{src}` as an index: its source `{pool}` is no family's "
                           "member", e.pos, ctx=ctx)
        return clone(source.index)

    def dotted(self, e: S.EName, ctx: Context, place: str) -> S.Expr:
        """`Q.x` (an attribute a queue's entries set or mark) or `Q[i].p` /
        `Q.p` (a queue's pool), `Q.nic`, `Q.latency` (a single queue's stages)."""
        q = self.d.queues.get(e.name)
        field_ = ".".join(e.fields)
        if q is None:
            raise self.err(f"`{e.name}.{field_}`: no queue `{e.name}` is declared", e.pos)
        if len(e.fields) == 1 and e.fields[0] in q.pools:
            return self.queue_pool(e, q, ctx)
        if len(e.fields) == 1 and (e.fields[0] in q.marks or e.fields[0] in q.sets):
            if e.index is not None:
                raise self.err(f"`{e.name}[…].{field_}`: an attribute of the request has "
                               f"no member index", e.pos, f"write `{e.name}.{field_}`",
                               ctx=ctx)
            if ctx.queue is not None and ctx.queue is not q and ctx.strict:
                raise self.err(f"the entry reads `{e.name}.{field_}`, another queue's",
                               e.pos, "pass it as a parameter", ctx=ctx)
            if q.gateway:
                return S.EName(field_, e.pos)
            return S.EName(f"{e.name}.{field_}", e.pos)
        raise self.err(f"`{e.name}.{field_}`: no entry of `{e.name}` marks or sets "
                       f"`{field_}`, and `{e.name}` has no pool `{field_}`", e.pos, ctx=ctx)

    def queue_pool(self, e: S.EName, q: Queue, ctx: Context) -> S.EName:
        name = f"{q.name}.{e.fields[0]}"
        if q.family:
            if e.index is None and q.one:
                return S.EName(name, e.pos, S.ENum(0.0, e.pos))
            if e.index is None:
                raise self.err(f"`{e.name}` is a family; index it: "
                               f"`{e.name}[i].{e.fields[0]}`", e.pos, ctx=ctx)
            return S.EName(name, e.pos, self.expr(e.index, ctx, "index"))
        if e.index is not None:
            raise self.err(f"`{e.name}` is one queue, not a family", e.pos, ctx=ctx)
        return S.EName(name, e.pos)

    # --------------------------------------------------------- references
    def resource(self, r: S.EName, ctx: Context) -> tuple[S.EName, bool]:
        """A pool or stage reference mapped; the flag says it is the entry's
        own (or its source)."""
        q = ctx.queue
        if r.fields:
            owner = self.d.queues.get(r.name)
            if owner is not None and len(r.fields) == 1 and r.fields[0] in owner.pools:
                return self.queue_pool(r, owner, ctx), owner is q
            if owner is not None and not owner.family and r.index is None and \
                    r.fields in (("nic",), ("latency",)):
                return S.EName(f"{r.name}.{r.fields[0]}", r.pos), owner is q
            raise self.err(f"`{r.name}.{'.'.join(r.fields)}` names no pool or stage",
                           r.pos, ctx=ctx)
        if q is not None:
            if r.name in q.pools or r.name == q.name:
                if r.index is not None:
                    raise self.err(f"`{r.name}[…]` inside queue `{q.name}`: its own "
                                   f"{'pool' if r.name in q.pools else 'stage'} is the "
                                   "member's", r.pos, f"write `{r.name}`", ctx=ctx)
                name = f"{q.name}.{r.name}" if r.name in q.pools else q.name
                return S.EName(name, r.pos, clone(ctx.index)), True
            if ctx.entry is not None and r.name == ctx.entry.src:
                if r.index is not None:
                    raise self.err(f"`{r.name}[…]`: the source takes no index", r.pos,
                                   ctx=ctx)
                if ctx.source is None:
                    raise self.err(f"`{r.name}` has no source here", r.pos, ctx=ctx)
                return clone(ctx.source.pool), True
        return self.indexed(r, ctx), False

    def cost_resource(self, r: S.EName, ctx: Context) -> S.EName:
        """A resource `cost(…)` names (Part 01 §4.5): mapped as a hold, run or
        `transfer` names it (the entry's own pools and stage, its `from` name,
        `Q[i].p`); a queue's generated family (`Q.p`, `Q.nic`, `Q.latency`,
        `Q.nic.latency`) may also be named without an index, since `cost`
        names a family and does not read its index."""
        owner = self.d.queues.get(r.name) if r.fields else None
        if owner is not None and r.index is None and \
                r.fields in self.generated_fields(owner):
            return S.EName(f"{r.name}.{'.'.join(r.fields)}", r.pos)
        return self.resource(r, ctx)[0]

    def generated_fields(self, q: Queue) -> set:
        """The dotted names of the pools and stages queue `q` generates
        (`QueueDecls.generated`: a relation's latency stage is its waiter's,
        the reader of a pull, the poster of a push)."""
        out = {(p,) for p in q.pools}
        if q.decl.nic is not None:
            out.add(("nic",))
        if q.decl.serve is not None and q.decl.latency is not None:
            out.add(("latency",))
        if any(rel.waiter == q.decl.name and rel.latency is not None for rel in self.d.pulls):
            out.add(("nic", "latency"))
        return out

    def stage_ref(self, r: S.EName, ctx: Context) -> S.EName:
        return self.resource(r, ctx)[0]

    def observed(self, r: S.EName, ctx: Context) -> S.EName:
        """The pool or stage an observable reads: an entry reads its own."""
        ref, own = self.resource(r, ctx)
        if ctx.strict and not own and (ref.name in self.stages or ref.name in self.pools
                                       or "." in ref.name):
            raise self.err(f"the entry reads `{ref.name}`, which is not queue "
                           f"`{ctx.queue.name}`'s: a queue sees its own; the deployment "
                           "reads across queues", r.pos, ctx=ctx)
        return ref

    def pool_ref(self, r: S.EName, ctx: Context, verb: str) -> S.EName:
        """A pool a statement holds, grows, loads, releases or leases."""
        ref, own = self.resource(r, ctx)
        if ctx.queue is not None and not own:
            raise self.err(f"the entry {verb} `{show_ref(ref)}`, which is not a pool of "
                           f"`{ctx.queue.name}`", r.pos,
                           "an entry holds its queue's own pools and its source", ctx=ctx)
        if ctx.queue is None and "." in ref.name:
            owner = ref.name.split(".")[0]
            raise self.err(f"`{show_ref(ref)}` is queue `{owner}`'s: only `{owner}`'s "
                           "entries hold it", r.pos, f"call one of `{owner}`'s entries")
        return ref

    def counted(self, stmts: list, pos: Pos) -> list:
        self.count += size(stmts)
        if self.count > MAX_STATEMENTS:
            raise self.err(f"the program expands to more than {MAX_STATEMENTS} "
                           "statements (at this call)", pos)
        return stmts


def show_ref(r: S.EName) -> str:
    """A reference as written (`P.kv[i]`)."""
    return show(r)


def rewrite_queues(items: list, sources: dict) -> list:
    """The item list with every queue construct rewritten into kernel
    declarations and statements (Part 05 §2.11)."""
    if not any(isinstance(i, (S.IQueue, S.IPull)) for i in items) and \
            not any(isinstance(s, (S.SCall, S.SMarkTime)) or
                    (isinstance(s, S.SServing) and s.role == "transfer") or
                    (isinstance(s, S.SRequest) and s.gateway is not None) or
                    (isinstance(s, S.SRun) and not s.stages)
                    for b in _blocks(items) for s in stmts_in(b)) and \
            not any(isinstance(n, S.EName) and (n.fields and n.name not in ENGINE_LISTS
                                                or n.name == "self")
                    for n in nodes([b for b in _blocks(items)])):
        return items
    decls = QueueDecls(items, sources)
    generated: list = []
    for item in items:
        if isinstance(item, (S.IQueue, S.IPull)):
            generated.extend(decls.generated(item))
        else:
            generated.append(item)
    rw = Rewriter(decls, generated, sources)
    top = Context()
    out: list = []
    for item in generated:
        if isinstance(item, S.IBlock):
            where = "server" if item.kind == "server" else "top-session"
            item = dataclasses.replace(item, body=rw.block(item.body, top, where))
        elif isinstance(item, S.IWorkload):
            item = dataclasses.replace(item, clauses=[
                dataclasses.replace(c, body=rw.block(c.body, top, "session" if c.kind ==
                                                     "session" else c.kind))
                if isinstance(c, S.CBlock) else c for c in item.clauses])
        elif isinstance(item, S.IGauge):
            item = dataclasses.replace(item, value=rw.expr(item.value, top))
        out.append(item)
    return out


def _blocks(items: list) -> list:
    """The statement lists of the top-level code blocks."""
    out: list = []
    for item in items:
        if isinstance(item, S.IBlock):
            out.append(item.body)
        elif isinstance(item, S.IWorkload):
            out.extend(c.body for c in item.clauses if isinstance(c, S.CBlock))
    return out
