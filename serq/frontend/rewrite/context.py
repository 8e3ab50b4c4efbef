"""What the queue rewrite's modules share (the interface of `entries`,
`calls` and `transfer`, Part 05 §2): where statements are rewritten
(`Context`) and the pool a `from` call takes (`Source`). `entries.Rewriter`
builds on these and on `calls` and `transfer`, which read a `Rewriter` they
are handed but never import it at run time.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..syntax import tree as S
from .queues import Queue


@dataclass
class Source:
    """The pool a `from` call takes (Part 05 §2.6): `pool` is the reference
    (`P.kv[i]`), `index` the member index (None when no family member)."""

    pool: S.EName
    index: Optional[S.Expr]
    queue: Optional[str]


@dataclass
class Context:
    """Where statements are rewritten: the top level (queue None) or an entry."""

    queue: Optional[Queue] = None
    entry: Optional[S.QEntry] = None
    index: Optional[S.Expr] = None          # the member index `i` of the call
    params: dict = field(default_factory=dict)
    source: Optional[Source] = None
    path: tuple = ()                        # active (queue, verb, from) calls
    via: tuple = ()

    @property
    def gateway(self) -> bool:
        return self.queue is not None and self.queue.gateway

    @property
    def strict(self) -> bool:
        """Rule 1 applies (every entry but a gateway's route)."""
        return self.queue is not None and not self.queue.gateway
