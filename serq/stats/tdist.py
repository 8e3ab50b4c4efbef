"""Student's t distribution for whole degrees of freedom, without SciPy.

The batch-means interval (spec Part 06 §3.1) needs one two-sided quantile.
Importing `scipy.stats` for it costs more than a second of start-up, so the
distribution function is computed here from its closed form for an integer
number of degrees of freedom ν (Abramowitz & Stegun 26.7.3–26.7.4, a finite
trigonometric series in θ = atan(t/√ν)) and inverted by Newton's method,
safeguarded by bisection. The result agrees with `scipy.stats.t.ppf` to a
few units in the last place (tests/test_tdist.py).
"""
from __future__ import annotations

import math


def _central(t: float, df: int) -> float:
    """A(t | ν) = P(|T| ≤ t) for t ≥ 0 (A&S 26.7.3 for odd ν, 26.7.4 for even ν)."""
    theta = math.atan(t / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    c2 = c * c
    if df % 2:  # odd: (2/π)(θ + sinθ·(cosθ + 2/3 cos³θ + … + 2·4…(ν−3)/(1·3…(ν−2)) cos^(ν−2)θ))
        if df == 1:
            return 2.0 * theta / math.pi
        term = c
        total = c
        for k in range(2, df - 1, 2):
            term *= c2 * k / (k + 1)
            total += term
        return 2.0 / math.pi * (theta + s * total)
    # even: sinθ·(1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + … + 1·3…(ν−3)/(2·4…(ν−2)) cos^(ν−2)θ)
    term = 1.0
    total = 1.0
    for k in range(1, df - 2, 2):
        term *= c2 * k / (k + 1)
        total += term
    return s * total


def t_cdf(t: float, df: int) -> float:
    """P(T ≤ t) for Student's t with `df` (a whole number ≥ 1) degrees of freedom."""
    if df < 1 or df != int(df):
        raise ValueError(f"degrees of freedom must be a whole number ≥ 1, got {df}")
    a = _central(abs(t), int(df))
    return 0.5 + 0.5 * a if t >= 0 else 0.5 - 0.5 * a


def t_pdf(t: float, df: int) -> float:
    """The density of Student's t with `df` degrees of freedom at `t`."""
    nu = float(df)
    log_c = math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu * math.pi)
    return math.exp(log_c - (nu + 1) / 2 * math.log1p(t * t / nu))


def t_quantile(p: float, df: int) -> float:
    """The `p` quantile of Student's t with `df` (whole, ≥ 1) degrees of freedom.

    Solves `t_cdf(t, df) = p` by Newton steps kept inside a shrinking
    bracket; ±inf at p = 1 or 0.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], got {p}")
    if df < 1 or df != int(df):
        raise ValueError(f"degrees of freedom must be a whole number ≥ 1, got {df}")
    df = int(df)
    if p == 0.5:
        return 0.0
    if p == 1.0:
        return math.inf
    if p == 0.0:
        return -math.inf
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:  # bracket the root
        lo, hi = hi, hi * 2.0
        if hi > 1e300:
            return math.inf
    x = 0.5 * (lo + hi)
    for _ in range(200):
        f = t_cdf(x, df) - p
        if f == 0.0:
            return x
        if f < 0:
            lo = x
        else:
            hi = x
        step = f / t_pdf(x, df)
        nxt = x - step
        if not lo < nxt < hi:  # Newton left the bracket: bisect
            nxt = 0.5 * (lo + hi)
        if nxt == x or abs(nxt - x) <= 4e-16 * abs(x):
            return nxt
        x = nxt
    return x
