"""scripts/mutation.py stays in step with the code: every module it mutates
and every test it runs exists, and every listed equivalent mutant names a
line that is still in its module with an operator the script uses (a stale
entry would silently stop excusing anything, or excuse the wrong line)."""
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


def test_listed_equivalents_are_current(mutation):
    with open(mutation.EQUIVALENTS, "rb") as fh:
        entries = tomllib.load(fh).get("equivalent", [])
    paths = {t.path for t in mutation.MODULES.values()}
    for e in entries:
        assert set(e) == {"module", "operator", "line", "mutant", "why"}, e
        assert e["line"] != e["mutant"], e
        assert e["module"] in paths, e
        assert e["operator"] in mutation.OPERATORS, e
        assert e["why"].strip(), e
        with open(os.path.join(ROOT, e["module"]), encoding="utf-8") as fh:
            lines = [line.strip() for line in fh]
        assert e["line"] in lines, f"{e['module']} no longer has the line {e['line']!r}"


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
