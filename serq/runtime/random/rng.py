"""Random streams of a run, bit for bit as spec Part 07 (the pyserq 0.1.5 scheme).

The generator is ChaCha12 keyed from a 64-bit seed by a PCG32 expansion
(`rand` 0.9 `StdRng::seed_from_u64`, Part 07 §2). A `Stream` is a cursor into
its 32-bit word sequence; it reads whole ChaCha blocks in bulk from
`randomgen` (imported once a run has drawn more than a few thousand words;
before, and when `randomgen` is missing, from the pure-Python reference of
`serq.runtime.random.chacha` and the numpy pass of `serq.runtime.random.chacha_np`) and
hands out uniforms from a buffer of doubles.

Six kinds of stream exist (§1): the run-wide arrival, trace, machine and evict
streams, and per session a workload stream per turn and a session stream,
keyed by `derive` (§3.2) or, for differential tests against pyserq 0.1.3 and
0.1.4, by `derive_013` (§9.2). Not thread-safe per stream; streams may be
used from several threads (the shared generator is locked).
"""
from __future__ import annotations

import threading
from importlib.util import find_spec
from typing import Callable, Optional, Sequence

import numpy as np

from .chacha import chacha12_u64
from .chacha_np import blocks_u64, blocks_uniforms, first_block_uniforms

__all__ = [
    "M32", "M64", "HAVE_RANDOMGEN", "DERIVATIONS", "key_words", "mix",
    "splitmix_step", "derive", "derive_013", "Stream", "arrival_stream",
    "trace_stream", "machine_stream", "evict_stream", "workload_stream",
    "session_stream",
]

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF
HAVE_RANDOMGEN = find_spec("randomgen") is not None  # imported when first needed

TRACE_XOR = 0x6A09E667F3BCC908    # §1: key seeds of the run-wide streams
MACHINE_XOR = 0x5851F42D4C957F2D
EVICT_XOR = 0x2545F4914F6CDD1D
GOLDEN = 0x9E3779B97F4A7C15       # §3.2: the splitmix64 increment
KIND_WORKLOAD = 1                 # §3.2: `c` of the per-session streams
KIND_SESSION = 2

_MIX1, _MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
_PCG_MUL, _PCG_INC = 6364136223846793005, 11634580027462260723
_TWO_M53 = 1.0 / 9007199254740992.0  # 2**-53 (§2.4)


# ---------------------------------------------------------------------------
# Seeds and keys (§2.1, §3.2, §9.2)
# ---------------------------------------------------------------------------

def key_words(seed: int) -> list[int]:
    """The eight 32-bit key words `K[0..7]` of a 64-bit seed (PCG32, §2.1)."""
    x = seed & M64
    out = []
    for _ in range(8):
        x = (x * _PCG_MUL + _PCG_INC) & M64
        xs = (((x >> 18) ^ x) >> 27) & M32
        rot = x >> 59
        out.append(((xs >> rot) | (xs << (32 - rot))) & M32)
    return out


def mix(z: int) -> int:
    """The splitmix64 finaliser of §3.2 (64-bit wrapping)."""
    z = ((z ^ (z >> 30)) * _MIX1) & M64
    z = ((z ^ (z >> 27)) * _MIX2) & M64
    return z ^ (z >> 31)


def splitmix_step(z: int) -> int:
    """One splitmix64 output: `mix(z + 0x9E3779B97F4A7C15)` (§3.2)."""
    return mix((z + GOLDEN) & M64)


def derive(s: int, k: int, t: int, c: int) -> int:
    """Key seed of a per-session stream, pyserq 0.1.5 (§3.2)."""
    x = s & M64
    for v in (0, k, t, c):  # step(step(step(step(s) ^ k) ^ t) ^ c)
        x = splitmix_step(x ^ (v & M64))
    return x


def derive_013(s: int, k: int, t: int, c: int) -> int:
    """Key seed of a per-session stream, pyserq 0.1.3/0.1.4 (§9.2)."""
    x = s & M64
    for v in (k, t, c):
        x = mix((x + GOLDEN + v) & M64)
    return x


DERIVATIONS: dict[str, Callable[[int, int, int, int], int]] = {
    "0.1.5": derive, "0.1.4": derive_013, "0.1.3": derive_013,
}

# Vectorised twins of `derive`/`derive_013` and `key_words` over a block of
# consecutive serials (numpy uint64 arithmetic wraps modulo 2**64). One block
# costs about as much as 15-20 scalar derivations, so it is used only when
# serials are requested in (nearly) increasing order, as session creation does.
_U = np.uint64
_V = {name: _U(v) for name, v in (("g", GOLDEN), ("m1", _MIX1), ("m2", _MIX2),
                                  ("27", 27), ("30", 30), ("31", 31), ("18", 18),
                                  ("59", 59), ("32", 32), ("m32", M32))}
_PCG_A = np.array([pow(_PCG_MUL, i, 1 << 64) for i in range(1, 9)], np.uint64)
_PCG_C = np.array([sum(pow(_PCG_MUL, j, 1 << 64) for j in range(i)) * _PCG_INC & M64
                   for i in range(1, 9)], np.uint64)  # PCG state i+1 = A·x + C
_BLOCK = 1024         # serials per vectorised block (ChaCha block 0 included)
_FACTORIES_MAX = 64   # SessionStreams kept by `session_stream`/`workload_stream`
_factories: dict[tuple, "SessionStreams"] = {}


def _mix_v(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> _V["30"])) * _V["m1"]
    z = (z ^ (z >> _V["27"])) * _V["m2"]
    return z ^ (z >> _V["31"])


def _key_block(fn: Callable, s: int, k0: int, t: int, c: int) -> tuple[list, Sequence[float]]:
    """Key seeds and the uniforms of ChaCha block 0 of serials
    `k0 .. k0+_BLOCK-1` (exact; serial `k0+j`'s eight are items `8j … 8j+7`)."""
    x = np.arange(k0, k0 + _BLOCK, dtype=np.uint64)
    g = _V["g"]
    if fn is derive:
        x = _mix_v((x ^ _U(splitmix_step(s))) + g)
        for v in (t, c):
            x = _mix_v((x ^ _U(v)) + g)
    else:
        for v in (s, t, c):
            x = _mix_v(x + _U((v + GOLDEN) & M64))
    p = x[:, None] * _PCG_A + _PCG_C
    xs = (((p >> _V["18"]) ^ p) >> _V["27"]) & _V["m32"]
    rot = p >> _V["59"]
    keys = ((xs >> rot) | (xs << (_V["32"] - rot))) & _V["m32"]
    return x.tolist(), first_block_uniforms(keys)


class SessionStreams:
    """The per-session streams of one kind `(seed, turn, kind)`, by serial.

    Sessions are created in serial order, so when a serial follows the one
    asked for before, the key seeds and the first ChaCha block of the next
    `_BLOCK` serials are computed at once (numpy); any other serial is
    derived on its own. Either way `factory(serial)` is the stream of §3.2."""

    __slots__ = ("fn", "seed", "turn", "kind", "base", "seeds", "firsts", "last")

    def __init__(self, seed: int, turn: int, kind: int, scheme: str = "0.1.5"):
        fn = DERIVATIONS.get(scheme)
        if fn is None:
            raise ValueError(f"unknown stream scheme {scheme!r}; "
                             f"expected one of {sorted(DERIVATIONS)}")
        if not 0 <= turn <= M64:
            raise ValueError(f"turn {turn} out of range")
        self.fn = fn
        self.seed = _check_seed(seed)
        self.turn = turn
        self.kind = kind
        self.base = 0
        self.seeds: list[int] = []
        self.firsts: Sequence[float] = ()  # eight uniforms a serial, flat
        self.last = -2

    def __call__(self, serial: int) -> Stream:
        j = serial - self.base
        if 0 <= j < len(self.seeds):
            self.last = serial
            return _primed(self.seeds[j], self.firsts[8 * j:8 * j + 8])
        if not 0 <= serial <= M64:
            raise ValueError(f"serial {serial} out of range")
        follows = serial == self.last + 1
        self.last = serial
        if follows and serial + _BLOCK < 1 << 63:
            self.base = base = serial - serial % _BLOCK
            self.seeds, self.firsts = _key_block(self.fn, self.seed, base, self.turn, self.kind)
            j = serial - base
            return _primed(self.seeds[j], self.firsts[8 * j:8 * j + 8])
        return Stream(self.fn(self.seed, serial, self.turn, self.kind))


# ---------------------------------------------------------------------------
# Word sources: (u64 fetch, double fetch) of n words from block b on (§2.6)
# ---------------------------------------------------------------------------

def _fetch_f64_pure(key: list[int], block: int, n: int) -> list[float]:
    """The uniforms (§2.4) of `chacha12_u64(key, block, n)`."""
    return [(x >> 11) * _TWO_M53 for x in chacha12_u64(key, block, n)]


_PURE = (chacha12_u64, _fetch_f64_pure)


def _fetch_u64_np(key: list[int], block: int, n: int) -> list[int]:
    return blocks_u64(key, block, n).tolist()


def _fetch_f64_np(key: list[int], block: int, n: int) -> memoryview:
    return memoryview(blocks_uniforms(key, block, n))


_NUMPY = (_fetch_u64_np, _fetch_f64_np)

# randomgen fetches a buffer in microseconds but takes ~13 ms to import
# (with numpy.random). A short run draws a few thousand words at most, so the
# first fetches of a process come from the pure-Python ChaCha (one or two
# blocks, ~35 µs a block) and the numpy one (more, ~0.35 ms a fetch) until
# their estimated cost reaches `_START_BUDGET`; the next fetch imports
# randomgen, which serves every fetch from then on. The words are the same
# whichever source makes them (tests check it word for word).
_START_BUDGET = 5e-3   # seconds of estimated fetching before randomgen is imported
_PURE_BLOCKS = 2       # fetches of at most this many blocks use the pure-Python ChaCha
_COST_PURE_BLOCK = 35e-6
_COST_NUMPY = 350e-6
_spent = 0.0
_RG: Optional[tuple] = None  # randomgen's (u64, f64) fetches, once imported
_rg_missing = not HAVE_RANDOMGEN
_LOCK = threading.Lock()


def _source(n: int) -> tuple:
    """The (u64, f64) fetches for a buffer of `n` words (see above)."""
    global _spent
    if _RG is not None:
        return _RG
    blocks = n >> 3
    small = blocks <= _PURE_BLOCKS
    cost = blocks * _COST_PURE_BLOCK if small else _COST_NUMPY
    if _spent + cost > _START_BUDGET and not _rg_missing:
        rg = load_randomgen()
        if rg is not None:
            return rg
    _spent += cost
    return _PURE if small else _NUMPY


def load_randomgen() -> Optional[tuple]:
    """Import randomgen now: its (u64, f64) fetches, which every stream uses
    from then on; None when it cannot be imported (missing, or built for
    another numpy: the other sources give the same words)."""
    global _RG, _rg_missing
    with _LOCK:
        if _RG is None and not _rg_missing:
            try:
                _RG = _randomgen_fetches()
            except Exception:  # depends on the environment
                _rg_missing = True
    return _RG


def _randomgen_fetches() -> tuple:
    """randomgen's fetches. One shared generator: each fetch loads the
    stream's key and block counter into it (randomgen counts 32-bit words;
    at a block boundary its cached block is never read). That is far cheaper
    than a ChaCha object per stream (~35 µs each: it draws OS entropy
    first). numpy's Generator.random() is exactly (random_raw() >> 11) * 2**-53."""
    from randomgen import ChaCha
    gen = ChaCha(key=0, rounds=12, counter=0)
    raw = gen.random_raw
    doubles = np.random.Generator(gen).random
    lock = threading.Lock()
    zero_block = [0] * 16

    def load(key: list[int], block: int) -> None:
        gen.state = {"bit_generator": "ChaCha", "state": {
            "block": zero_block, "keysetup": key, "ctr": [block << 4, 0], "rounds": 12}}

    def fetch_u64(key: list[int], block: int, n: int) -> list[int]:
        with lock:
            load(key, block)
            return raw(n).tolist()

    def fetch_f64(key: list[int], block: int, n: int) -> memoryview:
        with lock:
            load(key, block)
            return memoryview(doubles(n))

    return fetch_u64, fetch_f64


def _fetch_u64(key: list[int], block: int, n: int) -> list[int]:
    return _source(n)[0](key, block, n)


def _fetch_f64(key: list[int], block: int, n: int) -> Sequence[float]:
    return _source(n)[1](key, block, n)


_FAST = (_fetch_u64, _fetch_f64)


# ---------------------------------------------------------------------------
# Streams (§2.3-§2.5)
# ---------------------------------------------------------------------------

_FIRST_REFILL = 8     # u64 words = one ChaCha block: most session streams
_MAX_REFILL = 1024    # then ~2 ns a draw of fetch overhead, 8 kB a stream
_EMPTY = iter(())     # an exhausted iterator: sends uniform() to its slow path


class Stream:
    """One generator instance: a cursor into the word sequence of a key seed.

    The stream reads a buffer of `_n` u64 words (blocks `_base` on) at a
    time, doubling its size from one block up to `_MAX_REFILL`. The buffer
    is seen as doubles (`_flt`, for `uniform`) or as ints (`_raw`, for word
    reads), each fetched when first needed. `uniform()` is the hot path: it
    pops a double from the attached iterator `_it`. Word reads detach the
    cursor into an index `_i` plus the pending high half `_hi` of a u64
    whose low half a `next_u32` returned (-1 when none).
    """

    __slots__ = ("key_seed", "_src", "_key", "_next", "_size", "_base", "_n",
                 "_raw", "_flt", "_it", "_i", "_hi")

    def __init__(self, key_seed: int, *, pure: bool = False,
                 key: list[int] | None = None, first: list[float] | None = None) -> None:
        """A stream keyed by `key_seed`; `pure` forces the Python ChaCha.

        `key` may pass the precomputed `key_words(key_seed)`, and `first`
        the eight uniforms of its block 0 (`chacha_np`).
        """
        self.key_seed = key_seed & M64
        self._src = _PURE if pure else _FAST
        self._key = key                      # else expanded at the first fetch
        self._next = 0                       # first block after the buffer
        self._size = _FIRST_REFILL           # u64 words of the next buffer
        self._base = self._n = self._i = 0
        self._raw: Sequence[int] | None = None
        self._flt: Sequence[float] | None = None
        self._it = _EMPTY                    # attached: uniforms from here on
        self._hi = -1
        if first is not None:
            self._next = 1                   # as if block 0 had been read
            self._size = _FIRST_REFILL << 1
            self._n = 8
            self._flt = first
            self._it = iter(first)

    @classmethod
    def primed(cls, key_seed: int, first: Sequence[float]) -> "Stream":
        """`Stream(key_seed, first=first)`, built faster (a session's stream)."""
        self = _new_stream(cls)
        self.key_seed = key_seed & M64
        self._src = _FAST
        self._key = None
        self._next = 1
        self._size = _FIRST_REFILL << 1
        self._base = self._i = 0
        self._n = 8
        self._raw = None
        self._flt = first
        self._it = iter(first)
        self._hi = -1
        return self

    def __repr__(self) -> str:
        return f"Stream(key_seed={self.key_seed:#018x})"

    def uniform(self) -> float:
        """Next `U = (next_u64() >> 11) * 2**-53`, in [0, 1) (§2.4)."""
        try:
            return next(self._it)
        except StopIteration:
            return self._uniform_slow()

    def _advance(self) -> None:
        """Move to the next buffer; the cursor is detached, at 0."""
        if self._key is None:
            self._key = key_words(self.key_seed)
        n = self._size
        self._base = self._next
        self._next += n >> 3
        self._n = n
        self._size = min(n << 1, _MAX_REFILL)
        self._i = 0
        self._raw = self._flt = None

    def _detach(self) -> None:
        """Turn the attached uniform iterator back into the index `_i`."""
        it = self._it
        if it is not _EMPTY:
            self._it = _EMPTY
            self._i = self._n - sum(1 for _ in it)  # rare: word reads only

    def _uniform_slow(self) -> float:
        """`uniform()` at the start, at a buffer end, or after a word read."""
        if self._it is not _EMPTY:       # attached and exhausted
            self._it = _EMPTY
            self._advance()
        elif self._hi >= 0:
            return (self.next_u64() >> 11) * _TWO_M53
        elif self._i >= self._n:
            self._advance()
        flt = self._flt
        if flt is None:
            flt = self._flt = self._src[1](self._key, self._base, self._n)
        i = self._i
        self._it = it = iter(flt[i:] if i else flt)
        return next(it)

    def _take(self) -> int:
        """Consume the next u64 word of the buffer (cursor detached)."""
        i = self._i
        if i >= self._n:
            self._advance()
            i = 0
        raw = self._raw
        if raw is None:
            if self._key is None:
                self._key = key_words(self.key_seed)
            raw = self._raw = self._src[0](self._key, self._base, self._n)
        self._i = i + 1
        return raw[i]

    def next_u64(self) -> int:
        """The next two words, the first as the low half (§2.3)."""
        self._detach()
        hi = self._hi
        x = self._take()
        if hi < 0:
            return x
        self._hi = x >> 32
        return hi | ((x & M32) << 32)

    def next_u32(self) -> int:
        """The next 32-bit word (§2.3)."""
        self._detach()
        hi = self._hi
        if hi >= 0:
            self._hi = -1
            return hi
        x = self._take()
        self._hi = x >> 32
        return x & M32

    def below(self, n: int) -> int:
        """Uniform integer in 0 .. n-1, Canon's widening multiply (§2.5)."""
        if not 1 <= n <= M32:
            raise ValueError(f"below(n) needs 1 <= n < 2**32, got {n}")
        m = self.next_u32() * n
        hi, lo = m >> 32, m & M32
        if lo > (1 << 32) - n and lo + ((self.next_u32() * n) >> 32) > M32:
            hi += 1
        return hi


# ---------------------------------------------------------------------------
# The six kinds of stream (§1, §3)
# ---------------------------------------------------------------------------

def _check_seed(seed: int) -> int:
    if not 0 <= seed <= M64:
        raise ValueError(f"seed {seed} is not an unsigned 64-bit integer")
    return seed


_new_stream = object.__new__
_primed = Stream.primed


def arrival_stream(seed: int) -> Stream:
    """The run's arrival stream: key seed `s` (§1)."""
    return Stream(_check_seed(seed))


def trace_stream(seed: int) -> Stream:
    """The run's trace-choice stream: key seed `s ^ 0x6A09E667F3BCC908` (§1)."""
    return Stream(_check_seed(seed) ^ TRACE_XOR)


def machine_stream(seed: int) -> Stream:
    """The run's machine stream: key seed `s ^ 0x5851F42D4C957F2D` (§1)."""
    return Stream(_check_seed(seed) ^ MACHINE_XOR)


def evict_stream(seed: int) -> Stream:
    """The run's evict stream: key seed `s ^ 0x2545F4914F6CDD1D` (§1)."""
    return Stream(_check_seed(seed) ^ EVICT_XOR)


def _per_session(scheme: str, seed: int, serial: int, turn: int, kind: int) -> Stream:
    key = (scheme, seed, turn, kind)
    factory = _factories.pop(key, None)   # re-inserted last: least recently used go first
    if factory is None:
        factory = SessionStreams(seed, turn, kind, scheme)
        if len(_factories) >= _FACTORIES_MAX:
            _factories.pop(next(iter(_factories)))
    _factories[key] = factory
    return factory(serial)


def workload_stream(seed: int, serial: int, turn: int, scheme: str = "0.1.5") -> Stream:
    """Workload stream of session `serial` at `turn` (0 = `init`), §3.2/§9.2."""
    return _per_session(scheme, seed, serial, turn, KIND_WORKLOAD)


def session_stream(seed: int, serial: int, scheme: str = "0.1.5") -> Stream:
    """Session-code stream of session `serial` (§3.2/§9.2)."""
    return _per_session(scheme, seed, serial, 0, KIND_SESSION)
