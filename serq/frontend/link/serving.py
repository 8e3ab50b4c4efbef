"""The stage-finding rule of the serving forms `prefill`, `decode`, `tool`
and `transfer` (Part 05 §1.3): which stage a form runs on. The form is
resolved where it is used (`SServing.site`), among the stages declared above
that point; inside a queue entry (`SServing.entry`) the only step stage that
counts is the queue's own. The errors are parse errors at the form."""
from __future__ import annotations

from ...core.errors import ParseError
from ...core.ir import Pos
from ..syntax import tree as S
from ..syntax.names import suggest
from .resolve import Resolver


def perr(res: Resolver, message: str, pos: Pos, help: str | None = None) -> ParseError:
    return ParseError(message, Pos(pos.file, pos.line, pos.col, 1), help=help,
                      source=res.sources.get(pos.file))


ROLE_NAMES = {"prefill": ("prefill",), "decode": ("decode",), "tool": ("tool",),
              "transfer": ("link", "transfer")}


def declared_above(res: Resolver, s: S.SServing, ref: S.EName, above: dict) -> None:
    """An `on` stage must be declared above the form."""
    if ref.name not in above:
        near = suggest(ref.name, above)
        raise perr(res, f"`{s.role} on {ref.name}`: no stage `{ref.name}` is "
                        "declared above", ref.pos,
                   f"did you mean stage `{near}`?" if near else None)


def find_stages(res: Resolver, s: S.SServing) -> list[S.EName]:
    """The stage references of the run a serving form stands for: its `on`
    stage(s), or the stage found by role (with the form's `[j]` attached)."""
    site = res.order_key(s.site or s.pos)
    above = {n: i for n, i in res.stages.items() if i.order < site}
    if s.on is not None:
        for ref in [s.on, *s.ons]:
            declared_above(res, s, ref, above)
        return [s.on, *s.ons]
    found = [n for n in ROLE_NAMES[s.role] if n in above]
    own = None
    if not found and s.role in ("prefill", "decode"):
        if s.entry is None:
            found = [n for n, i in above.items() if i.kind == "step"]
        elif s.entry.step and s.entry.stage is not None:
            own = s.entry.stage
            found = [own.name]
    if not found:
        if s.role == "transfer":
            help = "name a stage `link` (or `transfer`), or write `transfer on STAGE …`"
        elif s.entry is not None and s.role != "tool":
            help = (f"name a stage `{s.role}`, give queue `{s.entry.queue}` a `serve "
                    f"step {{ … }}`, or write `{s.role} on STAGE (…)`")
        else:
            engine = ", to declare a `step` engine" if s.role != "tool" else ""
            help = f"name a stage `{s.role}`{engine}, or write `{s.role} on STAGE (…)`"
        raise perr(res, f"no stage declared above plays `{s.role}`", s.pos, help)
    if len(found) > 1:
        raise perr(res, f"several stages play `{s.role}` ({', '.join(found)})", s.pos,
                   f"write `{s.role} on STAGE (…)`")
    if own is not None:
        if s.index is not None:
            raise perr(res, f"`{s.role}[…]` inside queue `{s.entry.queue}`: its own "
                            "stage is the member's", s.pos,
                       f"write `{s.role} (…)`, or `{s.role} on STAGE (…)`")
        return [own]
    return [S.EName(found[0], s.pos, s.index)]
