"""Calls of queue entries (Part 05 §2.5, §2.6, §2.9): which entry a call
selects, its checks, the source a `from` names, and the expansion of the
entry's body in place of the call."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..syntax import tree as S
from .context import Context, Source
from .queues import VERBS, Queue
from ..syntax.show import show
from ..syntax.walk import clone, first_draw, stmts_in

if TYPE_CHECKING:  # `entries` imports this module and hands it its Rewriter
    from .entries import Rewriter


def expand_call(rw: Rewriter, s: S.SCall, ctx: Context) -> list:
    """The statements a call stands for: the entry's body with the call's
    index, arguments and source mapped in; a link's `transfer` call adds
    `load POOL (m); release SOURCE;`."""
    q = rw.d.queues.get(s.queue)
    if q is None:
        raise rw.err(f"no queue `{s.queue}` is declared", s.queue_pos, ctx=ctx)
    if q.family and s.index is None:
        raise rw.err(f"`{q.name}` is a family of {show(q.decl.size)}; index it", s.queue_pos,
                     f"write `{q.name}[i].{s.verb} (…)`", ctx=ctx)
    if not q.family and s.index is not None:
        raise rw.err(f"`{q.name}` is one queue, not a family", s.queue_pos,
                     f"write `{q.name}.{s.verb} (…)`", ctx=ctx)
    link = s.verb == "transfer" and "link" in q.roles
    entry = select_entry(rw, q, s, ctx, link)
    if len(s.args) != len(entry.params):
        raise rw.err(f"`{q.name}.{s.verb}` takes {len(entry.params)} argument(s), got "
                     f"{len(s.args)}", s.verb_pos, ctx=ctx)
    for a in s.args:
        if first_draw(a) is not None:
            raise rw.err("an argument of a call may not draw: the argument is written in "
                         "wherever the entry reads its parameter", first_draw(a).pos,
                         "`set` the draw first and pass the name", ctx=ctx)
    key = (q.name, s.verb, entry.src is not None)
    if key in ctx.path:
        raise rw.err(f"the entries call each other in a cycle (`{q.name}.{s.verb}` calls "
                     "itself)", s.pos, ctx=ctx)
    index = rw.expr(s.index, ctx, "index") if s.index is not None else None
    args = [rw.expr(a, ctx) for a in s.args]
    source = None
    if s.src is not None:
        source = link_source(rw, s.src, ctx) if link else queue_source(rw, s.src, ctx)
    inner = Context(q, entry, index, dict(zip(entry.params, args)), source,
                    ctx.path + (key,), ctx.via + (rw.note(q.name, s.verb, s.pos, entry),))
    body = rw.block(clone(entry.body), inner)
    if link:
        assert source is not None and s.dst is not None and s.amount is not None
        body.append(S.SPoolStmt("load", rw.pool_ref(s.dst, ctx, "loads"),
                                rw.expr(s.amount, ctx), s.pos, via=s.via))
        body.append(S.SPoolStmt("release", clone(source.pool), None, s.pos, via=s.via))
    for st in stmts_in(body):  # link errors name every call they came through
        st.via = st.via + inner.via[-1:] + s.via
    return rw.counted(body, s.pos)


def select_entry(rw: Rewriter, q: Queue, s: S.SCall, ctx: Context, link: bool) -> S.QEntry:
    """The entry a call selects (`from` tells `decode` from `decode … from`)."""
    if link:
        entry = q.entries.get(("transfer", False))
        if entry is None:
            raise rw.err(f"link `{q.name}` has no `transfer` entry: its `serve` is its "
                         "cost", s.verb_pos,
                         f"write `transfer on {q.name}{'[…]' if q.family else ''} (n) "
                         "from S to P (m);`", ctx=ctx)
        if s.src is None or s.dst is None:
            raise rw.err(f"a `transfer` call of link `{q.name}` needs `from SOURCE to "
                         "POOL (m)`", s.pos, ctx=ctx)
        return entry
    if s.dst is not None:
        raise rw.err("`to POOL (m)` belongs to a link's `transfer` call", s.dst.pos,
                     ctx=ctx)
    has_from = s.src is not None
    entry = q.entries.get((s.verb, has_from))
    if entry is not None:
        return entry
    if (s.verb, not has_from) in q.entries:
        if has_from:
            raise rw.err(f"`{q.name}.{s.verb}` takes no `from`", s.verb_pos,
                         f"give `{q.name}` a `{s.verb} (…) from src {{ … }}` entry",
                         ctx=ctx)
        raise rw.err(f"queue `{q.name}` has no plain `{s.verb}` entry: its `{s.verb}` "
                     "needs `from`", s.verb_pos, ctx=ctx)
    if s.verb not in VERBS:
        raise rw.err(f"`{s.verb}` is not an entry of any role", s.verb_pos, ctx=ctx)
    raise rw.err(f"queue `{q.name}` has no `{s.verb}` entry", s.verb_pos, ctx=ctx)


def leases(stmts: list) -> set[str]:
    """The pools a block leases on every way through it."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, S.SHold):
            if s.lease is not None:
                out.add(s.lease.name)
            out |= leases(s.body)
        elif isinstance(s, S.SIf):
            out |= leases(s.then) & leases(s.other)
        elif isinstance(s, S.SLoop):
            out |= leases(s.body)
    return out


def leased_pool(rw: Rewriter, q: Queue, ref: S.EName, ctx: Context) -> str:
    """The pool `q`'s entries lease (Part 05 §2.6, rule 3)."""
    found = [s.lease.name for e in q.entries.values() for s in stmts_in(e.body)
             if isinstance(s, S.SHold) and s.lease is not None and s.lease.name in q.pools]
    if not found:
        raise rw.err(f"no entry of `{q.name}` leases a pool, so it has nothing to take",
                     ref.pos, f"end `{q.name}`'s hold with `lease POOL (t)`", ctx=ctx)
    pool = found[0]
    for (verb, _), e in q.entries.items():
        if pool not in leases(e.body):
            raise rw.err(f"`{q.name}.{verb}` does not lease `{pool}` on every way through "
                         "it, so a request that went through it could have no KV to take",
                         ref.pos, ctx=ctx)
    return pool


def queue_source(rw: Rewriter, ref: S.EName, ctx: Context) -> Source:
    """The source of `from P[i]`: the pool P's entries lease, or a plain pool."""
    if ctx.entry is not None and ref.name == ctx.entry.src and not ref.fields:
        if ctx.source is None:
            raise rw.err(f"`{ref.name}` has no source here", ref.pos, ctx=ctx)
        return ctx.source
    if ref.fields:
        raise rw.err(f"`from {show(ref)}`: a call takes from a queue", ref.pos,
                     f"write `from {ref.name}{'[…]' if ref.index is not None else ''}`",
                     ctx=ctx)
    q = rw.d.queues.get(ref.name)
    if q is None:
        if ref.name in rw.pools:
            pool = rw.pool_ref(ref, ctx, "takes") if ctx.queue is None else \
                rw.indexed(ref, ctx)
            return Source(pool, pool.index, None)
        raise rw.err(f"`from {ref.name}`: no queue or pool `{ref.name}` is declared",
                     ref.pos, ctx=ctx)
    if q.family and ref.index is None:
        raise rw.err(f"`{q.name}` is a family of {show(q.decl.size)}; index it", ref.pos,
                     ctx=ctx)
    if not q.family and ref.index is not None:
        raise rw.err(f"`{q.name}` is one queue, not a family", ref.pos, ctx=ctx)
    pool = leased_pool(rw, q, ref, ctx)
    index = rw.expr(ref.index, ctx, "index") if ref.index is not None else None
    return Source(S.EName(f"{q.name}.{pool}", ref.pos, index), index, q.name)


def link_source(rw: Rewriter, ref: S.EName, ctx: Context) -> Source:
    """The source of a link `transfer` call: a queue (its leased pool), the
    caller's `from` name, or a pool."""
    if ref.fields or (ref.name not in rw.d.queues and not (
            ctx.entry is not None and ref.name == ctx.entry.src)):
        pool = rw.pool_ref(ref, ctx, "releases")
        return Source(pool, pool.index, None)
    return queue_source(rw, ref, ctx)

