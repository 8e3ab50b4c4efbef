"""Simulated queues against closed-form results.

Each test runs a stochastic program with a fixed seed and checks that the
closed-form value lies in the reported 95 % batch-means interval (the
interval the report prints, spec Part 06 §3.1). Formulas: tests/closed_forms.py
(M/M/1, Pollaczek-Khinchine for M/D/1 and M/H2/1, M/G/1-PS insensitivity,
Erlang C for M/M/3, exact mean value analysis for the closed network,
Little's law). The seeds are arbitrary and fixed, so each test is
deterministic; the horizons keep the interval within a few percent.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import serq
from closed_forms import (es2_det, es2_h2, mg1_mean_response, mg1_ps_mean_response,
                          mm1_mean_response, mmc_mean_response, mva_delay_fifo)

ROOT = Path(__file__).resolve().parent.parent


def _single(service: str, *, stage: str = "fifo", lam: float = 0.5, horizon: float = 100_000,
            seed: int = 11):
    src = f"""
stage svc : {stage};
workload {{ arrive poisson({lam}); }}
session {{ turn; set t0 = now; run svc ({service}); observe response = now - t0; }}
"""
    return serq.run(serq.load(source=src), horizon=horizon, seed=seed)


def _assert_covers(summary, expected: float) -> None:
    assert summary.count >= 1000
    assert abs(summary.mean - expected) <= summary.ci, (
        f"closed form {expected} outside {summary.mean} ± {summary.ci}")
    # the interval is informative: within 10 % of the value
    assert summary.ci < 0.1 * expected


def test_mm1_mean_response():
    # M/M/1, λ = 0.5, μ = 1: W = 1/(μ − λ) = 2
    rep = _single("~exp(1)")
    _assert_covers(rep.observes["response"].summary(), mm1_mean_response(0.5, 1.0))


def test_md1_pollaczek_khinchine():
    # M/D/1, λ = 0.5, S = 1: W = S + λE[S²]/(2(1 − ρ)) = 1.5
    rep = _single("~det(1)")
    _assert_covers(rep.observes["response"].summary(), mg1_mean_response(0.5, 1.0, es2_det(1.0)))


def test_mh21_pollaczek_khinchine():
    # M/H2/1, λ = 0.5, E[S] = 1, cv² = 4: E[S²] = 5, W = 1 + 0.5·5/(2·0.5) = 3.5
    rep = _single("~h2(1, 4)", horizon=400_000)
    _assert_covers(rep.observes["response"].summary(),
                   mg1_mean_response(0.5, 1.0, es2_h2(1.0, 4.0)))


@pytest.mark.parametrize("service", ["~exp(1)", "~h2(1, 4)", "~det(1)"])
def test_mg1_ps_insensitivity(service):
    # M/G/1-PS: W = E[S]/(1 − ρ) = 2 whatever the service law
    rep = _single(service, stage="ps(1)", horizon=200_000)
    _assert_covers(rep.observes["response"].summary(), mg1_ps_mean_response(0.5, 1.0))


def test_mm3_erlang_c():
    # M/M/3, λ = 2, μ = 1: W = 1 + C(3, 2)/(3 − 2) = 1 + 4/9
    rep = _single("~exp(1)", stage="fifo(3)", lam=2.0, horizon=50_000)
    _assert_covers(rep.observes["response"].summary(), mmc_mean_response(2.0, 1.0, 3))


def test_closed_network_mean_value_analysis():
    # examples/multi-turn/closed.sq: N = 5 users, think Z = 4 (delay), one
    # exponential server S = 1; exact MVA gives the mean response time
    prog = serq.load(str(ROOT / "examples" / "multi-turn" / "closed.sq"))
    rep = serq.run(prog, horizon=100_000, seed=3)
    expected = mva_delay_fifo(5, 1.0, 4.0).response  # 2.2427
    _assert_covers(rep.observes["response"].summary(), expected)
    assert rep.mean_live == pytest.approx(5.0, rel=1e-9)  # a closed population


def test_littles_law_on_the_stage():
    # L = λ W on the sample path: mean_number = throughput × (wait + service)
    rep = _single("~exp(1)", lam=0.7, horizon=100_000)
    row = rep.stages[0]
    assert row.mean_number == pytest.approx(
        row.throughput * (row.mean_wait + row.mean_service), rel=0.01)
    assert rep.mean_live == pytest.approx(row.mean_number, rel=1e-9)
