"""Closed-form results of queueing theory, for checking simulations.

Small, dependency-free functions that give the expected value of what an
example program measures, so statistical tests can assert that a run's
estimate covers the exact answer (for instance ``abs(mean - W) <= k * ci``).

Conventions, as in serQ: times are in the program's time unit; ``lam`` is
an arrival **rate**; service times are given by their **mean** (``~exp(m)``
has mean ``m``, rate ``1/m``); ``mu`` is a service rate where a function
says so. Every function raises ``ValueError`` on an unstable or meaningless
input (``rho >= 1``, negative times) instead of returning a nonsense number.

References used below:

* [K1] L. Kleinrock, *Queueing Systems, Vol. 1: Theory*, Wiley, 1975.
* [K2] L. Kleinrock, *Queueing Systems, Vol. 2: Computer Applications*,
  Wiley, 1976.
* [GH] D. Gross, J. F. Shortle, J. M. Thompson, C. M. Harris,
  *Fundamentals of Queueing Theory*, 4th ed., Wiley, 2008.
* [L61] J. D. C. Little, "A proof for the queuing formula L = λW",
  *Operations Research* 9(3):383–387, 1961.
* [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed
  multichain queuing networks", *J. ACM* 27(2):313–322, 1980.
* [QSP] E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik,
  *Quantitative System Performance*, Prentice-Hall, 1984, ch. 6.
* [HB] M. Harchol-Balter, *Performance Modeling and Design of Computer
  Systems*, Cambridge University Press, 2013.
"""

from __future__ import annotations

import math
from typing import NamedTuple

__all__ = [
    "utilization",
    "mm1_mean_response",
    "mm1_mean_wait",
    "mm1_mean_number",
    "mm1_mean_queue_length",
    "mm1_response_quantile",
    "es2_det",
    "es2_exp",
    "es2_h2",
    "es2_erlang",
    "es2_uniform",
    "es2_from_cv2",
    "mg1_mean_wait",
    "mg1_mean_response",
    "mg1_mean_number",
    "mg1_ps_mean_response",
    "mg1_ps_mean_number",
    "erlang_b",
    "erlang_c",
    "mmc_mean_wait",
    "mmc_mean_response",
    "MVAResult",
    "mva_delay_fifo",
    "littles_law",
]


# --------------------------------------------------------------------------
# helpers


def _positive(name: str, x: float) -> None:
    if not (x > 0 and math.isfinite(x)):
        raise ValueError(f"{name} must be positive and finite, got {x!r}")


def _nonnegative(name: str, x: float) -> None:
    if not (x >= 0 and math.isfinite(x)):
        raise ValueError(f"{name} must be >= 0 and finite, got {x!r}")


def _stable(rho: float) -> None:
    if not rho < 1:
        raise ValueError(f"unstable queue: utilisation {rho!r} >= 1")


def utilization(lam: float, mean_service: float, servers: int = 1) -> float:
    """Offered utilisation per server, ρ = λ·E[S] / c.

    The fraction of time each of ``servers`` servers is busy in a stable
    queue ([K1] ch. 2; [GH] ch. 1).
    """
    _nonnegative("lam", lam)
    _positive("mean_service", mean_service)
    if servers < 1 or int(servers) != servers:
        raise ValueError(f"servers must be a whole number >= 1, got {servers!r}")
    return lam * mean_service / servers


# --------------------------------------------------------------------------
# M/M/1


def mm1_mean_response(lam: float, mu: float) -> float:
    """M/M/1 mean response (sojourn) time, T = 1 / (μ − λ).

    ``mu`` is the service **rate** (``~exp(m)`` service: μ = 1/m). [K1]
    §3.2; [GH] §2.2. Example: λ = 0.8, μ = 1 → T = 5.
    """
    _nonnegative("lam", lam)
    _positive("mu", mu)
    _stable(lam / mu)
    return 1.0 / (mu - lam)


def mm1_mean_wait(lam: float, mu: float) -> float:
    """M/M/1 mean waiting time in queue, W_q = ρ / (μ − λ), ρ = λ/μ.

    [K1] §3.2; [GH] §2.2. Example: λ = 0.8, μ = 1 → W_q = 4.
    """
    return (lam / mu) * mm1_mean_response(lam, mu)


def mm1_mean_number(lam: float, mu: float) -> float:
    """M/M/1 mean number in system, L = ρ / (1 − ρ).

    The time average a stage reports as ``mean_number``. [K1] §3.2;
    [GH] §2.2. Example: ρ = 0.8 → L = 4.
    """
    _nonnegative("lam", lam)
    _positive("mu", mu)
    rho = lam / mu
    _stable(rho)
    return rho / (1.0 - rho)


def mm1_mean_queue_length(lam: float, mu: float) -> float:
    """M/M/1 mean number waiting (not in service), L_q = ρ² / (1 − ρ).

    [GH] §2.2. Example: ρ = 0.8 → L_q = 3.2.
    """
    rho = lam / mu
    return rho * mm1_mean_number(lam, mu)


def mm1_response_quantile(lam: float, mu: float, q: float) -> float:
    """q-quantile of the M/M/1 (FIFO) response time.

    The FIFO M/M/1 sojourn time is exponential with rate μ − λ ([K1] ch. 3;
    [GH] §2.2), so its q-quantile is −ln(1 − q) / (μ − λ). The nearest-rank
    ``p99`` of a long run estimates q = 0.99: ln(100)·T = 4.6052·T.
    """
    if not 0 <= q < 1:
        raise ValueError(f"q must be in [0, 1), got {q!r}")
    return -math.log1p(-q) * mm1_mean_response(lam, mu)


# --------------------------------------------------------------------------
# Second moments of service-time draws (E[S²] = Var[S] + E[S]² = m²(1 + cv²))


def es2_from_cv2(mean: float, cv2: float) -> float:
    """E[S²] of any distribution with mean ``mean`` and squared CV ``cv2``.

    E[S²] = Var[S] + E[S]² = m² (1 + cv²), by the definition cv² =
    Var[S] / E[S]².
    """
    _nonnegative("mean", mean)
    _nonnegative("cv2", cv2)
    return mean * mean * (1.0 + cv2)


def es2_det(value: float) -> float:
    """E[S²] of ``~det(x)``: x² (cv² = 0)."""
    _nonnegative("value", value)
    return value * value


def es2_exp(mean: float) -> float:
    """E[S²] of ``~exp(m)`` (mean m, not a rate): 2 m² (cv² = 1)."""
    return es2_from_cv2(mean, 1.0)


def es2_h2(mean: float, cv2: float) -> float:
    """E[S²] of serQ's ``~h2(m, cv2)`` (total mean, squared CV): m² (1 + v).

    serQ's balanced two-phase hyperexponential uses v = max(cv2, 1)
    (spec Part 01 §4.2): a ``cv2`` below 1 gives an exponential, so
    E[S²] = m² (1 + max(cv2, 1)). For cv2 ≥ 1 this is m² (1 + cv2): with
    branch probabilities p, 1 − p and phase means m/(2p), m/(2(1 − p))
    (an exponential of mean θ has second moment 2θ²),
    E[S²] = p · 2 (m/(2p))² + (1 − p) · 2 (m/(2(1 − p)))² = m² / (2p(1 − p)),
    and the balanced p = (1 + √((v − 1)/(v + 1))) / 2 has
    4p(1 − p) = 2/(v + 1), so E[S²] = m² (1 + v).
    """
    return es2_from_cv2(mean, max(cv2, 1.0))


def es2_erlang(k: float, mean: float) -> float:
    """E[S²] of serQ's ``~erlang(k, m)`` (k phases, total mean m).

    k' = max(1, floor(k)) phases (spec Part 01 §4.2), cv² = 1/k', so
    E[S²] = m² (1 + 1/k') ([K1] ch. 4, the method of stages).
    """
    kk = max(1, math.floor(k))
    return es2_from_cv2(mean, 1.0 / kk)


def es2_uniform(lo: float, hi: float) -> float:
    """E[S²] of ``~uniform(lo, hi)``: (lo² + lo·hi + hi²) / 3."""
    return (lo * lo + lo * hi + hi * hi) / 3.0


# --------------------------------------------------------------------------
# M/G/1 (FIFO): Pollaczek–Khinchine


def mg1_mean_wait(lam: float, mean_service: float, es2: float) -> float:
    """M/G/1 FIFO mean waiting time (Pollaczek–Khinchine mean-value formula).

    W = λ E[S²] / (2 (1 − ρ)), ρ = λ E[S]. Pollaczek (1930), Khinchine
    (1932); [K1] ch. 5; [GH] §5.1.1. ``es2`` is E[S²] (see the
    ``es2_*`` helpers). With exponential service it reduces to the M/M/1
    W_q; with ``~det(1)`` at ρ = 0.8 it is 2 (half of M/M/1's 4).
    """
    _nonnegative("lam", lam)
    _positive("mean_service", mean_service)
    _nonnegative("es2", es2)
    rho = lam * mean_service
    _stable(rho)
    return lam * es2 / (2.0 * (1.0 - rho))


def mg1_mean_response(lam: float, mean_service: float, es2: float) -> float:
    """M/G/1 FIFO mean response time, T = E[S] + W (Pollaczek–Khinchine).

    [K1] ch. 5; [GH] §5.1.1. Example: λ = 0.7, ``~h2(1, 4)`` →
    T = 1 + 0.7·5 / 0.6 = 6.8333.
    """
    return mean_service + mg1_mean_wait(lam, mean_service, es2)


def mg1_mean_number(lam: float, mean_service: float, es2: float) -> float:
    """M/G/1 FIFO mean number in system, L = λ T (Little's law on PK)."""
    return lam * mg1_mean_response(lam, mean_service, es2)


# --------------------------------------------------------------------------
# M/G/1-PS


def mg1_ps_mean_response(lam: float, mean_service: float) -> float:
    """M/G/1 processor-sharing mean response time, E[T] = E[S] / (1 − ρ).

    Insensitive: it depends on the service distribution only through its
    mean ([K2] ch. 4; [HB], the chapter on processor sharing). A serQ
    ``ps(1)`` stage is this server. Example: λ = 0.7, E[S] = 1 → 3.3333 for any service cv².
    """
    _nonnegative("lam", lam)
    _positive("mean_service", mean_service)
    rho = lam * mean_service
    _stable(rho)
    return mean_service / (1.0 - rho)


def mg1_ps_mean_number(lam: float, mean_service: float) -> float:
    """M/G/1-PS mean number in system, L = ρ / (1 − ρ) ([K2] ch. 4)."""
    rho = lam * mean_service
    _stable(rho)
    return rho / (1.0 - rho)


# --------------------------------------------------------------------------
# M/M/c: Erlang B and Erlang C


def erlang_b(c: int, a: float) -> float:
    """Erlang B blocking probability of c servers offered ``a`` erlangs.

    Computed with the stable recursion B(0) = 1,
    B(k) = a B(k−1) / (k + a B(k−1)) (Erlang 1917; [GH] §2.6; [K1] ch. 3).
    """
    if c < 0 or int(c) != c:
        raise ValueError(f"c must be a whole number >= 0, got {c!r}")
    _nonnegative("a", a)
    b = 1.0
    for k in range(1, int(c) + 1):
        b = a * b / (k + a * b)
    return b


def erlang_c(c: int, a: float) -> float:
    """Erlang C: probability that an arrival waits in an M/M/c queue.

    ``a`` = λ/μ is the offered load in erlangs (a = c ρ), stable for a < c.
    C(c, a) = c B / (c − a (1 − B)) with B = ``erlang_b(c, a)``, equivalent
    to the textbook [a^c/c! · c/(c − a)] / [Σ_{k<c} a^k/k! + a^c/c! · c/(c − a)]
    (Erlang 1917; [K1] ch. 3; [GH] §2.3). Examples: C(1, ρ) = ρ;
    C(2, 1) = 1/3; C(3, 2) = 4/9.
    """
    if c < 1 or int(c) != c:
        raise ValueError(f"c must be a whole number >= 1, got {c!r}")
    _nonnegative("a", a)
    _stable(a / c)
    b = erlang_b(c, a)
    return c * b / (c - a * (1.0 - b))


def mmc_mean_wait(lam: float, mu: float, c: int) -> float:
    """M/M/c (FIFO) mean waiting time, W_q = C(c, a) / (c μ − λ), a = λ/μ.

    ``mu`` is each server's rate. [K1] ch. 3; [GH] §2.3. A serQ
    ``fifo(c)`` stage with ``~exp(1/mu)`` work is this queue.
    Example: c = 2, λ = 1, μ = 1 → W_q = (1/3) / 1 = 1/3.
    """
    _nonnegative("lam", lam)
    _positive("mu", mu)
    return erlang_c(c, lam / mu) / (c * mu - lam)


def mmc_mean_response(lam: float, mu: float, c: int) -> float:
    """M/M/c mean response time, T = W_q + 1/μ ([GH] §2.3)."""
    return mmc_mean_wait(lam, mu, c) + 1.0 / mu


# --------------------------------------------------------------------------
# Closed network: delay (think) station + one FIFO exponential station


class MVAResult(NamedTuple):
    """Exact MVA results for population ``n``.

    ``response``: mean response time at the FIFO station (wait + service);
    ``throughput``: system throughput X (requests per time unit);
    ``queue_length``: mean number at the FIFO station (in service included);
    ``utilization``: X · S; ``thinking``: mean number at the delay station,
    X · Z. ``queue_length + thinking`` equals ``n``.
    """

    n: int
    response: float
    throughput: float
    queue_length: float
    utilization: float
    thinking: float


def mva_delay_fifo(n: int, service: float, think: float, *, all_populations: bool = False):
    """Exact mean value analysis of a FIFO station plus a think (delay) station.

    A closed network of ``n`` customers that alternate between a delay
    station (mean think time Z = ``think``, any distribution) and one
    single-server FIFO station with exponential service of mean
    S = ``service``. The recursion ([RL80]; [QSP] ch. 6):

        Q(0) = 0;  for k = 1..n:
            R(k) = S (1 + Q(k − 1))       (arrival theorem)
            X(k) = k / (R(k) + Z)         (Little on the whole cycle)
            Q(k) = X(k) R(k)              (Little on the station)

    Returns the ``MVAResult`` of population ``n`` (a list for 1..n with
    ``all_populations=True``). Checks: n = 1 gives R = S and a cycle time
    R + Z = S + Z (X = 1/(S + Z)); as n grows X → 1/S and R → nS − Z.
    Example: n = 5, S = 1, Z = 4 → R = 2.2427, X = 0.80093.
    """
    if n < 1 or int(n) != n:
        raise ValueError(f"n must be a whole number >= 1, got {n!r}")
    _positive("service", service)
    _nonnegative("think", think)
    q = 0.0
    out = []
    for k in range(1, int(n) + 1):
        r = service * (1.0 + q)
        x = k / (r + think)
        q = x * r
        out.append(MVAResult(k, r, x, q, x * service, x * think))
    return out if all_populations else out[-1]


# --------------------------------------------------------------------------
# Little's law


def littles_law(*, L: float | None = None, lam: float | None = None, W: float | None = None) -> float:
    """Little's law L = λ W: give exactly two of L, λ, W; returns the third.

    Holds for any stable system and any service discipline, for long-run
    averages: L the time-average number present, λ the throughput, W the
    mean time spent ([L61]; [K1] ch. 2). In a serQ report, for a stage,
    ``mean_number`` ≈ ``throughput`` × (``mean_wait`` + ``mean_service``),
    and at top level ``mean_live`` ≈ (ended / (end − warmup)) × mean
    session lifetime.
    """
    given = sum(v is not None for v in (L, lam, W))
    if given != 2:
        raise ValueError("give exactly two of L, lam, W")
    if L is None:
        return lam * W  # type: ignore[operator]
    if lam is None:
        if W == 0:
            raise ValueError("W = 0: the arrival rate is undetermined")
        return L / W  # type: ignore[operator]
    if lam == 0:
        raise ValueError("lam = 0: the time in system is undetermined")
    return L / lam
