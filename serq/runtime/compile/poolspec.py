"""Compile pool declarations and hold statements into runtime specs.

Every expression of Part 03 is compiled once into a Python function of the
values its moment supplies (Part 04 §10): queue keys `(s, waited)`,
eviction keys and spill clauses `(s, size, age, last, waiting)` on the evict
stream, victim keys `(s, admission, decoding, position)`, a hold's units,
reserve and reuse `(s)` (Admit, no draws), its cache and lease duration
`(s)` on the session stream.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from ...core import ir
from ...core.errors import SimulationError
from .bounds import bounds
from .exprs import ExprCompiler, Scope
from ..resources.holds import HoldSpec
from . import names as N

EVICT_ARGS = "s, size, age, last, waiting"
EVICT_CTX = {n: n for n in ("size", "age", "last", "waiting")}


@dataclass
class SpillSpec:
    tier: Any
    link: Any
    work: Callable[..., float]
    when: Callable[..., float]


@dataclass
class PoolSpec:
    cap: float
    block: Optional[float]
    queue_keys: Optional[Callable[..., tuple]]
    evict_keys: Optional[Callable[..., tuple]]
    preempt: str
    preempt_keys: Callable[..., tuple]
    requeue: str
    reserve_held: bool
    admit_via: Optional[ir.Ref]
    spill: Optional[SpillSpec]
    snapshots: bool = True  # eviction keys or spill clauses read attributes


class SpecCompiler:
    """Compiles pool and hold expressions over one namespace."""

    def __init__(self, exprs: ExprCompiler, attrs: dict[str, str]):
        self.exprs = exprs
        self.ns = exprs.ns
        self.attrs = attrs

    def _tuple(self, params: str, keys: list[ir.Expr], scope: Scope) -> Callable[..., tuple]:
        body = ", ".join(self.exprs.expr(k, scope) for k in keys)
        return self.ns.function(params, f"({body},)", "key")

    def _fn(self, params: str, e: ir.Expr, scope: Scope) -> Callable[..., float]:
        return self.ns.function(params, self.exprs.expr(e, scope), "pf")

    def pool(self, decl: ir.Pool, evict_stream: Any) -> PoolSpec:
        """The runtime spec of a pool family (shared by its members)."""
        ev_scope = Scope("s", N.EVICT_STREAM, self.attrs, EVICT_CTX)
        self.ns.globals[N.EVICT_STREAM] = evict_stream
        queue = None
        if decl.queue is not None:
            queue = self._tuple("s, waited", decl.queue,
                                Scope("s", None, self.attrs, {"waited": "waited"}))
        evict = None if decl.evict is None else self._tuple(EVICT_ARGS, decl.evict, ev_scope)
        victim_scope = Scope("s", None, self.attrs,
                             {n: n for n in ("admission", "decoding", "position")})
        keys = decl.preempt_keys or [ir.Unary("-", ir.Ctx("admission"))]
        preempt = self._tuple("s, admission, decoding, position", keys, victim_scope)
        spill = None
        if decl.spill is not None:
            sp = decl.spill
            spill = SpillSpec(tier=sp.tier, link=sp.link,
                              work=self._fn(EVICT_ARGS, sp.work, ev_scope),
                              when=self._fn(EVICT_ARGS, sp.when, ev_scope))
        exprs = list(decl.evict or []) + ([decl.spill.work, decl.spill.when] if decl.spill else [])
        return PoolSpec(cap=decl.cap, block=decl.block, queue_keys=queue, evict_keys=evict,
                        preempt=decl.preempt, preempt_keys=preempt, requeue=decl.requeue,
                        reserve_held=decl.reserve_held, admit_via=decl.admit_via, spill=spill,
                        snapshots=any(_reads_attr(e) for e in exprs))

    def hold(self, st: ir.Hold) -> HoldSpec:
        """The runtime spec of one `hold` statement."""
        admit = Scope("s", None, self.attrs)
        session = Scope("s", "s.rng", self.attrs)
        units = [self._fn("s", hp.units, admit) for hp in st.pools]
        reserve = [None if hp.reserve is None else self._fn("s", hp.reserve, admit)
                   for hp in st.pools]
        # the join check judges each amount that reads no deployment state
        static = [(_stateless(hp.units), hp.reserve is not None and _stateless(hp.reserve))
                  for hp in st.pools]
        # the values units of live state may take beside a reserve of attributes
        # (`fast.blocked`: an admission that keeps failing is not tried again)
        ranges = [bounds(hp.units, self.attrs) if not u and r else None
                  for hp, (u, r) in zip(st.pools, static)]
        reuse = None if st.reuse is None else self._fn("s", st.reuse, admit)
        cache = None if st.cache is None else self._fn("s", st.cache, session)
        lease = None if st.lease is None else self._fn("s", st.lease.duration, session)
        return HoldSpec(units, reserve, static, reuse, cache, lease,
                        st.text or "`hold`", ranges)


def _stateless(e: Any) -> bool:
    """Whether an expression reads only constants and attributes (Part 03 §4.2)."""
    return not any(isinstance(n, (ir.Observable, ir.Now, ir.Ctx, ir.ObsAggregate))
                   for n in ir.walk(e))


def _reads_attr(e: Any) -> bool:
    """Whether an expression reads a session attribute."""
    return any(isinstance(n, ir.Attr) for n in ir.walk(e))


def resolve_member(ref: ir.Ref, members: list[Any], index: Optional[int], what: str) -> Any:
    """The member a declaration-level reference names for member `index`:
    a constant index, the only member, or the same index (pairing)."""
    if ref.index is not None:
        if isinstance(ref.index, ir.Num):
            return members[int(ref.index.value)]
        raise SimulationError(f"{what}: the index of `{ref.name}` must be a constant", 0.0)
    if len(members) == 1:
        return members[0]
    if index is not None and index < len(members):
        return members[index]
    raise SimulationError(f"{what}: `{ref.name}` has {len(members)} members; name one", 0.0)
