"""The study commands of `serq-simpy`: run --replications/--warmup auto/
--precision, sweep, summary, plot; and the progress bars."""
from __future__ import annotations

import io
import json
import threading

import pytest

import serq
from serq.cli.commands import main
from serq.report.json_report import to_json

MG1 = "examples/single-turn/mg1.sq"


def _run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_run_replications_json_is_the_study_schema(capsys):
    code, out, err = _run(capsys, "run", MG1, "--horizon", "300", "--replications", "3",
                          "--jobs", "1", "--seed", "5", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["study"]["seeds"] == [5, 6, 7]
    # replication 2 is `run --seed 7`, byte for byte
    code, single, _ = _run(capsys, "run", MG1, "--horizon", "300", "--seed", "7", "--json")
    assert json.loads(single) == d["replications"][2]["report"]


def test_run_replications_text(capsys):
    code, out, _ = _run(capsys, "run", MG1, "--horizon", "300", "--replications", "2",
                        "--jobs", "1")
    assert code == 0
    assert out.startswith("study: 2 replications, seeds 1…2")
    assert "response" in out and "utilization" in out


def test_run_warmup_auto_prints_and_stores_the_method(capsys):
    code, out, _ = _run(capsys, "run", MG1, "--horizon", "2000", "--warmup", "auto",
                        "--observe", "response", "--json")
    assert code == 0
    d = json.loads(out)
    rule = d["serq_simpy"]["warmup_rule"]
    assert rule["method"] == "MSER-5" and rule["observation"] == "response"
    assert d["warmup"] == rule["time"]
    code, text, _ = _run(capsys, "run", MG1, "--horizon", "2000", "--warmup", "auto")
    assert text.splitlines()[0].startswith("warm-up ") and "MSER-5" in text.splitlines()[0]


def test_run_precision_says_what_happened(capsys):
    code, out, _ = _run(capsys, "run", MG1, "--horizon", "300", "--replications", "2",
                        "--jobs", "1", "--precision", "0.001", "--observe", "response",
                        "--budget", "3")
    assert code == 0
    assert "precision not met: the budget of 3 replications is spent" in out


@pytest.mark.parametrize("argv, message", [
    (["run", MG1, "--precision", "2"], "relative half-width"),
    (["run", MG1, "--replications", "0"], "positive integer"),
    (["ir", MG1, "--warmup", "auto"], "--warmup auto applies to run and plot"),
    (["sweep", MG1, "--grid", "lam=1:0"], "a range is START:STOP:STEP"),
    (["sweep", MG1, "--grid", "lam"], "expected NAME=START:STOP:STEP"),
    (["sweep", MG1, "--grid", "lam=0.5", "--warmup", "auto"], "numeric --warmup"),
    (["run", MG1, "--precision", "0.1"], "needs the observation"),
])
def test_usage_errors(capsys, argv, message):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err


def test_sweep_summary_and_plot_commands(capsys, tmp_path):
    out_dir = str(tmp_path / "res")
    code, out, _ = _run(capsys, "sweep", MG1, "--grid", "lam=0.5,0.7", "--replications", "2",
                        "--horizon", "300", "--jobs", "1", "--out", out_dir)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["lam", "response", "mean"]
    assert "4 runs computed, 0 read back" in out
    code, out, _ = _run(capsys, "summary", out_dir, "--y", "stage.svc:utilization")
    assert code == 0 and out.splitlines()[0].split() == ["lam", "svc", "utilization"]
    fig = tmp_path / "curve.svg"
    code, _, _ = _run(capsys, "plot", out_dir, "--y", "response:p99", "--out", str(fig))
    assert code == 0 and fig.read_text().lstrip().startswith("<?xml")
    code, out, _ = _run(capsys, "sweep", MG1, "--grid", "lam=0.5,0.7", "--replications", "2",
                        "--horizon", "300", "--jobs", "1", "--out", out_dir, "--json")
    d = json.loads(out)
    assert d["computed"] == 0 and d["reused"] == 4 and d["errors"] == []


def test_sweep_with_a_failing_point_exits_1(capsys):
    code, out, _ = _run(capsys, "sweep", MG1, "--grid", "lam=0.5,nosuch", "--horizon", "200",
                        "--jobs", "1")
    assert code == 1
    assert "failed: lam=nosuch, seed 1:" in out


def test_plot_a_run(capsys, tmp_path):
    fig = tmp_path / "s.png"
    code, _, err = _run(capsys, "plot", MG1, "--horizon", "1000", "--warmup", "auto",
                        "--observe", "response", "--out", str(fig))
    assert code == 0 and "MSER-5" in err
    assert fig.read_bytes()[:4] == b"\x89PNG"
    code, _, err = _run(capsys, "plot", MG1, "--horizon", "300", "--out", str(tmp_path / "x.gif"))
    assert code == 2 and ".png, .svg or .pdf" in err


def test_progress_ticker_reaches_the_horizon_and_changes_nothing():
    """The progress callback runs from a wall-time thread (a run with it
    gives the report without it) and ends at the horizon."""
    prog = serq.load(MG1)
    seen = []
    main_thread = threading.get_ident()

    def progress(now, events):
        seen.append((now, events, threading.get_ident()))

    with_bar = serq.run(prog, horizon=2000, progress=progress)
    assert to_json(with_bar) == to_json(serq.run(prog, horizon=2000))
    assert seen[-1][0] == 2000 and seen[-1][1] == with_bar.events
    one_arg = []
    serq.run(prog, horizon=500, progress=one_arg.append)
    assert one_arg[-1] == 500


def test_run_bar_draws_rate_and_clears():
    pytest.importorskip("tqdm")
    from serq.study.progress import CountBar, RunBar
    buf = io.StringIO()
    bar = RunBar(100.0, stream=buf)
    bar(50.0, 1000)
    bar.close()
    text = buf.getvalue()
    assert "t=50/100" in text and "events/s" in text
    buf = io.StringIO()
    count = CountBar(4, "runs", stream=buf)
    count(2, 4)
    count.close()
    assert "2/4" in buf.getvalue()


def test_no_bar_off_a_terminal_or_with_quiet():
    from serq.study.progress import wanted

    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert wanted(False, stream=Tty())
    assert not wanted(True, stream=Tty())
    assert not wanted(False, json_out=True, stream=Tty())
    assert not wanted(False, stream=io.StringIO())
