"""Spec Part 07 §2.3-§2.5 and §3.2 through the stream machinery's fast paths.

`serq.runtime.random.rng` serves the same words from several places: a
stream's buffer (doubling from one ChaCha block), a session factory's
batch of precomputed key seeds and block-0 uniforms, and three word
sources (pure-Python ChaCha, numpy, randomgen). Every expected value here
is a closed form: the reads of §2.3-§2.5 modelled directly on the words of
the reference ChaCha12 (`chacha12_block`, pinned to the §11.1 vectors in
tests/test_p07_random.py), with no buffering. The white-box checks
(batching, buffer sizes, the factory cache bound, the start-up source
policy) pin the behaviour the module's docstrings and comments state.
"""
from __future__ import annotations

import importlib.util
import random
import subprocess
import sys

import numpy as np
import pytest

from serq.runtime.random import rng
from serq.runtime.random.chacha import chacha12_block, chacha12_u64
from serq.runtime.random.chacha_np import first_block_uniforms
from serq.runtime.random.rng import (
    M32, SessionStreams, Stream, derive, derive_013, key_words, session_stream, workload_stream,
)

DERIVE = {"0.1.5": derive, "0.1.3": derive_013}


def mixed_reads(s, seed: int, n: int = 40) -> list:
    """`n` reads of every kind, in an order fixed by `seed`: uniforms first
    (a primed stream's block 0 is read as doubles), then interleaved."""
    ops = random.Random(seed)
    out: list = [s.uniform() for _ in range(10)]   # past block 0's eight uniforms
    for _ in range(n):
        op = ops.choice(("uniform", "next_u64", "next_u32", "below"))
        out.append(s.below(1000) if op == "below" else getattr(s, op)())
    return out


class Words:
    """The §2.3-§2.5 reads modelled on the words of `chacha12_block`
    (blocks 0, 1, ... of the key of `key_seed`), no buffering."""

    def __init__(self, key_seed: int, blocks: int = 24) -> None:
        key = key_words(key_seed)
        self.w = [x for b in range(blocks) for x in chacha12_block(key, b)]
        self.i = 0

    def next_u32(self) -> int:
        self.i += 1
        return self.w[self.i - 1]

    def next_u64(self) -> int:
        lo = self.next_u32()
        return lo | (self.next_u32() << 32)

    def uniform(self) -> float:
        return (self.next_u64() >> 11) * 2.0**-53

    def below(self, n: int) -> int:
        m = self.next_u32() * n
        hi, lo = m >> 32, m & M32
        if lo > 2**32 - n and lo + ((self.next_u32() * n) >> 32) > M32:
            hi += 1
        return hi


def reference(key_seed: int, seed: int, n: int = 40) -> list:
    return mixed_reads(Words(key_seed), seed, n)


@pytest.mark.parametrize("scheme", sorted(DERIVE))
def test_batched_session_streams_read_past_block_0(scheme):
    # §3.2: a factory's serials in increasing order come from one numpy batch;
    # each stream is the stream of derive(s, k, t, c), word for word, also
    # past the eight precomputed uniforms and in word reads after them.
    f = SessionStreams(1, 2, 1, scheme)
    for k in range(12):
        s = f(k)
        assert s.key_seed == DERIVE[scheme](1, k, 2, 1)
        assert mixed_reads(s, k) == reference(s.key_seed, k), k
    # the last serial of a batch and the first of the next one (block 1024 on)
    for k in (1023, 1024, 1025, 1023, 2**64 - 2, 2**64 - 1):
        s = f(k)                          # 1023 again: before the batch of 1024
        assert mixed_reads(s, k) == reference(DERIVE[scheme](1, k, 2, 1), k), k


def test_factory_argument_range():
    # §3.2: serial and turn are unsigned 64-bit.
    f = SessionStreams(1, 2**64 - 1, 1)
    assert f(2**64 - 1).key_seed == derive(1, 2**64 - 1, 2**64 - 1, 1)
    for bad in (-1, 2**64):
        with pytest.raises(ValueError):
            f(bad)
        with pytest.raises(ValueError):
            SessionStreams(1, bad, 1)


def test_factory_batches_only_serials_that_follow():
    # SessionStreams' docstring: a serial that follows the one asked for
    # before fills a batch of `_BLOCK` = 1024 serials; any other is derived alone.
    f = SessionStreams(7, 0, 2)
    f(0)                                  # the first request follows nothing
    assert f.seeds == []
    f = SessionStreams(7, 0, 2)
    f(3)
    assert f.seeds == []
    f(5)                                  # 5 does not follow 3
    assert f.seeds == []
    f(6)                                  # 6 follows 5: serials 0 .. 1023
    assert (f.base, len(f.seeds)) == (0, 1024)
    assert f.seeds[6] == derive(7, 6, 0, 2)
    assert f(0)._flt is not None          # the batch's first serial comes from it too
    f(1024)                               # outside the batch, not following 6
    assert (f.base, len(f.seeds)) == (0, 1024)
    f(1025)                               # follows 1024: the next batch
    assert (f.base, len(f.seeds)) == (1024, 1024)
    assert f.seeds[1] == derive(7, 1025, 0, 2)
    assert f(1030)._flt is not None       # served from the batch: block 0 precomputed
    assert f(1030).key_seed == derive(7, 1030, 0, 2)


def test_stream_with_a_precomputed_first_block():
    # Stream(key_seed, key=..., first=...): block 0's uniforms passed in
    # (chacha_np) read as if fetched, then the words go on from there.
    for key_seed in (1, 42, 2**64 - 1):
        key = key_words(key_seed)
        first = list(first_block_uniforms(np.array([key], np.uint64)))
        for seed in range(4):
            s = Stream(key_seed, key=key, first=first)
            assert mixed_reads(s, seed) == reference(key_seed, seed), (key_seed, seed)
        # a word read straight away: words 0 and 1 of block 0
        s = Stream(key_seed, key=key, first=first)
        assert s.next_u64() == Stream(key_seed, pure=True).next_u64()


def test_session_factories_are_bounded(monkeypatch):
    # 64 factories at most (`_FACTORIES_MAX`), least recently used dropped first.
    monkeypatch.setattr(rng, "_factories", {})
    for seed in range(64):
        session_stream(seed, 0)
    assert len(rng._factories) == 64
    session_stream(0, 1)                  # seed 0 used again: now the most recent
    workload_stream(0, 0, 0)              # a new factory: seed 1's goes
    assert len(rng._factories) == 64
    assert ("0.1.5", 1, 0, 2) not in rng._factories
    assert ("0.1.5", 0, 0, 2) in rng._factories


def test_first_fetches_skip_randomgen(monkeypatch):
    # The start-up policy of `_source` (its comment): fetches of one or two
    # blocks use the pure-Python ChaCha (35 µs a block), larger ones numpy
    # (0.35 ms a fetch), until their estimated cost passes 5 ms; the next
    # fetch imports randomgen.
    monkeypatch.setattr(rng, "_RG", None)
    monkeypatch.setattr(rng, "_spent", 0.0)
    monkeypatch.setattr(rng, "_rg_missing", False)
    loads = []
    sentinel = (None, None)

    def fake_load():
        loads.append(rng._spent)
        return sentinel
    monkeypatch.setattr(rng, "load_randomgen", fake_load)
    assert rng._source(16) is rng._PURE
    assert rng._source(8) is rng._PURE
    assert rng._source(24) is rng._NUMPY
    assert loads == []
    assert rng._spent == pytest.approx(3 * 35e-6 + 350e-6)
    # closed form: (5 ms - 0.455 ms) / 0.35 ms = 12.99: twelve more numpy fetches
    sources = [rng._source(64) for _ in range(14)]
    assert sources[:12] == [rng._NUMPY] * 12
    assert sources[12] is sentinel and loads[0] == pytest.approx(12 * 350e-6 + 455e-6)
    # a fetch that brings the estimate exactly to 5 ms is still within it
    monkeypatch.setattr(rng, "_spent", 5e-3 - 350e-6)
    assert rng._spent + 350e-6 == 5e-3     # exact in binary64
    assert rng._source(64) is rng._NUMPY
    # randomgen missing: the pure and numpy sources go on
    monkeypatch.setattr(rng, "_rg_missing", True)
    assert rng._source(64) is rng._NUMPY
    assert rng._source(8) is rng._PURE


def test_a_short_run_does_not_import_randomgen():
    # A fresh process: 100 uniforms of one stream (buffers of 8 and 16 words
    # from the pure ChaCha, 35 µs a block, then 32 and 64 from numpy, 0.35 ms
    # a fetch: 0.805 ms) and 50 batched session streams stay under the 5 ms
    # budget, so randomgen (~13 ms to import) is not loaded; 16 more such
    # streams (12.9 ms more) pass it, and it is.
    code = ("import sys\n"
            "from serq.runtime.random.rng import arrival_stream, session_stream\n"
            "s = arrival_stream(1)\n"
            "[s.uniform() for _ in range(100)]\n"
            "for k in range(50): session_stream(1, k).uniform()\n"
            "print('randomgen' in sys.modules)\n"
            "for k in range(16): s = arrival_stream(k); [s.uniform() for _ in range(100)]\n"
            "print('randomgen' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", str(rng.HAVE_RANDOMGEN)]


@pytest.mark.skipif(not rng.HAVE_RANDOMGEN, reason="randomgen is not installed")
def test_randomgen_loads_and_gives_the_reference_words(monkeypatch):
    # load_randomgen() imports it when it is installed (else every fetch
    # silently falls back to numpy), and its fetches are chacha12's words.
    monkeypatch.setattr(rng, "_RG", None)
    monkeypatch.setattr(rng, "_rg_missing", False)
    fetches = rng.load_randomgen()
    assert fetches is not None and rng._RG is fetches
    assert rng.load_randomgen() is fetches  # imported once
    key = key_words(42)
    for block, n in ((0, 8), (3, 16), (1, 1024), (0, 8)):
        words = chacha12_u64(key, block, n)
        assert fetches[0](key, block, n) == words
        assert list(fetches[1](key, block, n)) == [(w >> 11) * 2.0**-53 for w in words]


def test_randomgen_import_failure_is_remembered(monkeypatch):
    monkeypatch.setattr(rng, "_RG", None)
    monkeypatch.setattr(rng, "_rg_missing", False)

    tries = []

    def broken():
        tries.append(1)
        raise ImportError("built for another numpy")
    monkeypatch.setattr(rng, "_randomgen_fetches", broken)
    assert rng.load_randomgen() is None
    assert rng._rg_missing is True
    assert rng.load_randomgen() is None and len(tries) == 1  # not tried again


def test_have_randomgen_says_whether_it_is_installed():
    assert rng.HAVE_RANDOMGEN == (importlib.util.find_spec("randomgen") is not None)


@pytest.mark.parametrize("pure", [False, True])
def test_long_reads_across_buffer_refills(pure):
    # §2.3/§2.4: 5000 u64 (past the 1024-word buffers) are chacha12's words
    # in order; the buffer doubles from one block to 1024 words (the
    # module's comment), whatever is read.
    key = key_words(42)
    words = chacha12_u64(key, 0, 5000)
    s, sizes = Stream(42, pure=pure), []
    for w in words:
        assert s.next_u64() == w
        if not sizes or s._base != sizes[-1][0]:
            sizes.append((s._base, s._n))
    assert [n for _, n in sizes] == [8, 16, 32, 64, 128, 256, 512] + [1024] * 4  # 2040 + 3072 > 5000
    s = Stream(42, pure=pure)
    assert [s.uniform() for _ in range(5000)] == [(w >> 11) * 2.0**-53 for w in words]


def buffer_sizes(s: Stream, words: int) -> list[int]:
    """The size of each buffer a stream reads `words` u64 words from."""
    sizes, base = [], None
    for _ in range(words):
        s.next_u64()
        if s._base != base:
            base = s._base
            sizes.append(s._n)
    return sizes


def test_primed_streams_grow_their_buffers_from_one_block():
    # A stream given its block 0 (a batched session stream, or `first=`)
    # goes on with buffers of 16, 32, ... words, as if it had read block 0.
    f = SessionStreams(3, 0, 1)
    f(0)
    primed = f(1)                         # from the batch
    key = key_words(5)
    given = Stream(5, key=key, first=list(first_block_uniforms(np.array([key], np.uint64))))
    for s in (primed, given):
        assert buffer_sizes(s, 8 + 16 + 32 + 64 + 1) == [8, 16, 32, 64, 128]


def test_a_pending_high_half_of_zero_is_still_pending():
    # §2.3: after a next_u32, the high half of that u64 is the next word, even
    # when it is 0 (a chance of 2**-32 per word: the state is set directly).
    w = Words(9)
    for read in ("next_u64", "next_u32", "uniform"):
        s = Stream(9)
        s.next_u32()
        s._hi = 0
        words = w.w[2:4]
        if read == "next_u64":
            assert s.next_u64() == 0 | (words[0] << 32)
        elif read == "next_u32":
            assert s.next_u32() == 0
        else:
            assert s.uniform() == ((words[0] << 32) >> 11) * 2.0**-53


def test_stream_keyword_arguments():
    s = Stream(1)
    assert s._src is rng._FAST            # the fast sources unless pure=True
    with pytest.raises(TypeError):
        Stream(1, True)                   # pure, key and first are keyword-only


class Scripted(Stream):
    """A stream whose 32-bit words are given (for §2.5's edge cases)."""

    def __init__(self, words: list[int]) -> None:
        super().__init__(0)
        self.words = list(words)

    def next_u32(self) -> int:
        return self.words.pop(0)


def test_below_carries_only_when_the_sum_passes_32_bits():
    # §2.5 (Canon): with m = w1·n, hi = m >> 32 goes up by one iff
    # lo = m mod 2**32 > 2**32 - n and lo + (w2·n >> 32) >= 2**32.
    n = 3
    w1 = (2**32 - 2) * pow(3, -1, 2**32) % 2**32   # w1·3 = 2**32 - 2 (mod 2**32)
    hi = w1 * n >> 32
    assert (w1 * n) & M32 == M32 - 1
    # w2 = 2**31: w2·3 >> 32 = 1, lo + 1 = 2**32 - 1: no carry
    assert Scripted([w1, 2**31]).below(n) == hi
    # w2 = 2**31 + 2**30: w2·3 >> 32 = 2, lo + 2 = 2**32: carry
    assert Scripted([w1, 2**31 + 2**30]).below(n) == hi + 1
    # lo = 2**32 - n exactly (w1 = 2**32 - 1): no carry is possible and the
    # second word is not read (§2.5 reads it only when lo > 2**32 - n)
    s = Scripted([2**32 - 1, 7])
    assert s.below(n) == (2**32 - 1) * n >> 32
    assert s.words == [7]


def test_a_word_read_then_uniforms_go_back_to_the_fast_path():
    # `uniform()` pops doubles from an attached iterator (Stream docstring):
    # after a u64 word read (no pending half) the next uniform re-attaches it.
    s, w = Stream(3), Words(3)
    assert s.next_u64() == w.next_u64()
    assert s.uniform() == w.uniform()
    assert s._it is not rng._EMPTY
    assert [s.uniform() for _ in range(20)] == [w.uniform() for _ in range(20)]
