"""Linking `hold`, `grow`, `load`, `drop`, `release` and a run's `growing`
(Part 03 §4–5): header moments, the join-check flag `static`, constant
amounts and demand above the cap, `reuse`/`cached` without `cache`, and the
rule that grow/load/growing/release stand inside a hold of their pool."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, replace
from typing import Iterator, Optional

from ...core import ir
from ...core.errors import shortest
from ...core.ir import Pos
from ...core.tolerance import TOL
from ..syntax import tree as S
from .bindings import ref_text
from .resolve import ADMIT, SESSION, Moment, Resolver, fold
from ..syntax.show import show
from ..syntax.walk import first_draw, first_read

STATE_NODES = (ir.Observable, ir.Now, ir.Ctx)
CACHE_HELP = ("write `cache (0)` to consume the prefix and keep nothing, or `cache (ℓ)` "
              "to keep ℓ of what was computed")


@dataclass
class HoldFrame:
    """An enclosing hold while its body is linked."""

    pools: list[tuple[str, str]]   # (family, index as written)
    cache: bool
    label: str                     # the first pool as written


def index_text(ref: S.EName) -> str:
    return show(ref.index) if ref.index is not None else ""


def ir_nodes(node) -> Iterator:
    """An IR expression and every node under it."""
    yield node
    if dataclasses.is_dataclass(node):
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, (ir.Expr, ir.Ref)):
                    yield from ir_nodes(v)


def is_static(*exprs: Optional[ir.Expr]) -> bool:
    """A demand that reads no deployment state: only constants and attributes
    (no observable, `now`, context variable; Part 03 §4.2 step 1)."""
    return not any(isinstance(n, STATE_NODES) for e in exprs if e is not None
                   for n in ir_nodes(e))


def rounded_up(x: float, block: Optional[float]) -> float:
    """`ru(x)`: x rounded up to a multiple of the block (§3)."""
    if block is None or math.isinf(x):
        return x
    return math.ceil(x / block) * block


class HoldLinker:
    """The pool statements of `StatementLinker` (a mixin: it uses the
    linker's `res`, `expr` and `block`)."""

    res: Resolver
    holds: list[HoldFrame]
    leased: set[str]

    def expr(self, e: S.Expr) -> ir.Expr:  # pragma: no cover - the linker's
        raise NotImplementedError

    def block(self, stmts: list) -> list[ir.Stmt]:  # pragma: no cover - the linker's
        raise NotImplementedError

    # -------------------------------------------------------------- checks
    def check_cached(self, e) -> None:
        """`cached` read in the body of a hold without `cache` (§4.8)."""
        if not self.holds or self.holds[-1].cache:
            return
        n = first_read(e, ("cached",))
        if n is not None:
            raise self.res.err(
                f"`cached` is read in a hold on `{self.holds[-1].label}` that has no "
                "`cache` clause: such a hold consumes nothing of the session's cached "
                "prefix, so `cached` is 0 there", n.pos,
                CACHE_HELP + ", or read `cached` above the hold")

    def held(self, ref: S.EName) -> Optional[str]:
        """None if an enclosing hold takes `ref` as written; else "index" when
        only the index differs, "pool" when no enclosing hold takes the pool."""
        taken = [p for frame in self.holds for p in frame.pools]
        if (ref.name, index_text(ref)) in taken:
            return None
        return "index" if any(name == ref.name for name, _ in taken) else "pool"

    def enclosing(self, ref: S.EName, word: str) -> None:
        """`grow`, `load` and `growing` act on an enclosing hold of the pool."""
        why = self.held(ref)
        if why is None:
            return
        pos = Pos(ref.pos.file, ref.pos.line, ref.pos.col, len(ref.name))
        text = ref_text(ref)
        if why == "index":
            raise self.res.err(f"`{word} {text}` outside a hold of `{text}`: write the "
                               "pool as the hold does, index included", pos)
        raise self.res.err(f"`{word} {text}` outside a hold of `{ref.name}`: it acts on "
                           "an enclosing hold's allocation", pos)

    def growing(self, ref: S.EName) -> ir.Ref:
        """The pool of a run's `growing P` (Part 04 §4)."""
        out = self.res.ref(ref, SESSION, {}, kind="pool")
        self.enclosing(ref, "growing")
        return out

    # --------------------------------------------------------------- hold
    def header_moment(self, h: S.SHold) -> Moment:
        """The Admit moment of a hold's header: it reads the registers of the step
        stage that admits the hold's first pool (Part 04 §9)."""
        info = self.res.pools.get(h.pools[0].ref.name)
        via = self.res.stages.get(info.admit_via) if info and info.admit_via else None
        return replace(ADMIT, registers=frozenset(via.registers)) if via else ADMIT

    def admit(self, e: S.Expr, what: str, family: Optional[str], pos: Pos,
              moment: Moment = ADMIT) -> ir.Expr:
        """A header expression at the Admit moment."""
        draw = first_draw(e)
        if draw is not None:
            raise self.res.err(f"a hold's {what} may not draw; sample into an attribute "
                               "first", draw.pos)
        self.check_cached(e)
        mark = len(self.res.cost_marks)
        value = self.res.expr(e, moment)
        if family is not None:
            self.res.consumer(mark, {family}, pos)
        return value

    def hold_pool(self, h: S.SHold, p: S.SHoldPool, m: Moment) -> ir.HoldPool:
        res = self.res
        ref = res.ref(p.ref, SESSION, {}, kind="pool")
        name = ref_text(p.ref)
        units = self.admit(p.units, "units", p.ref.name, h.pos, m)
        res.amount(units, f"hold {name}", ref.pos)
        reserve = None
        if p.reserve is not None:
            reserve = self.admit(p.reserve, "`reserve`", p.ref.name, h.pos, m)
            res.amount(reserve, f"hold {name} (…) reserve", ref.pos)
        u, r = fold(units), fold(reserve) if reserve is not None else None
        if u is not None and (reserve is None or r is not None):
            self.check_cap(p.ref.name, max(u, r if r is not None else u), ref.pos)
        return ir.HoldPool(ref, units, reserve, static=is_static(units, reserve))

    def check_cap(self, pool: str, need: float, pos: Pos) -> None:
        """A constant demand above the cap never fits (§4.2 step 1): above
        cap + 1e-9, the tolerance of every comparison against a capacity
        (pyserq 0.1.3 refuses anything above the cap: docs/departures.md)."""
        info = self.res.pools[pool]
        blocks = rounded_up(need, info.block)
        if blocks > info.cap + TOL:
            extra = (f" ({shortest(blocks)} in blocks of {shortest(info.block)})"
                     if blocks != need else "")
            raise self.res.err(f"a hold on pool `{pool}` waits for {shortest(need)} units"
                               f"{extra}, more than its cap {shortest(info.cap)}", pos)

    def l_SHold(self, h: S.SHold) -> ir.Stmt:
        res = self.res
        label = ref_text(h.pools[0].ref)
        if h.reuse is not None and h.cache is None:
            raise res.err(f"`reuse` on a hold on `{label}` that has no `cache` clause: such "
                          "a hold consumes nothing of the session's cached prefix, so the "
                          "bound has nothing to bound", h.pos, CACHE_HELP)
        m = self.header_moment(h)
        for b in h.bindings:
            self.admit(b.value, "`at admission` bindings", None, h.pos, m)
        seen: list[tuple[str, str]] = []
        pools = []
        for p in h.pools:
            key = (p.ref.name, index_text(p.ref))
            if key in seen:
                raise res.err(f"a hold takes `{ref_text(p.ref)}` twice; hold it once, with "
                              "the units (and any reserve) added", p.ref.pos)
            seen.append(key)
            pools.append(self.hold_pool(h, p, m))
        reuse = None
        if h.reuse is not None:
            reuse = self.admit(h.reuse, "`reuse`", None, h.pos, m)
            res.amount(reuse, f"hold {label} (…) reuse", pools[0].ref.pos)
        lease_ref = None
        if h.lease is not None:
            lease_ref = res.ref(h.lease, SESSION, {}, kind="pool")
            if (h.lease.name, index_text(h.lease)) not in seen:
                raise res.err(f"`lease {ref_text(h.lease)}`: the hold does not take that "
                              "pool (write it as the hold does, index included)",
                              lease_ref.pos)
        self.holds.append(HoldFrame(seen, h.cache is not None, label))
        try:
            body = self.block(h.body)
        finally:
            self.holds.pop()
        cache = self.expr(h.cache) if h.cache is not None else None
        lease = ir.Lease(lease_ref, self.expr(h.lease_time)) if lease_ref else None
        return ir.Hold(pools, body, reuse, cache, lease, text=h.text, pos=h.pos)

    # ----------------------------------------------- grow, load, drop, release
    def l_SPoolStmt(self, s: S.SPoolStmt) -> ir.Stmt:
        res = self.res
        ref = res.ref(s.ref, SESSION, {}, kind="pool")
        head = f"{s.keyword} {ref_text(s.ref)}"
        if s.keyword == "drop":
            return ir.Drop(ref, s.pos)
        if s.keyword == "release":
            if self.held(s.ref) is not None and s.ref.name not in self.leased:
                raise res.err(f"`{head}` outside a hold of `{ref_text(s.ref)}`, and no hold "
                              f"leases `{s.ref.name}`: it takes an enclosing hold's "
                              "allocation, or a lease of it", ref.pos)
            return ir.Release(ref, s.pos)
        self.enclosing(s.ref, s.keyword)
        mark = len(res.cost_marks)
        amount = self.expr(s.amount)
        res.consumer(mark, {s.ref.name}, s.pos)
        res.amount(amount, head, ref.pos)
        node = ir.Grow if s.keyword == "grow" else ir.Load
        return node(ref, amount, text=f"`{head} ({show(s.amount)})`", pos=s.pos)
