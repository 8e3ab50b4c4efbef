"""`at admission` bindings and the stale-state lint (Part 03 §4.7), on the
syntax tree of the shaped session code, before names are resolved.

Each binding is substituted textually into its hold's units, `reserve`,
`reuse`, `cache` and `lease` expressions (a later binding may use the earlier
ones). A binding the body reads is also prepended to the body as
`set x = e;`, which is allowed only when `e` reads nothing but constants and
attributes: the body would otherwise see a value of another moment.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ...core import ir
from ...core.errors import ParseError
from ..syntax import tree as S
from ..rewrite.expand import substitute
from ..syntax.names import CONTEXT, OBSERVABLES
from .resolve import Resolver
from ..syntax.show import show
from ..syntax.walk import first_call, first_draw, first_read, names_read, stmts_in

# what a binding the body reads may not read (besides draws)
NOT_ATTRIBUTE = ("now", "cached", *CONTEXT)
# functions whose value is live deployment state (`blocksize` is a constant)
STATE_FUNCTIONS = tuple(f for f in OBSERVABLES if f != "blocksize")


def ref_text(ref: S.EName) -> str:
    """A pool reference as written: `kv` or `kv[j]`."""
    return show(ref)


def header_text(h: S.SHold) -> str:
    """`hold kv (n) reserve (r), reqs (1)` as written, in backticks."""
    parts = []
    for p in h.pools:
        part = f"{ref_text(p.ref)} ({show(p.units)})"
        if p.reserve is not None:
            part += f" reserve ({show(p.reserve)})"
        parts.append(part)
    return f"`hold {', '.join(parts)}`"


class BindingPass:
    """Rewrites every hold of the session code: bindings substituted, the
    ones the body reads prepended as `set`s; then the stale-state lint."""

    def __init__(self, res: Resolver):
        self.res = res

    def perr(self, message: str, pos: ir.Pos, help: Optional[str] = None) -> ParseError:
        return ParseError(message, ir.Pos(pos.file, pos.line, pos.col, 1), help=help,
                          source=self.res.sources.get(pos.file))

    # ------------------------------------------------------------- rewrite
    def block(self, stmts: list) -> list:
        return [self.stmt(s) for s in stmts]

    def stmt(self, s):
        changes = {f: self.block(getattr(s, f)) for f in ("then", "other", "body")
                   if isinstance(getattr(s, f, None), list)}
        if changes:
            s = dataclasses.replace(s, **changes)
        return self.hold(s) if isinstance(s, S.SHold) else s

    def hold(self, h: S.SHold) -> S.SHold:
        """One hold whose body is already rewritten."""
        h = dataclasses.replace(h, text=header_text(h))
        if not h.bindings:
            return h
        mapping: dict[str, S.Expr] = {}
        bindings: list[S.SBinding] = []
        for b in h.bindings:
            self.check_name(b, mapping)
            value = substitute(b.value, mapping, None)
            mapping[b.name] = value
            bindings.append(S.SBinding(b.name, value, b.pos))
        sub = lambda e: substitute(e, mapping, None) if e is not None else None  # noqa: E731
        pools = [S.SHoldPool(p.ref, sub(p.units), sub(p.reserve)) for p in h.pools]
        read = names_read(h.body)
        prelude = [self.prelude(b) for b in bindings if b.name in read]
        return dataclasses.replace(h, pools=pools, reuse=sub(h.reuse), bindings=bindings,
                                   body=prelude + h.body, cache=sub(h.cache),
                                   lease_time=sub(h.lease_time))

    def check_name(self, b: S.SBinding, earlier: dict) -> None:
        res, x = self.res, b.name
        if x in earlier:
            raise self.perr(f"`{x}` is bound twice in one `at admission`", b.pos)
        clash = ("a built-in session attribute" if x in ir.BUILTIN_ATTRIBUTES else
                 "a `let` constant" if x in res.constants else
                 "a pool" if x in res.pools else
                 "a stage" if x in res.stages else None)
        if clash:
            raise res.err(f"`at admission ({x} = …)`: `{x}` is {clash}", b.pos,
                          "give the binding a name of its own")
        draw = first_draw(b.value)
        if draw is not None:
            raise res.err(f"`{x}` draws a sample: an `at admission` binding is "
                          "substituted, so a name used twice would draw twice", draw.pos,
                          "sample into an attribute before the hold")

    def prelude(self, b: S.SBinding) -> S.SSet:
        """`set x = e;` for a binding the body reads (§4.7)."""
        name = first_read(b.value, NOT_ATTRIBUTE)
        call = first_call(b.value, STATE_FUNCTIONS)
        if name is not None or call is not None:
            what = name.name if name is not None else f"{call.fn}(…)"
            help = ("in the body read `cached`, the units the admission consumed"
                    if what == "cached" else "name what the body needs with a `set` in "
                    "the body")
            raise self.perr(f"the body reads `{b.name}`, and `{b.name}` reads `{what}`: "
                            "the body sees a binding that reads only attributes and "
                            "constants", b.pos, help)
        return S.SSet(b.name, b.value, b.pos, b.pos)

    # ---------------------------------------------------------------- lint
    def stale(self, code: list, stale: Optional[dict[str, str]] = None) -> dict[str, str]:
        """A `set x = …` reading live pool or stage state, followed (textually)
        by a hold header that reads `x`, is a link error (§4.7). A `fork`
        leg works on a copy of the attributes: what it sets stays in the leg
        (pyserq 0.1.3 reads it so). Returns the stale names after `code`."""
        stale = dict(stale or {})
        for s in code:
            if isinstance(s, S.SFork):
                self.stale(s.body, stale)  # the leg's own sets end with it
                continue
            if isinstance(s, S.SSet):
                call = first_call(s.value, STATE_FUNCTIONS)
                if call is not None and s.name not in stale:
                    stale[s.name] = show(call)
            elif isinstance(s, S.SHold) and stale:
                header = [b.value for b in s.bindings] + [s.reuse] + \
                    [e for p in s.pools for e in (p.units, p.reserve)]
                read = first_read([e for e in header if e is not None], tuple(stale))
                if read is not None:
                    x = read.name
                    raise self.res.err(
                        f"`{x}` reads {stale[x]} when the session reaches the `set`, and "
                        f"is used in the header of a hold on `{s.pools[0].ref.name}`, "
                        "which is read when the session is admitted", read.pos,
                        f"write `at admission ({x} = …)` if the admission value is what "
                        "you meant")
            for attr in ("then", "other", "body"):
                inner = getattr(s, attr, None)
                if isinstance(inner, list):
                    stale = self.stale(inner, stale)
        return stale


def prepare_holds(res: Resolver, init: list, turn: list,
                  session: Optional[list]) -> Optional[list]:
    """The session code with every hold's bindings applied, after the lint."""
    if session is None:
        return None
    p = BindingPass(res)
    out = p.block(session)
    p.stale(init + turn + out)
    return out


def leased_pools(code: Optional[list]) -> set[str]:
    """Pool families some hold of the code leases (`release` may end them)."""
    return {s.lease.name for s in stmts_in(code or [])
            if isinstance(s, S.SHold) and s.lease is not None}
