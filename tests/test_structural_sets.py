"""Structural parameters in studies (issue 28): a `let` that sizes arrays
varied by building the program again for each value.

The expected values are runs of the program file edited to that size (the
file itself, its `let R = 4;` line replaced), so each point of a sweep over
R must be that run, statistic for statistic."""
from __future__ import annotations

import os

import pytest

import serq
import serq.study as study
from serq.core.errors import LinkError
from serq.report.json_report import to_json
from serq.study.spec import ProgramSpec
from serq.study.stats import report_rows
from serq.study.worker import settle_row

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLICA = os.path.join(ROOT, "examples", "multi-turn", "replica.sq")
LINE = "let R = 4; "
SETTINGS = dict(horizon=30.0, warmup=5.0)


def _edited(tmp_path, r: int) -> str:
    """replica.sq with its replica count edited to `r` (beside a copy of the
    library it uses)."""
    text = open(REPLICA, encoding="utf-8").read()
    assert text.count(LINE) == 1
    lib = tmp_path / "lib"
    if not lib.exists():
        lib.mkdir()
        src = os.path.join(ROOT, "examples", "lib", "vllm.sq")
        (lib / "vllm.sq").write_text(open(src, encoding="utf-8").read(), encoding="utf-8")
    d = tmp_path / "multi-turn"
    d.mkdir(exist_ok=True)
    path = d / f"replica_{r}.sq"
    path.write_text(text.replace(LINE, f"let R = {r}; "), encoding="utf-8")
    return str(path)


def test_plain_sets_keep_the_refusal():
    """Without `structural` an override of an array size is refused, as the
    language (Part 01 §2.4), `run --set` and the reference do."""
    with pytest.raises(LinkError, match="affects an array size"):
        serq.load(REPLICA, sets={"R": 8})


def test_load_structural_is_the_edited_file(tmp_path):
    rep = serq.run(serq.load(REPLICA, sets={"R": 2}, structural=True), **SETTINGS)
    assert [s.index for s in rep.stages if s.name == "engine"] == [0, 1]
    edited = serq.run(serq.load(_edited(tmp_path, 2)), **SETTINGS)
    assert to_json(rep) == to_json(edited)


def test_sweep_over_replicas_equals_the_edited_files(tmp_path):
    res = study.sweep(REPLICA, {"R": [2, 4, 8]}, jobs=1, seed=3, **SETTINGS)
    assert len(res.errors) == 0
    tidy = res.tidy
    for r in (2, 4, 8):
        rep = serq.run(serq.load(_edited(tmp_path, r)), seed=3, **SETTINGS)
        want = {(sec, name, stat): v for sec, name, stat, v in report_rows(rep) + [settle_row(rep)]}
        rows = tidy[tidy["R"] == r]
        got = {(sec, name, stat): v for sec, name, stat, v in
               zip(rows["section"], rows["name"], rows["statistic"], rows["value"])}
        assert got.keys() == want.keys()
        for k, v in want.items():
            assert got[k] == v or (v != v and got[k] != got[k]), (r, k)
        engines = {n for (sec, n, _s) in got if sec == "stage" and n.startswith("engine")}
        assert len(engines) == r


def test_with_structure_is_a_spec_a_study_runs():
    """The function a capacity search calls: a spec whose overrides may size
    arrays; `serq.replicate` runs it."""
    spec = ProgramSpec.make(REPLICA, **SETTINGS).with_structure({"R": 2})
    assert spec.structural and dict(spec.sets) == {"R": "2"}
    s = study.replicate(spec, replications=1, seed=3, jobs=1)
    direct = serq.run(serq.load(REPLICA, sets={"R": 2}, structural=True), seed=3,
                      **SETTINGS)
    assert to_json(s.reports[0]) == to_json(direct)
