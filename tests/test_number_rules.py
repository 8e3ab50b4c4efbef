"""Part 01's number rules are written once (serq/core/numeric.py) and used
both to fold constants (serq/core/arithmetic.py, the front end) and at run
time (compiled expressions): the same expression gives the same double
either way, and the reference's.

Each case below is an expression over six names that is 1 when the rule
holds. `FOLDED` writes the names as literals, so the front end folds the
whole expression of a `let` (observed by name); `RUNTIME` makes them session attributes computed from
`now` (0 at the one turn), so the compiled code computes it. The expected
value of every case is 1: that is what pyserq 0.1.3 gives for both
programs (seed 1, horizon 1; `test_the_reference_agrees` reruns it where
the reference is installed). The cases are the edge cases where the two
copies of the rules once could differ: overflow and zero bases in `^`,
NaN and signed zeros in `min`/`max`, signed zeros through `floor`/`ceil`,
`sqrt`, `ln`, `abs` and division.
"""
from __future__ import annotations

import math
import re

import pytest

import serq
from oracle import requires, run_reference
from serq.core import arithmetic, ir, numeric

# name -> expression over Z (0), NZ (-0), N (NaN), ONE, TEN, HALF; each is 1
CASES = {
    "min_zero_first": "1/min(Z, NZ) < 0",      # equal numbers: the second (-0)
    "min_zero_second": "1/min(NZ, Z) > 0",     # ... (0)
    "max_zero_first": "1/max(Z, NZ) < 0",
    "max_zero_second": "1/max(NZ, Z) > 0",
    "min_nans": "min(N, N) != min(N, N)",      # NaN only if both are
    "max_nan_first": "max(N, ONE) == 1",       # max(0/0, 1) = 1 = max(1, 0/0)
    "max_nan_second": "max(ONE, N) == 1",
    "min_nan_negzero": "1/min(N, NZ) < 0",
    "pow_overflow_odd": "(-TEN)^309 == -1/Z",
    "pow_tiny_base": "HALF^(-2000) == 1/Z",
    "pow_tiny_negative_odd": "(-HALF)^(-2001) == -1/Z",
    "pow_tiny_negative_even": "(-HALF)^(-2000) == 1/Z",
    "pow_negzero_odd": "NZ^(-1) == -1/Z",
    "pow_negzero_even": "NZ^(-2) == 1/Z",
    "pow_fraction_of_negative": "(-8*ONE)^(1/3) != (-8*ONE)^(1/3)",
    "pow_zero_zero": "Z^Z == 1",
    "pow_negative_huge_fraction": "(-TEN)^308.5 != (-TEN)^308.5",
    "pow_negative_infinity_cubed": "(-ONE/Z)^3 == -1/Z",
    "pow_underflow": "(-TEN)^(-400) == 0",
    "pow_underflow_negzero": "1/((-TEN)^(-401)) < 0",
    "exp_overflow": "exp(1000*ONE) == 1/Z",
    "ln_negzero": "ln(NZ) == -1/Z",
    "sqrt_negzero": "1/sqrt(NZ) < 0",
    "floor_negzero": "1/floor(NZ) < 0",
    "ceil_negative_fraction": "1/ceil(-HALF) < 0",
    "abs_negzero": "1/abs(NZ) > 0",
    "divide_by_infinity": "1/(ONE/(-1/Z)) < 0",
    "zero_over_zero": "(Z/Z) != (Z/Z)",
}
LITERALS = {"NZ": "(-0)", "Z": "0", "N": "(0/0)", "ONE": "1", "TEN": "10", "HALF": "0.5"}
HEAD = "stage d : delay;\nworkload { arrive batch(1); }\nsession {\n  turn;\n"
TAIL = "}\nrun { horizon 1; }\n"


def _literal(expr: str) -> str:
    return re.sub(r"\b(NZ|Z|N|ONE|TEN|HALF)\b", lambda m: LITERALS[m.group(1)], expr)


FOLDED = ("".join(f"let c_{k} = {_literal(v)};\n" for k, v in CASES.items()) + HEAD
          + "".join(f"  observe {k} = c_{k};\n" for k in CASES) + TAIL)
RUNTIME = (HEAD + "  set Z = 0 * now;\n  set NZ = -Z;\n  set N = Z / Z;\n  set ONE = 1 + now;\n"
           "  set TEN = 10 + now;\n  set HALF = 0.5 + now;\n"
           + "".join(f"  observe {k} = {v};\n" for k, v in CASES.items()) + TAIL)


def _means(report: dict) -> dict:
    return {k: v["mean"] for k, v in report["observes"].items()}


def _ours(source: str) -> dict:
    return _means(serq.run(serq.load(source=source)).to_dict())


def test_the_front_end_folds_the_cases():
    """The folded program observes numbers (the front end folded every
    case: nothing is left for the run time to compute); the run-time one
    observes expressions."""
    folded = serq.load(source=FOLDED).session
    runtime = serq.load(source=RUNTIME).session
    assert {type(s.value) for s in folded if isinstance(s, ir.Observe)} == {ir.Num}
    assert ir.Num not in {type(s.value) for s in runtime if isinstance(s, ir.Observe)}


@pytest.mark.parametrize("source", [FOLDED, RUNTIME], ids=["folded", "runtime"])
def test_every_rule_holds(source):
    assert _ours(source) == {k: 1 for k in CASES}


def test_folded_and_runtime_agree_value_by_value():
    """`arithmetic` (folding) and `numeric` (run time) on the same operands
    give the same double, sign of zero and NaN included."""
    values = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 3.0, -3.0, 1e-300, -1e-300, 1e300, -1e300,
              2001.0, -2001.0, 1 / 3, 308.5, math.inf, -math.inf, math.nan, 5e-324]

    def same(x: float, y: float) -> bool:
        return (x != x and y != y) or (x == y and math.copysign(1, x) == math.copysign(1, y))

    for fn, (impl, arity) in numeric.FUNCTIONS.items():
        for a in values:
            for b in values if arity == 2 else [None]:
                args = [a] if b is None else [a, b]
                assert same(arithmetic.call(fn, args), impl(*args)), (fn, args)
    for a in values:
        for b in values:
            assert same(arithmetic.binary("/", a, b), numeric.div(a, b)), (a, b)
            assert same(arithmetic.binary("^", a, b), numeric.power(a, b)), (a, b)


@requires("0.1.3")
@pytest.mark.parametrize("source", [FOLDED, RUNTIME], ids=["folded", "runtime"])
def test_the_reference_agrees(source):
    assert _means(run_reference(source, "0.1.3", horizon=1)) == {k: 1 for k in CASES}
