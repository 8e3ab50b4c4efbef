"""The stage-finding rule of the serving forms `prefill`, `decode` and `tool`
(Part 05 §1.3): which stage a form runs on. The form is resolved where it is
used (`SServing.site`), among the stages declared above that point; the
errors are parse errors at the form."""
from __future__ import annotations

from ..errors import ParseError
from ..ir import Pos
from . import syntax as S
from .names import suggest
from .resolve import Resolver


def perr(res: Resolver, message: str, pos: Pos, help: str | None = None) -> ParseError:
    return ParseError(message, Pos(pos.file, pos.line, pos.col, 1), help=help,
                      source=res.sources.get(pos.file))


def find_stage(res: Resolver, s: S.SServing) -> S.EName:
    """The stage reference of the run a serving form stands for: its `on`
    stage, or the stage found by role (with the form's `[j]` attached)."""
    site = res.order_key(s.site or s.pos)
    above = {n: i for n, i in res.stages.items() if i.order < site}
    if s.on is not None:
        if s.on.name not in above:
            near = suggest(s.on.name, above)
            raise perr(res, f"`{s.role} on {s.on.name}`: no stage `{s.on.name}` is "
                            "declared above", s.on.pos,
                       f"did you mean stage `{near}`?" if near else None)
        return s.on
    found = [s.role] if s.role in above else []
    if not found and s.role in ("prefill", "decode"):
        found = [n for n, i in above.items() if i.kind == "step"]
    if not found:
        engine = ", to declare a `step` engine" if s.role != "tool" else ""
        raise perr(res, f"no stage declared above plays `{s.role}`", s.pos,
                   f"name a stage `{s.role}`{engine}, or write `{s.role} on STAGE (…)`")
    if len(found) > 1:
        raise perr(res, f"several stages play `{s.role}` ({', '.join(found)})", s.pos,
                   f"write `{s.role} on STAGE (…)`")
    return S.EName(found[0], s.pos, s.index)
