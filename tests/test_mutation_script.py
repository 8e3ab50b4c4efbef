"""scripts/mutation.py stays in step with the code: every module it mutates
and every test it runs exists, and every listed equivalent mutant names a
line that is still in the function it names, with an operator the script
uses (a stale entry would silently stop excusing anything, or excuse the
wrong line)."""
from __future__ import annotations

import importlib.util
import os
import sys
import tomllib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def mutation():
    spec = importlib.util.spec_from_file_location("mutation_script",
                                                  os.path.join(ROOT, "scripts", "mutation.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_every_module_and_test_exists(mutation):
    for name, target in mutation.MODULES.items():
        assert os.path.isfile(os.path.join(ROOT, target.path)), (name, target.path)
        for test in target.tests:
            path = test.split("::", 1)[0]
            assert os.path.isfile(os.path.join(ROOT, path)), (name, test)
            if "::" in test:
                with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
                    assert f"def {test.split('::')[-1]}(" in fh.read(), (name, test)
        for prefix in target.deselect:
            path, _, function = prefix.partition("::")
            assert function, (name, prefix)  # a test file left out whole is simply not listed
            with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
                assert f"def {function}" in fh.read(), (name, prefix)


def test_listed_equivalents_are_current(mutation):
    with open(mutation.EQUIVALENTS, "rb") as fh:
        entries = tomllib.load(fh).get("equivalent", [])
    paths = {t.path for t in mutation.MODULES.values()}
    seen = set()
    for e in entries:
        assert set(e) == {"module", "function", "operator", "line", "mutant", "why"}, e
        assert e["line"] != e["mutant"], e
        assert e["module"] in paths, e
        assert e["operator"] in mutation.OPERATORS, e
        assert e["why"].strip(), e
        ident = (e["module"], e["function"], e["operator"], e["line"], e["mutant"])
        assert ident not in seen, f"listed twice: {ident}"
        seen.add(ident)
        with open(os.path.join(ROOT, e["module"]), encoding="utf-8") as fh:
            source = fh.read()
        functions = {mutation.enclosing_function(source, n)
                     for n, line in enumerate(source.splitlines(), 1) if line.strip() == e["line"]}
        assert functions, f"{e['module']} no longer has the line {e['line']!r}"
        assert e["function"] in functions, (
            f"{e['module']}: the line {e['line']!r} is in {sorted(functions)}, not {e['function']}")


def test_the_enclosing_function_tells_equal_lines_apart(mutation):
    # the same line in two methods (as `holder_count.get(session, 0)` is in
    # add_holder and remove_holder): each is named by its own method
    source = ("X = 1\n"
              "class Pool:\n"
              "    def add(self):\n"
              "        c = 0\n"
              "    def remove(self):\n"
              "        c = 0\n"
              "        def inner():\n"
              "            return c\n"
              "def helper():\n"
              "    return 2\n")
    name = mutation.enclosing_function
    assert [name(source, n) for n in range(1, 11)] == [
        "<module>", "Pool", "Pool.add", "Pool.add", "Pool.remove", "Pool.remove",
        "Pool.remove.inner", "Pool.remove.inner", "helper", "helper"]


def test_an_equivalent_is_matched_in_its_own_function_only(mutation, tmp_path):
    module = tmp_path / "m.py"
    module.write_text("class P:\n    def add(self):\n        c = 0\n"
                      "    def remove(self):\n        c = 0\n")

    class Spec:
        module_path = "m.py"
        operator_name = "core/NumberReplacer"

        def __init__(self, line):
            self.start_pos = (line, 12)

    known = [{"function": "P.remove", "operator": "core/NumberReplacer", "line": "c = 0",
              "mutant": "c = 1"}]
    diff = "--- a\n+++ b\n-        c = 0\n+        c = 1\n"
    assert mutation._listed(known, Spec(5), tmp_path, diff)
    assert not mutation._listed(known, Spec(3), tmp_path, diff)


def test_one_replacement_per_operator(mutation):
    ops = mutation.OPERATORS
    assert "core/ReplaceComparisonOperator_Lt_LtE" in ops
    assert "core/ReplaceComparisonOperator_Lt_Gt" not in ops
    assert "core/NumberReplacer" in ops and "core/VariableReplacer" not in ops


def test_unknown_module_is_a_usage_error(mutation, capsys):
    with pytest.raises(SystemExit) as err:
        mutation.main(["nosuchmodule"])
    assert err.value.code == 2
    assert "unknown module 'nosuchmodule'" in capsys.readouterr().err
