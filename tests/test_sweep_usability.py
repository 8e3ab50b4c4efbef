"""The rough edges of sweeps a new user met (issue 25, item 4): a grid
parameter named like a Python keyword, a misspelt grid name, a statistic the
results do not have, points that do not settle, the default table's width,
and the figures' error bars and units."""
from __future__ import annotations


import pytest
from test_study_cli import _run  # the CLI's exit status, stdout and stderr

import serq.study as study
from serq.study.plots import sweep_figure
from serq.study.table import summary_text, unit

MG1 = "examples/single-turn/mg1.sq"
STEP = "examples/tutorial/04_step_engine.sq"



def test_a_grid_parameter_named_like_a_python_keyword(capsys, tmp_path):
    # pandas renames a column `lambda` in itertuples(): the failure list used to
    # end in AttributeError after every run had finished
    prog = tmp_path / "kw.sq"
    prog.write_text(open(MG1).read().replace("lam", "lambda"))
    out_dir = str(tmp_path / "res")
    code, out, err = _run(capsys, "sweep", str(prog), "--grid", "lambda=0.5,nosuch",
                          "--horizon", "200", "--jobs", "1", "--no-progress", "--out", out_dir)
    assert code == 1 and "Traceback" not in err
    assert out.splitlines()[0].split()[:3] == ["lambda", "response", "mean"]
    assert "failed: lambda=nosuch, seed 1:" in out
    code, out, err = _run(capsys, "summary", out_dir)
    assert code == 0 and out.splitlines()[2].split()[0] == "0.5"


def test_a_misspelt_grid_name_is_refused_before_any_run(capsys, tmp_path):
    out_dir = tmp_path / "res"
    calls = []
    with pytest.raises(ValueError, match=r"--grid lan: .* has no constant `lan`; "
                                         r"did you mean `lam`\? \(its constants: lam\)"):
        study.sweep(MG1, {"lan": [0.5, 0.6]}, horizon=100, jobs=1, out=str(out_dir),
                    progress=lambda done, total: calls.append(done))
    assert calls == [] and not (out_dir / "runs").exists()
    code, out, err = _run(capsys, "sweep", MG1, "--grid", "lan=0.5,0.6", "--horizon", "100")
    assert code == 2 and out == "" and "did you mean `lam`?" in err
    # a misspelt --set is said the same way, as a --set
    code, out, err = _run(capsys, "sweep", MG1, "--grid", "lam=0.5", "--set", "lan=1")
    assert code == 2 and "--set lan:" in err and "did you mean `lam`?" in err


@pytest.fixture(scope="module")
def unsettled(tmp_path_factory):
    """M/M/1 at ρ = 0.5 and at ρ = 1.5 (no steady state: the queue grows
    without bound), two replications each, kept on disk."""
    out = str(tmp_path_factory.mktemp("sweep") / "res")
    res = study.sweep(MG1, {"lam": [0.5, 1.5]}, replications=2, horizon=3000, jobs=1,
                      out=out)
    return res, out


def test_summary_of_a_statistic_the_results_lack_is_an_error(capsys, unsettled):
    _res, out = unsettled
    code, text, err = _run(capsys, "summary", out, "--y", "observe.response:p42")
    assert code == 2 and text == ""
    assert "observe `response` has no statistic `p42`" in err and "p50" in err and "p99" in err
    code, text, err = _run(capsys, "summary", out, "--y", "client.nosuch:p99")
    assert code == 2 and "the results have no client `nosuch`" in err


def test_summary_without_finished_runs_fails(capsys, tmp_path):
    out_dir = str(tmp_path / "res")
    code, _, _ = _run(capsys, "sweep", MG1, "--grid", "lam=nosuch", "--horizon", "100",
                      "--jobs", "1", "--no-progress", "--out", out_dir)
    assert code == 1
    code, out, err = _run(capsys, "summary", out_dir)
    assert code == 1 and out == "" and "no finished runs" in err


def test_points_that_do_not_settle_are_said_and_marked(capsys, unsettled):
    res, out = unsettled
    # λ = 1.5 > μ = 1: the text report of such a run warns that response grows
    rows = res.tidy[(res.tidy.section == "run") & (res.tidy.statistic == "unsettled")]
    assert list(zip(rows.lam, rows.value)) == [(0.5, 0.0), (0.5, 0.0), (1.5, 1.0), (1.5, 1.0)]
    text = summary_text(res.summary, ["lam"], [])
    lines = text.splitlines()
    assert lines[0].split()[-1] == "settles"
    assert lines[2].endswith("yes") and lines[3].endswith("no (2/2)")
    code, table, err = _run(capsys, "sweep", MG1, "--grid", "lam=0.5,1.5", "--replications",
                            "2", "--horizon", "3000", "--jobs", "1", "--no-progress", "--out", out)
    assert code == 0
    assert "warning: 1 point(s) do not settle" in err and "lam=1.5 (2/2 runs)" in err
    fig = res.plot("response:mean")
    crosses = [ln for ln in fig.axes[0].lines if ln.get_label().startswith("does not settle")]
    assert len(crosses) == 1 and list(crosses[0].get_xdata()) == [1.5]


def test_the_default_table_is_compact(tmp_path):
    # observe ttft/response and client ttft/tpot/response: the client series that
    # repeat an observation are left out; an observation that is 0 everywhere too
    src = open(STEP).read().replace("observe response = now - t0;",
                                    "observe response = now - t0;\n  observe spare = 0;")
    res = study.sweep(source=src, grid={"Lambda": [2, 2.5]}, replications=2, horizon=40,
                      warmup=5, jobs=1)
    text = summary_text(res.summary, ["Lambda"], [])
    header = text.splitlines()[0].split()
    assert header == ["Lambda", "ttft", "mean", "ttft", "p99", "response", "mean",
                      "response", "p99", "tpot", "mean", "tpot", "p99"]
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "±" in text.splitlines()[2]


def test_error_bars_stop_at_zero_and_axes_have_units(unsettled):
    res, _ = unsettled
    summ = res.summary.copy()
    # a p99 whose interval is wider than its mean (two replications far apart)
    pick = (summ.section == "observe") & (summ.statistic == "p99")
    summ.loc[pick, "half_width"] = summ.loc[pick, "mean"] * 3
    fig = sweep_figure(summ, ["lam"], "response:p99")
    ax = fig.axes[0]
    low = min(seg[0][1] for c in ax.containers for seg in c.lines[2][0].get_segments())
    assert low == 0.0
    assert ax.get_ylabel() == "response p99"
    assert sweep_figure(summ, ["lam"], "stage.svc:utilization").axes[0].get_ylabel() == \
        "svc utilization (fraction of time)"
    assert unit("client", "ttft", "p99") == "time units"
    assert unit("stage", "svc", "throughput") == "jobs per time unit"
    assert unit("observe", "response", "count") == "samples"
