"""The operators and functions of serQ values by name (Part 01 §3.2–3.3, §4.1),
for constant folding and any other evaluator of the kernel IR.

The number rules themselves are written once, in `numeric` (the functions
compiled expressions call at run time); this module only dispatches on an
operator's or a function's name, so that a folded constant and the same
expression computed at run time are the same double
(tests/test_number_rules.py compares them, and both with the reference).
"""
from __future__ import annotations

from . import numeric

INF = numeric.INF
NAN = numeric.NAN
divide = numeric.div
power = numeric.power


def truth(x: float) -> bool:
    """A value is true when it is not 0 (NaN is true)."""
    return x != 0


def binary(op: str, a: float, b: float) -> float:
    """The value of `a op b` (both operands already evaluated)."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return numeric.div(a, b)
    if op == "^":
        return numeric.power(a, b)
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
    """The value of `op a` (`-` or `!`)."""
    return -a if op == "-" else float(not truth(a))


def call(fn: str, args: list[float]) -> float:
    """An arithmetic function of Part 01 §4.1 (`numeric.FUNCTIONS`)."""
    return float(numeric.FUNCTIONS[fn][0](*args))
