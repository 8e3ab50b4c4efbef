"""The distributions of `~d(...)` draws, bit for bit as spec Part 07 §5.

One function per law (Part 01 §4.2), taking the stream first. Each performs
the floating-point operations of §5 in the order given there, one draw at a
time with `math.log` (a vectorised logarithm differs in the last bit), and
with IEEE semantics where Python would raise (a division by zero).
"""
from __future__ import annotations

from math import copysign, inf, log, nan, sqrt
from typing import Callable

from .rng import Stream

__all__ = ["exp", "det", "uniform", "erlang", "h2", "bernoulli", "poisson_gap",
           "DISTRIBUTIONS"]


def _div(a: float, b: float) -> float:
    """`a / b` with IEEE-754 results for a zero divisor (inf, -inf or NaN)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return nan
        return copysign(inf, a) * copysign(1.0, b)


def _max1(x: float) -> float:
    """Rust's `x.max(1.0)`: a NaN argument gives the other one, 1."""
    return 1.0 if x != x else max(x, 1.0)


def exp(stream: Stream, m: float) -> float:
    """`~exp(m)`, mean `m`: `-m * ln(1 - U)`; one uniform."""
    return -m * log(1.0 - stream.uniform())


def det(x: float) -> float:
    """`~det(x)`: `x`; reads no uniform."""
    return x


def uniform(stream: Stream, lo: float, hi: float) -> float:
    """`~uniform(lo, hi)`: `lo + (hi - lo) * U`; one uniform."""
    return lo + (hi - lo) * stream.uniform()


def erlang(stream: Stream, k: float, m: float) -> float:
    """`~erlang(k, m)`, total mean `m`: the sum of k' exponentials of mean m/k'.

    `k' = max(k, 1)` truncated (NaN gives 1); reads k' uniforms; the sum
    starts from 0 and adds the phases left to right.
    """
    kf = _max1(k)
    if kf == inf:
        raise ValueError("~erlang: the number of phases is infinite")
    kp = int(kf)
    q = m / kp
    draw = stream.uniform
    total = 0.0
    for _ in range(kp):
        total += -q * log(1.0 - draw())
    return total


def h2(stream: Stream, m: float, c: float) -> float:
    """`~h2(m, c)`: balanced two-phase hyperexponential, mean `m`, CV² max(c, 1).

    Always reads two uniforms: `U1` picks the phase, `U2` draws its value.
    """
    v = _max1(c)
    p = 0.5 * (1.0 + sqrt((v - 1.0) / (v + 1.0)))
    m1 = _div(m, 2.0 * p)
    m2 = _div(m, 2.0 * (1.0 - p))
    mean = m1 if stream.uniform() < p else m2
    return -mean * log(1.0 - stream.uniform())


def bernoulli(stream: Stream, p: float) -> float:
    """`~bernoulli(p)`: 1 if `U < p` else 0 (NaN gives 0); one uniform."""
    return 1.0 if stream.uniform() < p else 0.0


def poisson_gap(stream: Stream, rate: float) -> float:
    """Gap of `arrive poisson(rate)`: `-ln(1 - U) / rate`, a division (§4.1)."""
    return _div(-log(1.0 - stream.uniform()), rate)


def _det_draw(stream: Stream, x: float) -> float:
    """`det` in the table's calling convention: the stream is ignored."""
    return det(x)


# Name -> (function, number of arguments). Every function here takes the
# stream first, then the arguments: the compiler binds the stream of the
# draw's context once and calls `fn(stream, *args)`.
DISTRIBUTIONS: dict[str, tuple[Callable[..., float], int]] = {
    "exp": (exp, 1),
    "det": (_det_draw, 1),
    "uniform": (uniform, 2),
    "erlang": (erlang, 2),
    "h2": (h2, 2),
    "bernoulli": (bernoulli, 1),
}
