"""Shapes of a program (Part 02 §1, §5, §7): K, R, T or N.

Checks the shape rules and where each statement may stand, then writes the
session code out as kernel statements: each `request;` (shape R), and the
point right after each `turn;` (shape T), becomes a request-begin mark, a
copy of the server's statements and a request-end mark.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from ...core.errors import ParseError
from ...core.ir import Pos
from ..syntax import tree as S
from ..syntax.walk import clone, stmts_in


@dataclass
class Blocks:
    """The code blocks of a program after definition expansion."""

    session: Optional[S.IBlock] = None      # top level
    server: Optional[S.IBlock] = None
    wl_session: Optional[S.CBlock] = None   # inside workload
    init: Optional[S.CBlock] = None
    turn: Optional[S.CBlock] = None
    workload_pos: Optional[Pos] = None


@dataclass
class Shaped:
    shape: str                 # "K", "R", "T" or "N"
    session: Optional[list]    # kernel session statements (None for N)
    init: list
    turn: list


def find(stmts: list, kind) -> Optional[S.Stmt]:
    return next((s for s in stmts_in(stmts) if isinstance(s, kind)), None)


class Shaper:
    def __init__(self, blocks: Blocks, sources: dict):
        self.b = blocks
        self.sources = sources

    def err(self, message: str, pos: Pos, help: Optional[str] = None) -> ParseError:
        return ParseError(message, Pos(pos.file, pos.line, pos.col, 1), help=help,
                          source=self.sources.get(pos.file))

    def check_blocks(self) -> None:
        """Statements each block may contain (Part 02 §5, §7 table)."""
        for block in (self.b.init, self.b.turn):
            if block is None:
                continue
            for s in stmts_in(block.body):
                if not isinstance(s, (S.SSet, S.SObserve)):
                    raise self.err(f"{block.kind}: workload blocks may only `set` and "
                                   "`observe`", s.pos)
        if self.b.server is not None:
            for s in stmts_in(self.b.server.body):
                if isinstance(s, S.STurn):
                    raise self.err("`turn` is the session's: the next turn is the "
                                   "workload's decision, not the server's", s.pos)
                if isinstance(s, S.SEnd):
                    raise self.err("`end` is the session's: a server is done with a "
                                   "request when its block is", s.pos)
                if isinstance(s, S.SRequest):
                    raise self.err("a server does not request itself", s.pos)

    def shape(self) -> Shaped:
        b = self.b
        self.check_blocks()
        init = b.init.body if b.init else []
        turn = b.turn.body if b.turn else []
        if b.session is not None and b.wl_session is not None:
            later = max((b.session, b.wl_session), key=lambda x: (x.pos.line, x.pos.col))
            raise self.err("a program has one session: inside `workload` or at top "
                           "level, not both", later.pos)
        if b.session is not None:
            if b.server is not None:
                raise self.err("`server` needs a `session` inside `workload` that says "
                               "`request;`", b.server.pos)
            req = find(b.session.body, S.SRequest)
            if req is not None:
                raise self.err("`request;` needs a `server` block; name a gateway with "
                               "`request NAME;`", req.pos)
            return Shaped("K", list(b.session.body), init, turn)
        if b.wl_session is not None:
            req = find(b.wl_session.body, S.SRequest)
            anonymous = next((s for s in stmts_in(b.wl_session.body)
                              if isinstance(s, S.SRequest) and s.gateway is None), None)
            if req is not None and anonymous is None:
                if b.server is not None:
                    raise self.err("the `server` block is never requested: the session "
                                   "requests only gateways", b.server.pos,
                                   "add `request;` where the session uses the server, or "
                                   "remove the block")
                return Shaped("R", self.splice(b.wl_session.body, "R"), init, turn)
            if req is not None:
                if b.server is None:
                    raise self.err("`request;` needs a `server` block; name a gateway "
                                   "with `request NAME;`", req.pos)
                return Shaped("R", self.splice(b.wl_session.body, "R"), init, turn)
            if b.server is None:
                raise self.err("a `session` inside `workload` is written against a "
                               "`server` block", b.wl_session.pos)
            if find(b.wl_session.body, S.STurn) is None:
                raise self.err("the workload's session has no `turn;`: each turn uses "
                               "the server", b.wl_session.pos)
            return Shaped("T", self.splice(b.wl_session.body, "T"), init, turn)
        if b.server is not None:
            implicit = [S.STurn(b.server.pos)]
            return Shaped("T", self.splice(implicit, "T"), init, turn)
        return Shaped("N", None, init, turn)

    def request(self, pos: Pos, body: Optional[list] = None) -> list:
        """A request's statements: the server's, or a gateway's route (`body`)."""
        if body is None:
            assert self.b.server is not None
            body = clone(self.b.server.body)
        return [S.SMark("begin", pos), *body, S.SMark("end", pos)]

    def splice(self, stmts: list, shape: str) -> list:
        """Session statements with the server's statements written in."""
        out: list = []
        for s in stmts:
            if shape == "R" and isinstance(s, S.SRequest):
                out.extend(self.request(s.pos, s.route))
                continue
            if isinstance(s, (S.SIf,)):
                s = replace(s, then=self.splice(s.then, shape),
                            other=self.splice(s.other, shape))
            elif isinstance(s, (S.SLoop, S.SWhile, S.SHold, S.SFork)):
                s = replace(s, body=self.splice(s.body, shape))
            out.append(s)
            if shape == "T" and isinstance(s, S.STurn):
                out.extend(self.request(s.pos))
        return out


def blocks_of(items: list, sources: dict) -> Blocks:
    """Collect the code blocks from the (expanded) item list."""
    b = Blocks()
    for item in items:
        if isinstance(item, S.IBlock):
            setattr(b, item.kind, item)
        elif isinstance(item, S.IWorkload):
            b.workload_pos = item.pos
            for c in item.clauses:
                if isinstance(c, S.CBlock):
                    setattr(b, {"session": "wl_session"}.get(c.kind, c.kind), c)
    return b


def shape_program(items: list, sources: dict) -> Shaped:
    """The shape and kernel session code of an expanded program."""
    return Shaper(blocks_of(items, sources), sources).shape()
