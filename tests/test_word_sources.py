"""Where a stream's ChaCha12 words come from (serq/runtime/random/rng.py, chacha_np.py).

A process draws its first words from the pure-Python ChaCha (a block or
two) and the numpy pass (more), and imports randomgen only once that would
cost more than its import (a short run never does). The words must be the
same from every source: checked word for word against the reference
(`serq.runtime.random.chacha`), through the `Stream` reads, and on whole reports.
"""
from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from serq.runtime.random import chacha_np, rng
from serq.runtime.random.chacha import chacha12_u64

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MG1 = os.path.join(ROOT, "examples", "single-turn", "mg1.sq")


def test_numpy_blocks_are_the_reference_words():
    r = random.Random(11)
    blocks = [0, 1, 2 ** 32 - 3, 2 ** 40 + 7, 2 ** 64 - 200]  # the counter's high word too
    for _ in range(40):
        key = rng.key_words(r.getrandbits(64))
        block, n = r.choice(blocks), 8 * r.randint(1, 128)
        want = chacha12_u64(key, block, n)
        assert chacha_np.blocks_u64(key, block, n).tolist() == want, (block, n)
        assert chacha_np.blocks_uniforms(key, block, n).tolist() == \
            [(w >> 11) * 2.0 ** -53 for w in want]


def _sources():
    out = {"pure": rng._PURE, "numpy": rng._NUMPY, "lazy": rng._FAST}
    if rng.HAVE_RANDOMGEN:
        out["randomgen"] = rng.load_randomgen()
    return out


@pytest.mark.parametrize("seed", [3, 2 ** 64 - 1])
def test_every_source_reads_the_same(seed):
    # 2000 interleaved u64, u32, uniform and ranged reads: buffers of 1 to 128 blocks
    streams = {}
    for name, source in _sources().items():
        s = rng.Stream(seed)
        s._src = source
        streams[name] = s
    ops = random.Random(seed)
    for i in range(2000):
        op = ops.choice(("next_u64", "next_u32", "uniform", "uniform", "below"))
        args = (ops.choice((1, 6, 1000, 2 ** 32 - 1)),) if op == "below" else ()
        got = {name: getattr(s, op)(*args) for name, s in streams.items()}
        assert len(set(got.values())) == 1, (i, op, got)


def _run(args, first=""):
    code = (first + "import sys, json; from serq.cli.commands import main; "
            "main(['run', *sys.argv[1:]]); "
            "print(json.dumps(sorted(m for m in ('randomgen', 'numpy.random') "
            "if m in sys.modules)), file=sys.stderr)")
    env = dict(os.environ, SERQ_CACHE_DIR="", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         check=True, env=env)
    return out.stdout, out.stderr.strip().splitlines()[-1]


@pytest.mark.skipif(not rng.HAVE_RANDOMGEN, reason="randomgen is not installed")
def test_randomgen_only_when_a_run_draws_much():
    short, imported = _run([MG1, "--horizon", "10", "--json"])
    assert imported == "[]"
    # the program's horizon: about 16 000 arrivals, 16 000 words of the arrival
    # stream in buffers of up to 1024: past the start-up budget
    longer, imported = _run([MG1, "--json"])
    assert imported == '["numpy.random", "randomgen"]'
    for args, report in (([MG1, "--horizon", "10", "--json"], short),
                         ([MG1, "--json"], longer)):
        from_randomgen, _ = _run(args, first="import serq.runtime.random.rng as r; r.load_randomgen(); ")
        assert from_randomgen == report  # the same report byte for byte


def test_the_budget_and_a_missing_randomgen(monkeypatch):
    monkeypatch.setattr(rng, "_RG", None)
    monkeypatch.setattr(rng, "_spent", 0.0)
    monkeypatch.setattr(rng, "_rg_missing", True)  # randomgen cannot be imported
    for _ in range(100):  # far past the budget: still the pure and numpy sources
        assert rng._source(8) is rng._PURE and rng._source(16) is rng._PURE
        assert rng._source(24) is rng._NUMPY and rng._source(1024) is rng._NUMPY
    if rng.HAVE_RANDOMGEN:
        monkeypatch.setattr(rng, "_rg_missing", False)
        monkeypatch.setattr(rng, "_spent", 0.0)
        spent = 0
        while rng._source(1024) is rng._NUMPY:  # until the budget is spent
            spent += 1
        assert spent == round(rng._START_BUDGET / rng._COST_NUMPY)
        assert rng._source(8) is rng._RG is not None  # from then on, randomgen for all


def test_a_broken_randomgen_leaves_the_other_sources(monkeypatch):
    # an installation built against another numpy fails at import with a ValueError
    # ("numpy.dtype size changed"), not an ImportError: the run goes on with the
    # pure and numpy sources (the same words) instead of stopping in a traceback
    def broken():
        raise ValueError("numpy.dtype size changed, may indicate binary incompatibility")
    monkeypatch.setattr(rng, "_RG", None)
    monkeypatch.setattr(rng, "_rg_missing", False)
    monkeypatch.setattr(rng, "_spent", rng._START_BUDGET)  # the next fetch would import it
    monkeypatch.setattr(rng, "_randomgen_fetches", broken)
    assert rng._source(1024) is rng._NUMPY and rng._source(8) is rng._PURE
    assert rng.load_randomgen() is None
