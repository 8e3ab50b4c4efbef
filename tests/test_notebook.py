"""Notebooks (issue 25): a report, a study, a sweep and a comparison show as
HTML tables, and their reprs are short (never the samples).

`examples/notebooks/tour.ipynb` is executed with nbclient (the test extra
has nbclient, nbformat and ipykernel; the test is skipped when they are
missing or a kernel cannot start).
"""
from __future__ import annotations

import os

import pytest

import serq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOK = os.path.join(ROOT, "examples", "notebooks", "tour.ipynb")
VLLM = os.path.join(ROOT, "examples", "single-turn", "vllm_single_turn.sq")


def test_vllm_report_repr_is_short_and_html_is_tables():
    report = serq.run(serq.load(VLLM), horizon=60)
    text = repr(report)
    assert len(text.encode()) < 2048, len(text.encode())
    assert "client ttft" in text and "[" not in text  # statistics, no sample lists
    assert len(repr(report.client["ttft"]).encode()) < 300
    html = report._repr_html_()
    assert html.count("<table") >= 4  # observe, client, stages, step, pools
    assert "<th>p90</th>" in html and "throughput:" in html
    assert report.text() == serq.report.to_text(report)


def test_study_and_comparison_reprs_are_short():
    mg1 = os.path.join(ROOT, "examples", "single-turn", "mg1.sq")
    study = serq.replicate(mg1, 3, horizon=3000, executor=1)
    assert len(repr(study).encode()) < 2048 and "<table" in study._repr_html_()
    comparison = serq.compare(mg1, sets_b={"lam": 0.6}, replications=3, horizon=3000,
                              executor=1)
    assert len(repr(comparison).encode()) < 2048
    assert "<table" in comparison._repr_html_()
    result = serq.sweep(mg1, {"lam": [0.5, 0.6]}, horizon=1000, executor=1)
    assert len(repr(result)) < 400 and result._repr_html_().count("<tr>") == 3


def _execute(path: str):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from jupyter_client.kernelspec import NoSuchKernel
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.dirname(path)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError:
        raise  # a cell failed: a real failure
    except (NoSuchKernel, RuntimeError, OSError) as exc:  # no kernel could start here
        pytest.skip(f"no Jupyter kernel could start: {type(exc).__name__}: {exc}")
    return nb


def test_notebook_shows_html_tables():
    nb = _execute(NOTEBOOK)
    html = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            assert out.get("output_type") != "error", out
            data = out.get("data", {})
            if "text/html" in data:
                html[cell.source.splitlines()[0]] = data["text/html"]
    tables = [src for src, page in html.items() if "<table" in page]
    firsts = " ".join(tables)
    for start in ("import serq", "study =", "result =", "comparison ="):
        assert start in firsts, (start, list(html))
    for cell in nb.cells:
        for out in cell.outputs if cell.cell_type == "code" else []:
            plain = out.get("data", {}).get("text/plain", "")
            assert len(plain.encode()) < 4096, plain[:200]
