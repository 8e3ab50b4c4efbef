"""The `transfer` form (Part 05 §1.2, §2.9, §2.10): a KV hand-over written
as kernel statements. `transfer … X from P to Q (n);` becomes the run over
the found (or named) link stage(s), `load Q (n);` and `release P;`; a link
queue with a `latency` adds its wait before the run; inside a `from` entry
of a queue with a `nic`, a `transfer` without `on` and `[j]` is the pull
read over the source's NIC and the reader's."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..syntax import tree as S
from .context import Context
from ..syntax.show import show
from ..syntax.walk import clone

if TYPE_CHECKING:  # `entries` imports this module and hands it its Rewriter
    from .entries import Rewriter


class Transfers:
    """Rewrites `transfer` forms for a Rewriter."""

    def __init__(self, rw: Rewriter):
        self.rw = rw

    def rewrite(self, s: S.SServing, ctx: Context) -> list:
        rw = self.rw
        q = ctx.queue
        if q is not None and ctx.entry is not None and ctx.entry.src is not None and \
                q.decl.nic is not None and s.on is None and s.index is None:
            return self.pull_read(s, ctx)
        assert s.src is not None and s.dst is not None and s.amount is not None
        src = rw.pool_ref(s.src, ctx, "releases")
        dst = rw.pool_ref(s.dst, ctx, "loads")
        run = rw.serving(dataclasses.replace(s, src=None, dst=None, amount=None), ctx)
        waits = []
        if s.on is not None:
            for written, mapped in zip([s.on, *s.ons], [run.on, *run.ons]):
                link = rw.d.queues.get(written.name) if not written.fields else None
                if link is not None and link.decl.latency is not None:
                    waits.append(S.SRun([S.EName(f"{link.name}.latency", written.pos,
                                                 clone(mapped.index))], None,
                                        clone(link.decl.latency), None, s.pos, via=s.via))
        return waits + [run] + self.hand_over(s, dst, src, ctx)

    def hand_over(self, s: S.SServing, dst: S.EName, src: S.EName, ctx: Context) -> list:
        """`load Q (n); release P;` after the copy."""
        return [S.SPoolStmt("load", dst, self.rw.expr(s.amount, ctx), s.pos, via=s.via),
                S.SPoolStmt("release", src, None, s.pos, via=s.via)]

    def pull_read(self, s: S.SServing, ctx: Context) -> list:
        """The read of `D pull P latency x share s;` (Part 05 §2.10), or the
        copy `P push D latency x share s;` posts (the wait is the poster's,
        at `P.nic.latency` of the source member)."""
        rw, q = self.rw, ctx.queue
        rel = q.pull
        if rel is None:
            raise rw.err(f"queue `{q.name}` names no NIC and pulls from no queue", s.pos,
                         f"declare `{q.name} pull SOURCE share maxmin;`, or write "
                         "`transfer on …`", ctx=ctx)
        src_name = ctx.entry.src
        if s.src.name != src_name or s.src.fields or s.src.index is not None:
            raise rw.err(f"a read takes from the entry's source, `from {src_name}`",
                         s.src.pos, ctx=ctx)
        source = ctx.source
        if source is None or source.queue != rel.source:
            taken = show(source.pool) if source is not None else "no queue"
            what = f"pulls from `{rel.source}`" if rel.kind == "pull" else \
                f"is pushed to by `{rel.source}`"
            raise rw.err(f"`{q.name}` {what}, and this entry was called `from {taken}`",
                         s.pos, ctx=ctx)
        dst = rw.pool_ref(s.dst, ctx, "loads")
        out = []
        if rel.latency is not None:
            index = clone(source.index) if rel.kind == "push" else clone(ctx.index)
            out.append(S.SRun([S.EName(f"{rel.waiter}.nic.latency", s.pos, index)],
                              None, clone(rel.latency), None, s.pos, via=s.via))
        nics = [S.EName(f"{rel.source}.nic", s.pos, clone(source.index)),
                S.EName(f"{q.name}.nic", s.pos, clone(ctx.index))]
        out.append(S.SRun(nics, None, rw.expr(s.work, ctx), None, s.pos, via=s.via))
        return out + self.hand_over(s, dst, clone(source.pool), ctx)
