"""docs/api.md documents the whole public API (issue 25): every name of
`serq.__all__`, the study classes and the plots, with signatures that
mkdocstrings formats over several lines."""
from __future__ import annotations

import os
import re

import serq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        return fh.read()


def test_every_public_name_has_an_entry():
    page = _read("docs/api.md")
    entries = set(re.findall(r"^::: (\S+)", page, re.M))
    missing = []
    for name in serq.__all__:
        if name == "__version__":
            continue
        obj = getattr(serq, name)
        if not {f"serq.{name}", f"{obj.__module__}.{obj.__qualname__}"} & entries:
            missing.append(name)
    assert missing == []
    wanted = {"serq.study.report.StudyReport", "serq.study.sweeps.SweepResult",
              "serq.study.comparison.Comparison", "serq.study.plots.report_figure",
              "serq.study.plots.sweep_figure", "serq.report.requests.RequestTable"}
    assert sorted(wanted - entries) == []


def test_members_listed_exist():
    page = _read("docs/api.md")
    for target, members in re.findall(r"^::: (\S+)\n    options:\n      members: \[([^\]]*)\]",
                                       page, re.M):
        import importlib
        module, _, name = target.rpartition(".")
        try:
            obj = getattr(importlib.import_module(module), name)
        except ImportError:  # a class's method: module.Class
            module, _, cls = module.rpartition(".")
            obj = getattr(getattr(importlib.import_module(module), cls), name)
        for m in (x.strip() for x in members.split(",")):
            assert hasattr(obj, m) or m in getattr(obj, "__dataclass_fields__", {}), (target, m)


def test_signatures_are_formatted_on_several_lines():
    conf = _read("mkdocs.yml")
    assert "separate_signature: true" in conf and "line_length: 80" in conf
    assert "black" in _read("pyproject.toml")  # mkdocstrings formats signatures with it
