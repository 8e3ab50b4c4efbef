"""The documentation site's structure (mkdocs.yml, generated pages, the
examples gallery, the tutorial's programs). The code blocks themselves are
tests/test_docs.py."""
from __future__ import annotations

import glob
import importlib.util
import os
import re
import sys

import pytest

import serq

from docs_blocks import DOCS, ROOT, blocks, pages

SNIPPET = re.compile(r'^\s*--8<--\s+"([^"]+)"', re.M)


def _script(name: str):
    """A module of scripts/ (they are not a package)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        return fh.read()


def _included_by(prefix: str) -> dict[str, list[str]]:
    """Included file -> the pages under docs/PREFIX that include it."""
    found: dict[str, list[str]] = {}
    for page in pages():
        if page.startswith(os.path.join("docs", prefix)):
            for path in SNIPPET.findall(_read(page)):
                found.setdefault(path, []).append(page)
    return found


def _example_programs() -> list[str]:
    progs = sorted(glob.glob("examples/**/*.sq", root_dir=ROOT, recursive=True)
                   + glob.glob("examples/**/*.py", root_dir=ROOT, recursive=True))
    return [p for p in progs if os.path.basename(p) != "compare.py"]   # compare.py: a helper module


def test_every_example_program_has_a_page_that_includes_it() -> None:
    gallery, tutorial = _included_by("examples"), _included_by("tutorial")
    missing = [p for p in _example_programs()
               if p not in (tutorial if p.startswith("examples/tutorial/") else gallery)]
    assert not missing, "example programs without a gallery (or tutorial) page: " + ", ".join(missing)


def test_gallery_pages_index_and_nav_are_what_the_generator_writes() -> None:
    gallery = _script("gallery")
    for ex in gallery.EXAMPLES:
        page = _read(os.path.join("docs", ex.page))
        assert page == gallery.render(ex, gallery.report_of(page)), \
            f"docs/{ex.page} is stale: run python scripts/gallery.py --only {ex.path}"
        if ex.args is not None:
            assert gallery.report_of(page).strip(), f"docs/{ex.page} shows no report"
    assert _read("docs/examples/index.md") == gallery.render_index()
    assert gallery.render_nav() in _read("mkdocs.yml")
    written = sorted(os.path.relpath(p, DOCS) for p in glob.glob(os.path.join(DOCS, "examples", "*", "*.md")))
    assert written == sorted(ex.page for ex in gallery.EXAMPLES), "a gallery page no entry writes"


def test_every_page_is_in_the_nav() -> None:
    nav = _read("mkdocs.yml").split("\nnav:", 1)[1]
    listed = set(re.findall(r"([\w./-]+\.md)\s*$", nav, re.M))
    missing = [p for p in pages() if p != "README.md" and os.path.relpath(p, "docs") not in listed]
    assert not missing, missing


def test_cli_reference_is_generated_from_the_parser() -> None:
    import argparse

    hooks = _script("docs_hooks")
    text = hooks.render_cli_reference()
    parser = hooks._parser()
    for name, _help, sub in hooks._subcommands(parser):
        assert f"## `serq-simpy {name}`" in text
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            for option in action.option_strings:
                assert f"`{option}" in text, (name, option)
            if action.help:
                assert " ".join(action.help.split()) in text, (name, action.help)
    config = _read("mkdocs.yml")
    assert "scripts/docs_hooks.py" in config and re.search(r"\bcli\.md\b", config)
    assert not os.path.exists(os.path.join(DOCS, "cli.md")), "docs/cli.md is generated at build time"


def test_the_tutorial_includes_its_programs_in_order() -> None:
    programs = sorted(glob.glob("examples/tutorial/*.sq", root_dir=ROOT)
                      + glob.glob("examples/tutorial/*.py", root_dir=ROOT))  # not __pycache__
    order: list[str] = []
    for page in sorted(glob.glob("docs/tutorial/[0-9]*.md", root_dir=ROOT)):
        order += [b.include for b in blocks(page) if b.include and b.include.startswith("examples/tutorial/")]
    assert order == programs


def test_docs_extra_and_ci() -> None:
    project = _read("pyproject.toml")
    docs = re.search(r"^docs = \[(.*?)\n\]", project, re.M | re.S).group(1)
    for package in ("mkdocs-material", "mkdocstrings[python]"):
        assert re.search(rf'"{re.escape(package)}>=[\d.]+,<[\d.]+"', docs), package
    ci = _read(".ci/run")
    assert re.search(r"\.\[[^\]]*\bdocs\b[^\]]*\]", ci) and "mkdocs build --strict" in ci


# The tutorial's programs, run as the pages run them (their own run blocks).
def _tutorial(name: str) -> serq.Report:
    return serq.run(serq.load(os.path.join(ROOT, "examples", "tutorial", name)))


def test_tutorial_mm1_matches_the_closed_form() -> None:
    # M/M/1, lam 0.5, mu 1: W = 1 / (mu - lam) = 2 (Kleinrock 1975, sec. 3.2);
    # seed 1 gives 1.9840 +- 0.1063 (serq-simpy, the page's run).
    r = _tutorial("01_mm1.sq").observe("response")
    assert abs(r.mean - 2.0) < r.ci < 0.2


def test_tutorial_sessions_match_the_jackson_network() -> None:
    # server: M/M/1 at rate lam / (1 - p_more) = 1/3, W = 1.5; turns per
    # session 1 / (1 - p_more) = 3.33 (the page's run: 1.4944 +- 0.0991,
    # 3.3304 +- 0.1386)
    r = _tutorial("02_sessions.sq")
    assert abs(r.observe("response").mean - 1.5) < r.observe("response").ci
    assert abs(r.observe("turns").mean - 10 / 3) < r.observe("turns").ci


def test_tutorial_step_engine_preempts_and_is_not_stuck() -> None:
    # the page's run: 17 preemptions in 773 admissions, nobody stuck
    kv = _tutorial("04_step_engine.sq").pool("kv")
    assert kv.preemptions > 0 and kv.stuck == 0


@pytest.mark.parametrize("script", ["07_policy.py", "08_study.py"])
def test_tutorial_scripts_define_main(script: str) -> None:
    spec = importlib.util.spec_from_file_location(script[:-3], os.path.join(ROOT, "examples", "tutorial", script))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.main)
