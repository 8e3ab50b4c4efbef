"""Source text of syntax expressions, for messages (`branch (p)`, `run d (w)`).

Parentheses are written only where the precedence table needs them, so the
text reads as the program was written, modulo spacing and redundant
parentheses."""
from __future__ import annotations

from ...core.errors import shortest
from . import tree as S

LEVEL = {"||": 2, "&&": 3, "<": 4, "<=": 4, ">": 4, ">=": 4, "==": 4, "!=": 4,
         "+": 5, "-": 5, "*": 6, "/": 6, "^": 8}


def show(e: S.Expr, need: int = 1) -> str:
    """The text of `e`, parenthesized if its level is below `need`."""
    text, level = _show(e)
    return f"({text})" if level < need else text


def _show(e: S.Expr) -> tuple[str, int]:
    if isinstance(e, S.ENum):
        return shortest(e.value), 9
    if isinstance(e, S.EName):
        text = e.name + (f"[{show(e.index)}]" if e.index is not None else "")
        return text + "".join("." + f for f in e.fields), 9
    if isinstance(e, S.ECall):
        return f"{e.fn}({', '.join(show(a) for a in e.args)})", 9
    if isinstance(e, S.EDraw):
        return f"~{e.dist}({', '.join(show(a) for a in e.args)})", 9
    if isinstance(e, S.EAgg):
        count = show(e.count) if isinstance(e.count, (S.ENum, S.EName)) else f"({show(e.count)})"
        return f"{e.op} {e.var} in {count} ({show(e.body)})", 9
    if isinstance(e, S.EUnary):
        return f"{e.op}{show(e.operand, 7)}", 7
    if isinstance(e, S.EBinary):
        lv = LEVEL[e.op]
        if e.op == "^":
            return f"{show(e.left, 9)} ^ {show(e.right, 7)}", lv
        if lv == 4:
            return f"{show(e.left, 5)} {e.op} {show(e.right, 5)}", lv
        return f"{show(e.left, lv)} {e.op} {show(e.right, lv + 1)}", lv
    if isinstance(e, S.ECond):
        return f"{show(e.cond, 2)} ? {show(e.then)} : {show(e.other)}", 1
    raise TypeError(type(e).__name__)
