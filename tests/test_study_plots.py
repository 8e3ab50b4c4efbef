"""Figures: their data (lines, labels, limits), not their pixels."""
from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

import numpy as np  # noqa: E402

import serq  # noqa: E402
import serq.study as study  # noqa: E402
from serq.stats.summary import nearest_rank  # noqa: E402
from serq.study.plots import running_interval  # noqa: E402
from study_programs import GAUGED  # noqa: E402

MG1 = "examples/single-turn/mg1.sq"


@pytest.fixture(scope="module")
def report():
    return serq.run(serq.load(MG1), horizon=1500, warmup=100)


def _lines(fig):
    return {line.get_label(): line for line in fig.axes[0].get_lines()}


def test_series_has_samples_running_mean_band_and_warmup(report):
    fig = report.plot("series", "response")
    ax = fig.axes[0]
    lines = _lines(fig)
    s = report.observes["response"]
    assert list(lines["samples"].get_ydata()) == s.values
    ms, means, _ = running_interval(s.values, 2.093)
    run = lines["running mean"]
    assert run.get_ydata()[-1] == pytest.approx(np.mean(s.values))
    assert list(run.get_xdata()) == [s.times[m - 1] for m in ms]
    warm = lines["warm-up 100"]
    assert list(warm.get_xdata()) == [100, 100]
    assert ax.get_xlim() == (0, 1500)
    assert ax.get_xlabel() == "simulated time" and ax.get_ylabel() == "response"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "95% CI (batch means)" in labels


def test_histogram_and_ecdf_mark_p50_and_p99(report):
    s = report.observes["response"]
    p50, p99 = nearest_rank(s.values, 0.5), nearest_rank(s.values, 0.99)
    for kind in ("hist", "ecdf"):
        fig = report.plot(kind, "response")
        lines = _lines(fig)
        assert lines[f"p50 = {p50:.4g}"].get_xdata()[0] == p50
        assert lines[f"p99 = {p99:.4g}"].get_xdata()[0] == p99
    ecdf = _lines(report.plot("ecdf", "response"))["ECDF"]
    assert ecdf.get_ydata()[-1] == 1.0 and list(ecdf.get_xdata()) == sorted(s.values)
    hist = report.plot("hist", "response").axes[0]
    assert sum(p.get_height() for p in hist.patches) == len(s.values)


def test_gauges_over_time_follow_the_change_points():
    rep = serq.run(serq.load(source=GAUGED), seed=2)
    fig = rep.plot("gauges")
    lines = _lines(fig)
    for name in ("q", "held"):
        g = rep.gauges[name]
        line = next(v for k, v in lines.items() if k.startswith(f"{name} (mean"))
        assert list(line.get_xdata())[:len(g.points)] == g.times
        assert list(line.get_ydata())[:len(g.points)] == g.values
    assert max(lines[next(k for k in lines if k.startswith("held"))].get_ydata()) <= 2
    assert fig.axes[0].get_xlim() == (0, 400)


def test_sweep_curves_one_line_per_value_with_t_bars():
    # a grid over lam and the M/M/1 service rate as a second parameter
    src = open(MG1).read().replace("run svc (~exp(1));", "run svc (~exp(1 / mu));")
    src = src.replace("let lam = 0.8;", "let lam = 0.8;\nlet mu = 1;")
    res = study.sweep(source=src, grid={"lam": [0.3, 0.5], "mu": [1, 2]}, replications=2,
                      horizon=300, jobs=1)
    fig = res.plot("response:mean", x="lam", by="mu")
    ax = fig.axes[0]
    conts = ax.containers
    assert [c.get_label() for c in conts] == ["mu=1", "mu=2"]
    summ = res.summary
    for c, mu in zip(conts, (1, 2)):
        line = c.lines[0]
        sel = summ[(summ["mu"] == mu) & (summ["name"] == "response")
                   & (summ["section"] == "observe")
                   & (summ["statistic"] == "mean")].sort_values("lam")
        assert list(line.get_xdata()) == [0.3, 0.5]
        assert list(line.get_ydata()) == list(sel["mean"])
    assert ax.get_xlabel() == "lam" and ax.get_ylabel() == "response mean"


def test_figures_save_as_png_svg_pdf(report, tmp_path):
    for ext, magic in (("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")):
        path = tmp_path / f"f.{ext}"
        report.plot("ecdf", "response", path=str(path))
        assert path.read_bytes()[:len(magic)] == magic
    with pytest.raises(ValueError, match="no observation or client series"):
        report.plot("series", "nosuch")
