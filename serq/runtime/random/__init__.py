"""Random streams bit for bit as spec Part 07: ChaCha12 (`chacha`,
`chacha_np`), the streams of a run (`rng`) and the distributions of `~d(…)`
draws (`distributions`).

May import: `serq.core`.
"""
