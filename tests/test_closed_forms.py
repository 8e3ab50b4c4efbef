"""Self-test of tests/closed_forms.py against textbook values."""

import math

import pytest

import closed_forms as cf


def approx(x, rel=1e-12, abs=1e-12):
    return pytest.approx(x, rel=rel, abs=abs)


def test_mm1_textbook():
    # lam = 0.8, mu = 1: T = 5, Wq = 4, L = 4, Lq = 3.2
    assert cf.mm1_mean_response(0.8, 1.0) == approx(5.0)
    assert cf.mm1_mean_wait(0.8, 1.0) == approx(4.0)
    assert cf.mm1_mean_number(0.8, 1.0) == approx(4.0)
    assert cf.mm1_mean_queue_length(0.8, 1.0) == approx(3.2)
    # mean service 2 (mu = 0.5), rho 0.5: T = 4 (examples/single-turn/arguments.sq)
    assert cf.mm1_mean_response(0.25, 0.5) == approx(4.0)
    assert cf.mm1_response_quantile(0.8, 1.0, 0.99) == approx(5.0 * math.log(100.0))
    assert cf.utilization(0.8, 1.0) == approx(0.8)
    assert cf.utilization(3.0, 1.0, servers=4) == approx(0.75)


def test_mm1_refuses_unstable():
    with pytest.raises(ValueError):
        cf.mm1_mean_response(1.0, 1.0)
    with pytest.raises(ValueError):
        cf.mg1_mean_wait(1.2, 1.0, 2.0)
    with pytest.raises(ValueError):
        cf.erlang_c(2, 2.0)
    with pytest.raises(ValueError):
        cf.mg1_ps_mean_response(0.5, 2.0)


def test_second_moments():
    assert cf.es2_det(3.0) == approx(9.0)
    assert cf.es2_exp(2.0) == approx(8.0)
    assert cf.es2_h2(1.0, 4.0) == approx(5.0)          # m^2 (1 + cv2)
    assert cf.es2_h2(2.0, 0.5) == approx(8.0)          # serQ clamps cv2 < 1 to 1
    assert cf.es2_h2(1.0, 1.0) == approx(cf.es2_exp(1.0))
    assert cf.es2_erlang(4, 2.0) == approx(4.0 * 1.25)
    assert cf.es2_erlang(2.7, 1.0) == approx(1.5)      # k' = floor(2.7) = 2
    assert cf.es2_uniform(0.0, 1.0) == approx(1.0 / 3.0)
    assert cf.es2_from_cv2(2.0, 0.25) == approx(5.0)


def test_h2_second_moment_matches_serq_algorithm():
    # The algorithm of spec Part 01 §4.2 for ~h2(m, cv2), by direct sum.
    for m, cv2 in [(1.0, 4.0), (2.0, 16.0), (0.5, 1.0), (3.0, 1.5)]:
        v = max(cv2, 1.0)
        p = (1 + math.sqrt((v - 1) / (v + 1))) / 2
        a, b = m / (2 * p), m / (2 * (1 - p))
        mean = p * a + (1 - p) * b
        es2 = p * 2 * a * a + (1 - p) * 2 * b * b
        assert mean == approx(m)
        assert es2 == approx(cf.es2_h2(m, cv2), rel=1e-12)


def test_pollaczek_khinchine():
    # exponential service reduces to M/M/1
    assert cf.mg1_mean_wait(0.8, 1.0, cf.es2_exp(1.0)) == approx(4.0)
    assert cf.mg1_mean_response(0.8, 1.0, cf.es2_exp(1.0)) == approx(5.0)
    # M/D/1 waits half as long as M/M/1: rho / (2 mu (1 - rho)) = 2
    assert cf.mg1_mean_wait(0.8, 1.0, cf.es2_det(1.0)) == approx(2.0)
    # h2 with cv2 = 4 at lam = 0.7 (examples/single-turn/ps.sq on a fifo)
    assert cf.mg1_mean_response(0.7, 1.0, cf.es2_h2(1.0, 4.0)) == approx(1.0 + 3.5 / 0.6)
    assert cf.mg1_mean_number(0.8, 1.0, cf.es2_exp(1.0)) == approx(4.0)


def test_processor_sharing_insensitive():
    assert cf.mg1_ps_mean_response(0.7, 1.0) == approx(1.0 / 0.3)
    assert cf.mg1_ps_mean_number(0.7, 1.0) == approx(0.7 / 0.3)
    # equals M/M/1 (exponential FIFO) mean response
    assert cf.mg1_ps_mean_response(0.8, 1.0) == approx(cf.mm1_mean_response(0.8, 1.0))


def test_erlang():
    assert cf.erlang_c(2, 1.0) == approx(1.0 / 3.0)
    assert cf.erlang_c(3, 2.0) == approx(4.0 / 9.0)
    assert cf.erlang_c(1, 0.8) == approx(0.8)             # C(1, rho) = rho
    assert cf.erlang_b(1, 1.0) == approx(0.5)
    assert cf.erlang_b(2, 1.0) == approx(0.2)             # (1/2) / (1 + 1 + 1/2)
    # explicit textbook sum for a bigger case
    c, a = 10, 8.0
    tail = a**c / math.factorial(c) * c / (c - a)
    head = sum(a**k / math.factorial(k) for k in range(c))
    assert cf.erlang_c(c, a) == approx(tail / (head + tail), rel=1e-12)


def test_mmc():
    assert cf.mmc_mean_wait(1.0, 1.0, 2) == approx(1.0 / 3.0)
    assert cf.mmc_mean_response(1.0, 1.0, 2) == approx(4.0 / 3.0)
    # c = 1 is M/M/1
    assert cf.mmc_mean_wait(0.8, 1.0, 1) == approx(cf.mm1_mean_wait(0.8, 1.0))
    assert cf.mmc_mean_response(0.8, 1.0, 1) == approx(5.0)


def test_mva():
    # N = 1: no queueing; the cycle is S + Z
    r = cf.mva_delay_fifo(1, 1.0, 4.0)
    assert r.response == approx(1.0)
    assert r.response + 4.0 == approx(5.0)
    assert r.throughput == approx(1.0 / 5.0)
    # N = 2 by hand: Q1 = 0.2; R2 = 1.2; X2 = 2 / 5.2; Q2 = X2 * R2
    r2 = cf.mva_delay_fifo(2, 1.0, 4.0)
    assert r2.response == approx(1.2)
    assert r2.throughput == approx(2.0 / 5.2)
    assert r2.queue_length == approx(2.4 / 5.2)
    # examples/multi-turn/closed.sq: N = 5, S = 1, Z = 4
    r5 = cf.mva_delay_fifo(5, 1.0, 4.0)
    assert r5.response == pytest.approx(2.2427184466, rel=1e-9)
    assert r5.throughput == pytest.approx(0.8009331260, rel=1e-9)
    assert r5.queue_length + r5.thinking == approx(5.0)
    assert r5.utilization == approx(r5.throughput)
    # no think time: a single closed station, R = N S, X = 1/S
    r0 = cf.mva_delay_fifo(7, 2.0, 0.0)
    assert r0.response == approx(14.0)
    assert r0.throughput == approx(0.5)
    # heavy population: X -> 1/S and R -> N S - Z
    big = cf.mva_delay_fifo(200, 1.0, 4.0)
    assert big.throughput == pytest.approx(1.0, rel=1e-9)
    assert big.response == pytest.approx(196.0, rel=1e-9)
    seq = cf.mva_delay_fifo(3, 1.0, 4.0, all_populations=True)
    assert [x.n for x in seq] == [1, 2, 3]


def test_littles_law():
    assert cf.littles_law(lam=0.8, W=5.0) == approx(4.0)
    assert cf.littles_law(L=4.0, W=5.0) == approx(0.8)
    assert cf.littles_law(L=4.0, lam=0.8) == approx(5.0)
    with pytest.raises(ValueError):
        cf.littles_law(L=1.0)
    with pytest.raises(ValueError):
        cf.littles_law(L=1.0, lam=1.0, W=1.0)
