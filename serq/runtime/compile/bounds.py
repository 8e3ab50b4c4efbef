"""Bounds of an amount over the live state it reads (interval arithmetic).

A hold's amount that reads deployment state (`used(kv)`, `budget_left(E)`,
`now`, ...) takes a new value at every admission attempt. `bounds(e, attrs)`
compiles, for one such expression, a function of the waiting session that
returns an interval [lo, hi] holding every value the expression can take
while the session's attributes stay what they are: attributes and constants
are read as they stand, the reads of live state only by their range (the
counts a pool or a stage reports, a cached prefix, `budget_left` while an
engine admits and `now` are never negative; `used` and `free` are sums of
fractions that may end a hair below 0), anything else as unknown. The fast paths use it to
know that re-evaluating the amount can neither fail nor change what the
attempt needs (`fast.blocked`).

Rounding is monotone, so the float operations on the bounds bound the
float operations on the values. A NaN bound, or a form not handled
(division by a variable, the elementary functions, context variables,
draws), makes the interval unknown: (-inf, inf).
"""
from __future__ import annotations

import math
from typing import Any, Callable

from ...core import ir

Interval = tuple[float, float]
Bound = Callable[[Any], Interval]

INF = math.inf
UNKNOWN: Interval = (-INF, INF)

# observables whose values are never negative (Part 03 §5, Part 04 §7.1): counts,
# a cached prefix (an entry leaves at 1e-9), the budget left while the default
# body admits (it admits only while some is left)
NONNEGATIVE = frozenset({"cachedin", "holders", "queued", "queue", "busy", "budget_left"})


def _checked(lo: float, hi: float) -> Interval:
    return UNKNOWN if lo != lo or hi != hi else (lo, hi)


def _add(a: Interval, b: Interval) -> Interval:
    return _checked(a[0] + b[0], a[1] + b[1])


def _sub(a: Interval, b: Interval) -> Interval:
    return _checked(a[0] - b[1], a[1] - b[0])


def _mul(a: Interval, b: Interval) -> Interval:
    if a[0] >= 0.0 and b[0] >= 0.0:  # (the common case; 0 * inf is NaN: unknown)
        return _checked(a[0] * b[0], a[1] * b[1])
    products = [x * y for x in a for y in b]
    return _checked(min(products), max(products))


def _neg(a: Interval) -> Interval:
    return (-a[1], -a[0])


def bounds(e: ir.Expr, attrs: dict[str, str]) -> Bound:
    """The interval function of expression `e` (see the module text);
    `attrs` maps an attribute's name to its slot on the session."""
    if isinstance(e, ir.Num):
        v = float(e.value)
        point = _checked(v, v)
        return lambda s: point
    if isinstance(e, ir.Attr):
        slot = attrs[e.name]

        def attribute(s: Any) -> Interval:
            v = getattr(s, slot)
            return _checked(v, v)
        return attribute
    if isinstance(e, ir.Now) or (isinstance(e, ir.Observable) and e.fn in NONNEGATIVE):
        return lambda s: (0.0, INF)
    if isinstance(e, ir.Unary):
        x = bounds(e.operand, attrs)
        if e.op == "-":
            return lambda s: _neg(x(s))
        return lambda s: (0.0, 1.0)
    if isinstance(e, ir.Binary):
        a = bounds(e.left, attrs)
        b = bounds(e.right, attrs)
        op = e.op
        if op == "+":
            return lambda s: _add(a(s), b(s))
        if op == "-":
            return lambda s: _sub(a(s), b(s))
        if op == "*":
            return lambda s: _mul(a(s), b(s))
        if op == "/" and isinstance(e.right, ir.Num) and e.right.value > 0.0 \
                and e.right.value < INF:
            c = float(e.right.value)

            def divided(s: Any) -> Interval:
                lo, hi = a(s)
                return _checked(lo / c, hi / c)
            return divided
        if op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
            return lambda s: (0.0, 1.0)
        return lambda s: UNKNOWN
    if isinstance(e, ir.Cond):
        t = bounds(e.then, attrs)
        o = bounds(e.other, attrs)
        return lambda s: _union(t(s), o(s))
    if isinstance(e, ir.Call) and e.fn in ("min", "max", "floor", "ceil", "abs"):
        args = [bounds(a, attrs) for a in e.args]
        fn = e.fn
        return lambda s: _call(fn, [f(s) for f in args])
    return lambda s: UNKNOWN


def _union(a: Interval, b: Interval) -> Interval:
    return (min(a[0], b[0]), max(a[1], b[1]))


def _call(fn: str, xs: list[Interval]) -> Interval:
    if fn == "min":
        return (min(x[0] for x in xs), min(x[1] for x in xs))
    if fn == "max":
        return (max(x[0] for x in xs), max(x[1] for x in xs))
    (lo, hi), = xs
    if fn in ("floor", "ceil"):  # (monotone: the bounds' images; an infinite bound stays)
        f = math.floor if fn == "floor" else math.ceil
        return (f(lo) if -INF < lo < INF else lo, f(hi) if -INF < hi < INF else hi)
    if lo >= 0.0:  # abs
        return (lo, hi)
    if hi <= 0.0:
        return (-hi, -lo)
    return (0.0, max(-lo, hi))
