"""Constants (Part 01 §2.4, §2.6): folding `let`s and `args.number` inputs,
`--set` overrides, and the execution settings (§2.7)."""
from __future__ import annotations

import math
from typing import Optional, Union

from ...core import ir
from ...core.errors import LinkError, SerqError, shortest
from ..syntax import tree as S
from ..parse.build import parse_expression
from ..syntax.names import suggest
from .resolve import Resolver, whole
from ..syntax.walk import nodes

Value = Union[str, float, int]
MAX_SEED = 2 ** 53


def override_expr(name: str, value: Value, flag: str = "--set") -> S.Expr:
    """The expression an override supplies (a string is parsed)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return S.ENum(float(value), ir.Pos(f"{flag} {name}", 1, 1))
    return parse_expression(str(value), f"{flag} {name}")


class UnknownOverride(LinkError):
    """A `--set` name that is no `let` of the program (`name`; `available`:
    the names an override may replace)."""

    def __init__(self, name: str, available: list[str]):
        near = suggest(name, available)
        super().__init__(f"unknown `let` override `{name}`",
                         help=(f"did you mean `{near}`? " if near else "")
                         + "an override replaces a declared `let`; available constants: "
                         + (", ".join(available) or "none"))
        self.args = (name, available)
        self.name = name
        self.available = available


class Constants:
    """Folds every `let` in item order; `final` holds the last bindings.

    `structural`: an override may change an array size (the program is built
    with the new size; an extension for studies, see `serq.load`)."""

    def __init__(self, items: list, resolver: Resolver, sets: Optional[dict] = None,
                 structural: bool = False):
        self.items = items
        self.structural = structural
        self.lets = [i for i in items if isinstance(i, S.ILet)]
        self.res = resolver
        self.before: dict[int, dict[str, float]] = {}  # id(stage) -> bindings before it
        self.final: dict[str, float] = {}
        self.deps: dict[str, set[str]] = {}
        self.overrides = self.targets(sets or {})

    def targets(self, sets: dict) -> dict[int, tuple[str, S.Expr]]:
        """Which lets each override replaces: id(let) -> (override name, expr)."""
        out: dict[int, tuple[str, S.Expr]] = {}
        for name, value in sets.items():
            hit = [l for l in self.lets if l.ext == name]
            if not hit:
                hit = [l for l in self.lets if l.name == name]
            if not hit:
                avail = list(dict.fromkeys(l.ext or l.name for l in self.lets))
                raise UnknownOverride(name, avail)
            expr = override_expr(name, value)
            for l in hit:
                out[id(l)] = (name, expr)
        return out

    def run(self) -> dict[str, float]:
        """Fold the lets in order; every later use sees the last bindings."""
        env: dict[str, float] = {}
        for item in self.items:
            if isinstance(item, (S.IStage, S.IPool)):
                self.before[id(item)] = env
            elif isinstance(item, S.ILet):
                self.res.constants = env
                env = {**env, item.name: self.fold_let(item)}
                self.res.constant_pos[item.name] = item.name_pos
        self.final = env
        self.res.constants = env
        return env

    def fold_let(self, let: S.ILet) -> float:
        """The value of one `let` (or its override) over the bindings so far."""
        over = self.overrides.get(id(let))
        expr = over[1] if over else let.value
        try:
            value = self.res.constant(expr, f"`let {let.name}`")
        except SerqError as e:
            if over is None:
                raise
            raise LinkError(f"the `let` override `{over[0]}`: {e.message}") from None
        if value != value:
            if over:
                raise LinkError(f"the `let` override `{over[0]}`: the value is NaN")
            raise self.res.err(f"`let {let.name}` is NaN", let.name_pos,
                               "a constant is a number or `inf`; `0/0` and "
                               "`inf - inf` are not")
        deps = {let.name} | ({let.ext} if let.ext else set())
        for n in _names(expr):
            deps |= self.deps.get(n.name, set())
        self.deps[let.name] = deps
        return value

    def array_size(self, stage: Union[S.IStage, S.IPool]) -> float:
        """The value of a stage's or pool's array size: it reads only the
        constants bound before the declaration, and no override may change it
        (unless `structural`)."""
        if not self.structural:
            self.check_size_overrides(stage.size)
        self.res.constants = self.before.get(id(stage), self.final)
        try:
            return self.res.constant(stage.size, "an array size")
        finally:
            self.res.constants = self.final

    def check_size_overrides(self, size: S.Expr) -> None:
        """An override may not change an array size (Part 01 §2.4)."""
        used: set[str] = set()
        for n in _names(size):
            used |= self.deps.get(n.name, set())
        for _, (name, _) in self.overrides.items():
            if name in used:
                raise LinkError(f"the `let` override `{name}` affects an array size "
                                "resolved during parsing")


def _names(e) -> list[S.EName]:
    return [n for n in nodes(e) if isinstance(n, S.EName)]


# ------------------------------------------------------------------ settings
def setting_value(res: Resolver, value, key: str, expr_of_item) -> Optional[float]:
    if value is None:
        if expr_of_item is None:
            return None
        return res.constant(expr_of_item, f"`{key}`")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return res.constant(parse_expression(str(value), f"--{key}"), f"`{key}`")


def _setting_error(res: Resolver, message: str, given, written) -> LinkError:
    """A bad setting: at its expression in `run { … }` when it comes from there."""
    pos = getattr(written, "pos", None) if given is None else None
    if pos is None:
        return LinkError(message)
    return res.err(message, pos)


def settings(items: list, res: Resolver, arrival: str, *, horizon=None, warmup=None,
             seed=None, arrivals=None, need_horizon: bool = True) -> ir.Settings:
    """The execution settings: the `run { … }` block, replaced by the arguments."""
    block: dict[str, S.Expr] = {}
    for item in items:
        if isinstance(item, S.ISettings):
            block = {k: e for k, e, _ in item.settings}
    h = setting_value(res, horizon, "horizon", block.get("horizon"))
    w = setting_value(res, warmup, "warmup", block.get("warmup"))
    s = setting_value(res, seed, "seed", block.get("seed"))
    a = setting_value(res, arrivals, "arrivals", block.get("arrivals"))
    w = 0.0 if w is None else w
    if h is None:
        if need_horizon:
            raise LinkError("no horizon (run { horizon T; })",
                            help="give one in the program or with --horizon")
    elif not (math.isfinite(h) and h > w and h > 0):
        raise _setting_error(res, f"the horizon is {shortest(h)}: a horizon is a finite "
                             "number greater than the warm-up", horizon, block.get("horizon"))
    if not (w == w and w >= 0 and (h is None or w < h) and math.isfinite(w)):
        raise _setting_error(res, f"the warm-up is {shortest(w)}: it is a number with "
                             "0 ≤ warmup < horizon", warmup, block.get("warmup"))
    s = 1.0 if s is None else s
    if not whole(s) or not 0 <= s <= MAX_SEED:
        raise _setting_error(res, f"the seed is {shortest(s)}: a count is a whole number "
                             f"from 0 to {MAX_SEED}", seed, block.get("seed"))
    if a is not None:
        if not whole(a) or a < 1:
            raise _setting_error(res, f"arrivals is {shortest(a)}: a count is a whole "
                                 "number ≥ 1", arrivals, block.get("arrivals"))
        if arrival not in ("poisson", "renewal"):
            raise LinkError("arrivals applies only to poisson or renewal workloads")
    return ir.Settings(horizon=h, warmup=w, seed=int(s),
                       arrivals=int(a) if a is not None else None)
