"""The grammar's metamodel, built once per installation (serq/frontend/parse/grammar.py).

A metamodel read back from the cache must parse exactly as the one textX
builds: the same programs for every example, the same errors for every bad
program. The cache is keyed by the grammar, reused, rebuilt when unreadable,
and can be turned off. `serq-simpy check` imports neither numpy, SciPy nor
SimPy.
"""
from __future__ import annotations

import glob
import io
import os
import pickle
import subprocess
import sys

import pytest

from serq.core.errors import LinkError, ParseError
from serq.frontend.parse import grammar, parser
from serq.frontend import load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.sq"), recursive=True))
# every third bad program (a hundred syntax and link errors) keeps the test quick
BAD = sorted(glob.glob(os.path.join(ROOT, "tests", "bad_programs", "*.sq")))[::3]


def _round_trip(mm):
    buf = io.BytesIO()
    grammar._Pickler(buf, mm).dump(mm)
    return pickle.loads(buf.getvalue())


def _outcome(path: str) -> str:
    try:
        return repr(load(path))
    except (ParseError, LinkError) as e:
        return "error: " + e.format()


@pytest.fixture(scope="module")
def both():
    """Outcomes of every example and bad program with a fresh and a cached metamodel."""
    saved = dict(parser._METAMODELS)
    out = {}
    try:
        for label in ("built", "cached"):
            parser._METAMODELS.clear()
            for root in ("program", "override"):
                mm = grammar.build(root)
                parser._METAMODELS[root] = mm if label == "built" else _round_trip(mm)
            out[label] = {p: _outcome(p) for p in EXAMPLES + BAD}
    finally:
        parser._METAMODELS.clear()
        parser._METAMODELS.update(saved)
    return out


def test_examples_parse_the_same(both):
    assert len(EXAMPLES) > 20
    for path in EXAMPLES:
        assert both["cached"][path] == both["built"][path], path
    loaded = [p for p in EXAMPLES if not both["built"][p].startswith("error")]
    assert len(loaded) > 20  # (libraries and programs needing inputs stop at the link)


def test_bad_programs_fail_the_same(both):
    assert len(BAD) > 90
    for path in BAD:
        assert both["cached"][path] == both["built"][path], path


def test_cache_written_reused_and_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path))
    mm = grammar.load("override")
    files = list(tmp_path.glob("override-*.pickle"))
    assert len(files) == 1 and grammar.cache_key("override") in files[0].name
    assert mm.model_from_str("1 + 2") is not None

    def no_build(root):
        raise AssertionError("the cached metamodel should have been used")

    monkeypatch.setattr(grammar, "build", no_build)
    assert grammar.load("override").model_from_str("3") is not None
    monkeypatch.undo()
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path))
    files[0].write_bytes(b"not a pickle")  # a damaged cache is rebuilt and rewritten
    assert grammar.load("override").model_from_str("4") is not None
    assert files[0].read_bytes() != b"not a pickle"


def test_cache_off(tmp_path, monkeypatch):
    # the default location would be under XDG_CACHE_HOME: off, nothing is written there
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SERQ_CACHE_DIR", "")
    assert grammar.cache_dir() is None
    assert grammar.load("override").model_from_str("1") is not None
    assert not list(tmp_path.iterdir())


def test_key_follows_the_grammar(tmp_path, monkeypatch):
    for name in os.listdir(grammar.grammar_dir()):
        if name.endswith(".tx"):
            (tmp_path / name).write_bytes(open(os.path.join(grammar.grammar_dir(), name), "rb").read())
    before = grammar.cache_key("program")
    monkeypatch.setattr(grammar, "grammar_dir", lambda: str(tmp_path))
    assert grammar.cache_key("program") == before
    with open(tmp_path / "stmt.tx", "a") as f:
        f.write("\n// edited\n")
    assert grammar.cache_key("program") != before


def test_grammar_ships_in_the_package():
    # pyproject.toml maps metamodel/ to serq.grammar; a source checkout reads metamodel/
    assert os.path.isfile(os.path.join(grammar.grammar_dir(), "program.tx"))
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    assert '"serq.grammar" = "metamodel"' in text and '"serq.grammar" = ["*.tx"]' in text


def test_check_imports_nothing_heavy(tmp_path):
    code = ("import sys; from serq.cli.commands import main; rc = main(['check', sys.argv[1]]); "
            "print(sorted(m for m in ('numpy', 'scipy', 'simpy', 'randomgen') if m in sys.modules))")
    env = dict(os.environ, SERQ_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code, os.path.join(ROOT, "examples", "single-turn",
                                                                   "mg1.sq")],
                         capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip().splitlines()[-1] == "[]"
