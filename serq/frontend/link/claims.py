"""Claims (Part 06 §8): `claim NAME [given (g)] : every|some iteration of S (e);`
and `claim NAME [given (g)] : at end (e);`, lowered to `ir.Claim` with the
checks of §8.2 (what each part may read) and of Part 04 §10 (reserved names)."""
from __future__ import annotations

from dataclasses import replace

from ...core import ir
from ..syntax import tree as S
from .moments import END, GIVEN, ITERATION
from .resolve import CONSTANT, Resolver


def lower_claims(res: Resolver, claims: list[S.IClaim]) -> list[ir.Claim]:
    """The IR claims in declaration order (after the observations are known)."""
    out: list[ir.Claim] = []
    for c in claims:
        if any(x.name == c.name for x in out):
            raise res.err(f"claim `{c.name}` is declared twice", c.name_pos)
        given = res.expr(c.given, GIVEN) if c.given is not None else None
        if c.kind == "at_end":
            value = res.expr(c.value, replace(END, registers=frozenset(res.registers)))
            out.append(ir.Claim(c.name, c.kind, value, None, given, c.name_pos))
            continue
        stage = iteration_stage(res, c)
        regs = res.stages[stage.name].registers
        value = res.expr(c.value, replace(ITERATION, registers=frozenset(regs)))
        out.append(ir.Claim(c.name, c.kind, value, stage, given, c.name_pos))
    return out


def iteration_stage(res: Resolver, c: S.IClaim) -> ir.Ref:
    """The step stage a claim over iterations reads: one member, named by a number."""
    e = c.stage
    assert e is not None
    ref = res.ref(e, CONSTANT, {}, evaluate=e.index is not None)
    info = res.stages[e.name]
    if info.kind != "step":
        raise res.err(f"claim `{c.name}`: stage `{e.name}` is a {info.kind} stage: only a "
                      "step stage has iterations", ref.pos)
    if info.size is not None and e.index is None:
        raise res.err(f"claim `{c.name}`: stage `{e.name}` is an array of {info.size}: "
                      f"name one member by a number, as `{e.name}[0]`", ref.pos)
    return ref
