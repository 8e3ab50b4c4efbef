"""The names generated code reads from its globals are declared once
(serq/runtime/compile/names.py), and both sides take them from there.

Every example program (and the test programs with forks, holds and traces
below) is built; each function the code generator defined is disassembled,
and every global it reads must be declared in `names` or be one that the
namespace numbered itself (`Namespace.bind`/`function`: a name ending in a
number). A name that only one side spells (a rename on the other) fails here
(a planted one shows it does).
"""
from __future__ import annotations

import dis
import functools
import glob
import os
import re
import types
import builtins

import pytest

import serq
from serq.runtime.compile import names as N
from serq.runtime.compile.exprs import Namespace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUMBERED = re.compile(r"^_[A-Za-z_]*\d+$")  # `Namespace.bind` / `function` names
LIBRARIES = os.path.join("examples", "lib") + os.sep
BUILTINS = set(dir(builtins))


def programs() -> list[str]:
    """The example programs that run (the libraries define only)."""
    paths = sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.sq"), recursive=True))
    return [p for p in paths if LIBRARIES not in os.path.relpath(p, ROOT)]


def code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


def globals_read(ns: Namespace) -> set[str]:
    """The globals read by the code the generator defined in `ns`."""
    out = set()
    for obj in list(ns.globals.values()):
        code = getattr(obj, "__code__", None)
        if code is None or not code.co_filename.startswith("<serq:"):
            continue
        for c in code_objects(code):
            for ins in dis.get_instructions(c):
                if ins.opname in ("LOAD_GLOBAL", "STORE_GLOBAL", "LOAD_NAME"):
                    out.add(ins.argval)
    return out


def undeclared(ns: Namespace) -> set[str]:
    """Globals that generated code reads or the runtime bound, neither
    declared in `names` nor numbered by the namespace."""
    seen = {n for n in globals_read(ns) if n not in BUILTINS}
    seen |= {n for n in ns.globals if n.startswith("_") and not n.startswith("__")}
    return {n for n in seen if not (N.declared(n) or NUMBERED.match(n)
                                    or n.startswith("__"))}


@functools.lru_cache(maxsize=None)
def _namespace(path: str) -> Namespace:
    """The namespace of `path` built (a far horizon where it has none: the
    code is the same whatever the horizon)."""
    program = serq.load(path, need_horizon=False)
    horizon = None if program.settings.horizon is not None else 1e9
    return serq.build(program, horizon=horizon).sim.ns


@pytest.mark.parametrize("path", programs(), ids=lambda p: os.path.relpath(p, ROOT))
def test_generated_code_reads_only_declared_globals(path):
    assert undeclared(_namespace(path)) == set()


def test_the_declared_names_are_distinct():
    """No two entries of the table spell the same name (a global and a
    local, or two globals, would shadow each other)."""
    table = [v for k, v in vars(N).items() if k.isupper() and isinstance(v, str)]
    assert len(table) == len(set(table))
    assert N.REQUEST_START not in N.GLOBALS and N.WORKLOAD_DRAWS not in N.GLOBALS


def test_a_name_only_one_side_spells_is_found():
    ns = _namespace(programs()[0])
    ns.define("def _planted1(s):\n    return _hold_begn(s)\n", "_planted1")
    assert undeclared(ns) == {"_hold_begn"}
