"""The direct least-squares fit of cost terms from lone-request probes
(`serq.measured.probe`), with 95% intervals.

Two linear models, fitted by ordinary least squares (`numpy.linalg.lstsq`)
with Student-t intervals from the coefficients' covariance s² (XᵀX)⁻¹:

* the KV transfer: `xfer = x0 + n / Bw` (the interval of `Bw` is that of
  the slope, inverted);
* a lone request's TTFT less its transfer:
  `ttft − xfer = h + step · steps + aP · n + bP · n² / 2`, where
  `steps = ceil(n / budget) + 1` (prefill steps and the decoder's step).

These are serQ's A6000 probe models (upstream's tools/a6000/fit_probe.py
fits the same terms without intervals). Transfers more than `OUTLIER` times
the model's residual scale (median absolute deviation) from the fit are
reported and left out, once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

#: A transfer whose residual exceeds this many robust scales is left out.
OUTLIER = 5.0


@dataclass
class Coef:
    """A fitted coefficient and its 95% interval."""

    name: str
    value: float
    low: float
    high: float
    unit: str


@dataclass
class ProbeFit:
    """The two fits, their residual RMS and the probes left out (lines)."""

    coefs: list[Coef]
    rms: dict[str, float]
    left_out: list[int] = field(default_factory=list)
    n: int = 0

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {"coefficients": {c.name: {"value": c.value, "interval95": [c.low, c.high],
                                          "unit": c.unit} for c in self.coefs},
                "rms": self.rms, "left_out_lines": self.left_out, "probes": self.n}

    def text(self) -> str:
        """A table."""
        from ..report.text_report import table
        rows = [[c.name, f"{c.value:.6g}", f"{c.low:.6g} .. {c.high:.6g}", c.unit]
                for c in self.coefs]
        head = (f"direct least-squares fit of {self.n} probes (rms: transfer "
                f"{1e3 * self.rms['transfer']:.1f} ms, lone TTFT {1e3 * self.rms['ttft']:.1f} ms"
                + (f"; left out lines {', '.join(map(str, self.left_out))}" if self.left_out
                   else "") + ")")
        return "\n".join([head] + table(["term", "value", "95% interval", "unit"], rows)) + "\n"


def ols(X, y):
    """(coefficients, their 95% half-widths, residual RMS) of y ~ X."""
    import numpy as np
    from scipy.stats import t
    norm = np.abs(X).max(axis=0)  # columns of one scale (n² is ~1e8 times n)
    Z = X / norm
    g, *_ = np.linalg.lstsq(Z, y, rcond=None)
    res = y - Z @ g
    dof = max(len(y) - X.shape[1], 1)
    s2 = float(res @ res) / dof
    cov = s2 * np.linalg.inv(Z.T @ Z)
    hw = t.ppf(0.975, dof) * np.sqrt(np.diag(cov))
    return g / norm, hw / norm, float(np.sqrt(np.mean(res ** 2)))


def fit_probe(path: str, budget: int = 8192) -> ProbeFit:
    """Fit the probe file at `path` (see the module text)."""
    import numpy as np

    from ..measured.probe import read_probe
    f = read_probe(path)
    f = f[~f["xfer"].isna()]
    n, xf, tt = (f[k].to_numpy(float) for k in ("n", "xfer", "ttft"))
    A = np.c_[np.ones_like(n), n]
    beta, _, _ = ols(A, xf)
    res = xf - A @ beta
    scale = 1.4826 * np.median(np.abs(res - np.median(res))) or 1.0
    keep = np.abs(res) <= OUTLIER * scale
    left = [int(x) for x in f["line"].to_numpy()[~keep]]
    n, xf, tt, A = n[keep], xf[keep], tt[keep], A[keep]
    (x0, slope), (hx0, hslope), rms_x = ols(A, xf)
    steps = np.ceil(n / budget) + 1
    X = np.c_[np.ones_like(n), steps, n, n ** 2 / 2]
    (h, st, aP, bP), hws, rms_t = ols(X, tt - xf)
    inv = lambda v: 1.0 / v if v > 0 else math.inf
    coefs = [Coef("x0", x0, x0 - hx0, x0 + hx0, "s per transfer"),
             Coef("Bw", inv(slope), inv(slope + hslope), inv(slope - hslope), "tokens/s"),
             Coef("h", h, h - hws[0], h + hws[0], "s per request"),
             Coef("step", st, st - hws[1], st + hws[1], "s per step"),
             Coef("aP", aP, aP - hws[2], aP + hws[2], "s per prefill token"),
             Coef("bP", bP, bP - hws[3], bP + hws[3], "s per token per context token")]
    return ProbeFit(coefs, {"transfer": rms_x, "ttft": rms_t}, left, int(len(f)))
