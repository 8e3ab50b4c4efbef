"""The layout of docs/architecture.md, enforced: the layer contracts of
pyproject.toml hold (and fail on a planted violation), no module import
cycle, and every package says what lives there and what it may import.

The contracts are written once, as import-linter contracts in
pyproject.toml; `lint-imports` checks them in CI (.ci/run) and this module
checks them with its own reading of the imports (tests/import_graph.py), so
that the suite catches a violation without import-linter installed.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

import import_graph as G

ROOT = G.ROOT


def _copy(tmp_path) -> str:
    """A copy of the package and pyproject.toml to plant violations in."""
    root = str(tmp_path / "repo")
    shutil.copytree(os.path.join(ROOT, "serq"), os.path.join(root, "serq"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(ROOT, "pyproject.toml"), root)
    return root


def _plant(root: str, module_path: str, text: str) -> None:
    with open(os.path.join(root, module_path), "a", encoding="utf-8") as fh:
        fh.write("\n\n" + text + "\n")


#: One violation of each contract, each inside a function (they count too).
PLANTED = {
    "layers": ("serq/core/errors.py",
               "def _planted():\n    from ..cli import commands  # core reaches up\n"
               "    return commands"),
    "independence": ("serq/frontend/syntax/show.py",
                     "def _planted():\n    from ...runtime.kernel import instant\n"
                     "    return instant"),
    "resources-without-fast-paths": ("serq/runtime/resources/stages.py",
                                     "def _planted():\n    from ..fast import leapfrog\n"
                                     "    return leapfrog"),
}


def _broken(root: str) -> dict[str, list[str]]:
    _known, edges = G.graph(root)
    return {c["id"]: G.violations(c, edges) for c in G.contracts(root)}


def test_the_contracts_are_the_documented_layers():
    ids = {c["id"]: c for c in G.contracts(ROOT)}
    assert set(ids) == set(PLANTED)
    assert ids["layers"]["layers"] == [
        "serq.cli", "serq.study", "serq.api | serq.policies | serq.syntax",
        "serq.frontend | serq.runtime | serq.measured", "serq.report", "serq.stats", "serq.core"]


def test_the_contracts_hold():
    assert _broken(ROOT) == {name: [] for name in PLANTED}


@pytest.mark.parametrize("contract", sorted(PLANTED))
def test_a_planted_violation_breaks_its_contract(tmp_path, contract):
    root = _copy(tmp_path)
    path, text = PLANTED[contract]
    _plant(root, path, text)
    broken = _broken(root)
    assert len(broken[contract]) == 1 and "(inside a function)" in broken[contract][0], broken
    assert all(not v for c, v in broken.items() if c != contract and c != "layers"), broken


def test_an_import_under_type_checking_is_exempt(tmp_path):
    root = _copy(tmp_path)
    _plant(root, "serq/core/errors.py",
           "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
           "    from ..cli import commands")
    assert _broken(root) == {name: [] for name in PLANTED}


def test_no_import_cycle_between_modules():
    known, edges = G.graph(ROOT)
    assert G.cycles(known, edges) == []


def test_a_planted_cycle_is_found(tmp_path):
    root = _copy(tmp_path)
    _plant(root, "serq/stats/summary.py", "def _planted():\n    from . import gauges\n"
           "    return gauges")  # gauges imports summary: a cycle through a function
    known, edges = G.graph(root)
    assert G.cycles(known, edges) == [["serq.stats.gauges", "serq.stats.summary"]]


def test_every_package_says_what_lives_there_and_what_it_may_import():
    missing = []
    for module, path in G.modules(ROOT).items():
        if path.endswith("__init__.py") and module not in ("serq",):
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            if "May import" not in text:
                missing.append(module)
    assert missing == []


def _lint_imports() -> str:
    found = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) \
        or shutil.which("lint-imports")
    if found is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    return found


def test_lint_imports_passes_and_fails_on_a_planted_violation(tmp_path):
    exe = _lint_imports()
    ok = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    root = _copy(tmp_path)
    path, text = PLANTED["resources-without-fast-paths"]
    _plant(root, path, text)
    env = dict(os.environ, PYTHONPATH=root)
    bad = subprocess.run([exe, "--no-cache"], cwd=root, capture_output=True, text=True,
                         env=env)
    assert bad.returncode != 0
    assert "serq.runtime.resources.stages -> serq.runtime.fast.leapfrog" in bad.stdout


# -- SimPy's internals stay in the kernel package ------------------------------------------

def simpy_private_names() -> set[str]:
    """The private names of SimPy's environment, events and processes: the
    attributes their objects carry and the methods their classes define
    (read from SimPy itself, so that a new SimPy's names are found too)."""
    import simpy
    from simpy import core, events

    env = simpy.Environment()

    def body():
        yield env.timeout(1)

    proc = env.process(body())
    ev = env.event()
    ev.fail(ValueError("x"))
    ev.defused = True
    env.run()
    names = set()
    for obj in (env, ev, proc, env.timeout(1)):
        names |= {n for n in vars(obj) if n.startswith("_") and not n.startswith("__")}
    for mod in (core, events):
        for cls in vars(mod).values():
            if isinstance(cls, type) and cls.__module__ == mod.__name__:
                names |= {n for n in vars(cls) if n.startswith("_") and not n.startswith("__")}
    return names


def simpy_private_uses(root: str) -> list[str]:
    """Every use of a SimPy private name outside serq/runtime/kernel: an
    attribute read or written, a `__slots__` entry, or code text (generated
    code) that reads one, as `file:line name`."""
    import ast
    import re

    names = simpy_private_names()
    in_text = re.compile(r"\.(%s)\b" % "|".join(sorted(names)))
    kernel = os.path.join("serq", "runtime", "kernel") + os.sep
    out = []
    for dirpath, _dirs, files in os.walk(os.path.join(root, "serq")):
        for name in files:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if not name.endswith(".py") or rel.startswith(kernel):
                continue
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and node.attr in names:
                    out.append(f"{rel}:{node.lineno} {node.attr}")
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    if node.value in names:  # a `__slots__` entry, a getattr name
                        out.append(f"{rel}:{node.lineno} {node.value}")
                    elif in_text.search(node.value):
                        out.append(f"{rel}:{node.lineno} {in_text.search(node.value)[0]}")
    return out


def test_simpy_private_names_are_read_from_simpy():
    names = simpy_private_names()
    assert {"_now", "_queue", "_eid", "_ok", "_value", "_defused", "_generator",
            "_target", "_resume"} <= names


def test_only_the_kernel_touches_simpy_internals():
    assert simpy_private_uses(ROOT) == []


@pytest.mark.parametrize("text", ["def _planted(env):\n    return env._now",
                                  "def _planted(ev):\n    ev._ok = True",
                                  "_PLANTED = 'if _env._now > 1: pass'",
                                  "class _Planted:\n    __slots__ = ('_value',)"])
def test_a_planted_simpy_private_use_is_found(tmp_path, text):
    root = _copy(tmp_path)
    _plant(root, "serq/runtime/resources/stages.py", text)
    assert [u.split(" ")[0].split(":")[0] for u in simpy_private_uses(root)] == \
        ["serq/runtime/resources/stages.py"]
