"""How the text report writes numbers: significant digits, not fixed decimals.

A fixed number of decimals reads badly across the magnitudes a serving model
produces (`tpot 0.0002 ±0.0000` says nothing). The text report therefore
chooses, per figure, as many decimals as its magnitude needs:

* a mean and its interval share one number of decimals, chosen so that the
  half-width shows its first significant digit while the mean keeps between
  3 and 6 significant digits (`0.000213 ±0.000004`, `12.31 ±0.05`); the p99
  of the row is written with the same decimals;
* every other figure gets 4 significant digits (`sig`), fractions in
  [0, 1] (utilization, shares) keep 3 decimals;
* an undefined figure (NaN, or a half-width that is infinite because there
  are too few samples) prints as an en dash, `–`.

The JSON report is not affected: it writes every number in full.
"""
from __future__ import annotations

import math
from typing import Optional

#: What the text report prints for an undefined figure.
DASH = "–"
#: The most decimals a figure gets before it is written in scientific notation.
MAX_DECIMALS = 9


def decimals(x: float, digits: int) -> Optional[int]:
    """Decimals that show `digits` significant digits of `x` (None for 0 or non-finite)."""
    if not math.isfinite(x) or x == 0.0:
        return None
    return max(0, digits - 1 - math.floor(math.log10(abs(x))))


def fixed_or_dash(x: float, places: int) -> str:
    """`x` with `places` decimals; `–` when NaN; `inf`/`-inf` when infinite.

    Beyond `MAX_DECIMALS` decimals the figure is written as `1.23e-12`.
    """
    if math.isnan(x):
        return DASH
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if places > MAX_DECIMALS:
        return f"{x:.2e}"
    return f"{x:.{places}f}"


def sig(x: float, digits: int = 4) -> str:
    """`x` to `digits` significant digits in fixed notation, trailing zeros dropped
    (`0.06`, `3.167`, `1`, `0` for zero)."""
    places = decimals(x, digits)
    text = fixed_or_dash(x, 0 if places is None else places)
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return text


def share(x: float) -> str:
    """A fraction of time or of capacity in [0, 1]: 3 decimals."""
    return fixed_or_dash(x, 3)


def row_decimals(mean: float, ci: float) -> int:
    """The decimals a mean and its half-width share (see the module docstring)."""
    low, high = decimals(mean, 3), decimals(mean, 6)
    half = decimals(ci, 1)
    if low is None:  # the mean is 0 or undefined: let the interval decide
        return min(half, MAX_DECIMALS) if half is not None else 4
    if half is None:  # no interval: the mean with 4 significant digits
        return decimals(mean, 4) or 0
    return min(max(half, low), high)


def mean_cells(mean: float, ci: float, *others: float) -> list[str]:
    """`mean`, `±ci` and `others` (a p99, a min and max) with the row's decimals."""
    places = row_decimals(mean, ci)
    interval = DASH if not math.isfinite(ci) else "±" + fixed_or_dash(ci, places)
    return [fixed_or_dash(mean, places), interval] + [fixed_or_dash(o, places) for o in others]
