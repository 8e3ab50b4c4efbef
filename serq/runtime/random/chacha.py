"""Pure-Python ChaCha12 (spec Part 07 §2.2): reference and fallback generator.

Used by `serq.runtime.random.rng` for a process's first small buffers (one or two
blocks) and when `randomgen` is missing, and by the tests to cross-check the
`randomgen` path word for word. Slow (tens of µs a block).
"""
from __future__ import annotations

from typing import Sequence

M32 = 0xFFFFFFFF
SIGMA = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)  # "expand 32-byte k"
# One double round: the four column rounds, then the four diagonal rounds.
_QUARTERS = ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
             (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14))


def chacha12_block(key: Sequence[int], block: int) -> list[int]:
    """The 16 output words of block number `block` under the key words `key`.

    State: the constants, `key[0..7]`, the 64-bit block counter (low word
    first) and a zero nonce; 6 double rounds; then the initial state is
    added word by word modulo 2**32.
    """
    init = [*SIGMA, *key, block & M32, (block >> 32) & M32, 0, 0]
    x = init[:]
    for _ in range(6):
        for a, b, c, d in _QUARTERS:
            xa = (x[a] + x[b]) & M32
            xd = x[d] ^ xa
            xd = ((xd << 16) | (xd >> 16)) & M32
            xc = (x[c] + xd) & M32
            xb = x[b] ^ xc
            xb = ((xb << 12) | (xb >> 20)) & M32
            xa = (xa + xb) & M32
            xd ^= xa
            xd = ((xd << 8) | (xd >> 24)) & M32
            xc = (xc + xd) & M32
            xb ^= xc
            x[a], x[b], x[c], x[d] = xa, ((xb << 7) | (xb >> 25)) & M32, xc, xd
    return [(w + i) & M32 for w, i in zip(x, init)]


def chacha12_u64(key: Sequence[int], block: int, n: int) -> list[int]:
    """`n` (a multiple of 8) u64 words `w0 | w1 << 32` from block `block` on."""
    out: list[int] = []
    for b in range(block, block + n // 8):
        w = chacha12_block(key, b)
        out += [w[j] | (w[j + 1] << 32) for j in range(0, 16, 2)]
    return out
