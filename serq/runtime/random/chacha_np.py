"""ChaCha12 block 0 of many keys at once, in numpy (spec Part 07 §2.2).

A run creates one session stream per session, and most sessions draw only
a few uniforms: the first block (eight u64 words) of each stream is most of
what is ever read. Computing it for a block of consecutive serials in one
vectorised pass costs about 1.5 µs per stream, against several µs for
loading a key into a scalar generator. The words are those of
`serq.runtime.random.chacha.chacha12_block(key, 0)`, bit for bit (tests check it).

`blocks_u64` is the same pass over consecutive blocks of one key: a
stream's buffer without `randomgen` (about 0.35 ms for up to 128 blocks).
"""
from __future__ import annotations

from array import array
from typing import Sequence

import numpy as np

_SIGMA = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)
_TWO_M53 = 2.0 ** -53
_ROUNDS = ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
           (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14))


def first_block_words(keys: np.ndarray) -> np.ndarray:
    """The 16 output words of block 0 for each key: `keys` (n, 8) -> (16, n) uint32."""
    n = keys.shape[0]
    x = np.zeros((16, n), np.uint32)
    for i, c in enumerate(_SIGMA):
        x[i] = c
    x[4:12] = keys.astype(np.uint32).T
    return _rounds(x)


def blocks_u64(key: Sequence[int], block: int, n: int) -> np.ndarray:
    """`n` (a multiple of 8) u64 words of one key from block `block` on, as
    `serq.runtime.random.chacha.chacha12_u64` gives them: the blocks side by side."""
    m = n // 8
    x = np.empty((16, m), np.uint32)
    for i, c in enumerate(_SIGMA):
        x[i] = c
    x[4:12] = np.array(key, np.uint32)[:, None]
    counter = np.arange(block, block + m, dtype=np.uint64)
    x[12] = (counter & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    x[13] = (counter >> np.uint64(32)).astype(np.uint32)
    x[14:16] = 0
    w = _rounds(x).T.astype(np.uint64)  # (m, 16): block by block
    return (w[:, 0::2] | (w[:, 1::2] << np.uint64(32))).reshape(-1)


def blocks_uniforms(key: Sequence[int], block: int, n: int) -> np.ndarray:
    """The uniforms `(u64 >> 11)·2⁻⁵³` (§2.4) of `blocks_u64(key, block, n)`."""
    return (blocks_u64(key, block, n) >> np.uint64(11)).astype(np.float64) * _TWO_M53


def _rounds(x: np.ndarray) -> np.ndarray:
    """The ChaCha12 output of the states `x` (16, n): 6 double rounds, then
    the input added word by word (in place)."""
    init = x.copy()
    tmp = np.empty(x.shape[1], np.uint32)
    rows = [x[i] for i in range(16)]  # views: in-place updates write into x

    def rotate(v: np.ndarray, r: int) -> None:
        np.left_shift(v, r, out=tmp)
        v >>= 32 - r
        v |= tmp

    for _ in range(6):
        for a, b, c, d in _ROUNDS:
            xa, xb, xc, xd = rows[a], rows[b], rows[c], rows[d]
            xa += xb
            xd ^= xa
            rotate(xd, 16)
            xc += xd
            xb ^= xc
            rotate(xb, 12)
            xa += xb
            xd ^= xa
            rotate(xd, 8)
            xc += xd
            xb ^= xc
            rotate(xb, 7)
    x += init
    return x


def first_block_uniforms(keys: np.ndarray) -> array:
    """The eight uniforms `(u64 >> 11)·2⁻⁵³` of block 0 of each key (§2.4),
    flat: key `j`'s are items `8j … 8j+7` of an array of doubles (no Python
    float is made before it is drawn)."""
    w = first_block_words(keys).astype(np.uint64)
    u = w[0::2] | (w[1::2] << np.uint64(32))
    flat = np.ascontiguousarray(((u >> np.uint64(11)).astype(np.float64) * _TWO_M53).T)
    out = array("d")
    out.frombytes(flat.tobytes())
    return out
