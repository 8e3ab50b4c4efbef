"""Building the queue constructs of Part 05 from the textX model: `queue`
declarations, the pull relation, `transfer`, calls and `mark`. The
syntax-level rules (item order inside a queue, `serve`/`nic` twice, a
`transfer` without `from … to …`, `growing` on `transfer`, `push`, a missing
`share`) are parse errors raised here; everything else is checked by the
queue pass (queues.py)."""
from __future__ import annotations

import bisect
from typing import Any

from ...core.ir import Pos
from ..syntax import tree as S

LATENCY_HELP = "`latency` belongs to the `serve` of a queue that plays `link`"


class QueueBuilder:
    """Mixin of `build.Builder`: the Part 05 items and statements."""

    # ------------------------------------------------------------ statements
    def s_TransferStmt(self, o: Any) -> S.Stmt:
        pos = self.pos(o)
        if o.growing is not None:
            raise self.error("`transfer` takes no `growing` clause: the receiving hold "
                             "is filled by the transfer's own `load`",
                             self.tpos(self.tok(o.growing._tx_position, -1)),
                             "grow the hold in a `prefill` or `decode`")
        if o.src is None:
            raise self.error("`transfer` needs `from P to Q (n)`: a KV transfer leaves "
                             "the lease (or hold) on `P` and enters the hold on `Q`", pos,
                             "for a link that only takes time, write `run link (w);`")
        ons = [self.e_NameRef(r) for r in o.ons]
        return S.SServing("transfer", self.opt(o.index), ons[0] if ons else None,
                          self.expr(o.work), None, pos, ons=ons[1:],
                          src=self.e_NameRef(o.src), dst=self.e_NameRef(o.dst),
                          amount=self.expr(o.amount))

    def s_MarkStmt(self, o: Any) -> S.Stmt:
        return S.SMarkTime(o.ident, self.pos(o), self.pos(o, 1))

    def s_CallStmt(self, o: Any) -> S.Stmt:
        index = self.opt(o.index)
        skip = 2 if index is None else 2 + self.count_tokens(o.index) + 2
        verb_pos = self.pos(o, skip)
        src = self.e_NameRef(o.src) if o.src is not None else None
        dst = self.e_NameRef(o.dst) if o.dst is not None else None
        return S.SCall(o.queue, index, o.verb, [self.expr(a) for a in o.args], src, dst,
                       self.opt(o.amount), self.pos(o), self.pos(o), verb_pos)

    def count_tokens(self, o: Any) -> int:
        """Number of tokens a textX object spans."""
        return (bisect.bisect_left(self.offsets, o._tx_position_end) -
                bisect.bisect_left(self.offsets, o._tx_position))

    # ----------------------------------------------------------------- items
    def stage_kind(self, name: str, k: Any, pos: Pos, name_pos: Pos) -> S.IStage:
        """An IStage named `name` from a StepKind / StageKind object."""
        kd = type(k).__name__
        if kd == "StepKind":
            return S.IStage(name, None, "step", None, pos, name_pos,
                            self.step_clauses(k), self.pos(k))
        if kd == "FifoKind":
            arg = self.expr(k.servers) if k.servers is not None else None
            return S.IStage(name, None, "fifo", arg, pos, name_pos)
        if kd == "PsKind":
            return S.IStage(name, None, "ps", self.expr(k.capacity), pos, name_pos)
        return S.IStage(name, None, "delay", None, pos, name_pos)

    def refuse_latency(self, o: Any) -> None:
        """`latency` on a plain stage or a `nic` (Part 05 §2.9, §2.10)."""
        if getattr(o, "latency", None) is not None:
            raise self.error(LATENCY_HELP, self.tpos(self.tok(o.latency._tx_position, -1)),
                             "declare a link queue: `queue L : link { serve ps(…) "
                             "latency x; }`")

    def i_QueueDecl(self, o: Any) -> S.IQueue:
        pos, name_pos = self.pos(o), self.pos(o, 1)
        size = self.opt(o.size)
        roles: list[tuple[str, Pos]] = []
        if o.roles:
            i = self.tokens.index(self.tok(o._tx_position))
            while self.tokens[i].text != ":":
                i += 1
            for k, r in enumerate(o.roles):
                roles.append((r, self.tpos(self.tokens[i + 1 + 2 * k])))
        q = S.IQueue(o.ident, size, roles, [], None, None, None, [], [], pos, name_pos)
        for it in o.items:
            k = type(it).__name__
            ipos = self.pos(it)
            if k == "PoolDecl":
                if it.size is not None or it.on:
                    raise self.error("a queue's pool is one per member: write `pool NAME "
                                     "{ … }` without a size or `on`", self.pos(it, 1))
                q.pools.append(self.i_PoolDecl(it))
                q.parts.append(("pool", ipos))
            elif k == "QueueServe":
                q.serve = self.stage_kind(o.ident, it.kind, ipos, name_pos)
                q.latency = self.opt(it.latency)
                q.parts.append(("serve", ipos))
            elif k == "QueueNic":
                self.refuse_latency(it)
                q.nic = self.stage_kind(o.ident + ".nic", it.kind, ipos, name_pos)
                q.parts.append(("nic", ipos))
            else:
                params = list(it.params)
                ppos = [self.pos(it, 2 + 2 * i) for i in range(len(params))]
                # the tokens before `from`: the verb, then `( p, … )`
                before = 1 + (max(2, 2 * len(params) + 1) if it.parens else 0)
                src_pos = self.pos(it, before + 1) if it.src else None
                q.entries.append(S.QEntry(it.verb, params, ppos, it.src or None,
                                          self.block(it.body), ipos, bool(it.parens),
                                          src_pos))
                q.parts.append(("entry", ipos))
        return q

    def i_PullDecl(self, o: Any) -> S.IPull:
        pos = self.pos(o)
        if o.policy in (None, ""):
            what = "reads" if o.kw == "pull" else "writes"
            raise self.error(f"`{o.reader} {o.kw} {o.source}` names how concurrent {what} "
                             "divide the NICs: add `share maxmin` or `share bottleneck`",
                             pos)
        if o.kw == "push":  # `P push D`: the poster first, the reader second
            return S.IPull(o.source, o.reader, self.opt(o.latency), o.policy, pos,
                           pos, kind="push", reader_pos=self.pos(o, 2))
        return S.IPull(o.reader, o.source, self.opt(o.latency), o.policy, pos,
                       self.pos(o, 2))

