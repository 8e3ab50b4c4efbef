"""Sweep grids: `NAME=START:STOP:STEP` (both ends included) or
`NAME=V1,V2,…`, and their points (the Cartesian product, in the order the
parameters are given, the last one varying fastest)."""
from __future__ import annotations

import itertools
import math
from decimal import Decimal, InvalidOperation
from typing import Any, Iterable, Mapping, Union

Value = Union[int, float, str]

#: Most points one range may give (a typo like 0:1e9:1 is refused, not run).
MAX_RANGE = 100_000
#: Most points a whole grid may have (the product of its axes' lengths).
MAX_POINTS = 100_000


class GridError(ValueError):
    """A grid text that cannot be read (the message says how to write it)."""


def _value(text: str) -> Value:
    text = text.strip()
    if not text:
        raise GridError("an empty grid value")
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text  # an expression text, handed to --set as is


def _range(name: str, text: str) -> list[Value]:
    parts = text.split(":")
    try:
        start, stop, step = (Decimal(p.strip()) for p in parts)
    except (InvalidOperation, ValueError):
        raise GridError(f"--grid {name}={text}: a range is START:STOP:STEP with three "
                        "numbers, e.g. lam=0.5:0.9:0.1") from None
    if not all(v.is_finite() for v in (start, stop, step)):
        raise GridError(f"--grid {name}={text}: START, STOP and STEP are finite numbers "
                        "(not nan or inf)")
    if step <= 0 or stop < start:
        raise GridError(f"--grid {name}={text}: the step must be above 0 and "
                        "STOP at least START")
    try:
        too_many = (stop - start) / step >= MAX_RANGE
    except ArithmeticError:  # decimal's overflow of huge exponents
        too_many = True
    if too_many:
        raise GridError(f"--grid {name}={text}: more than {MAX_RANGE} values; take a "
                        "larger STEP")
    count = int((stop - start) / step) + 1
    exact = [start + k * step for k in range(count)]  # decimal steps: 0.7, not 0.7000000001
    if all(v == v.to_integral_value() for v in exact) and "." not in text \
            and "e" not in text.lower():
        return [int(v) for v in exact]
    return [float(v) for v in exact]


def parse_axis(text: str) -> tuple[str, list[Value]]:
    """`lam=0.5:0.9:0.1` → ("lam", [0.5, 0.6, 0.7, 0.8, 0.9]); `n=8,16` → ("n", [8, 16])."""
    name, eq, body = text.partition("=")
    name = name.strip()
    if not eq or not name or not body.strip():
        raise GridError(f"--grid {text}: expected NAME=START:STOP:STEP or NAME=V1,V2,…")
    if ":" in body:
        return name, _range(name, body)
    return name, [_value(v) for v in body.split(",")]


def normalize(grid: Union[Mapping[str, Any], Iterable[str]]) -> dict[str, list[Value]]:
    """A grid given as a mapping (values: a list or a grid text) or as
    `--grid` texts, as name → list of values."""
    out: dict[str, list[Value]] = {}
    items: Iterable[tuple[str, Any]]
    if isinstance(grid, Mapping):
        items = grid.items()
    else:
        items = (parse_axis(t) for t in grid)
    for name, values in items:
        if isinstance(values, str):
            values = parse_axis(f"{name}={values}")[1]
        elif not isinstance(values, (list, tuple)):
            values = [values]
        if not values:
            raise GridError(f"grid parameter {name} has no values")
        if name in out:
            raise GridError(f"grid parameter {name} is given twice")
        out[name] = list(values)
    if not out:
        raise GridError("a sweep needs at least one grid parameter")
    size = math.prod(len(v) for v in out.values())
    if size > MAX_POINTS:
        shape = " × ".join(str(len(v)) for v in out.values())
        raise GridError(f"the grid has {size} points ({shape}), more than {MAX_POINTS}: "
                        "take fewer values")
    return out


def points(grid: Mapping[str, list[Value]]) -> list[dict[str, Value]]:
    """Every point of the grid, parameters in grid order."""
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*grid.values())]
