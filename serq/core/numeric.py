"""The language's arithmetic on Python floats (spec Part 01 §3.3, §4.1).

Python's float operations raise where IEEE-754 and the C library return a
value (division by zero, `math.log(0)`, `math.exp(1000)`, a negative base to
a fractional power); these helpers give the language's values instead.
Compiled expressions call them only where the plain operator could raise.
"""
from __future__ import annotations

import math
from typing import Iterable

INF = math.inf
NAN = math.nan
_isnan = math.isnan
_isinf = math.isinf
_floor = math.floor
_ceil = math.ceil
_sqrt = math.sqrt
_exp = math.exp
_log = math.log
_pow = math.pow


def div(a: float, b: float) -> float:
    """`a / b` with IEEE semantics (`1/0` = inf, `0/0` = NaN)."""
    if b:
        return a / b
    if a != a or a == 0.0:
        return NAN
    # sign of a zero divisor decides the infinity's sign
    neg = (a < 0.0) != (math.copysign(1.0, b) < 0.0)
    return -INF if neg else INF


def power(a: float, b: float) -> float:
    """C `pow(a, b)`: `0^0` = 1, `(-8)^(1/3)` = NaN, overflow to inf."""
    try:
        return _pow(a, b)
    except OverflowError:
        if a < 0.0 and b == int(b) and int(b) % 2 == 1:
            return -INF
        return INF
    except (ValueError, ZeroDivisionError):
        if a == 0.0 and b < 0.0:
            if b == int(b) and int(b) % 2 == 1 and math.copysign(1.0, a) < 0.0:
                return -INF
            return INF
        return NAN


def fmin(a: float, b: float) -> float:
    """`min(a, b)` as the reference computes it (Rust `f64::min`): a NaN
    argument is ignored when the other is a number (Part 01 §4.1), two NaNs
    give the second, and of two equal numbers the second is returned, so
    `min(0, -0)` = -0 and `min(-0, 0)` = 0 (pyserq 0.1.3, folded and at
    run time alike)."""
    if a < b:  # (False when either is NaN)
        return a
    if b != b and a == a:
        return a
    return b


def fmax(a: float, b: float) -> float:
    """`max(a, b)` as the reference computes it (Rust `f64::max`): as
    `fmin`, with equal numbers giving the second (`max(0, -0)` = -0)."""
    if a > b:  # (False when either is NaN)
        return a
    if b != b and a == a:
        return a
    return b


def floor(x: float) -> float:
    """C `floor`: round down; infinities, NaN and zeros are returned
    unchanged (`floor(-0)` = -0, as the reference gives)."""
    if x - x != 0.0 or not x:  # (NaN or an infinity: x - x is NaN; ±0)
        return x
    return float(_floor(x))


def ceil(x: float) -> float:
    """C `ceil`: round up; infinities, NaN and zeros are returned unchanged,
    and a negative fraction rounds to -0 (`ceil(-0.5)` = -0, as the
    reference gives)."""
    if x - x != 0.0 or not x:  # (NaN or an infinity: x - x is NaN; ±0)
        return x
    r = float(_ceil(x))
    return r if r or x > 0.0 else -0.0


def sqrt(x: float) -> float:
    """Square root; NaN for a negative argument."""
    if x < 0.0:
        return NAN
    return _sqrt(x)


def exp(x: float) -> float:
    """e^x, overflowing to inf."""
    try:
        return _exp(x)
    except OverflowError:
        return INF


def ln(x: float) -> float:
    """Natural logarithm: ln(0) = -inf, NaN for x < 0."""
    if x > 0.0:
        return _log(x)
    if x == 0.0:
        return -INF
    return NAN if x == x else x


def fabs(x: float) -> float:
    """|x|."""
    return abs(x)


def seq_sum(values: Iterable[float]) -> float:
    """The values added one by one, left to right, from 0.0: the sum the
    reports are defined with. (`sum()` of floats compensates its rounding
    from Python 3.12 on, so it would give other last digits on other
    Pythons.)"""
    total = 0.0
    for v in values:
        total += v
    return total


FUNCTIONS = {
    "min": (fmin, 2), "max": (fmax, 2), "abs": (fabs, 1), "floor": (floor, 1),
    "ceil": (ceil, 1), "sqrt": (sqrt, 1), "exp": (exp, 1), "ln": (ln, 1),
    "pow": (power, 2),
}
