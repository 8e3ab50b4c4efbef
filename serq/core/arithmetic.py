"""IEEE-754 arithmetic of serQ values (Part 01 §3.2–3.3, §4.1).

Python's float operators raise where IEEE-754 (and the reference) give an
infinity or NaN; these functions give the IEEE result instead. Used for
constant folding; usable by any evaluator of the kernel IR.
"""
from __future__ import annotations

import math

INF = math.inf
NAN = math.nan


def truth(x: float) -> bool:
    """A value is true when it is not 0 (NaN is true)."""
    return x != 0


def divide(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or a != a:
            return NAN
        return math.copysign(1.0, a) * math.copysign(1.0, b) * INF
    return a / b


def power(a: float, b: float) -> float:
    """`a ^ b`, as C's pow."""
    try:
        return math.pow(a, b)
    except OverflowError:
        odd = float(b).is_integer() and int(b) % 2 == 1
        if abs(a) < 1:  # tiny base, negative exponent
            return -INF if (a < 0 or math.copysign(1, a) < 0) and odd else INF
        return -INF if a < 0 and odd else INF
    except ValueError:
        if a == 0 and b < 0:
            odd = float(b).is_integer() and int(b) % 2 == 1
            return -INF if math.copysign(1, a) < 0 and odd else INF
        return NAN


def binary(op: str, a: float, b: float) -> float:
    """The value of `a op b` (both operands already evaluated)."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return divide(a, b)
    if op == "^":
        return power(a, b)
    if op == "<":
        return float(a < b)
    if op == "<=":
        return float(a <= b)
    if op == ">":
        return float(a > b)
    if op == ">=":
        return float(a >= b)
    if op == "==":
        return float(a == b)
    if op == "!=":
        return float(a != b)
    if op == "&&":
        return float(truth(a) and truth(b))
    if op == "||":
        return float(truth(a) or truth(b))
    raise ValueError(f"unknown operator {op}")


def unary(op: str, a: float) -> float:
    return -a if op == "-" else float(not truth(a))


def _nan_pick(fn, a: float, b: float) -> float:
    if a != a:
        return b
    if b != b:
        return a
    return fn(a, b)


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return INF


def _ln(x: float) -> float:
    if x != x or x < 0:
        return NAN
    if x == 0:
        return -INF
    return math.log(x)


def _round(fn, x: float) -> float:
    return x if (x != x or x in (INF, -INF)) else float(fn(x))


FUNCTIONS = {
    "min": lambda a, b: _nan_pick(min, a, b),
    "max": lambda a, b: _nan_pick(max, a, b),
    "abs": abs,
    "floor": lambda x: _round(math.floor, x),
    "ceil": lambda x: _round(math.ceil, x),
    "sqrt": lambda x: NAN if x != x or x < 0 else math.sqrt(x),
    "exp": _exp,
    "ln": _ln,
    "pow": power,
}


def call(fn: str, args: list[float]) -> float:
    """An arithmetic function of Part 01 §4.1."""
    return float(FUNCTIONS[fn](*args))
