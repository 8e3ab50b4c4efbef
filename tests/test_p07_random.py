"""Spec Part 07 (random streams) and Part 01 §4.2 (distribution laws).

Every expected number below is quoted from the spec; the comment next to
it names the section it comes from.
"""
from __future__ import annotations

import math
import random

import pytest

from serq.runtime.random import distributions as D
from serq.runtime.random.chacha import chacha12_block
from serq.runtime.random.rng import (
    HAVE_RANDOMGEN, M64, Stream, arrival_stream, derive, derive_013, evict_stream,
    key_words, load_randomgen, machine_stream, session_stream, trace_stream, workload_stream,
)

BACKENDS = [pytest.param(False, id="randomgen"), pytest.param(True, id="pure")]
SCHEMES = ["0.1.5", "0.1.3"]
DERIVE = {"0.1.5": derive, "0.1.3": derive_013}


def first(stream: Stream, n: int) -> list[float]:
    return [stream.uniform() for _ in range(n)]


# ---------------------------------------------------------------------------
# §11.1 Generator
# ---------------------------------------------------------------------------

# §11.1 "Key words (2.1)" (seed 1 also in §2.1).
KEY_WORDS = {
    0: "f973f2ec 45cdb581 7346f087 ad6cad06 e3a3d0d0 67e71733 72ea9bf2 fe7d8ad7",
    1: "721dd8ea 4e10265d f83b9c89 2e78ce42 da03d3ba c2d29799 ac560212 1bfb6673",
}

# §11.1 "First four next_u64() values".
FIRST_U64 = {
    0: (0xbb2a3fb2cd2c6f7f, 0xc6017c948e27697b, 0x069dc102cf310a16, 0x958b761dabe5f6d0),
    1: (0xf9681a64d3301861, 0xb0f4d125cc0d694a, 0x6d8fc15a3248c9da, 0x2cf33517376425d3),
    7: (0x07c2e0e96aa8fbbe, 0x4e9d34e8247e5f86, 0x248432460f8bbccd, 0x8ae26805a6dfa099),
    42: (0x86cc7763222724a2, 0x8af00a133fad517d, 0xa2ef6071de5134d1, 0x67e92d78fd7630b2),
    2**64 - 1: (0x0fa798482e3d5fb8, 0x0a3370b44112469e, 0x12a43d6f65c61658, 0x5d082f914e51203b),
}

# §11.1 "First uniforms (2.4)".
FIRST_UNIFORMS = {
    0: [0.7311134158637046, 0.7734601843532382, 0.025844634233355035],
    1: [0.9742447372584028, 0.6912356107023264, 0.4279747815328704],
}


@pytest.mark.parametrize("seed", sorted(KEY_WORDS))
def test_p07_key_words(seed):
    assert key_words(seed) == [int(w, 16) for w in KEY_WORDS[seed].split()]


@pytest.mark.parametrize("pure", BACKENDS)
@pytest.mark.parametrize("seed", sorted(FIRST_U64))
def test_p07_first_u64(seed, pure):
    s = Stream(seed, pure=pure)
    assert tuple(s.next_u64() for _ in range(4)) == FIRST_U64[seed]


@pytest.mark.parametrize("pure", BACKENDS)
@pytest.mark.parametrize("seed", sorted(FIRST_UNIFORMS))
def test_p07_first_uniforms(seed, pure):
    assert first(Stream(seed, pure=pure), 3) == FIRST_UNIFORMS[seed]


@pytest.mark.parametrize("pure", BACKENDS)
def test_p07_interleaving(pure):
    # §11.1 "Interleaving (2.3), seed 1": three u32, then a u64 made of the
    # fourth and fifth words.
    s = Stream(1, pure=pure)
    assert [s.next_u32() for _ in range(3)] == [3543144545, 4184349284, 3423430986]
    assert s.next_u64() == 0x3248c9dab0f4d125


@pytest.mark.parametrize("pure", BACKENDS)
def test_p07_u64_straddles_block_boundary(pure):
    # §2.3: a u64 read whose words straddle a ChaCha block (and, here, the
    # first one-block buffer) takes word 15 of block 0 as its low half.
    key = key_words(7)
    words = chacha12_block(key, 0) + chacha12_block(key, 1)
    s = Stream(7, pure=pure)
    assert [s.next_u32() for _ in range(15)] == words[:15]
    assert s.next_u64() == words[15] | (words[16] << 32)
    assert s.next_u32() == words[17]
    assert s.uniform() == ((words[18] | (words[19] << 32)) >> 11) * 2.0**-53


@pytest.mark.parametrize("pure", BACKENDS)
def test_p07_uniform_is_top_53_bits(pure):
    # §2.4: U = (next_u64() >> 11) * 2**-53, across several buffer refills.
    a, b = Stream(42, pure=pure), Stream(42, pure=pure)
    for _ in range(3000 if not pure else 300):
        assert a.uniform() == (b.next_u64() >> 11) * 2.0**-53


@pytest.mark.skipif(not HAVE_RANDOMGEN, reason="randomgen is not installed")
@pytest.mark.parametrize("seed", [1, 7, 2**64 - 1])
def test_p07_randomgen_matches_pure_python(seed):
    # §12: 600 interleaved u64, u32, uniform and ranged reads per seed, with
    # randomgen and with the pure-Python ChaCha12.
    load_randomgen()  # else a process's first fetches skip it (serq.runtime.random.rng._source)
    fast, pure = Stream(seed), Stream(seed, pure=True)
    ops = random.Random(seed)
    for i in range(600):
        op = ops.choice(("next_u64", "next_u32", "uniform", "below"))
        args = (ops.choice((1, 6, 1000, 2**31 + 1, 2**32 - 1)),) if op == "below" else ()
        assert getattr(fast, op)(*args) == getattr(pure, op)(*args), (i, op)


# ---------------------------------------------------------------------------
# §11.2 Run-wide streams, seed 1
# ---------------------------------------------------------------------------

# §11.2 table: stream -> (key seed, first three U).
RUN_WIDE = {
    arrival_stream: (0x0000000000000001,
                     [0.9742447372584028, 0.6912356107023264, 0.4279747815328704]),
    machine_stream: (0x5851f42d4c957f2c,
                     [0.1268258148947381, 0.564682914487077, 0.960359177084277]),
    evict_stream: (0x2545f4914f6cdd1c,
                   [0.5500466515255933, 0.5519802424348131, 0.919192454403991]),
    trace_stream: (0x6a09e667f3bcc909,
                   [0.09473587535264039, 0.5433001419582237, 0.824859800204895]),
}


@pytest.mark.parametrize("factory", list(RUN_WIDE), ids=lambda f: f.__name__)
def test_p07_run_wide_streams(factory):
    key_seed, us = RUN_WIDE[factory]
    s = factory(1)
    assert s.key_seed == key_seed
    assert first(s, 3) == us


def test_p07_poisson_gaps_and_arrival_times():
    # §11.2 "poisson(0.8) gaps from the arrival stream of seed 1".
    s = arrival_stream(1)
    assert [D.poisson_gap(s, 0.8) for _ in range(3)] == [
        4.573895368050423, 1.4689709838915272, 0.6982152504311863]
    # §11.4 V1 `t`: arrivals at now + gap (every version).
    s, now, times = arrival_stream(1), 0.0, [0.0]
    for _ in range(5):
        now = now + D.poisson_gap(s, 0.8)
        times.append(now)
    assert times == [0.0, 4.573895368050423, 6.04286635194195, 6.741081602373137,
                     6.98243473855657, 7.349646712443106]


def test_p07_trace_words_and_below():
    # §11.2 "Trace stream of seed 1: first words ..." and "below(6) ten times".
    s = trace_stream(1)
    assert [s.next_u32() for _ in range(4)] == [1707349614, 406887486, 2674599193, 2333456341]
    s = trace_stream(1)
    assert [s.below(6) for _ in range(10)] == [2, 0, 3, 3, 3, 4, 2, 3, 5, 1]


def test_p07_below_rejection_step_reads_second_word():
    # §2.5: Canon's method, modelled directly on the words of a twin stream.
    for n in (1, 3, 2**31 + 1, 2**32 - 5, 2**32 - 1):
        s, words = Stream(99), Stream(99)
        for _ in range(200):
            m = words.next_u32() * n
            hi, lo = m >> 32, m & 0xFFFFFFFF
            if lo > 2**32 - n and lo + ((words.next_u32() * n) >> 32) >= 2**32:
                hi += 1
            assert s.below(n) == hi
        assert s.next_u32() == words.next_u32()  # same number of words read
    with pytest.raises(ValueError):
        Stream(1).below(0)


# ---------------------------------------------------------------------------
# §11.3 Per-session streams
# ---------------------------------------------------------------------------

# §11.3 first table: (seed, serial, turn, kind) ->
#   (0.1.5 key seed, first U, 0.1.3/0.1.4 key seed, first U).
PER_SESSION = [
    ((1, 0, 0, 1), 0x3fa25e1657e024c1, 0.8285549402948466, 0x6c5795e14b3b7e33, 0.8170102766262399),
    ((1, 0, 0, 2), 0x90c24400c9510bf2, 0.1621242647527662, 0x1546a0f2c927ea0b, 0.3855355620125499),
    ((1, 0, 1, 1), 0x81ec387567b76b2d, 0.18547972510699162, 0x7970e130d0c7742f, 0.7626436935105675),
    ((1, 1, 0, 1), 0x2de5a4e32ae6d264, 0.5653651768661682, 0x007bdc61a85e2e79, 0.8096980249766879),
    ((1, 1, 0, 2), 0x4f323ffff89fba25, 0.2447743700986078, 0x9a1d04b0a2b0e83a, 0.535997239846888),
    ((1, 2, 3, 1), 0xa67f0349b6b7d27d, 0.14679928832381473, 0x2d2b8e4d3254ec8c, 0.73890663183429),
    ((7, 0, 0, 1), 0x08babb4777dd74d3, 0.015492696379878157, 0x199ec517d2809b60, 0.729263096158695),
    ((7, 0, 0, 2), 0x484a89c85d00f287, 0.23367196071649077, 0x4aeaac5ea9069464, 0.5659173544608557),
    ((2**64 - 1, 5, 0, 2), 0xdb2a4e80be801a4e, 0.8774988722897564, 0x7b7af255efabc034, 0.6419525857512215),
]

# §11.3 second table, seed 1: stream -> (0.1.5 first three U, 0.1.3/0.1.4 first three U).
FIRST_THREE = {
    ("workload", 0, 0): ([0.8285549402948466, 0.3483917252449775, 0.48517865980627006],
                         [0.8170102766262399, 0.3689212363540538, 0.9058490006049921]),
    ("workload", 0, 1): ([0.18547972510699162, 0.3239546519556038, 0.9394438131087754],
                         [0.7626436935105675, 0.05360172077815095, 0.22544313963446583]),
    ("workload", 1, 0): ([0.5653651768661682, 0.47202662719311306, 0.435736543411707],
                         [0.8096980249766879, 0.4231584513222808, 0.970422414655743]),
    ("session", 0, 0): ([0.1621242647527662, 0.9236479408644537, 0.9083843599015382],
                        [0.3855355620125499, 0.1114913631096307, 0.4903047765356485]),
    ("session", 1, 0): ([0.2447743700986078, 0.159927849690494, 0.16815848020197866],
                        [0.535997239846888, 0.5469151560581721, 0.374747822855367]),
}


def per_session(scheme: str, seed: int, serial: int, turn: int, kind: int) -> Stream:
    if kind == 1:
        return workload_stream(seed, serial, turn, scheme=scheme)
    assert turn == 0
    return session_stream(seed, serial, scheme=scheme)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("row", PER_SESSION, ids=lambda r: "s%d-k%d-t%d-c%d" % r[0])
def test_p07_per_session_key_seeds(row, scheme):
    args, key15, u15, key13, u13 = row
    key, u = (key15, u15) if scheme == "0.1.5" else (key13, u13)
    assert DERIVE[scheme](*args) == key
    s = per_session(scheme, *args)
    assert s.key_seed == key
    assert s.uniform() == u


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("which", list(FIRST_THREE), ids=lambda w: "%s-%d-%d" % w)
def test_p07_per_session_first_three(which, scheme):
    kind, serial, turn = which
    us15, us13 = FIRST_THREE[which]
    s = per_session(scheme, 1, serial, turn, 1 if kind == "workload" else 2)
    assert first(s, 3) == (us15 if scheme == "0.1.5" else us13)


@pytest.mark.parametrize("scheme, expected", [
    ("0.1.5", 1.7634924152731184),   # §3.2 example / §11.3 / §11.4 V1 `sv` serial 0
    ("0.1.3", 1.698325284145088),    # §9.2 example / §11.4 V1 `sv` (0.1.3, 0.1.4)
    ("0.1.4", 1.698325284145088),    # §9.1: 0.1.4 derives like 0.1.3
])
def test_p07_init_exp_example(scheme, expected):
    assert D.exp(workload_stream(1, 0, 0, scheme=scheme), 1.0) == expected


# §11.4 V1 `sv` = `~exp(1.0)` in `init`, serials 0-5.
V1_SV = {
    "0.1.5": [1.7634924152731184, 0.8332490875086984, 2.2210009808884323,
              1.5906078033029272, 0.0464231566898566, 0.5731961241086504],
    "0.1.3": [1.698325284145088, 1.6591431262614134, 2.1914100090557747,
              1.9413587566543087, 0.26851425227165954, 2.3740479390884732],
}


@pytest.mark.parametrize("scheme", SCHEMES)
def test_p07_v1_init_draws(scheme):
    assert [D.exp(workload_stream(1, k, 0, scheme), 1.0) for k in range(6)] == V1_SV[scheme]


# §11.4 V2, per serial: `oa` (init ~uniform(0, 1)), `on` at turns 1-3
# (first draw of workload(k, t), ~exp(10)), and (`oz`, `ow`) at turns 1-3
# (~bernoulli(0.5) then ~exp(1.0), alternating on the session stream).
V2 = {
    "0.1.5": {
        0: (0.8285549402948466, [2.051559588090774, 7.906281900627668, 5.560167424622],
            [(1.0, 2.5724002779949062), (0.0, 0.3676382008711227), (0.0, 1.611641279957689)]),
        1: (0.5653651768661682, [18.17419449907279, 3.6253406676515127, 3.580051120577404],
            [(1.0, 0.17426749760778726), (1.0, 0.139937511929783), (0.0, 0.637822963651916)]),
    },
    "0.1.3": {
        0: (0.8170102766262399, [14.38192863916763, 0.40050541588341454, 15.980887137693633],
            [(1.0, 0.1182109106801817), (1.0, 2.6789594628923954), (0.0, 0.3203421791096606)]),
        1: (0.8096980249766879, [37.269202799781866, 5.0214988033242305, 12.806666997820129],
            [(0.0, 0.7916758775665165), (1.0, 0.5238702835730012), (0.0, 0.14324690762430858)]),
    },
}


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("serial", [0, 1])
def test_p07_v2_turn_and_session_draws(scheme, serial):
    oa, on, zw = V2[scheme][serial]
    assert D.uniform(workload_stream(1, serial, 0, scheme), 0, 1) == oa
    assert [D.exp(workload_stream(1, serial, t, scheme), 10) for t in (1, 2, 3)] == on
    s = session_stream(1, serial, scheme)
    assert [(D.bernoulli(s, 0.5), D.exp(s, 1.0)) for _ in range(3)] == zw


# §11.4 V3: `sv` = init ~h2(1, 4) and `b` = the session's first ~bernoulli(0.3), serials 0-3.
V3 = {
    "0.1.5": ([0.24135721126142745, 0.35991808049009594, 9.122331048626334,
               0.5295790945733868], [1.0, 1.0, 0.0, 1.0]),
    "0.1.3": ([0.2593967455713982, 0.3100353291915732, 3.1397947806410276,
               3.228850983482135], [0.0, 0.0, 0.0, 0.0]),
}


@pytest.mark.parametrize("scheme", SCHEMES)
def test_p07_v3_h2_and_bernoulli_draws(scheme):
    sv, b = V3[scheme]
    assert [D.h2(workload_stream(1, k, 0, scheme), 1, 4) for k in range(4)] == sv
    assert [D.bernoulli(session_stream(1, k, scheme), 0.3) for k in range(4)] == b


def test_p07_v3_renewal_erlang_arrivals():
    # §11.4 V3 `t` (every version): renewal(~erlang(2, 0.5)), first arrival one gap after 0.
    s, now, times = arrival_stream(1), 0.0, []
    for _ in range(4):
        now = now + D.erlang(s, 2, 0.5)
        times.append(now)
    assert times == [1.2085732703883902, 1.3964869477113142, 2.2914690671847153,
                     2.7226592082746075]


def test_p07_derive_013_seed_serial_aliasing():
    # §9.2: under 0.1.3/0.1.4 session k of seed s draws what session k-1 of
    # seed s+1 draws; 0.1.5 has no such relation.
    for kind in (1, 2):
        assert derive_013(5, 3, 0, kind) == derive_013(6, 2, 0, kind)
        assert derive(5, 3, 0, kind) != derive(6, 2, 0, kind)
    # §9.2 "seed 0 gives the second session the first init value of seed 1".
    assert D.exp(workload_stream(0, 1, 0, "0.1.3"), 1.0) == 1.698325284145088


@pytest.mark.parametrize("scheme", SCHEMES)
def test_p07_batched_keys_match_scalar_derivation(scheme):
    # The factories precompute keys for runs of serials; any request order
    # must give derive(...) (§3.2 / §9.2) and key_words (§2.1).
    order = random.Random(11)
    window = list(range(700, 1000))
    order.shuffle(window)                # e.g. batch sessions reaching a turn
    serials = (list(range(300)) + [order.randrange(600) for _ in range(200)] + window
               + list(range(5000, 5600, 7)) + [10**6, 3, 10**6 + 1, 2**40])
    for seed in (1, 2**64 - 1):
        for k in serials:
            for turn, kind in ((0, 2), (0, 1), (2, 1)):
                s = per_session(scheme, seed, k, turn, kind)
                assert s.key_seed == DERIVE[scheme](seed, k, turn, kind)
                assert s._key is None or s._key == key_words(s.key_seed)
        assert first(session_stream(seed, 250, scheme), 2) == \
            first(Stream(DERIVE[scheme](seed, 250, 0, 2)), 2)


def test_p07_factory_argument_checks():
    with pytest.raises(ValueError):
        arrival_stream(-1)
    with pytest.raises(ValueError):
        machine_stream(2**64)
    with pytest.raises(ValueError):
        session_stream(1, 0, scheme="0.1.2")
    assert arrival_stream(M64).key_seed == M64


# ---------------------------------------------------------------------------
# §5 Distributions: formulas, uniforms read, out-of-domain parameters
# ---------------------------------------------------------------------------

def twins(seed: int = 2024) -> tuple[Stream, Stream]:
    return Stream(seed), Stream(seed)


def test_p07_distribution_formulas():
    # §5 table: the same operations, in the same order, as a direct computation.
    seeds = random.Random(5)
    for _ in range(50):
        a, b = twins(seeds.randrange(2**64))
        assert D.exp(a, 2.5) == -2.5 * math.log(1.0 - b.uniform())
        assert D.uniform(a, -1.5, 4.0) == -1.5 + (4.0 - -1.5) * b.uniform()
        u = b.uniform()
        assert D.bernoulli(a, 0.4) == (1.0 if u < 0.4 else 0.0)
        q = 3.0 / 3
        expected = 0.0
        for _ in range(3):
            expected += -q * math.log(1.0 - b.uniform())
        assert D.erlang(a, 3.9, 3.0) == expected
        p = 0.5 * (1.0 + math.sqrt((4.0 - 1.0) / (4.0 + 1.0)))
        u1, u2 = b.uniform(), b.uniform()
        mean = 2.0 / (2.0 * p) if u1 < p else 2.0 / (2.0 * (1.0 - p))
        assert D.h2(a, 2.0, 4.0) == -mean * math.log(1.0 - u2)
        assert a.next_u64() == b.next_u64()


@pytest.mark.parametrize("call, reads", [
    (lambda s: D.det(7.5), 0),
    (lambda s: D.exp(s, 1.0), 1),
    (lambda s: D.uniform(s, 0, 1), 1),
    (lambda s: D.bernoulli(s, 0.5), 1),
    (lambda s: D.erlang(s, 2.7, 1.0), 2),      # §5: k' = max(k, 1) truncated
    (lambda s: D.erlang(s, 0, 1.0), 1),        # §5: ~erlang(0, 1) is one exponential
    (lambda s: D.erlang(s, -4, 1.0), 1),
    (lambda s: D.erlang(s, math.nan, 1.0), 1),  # §5: NaN counts as 1
    (lambda s: D.h2(s, 1.0, 1.0), 2),          # §5: ~h2 always reads two uniforms
    (lambda s: D.h2(s, 1.0, 0.5), 2),
    (lambda s: D.h2(s, 1.0, math.nan), 2),
    (lambda s: D.h2(s, 1.0, 1e300), 2),
])
def test_p07_uniforms_read(call, reads):
    a, b = twins()
    call(a)
    for _ in range(reads):
        b.uniform()
    assert a.next_u64() == b.next_u64()


def test_p07_out_of_domain_parameters():
    # §5 notes / Part 01 §4.2: ~h2(1, 0.5) and ~h2(1, 0/0) are exponential of mean 1.
    for c in (0.5, math.nan, 1.0, -3.0):
        a, b = twins()
        b.uniform()
        assert D.h2(a, 1.0, c) == -1.0 * math.log(1.0 - b.uniform())
    # ~erlang(0, 1), ~erlang(NaN, 1): one exponential of mean 1.
    for k in (0, math.nan, 1.9):
        a, b = twins()
        assert D.erlang(a, k, 1.0) == D.exp(b, 1.0)
    # ~bernoulli: p >= 1 always 1, p <= 0 and NaN always 0.
    s = Stream(5)
    assert {D.bernoulli(s, 1.0) for _ in range(200)} == {1.0}
    assert {D.bernoulli(s, p) for p in (0.0, -1.0, math.nan) for _ in range(200)} == {0.0}
    # Part 01 §4.2: ~exp(0) is 0, ~exp(-1) is non-positive, ~det(x) is x.
    assert D.exp(s, 0.0) == 0.0 and D.exp(s, -1.0) <= 0.0 and D.det(-2.5) == -2.5
    # IEEE, no Python exception: a huge CV² (1 - p rounds to 0), a zero rate.
    assert D.h2(s, 1.0, 1e300) >= 0.0
    assert D.poisson_gap(s, 0.0) == math.inf
    with pytest.raises(ValueError):
        D.erlang(s, math.inf, 1.0)


def test_p07_distribution_table():
    assert {k: v[1] for k, v in D.DISTRIBUTIONS.items()} == {
        "exp": 1, "det": 1, "uniform": 2, "erlang": 2, "h2": 2, "bernoulli": 1}
    for name, (fn, arity) in D.DISTRIBUTIONS.items():
        a, b = twins()
        args = (2.0, 3.0)[:arity]
        assert fn(a, *args) == (D.det(*args) if name == "det" else getattr(D, name)(b, *args))


# ---------------------------------------------------------------------------
# Part 01 §4.2: the laws, measured on 200 000 draws
# ---------------------------------------------------------------------------

def moments(xs: list[float]) -> tuple[float, float]:
    mean = math.fsum(xs) / len(xs)
    var = math.fsum((x - mean) ** 2 for x in xs) / (len(xs) - 1)
    return mean, var / mean**2


N_LAW = 200_000


@pytest.mark.parametrize("draw, mean, cv2, tol_mean, tol_cv2", [
    (lambda s: D.exp(s, 2), 2.0, 1.0, 0.03, 0.05),
    (lambda s: D.erlang(s, 4, 2), 2.0, 0.25, 0.02, 0.02),
    (lambda s: D.erlang(s, 2.7, 1), 1.0, 0.5, 0.01, 0.02),   # k' = 2, not 2.7 nor 3
    (lambda s: D.h2(s, 2, 4), 2.0, 4.0, 0.06, 0.4),
    (lambda s: D.h2(s, 1, 0.5), 1.0, 1.0, 0.015, 0.05),      # CV² max(0.5, 1) = 1
    (lambda s: D.uniform(s, 1, 3), 2.0, 1 / 12, 0.01, 0.005),
    (lambda s: D.bernoulli(s, 0.3), 0.3, 0.7 / 0.3, 0.005, 0.05),
], ids=["exp(2)", "erlang(4,2)", "erlang(2.7,1)", "h2(2,4)", "h2(1,0.5)",
        "uniform(1,3)", "bernoulli(0.3)"])
def test_p07_distribution_laws(draw, mean, cv2, tol_mean, tol_cv2):
    s = arrival_stream(3)
    xs = [draw(s) for _ in range(N_LAW)]
    m, c = moments(xs)
    assert abs(m - mean) < tol_mean
    assert abs(c - cv2) < tol_cv2


def test_p07_uniform_ranges():
    # Part 01 §4.2: ~uniform(1, 3) lies in [1, 3); ~uniform(3, 1) in (1, 3].
    s = arrival_stream(4)
    up = [D.uniform(s, 1, 3) for _ in range(N_LAW)]
    down = [D.uniform(s, 3, 1) for _ in range(N_LAW)]
    assert 1 <= min(up) and max(up) < 3
    assert 1 < min(down) and max(down) <= 3
    assert abs(math.fsum(down) / N_LAW - 2.0) < 0.01
