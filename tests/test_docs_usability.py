"""What a new user met in the docs and the command's help (issue 25, item 7):
the studies guide's install line, the site's figures, the examples' run-time
claims, where `--dump` wrote, one progress switch, `--warmup auto` in the
help, and where a sweep writes by default."""
from __future__ import annotations

import glob
import importlib
import os
import re
import sys

import pytest
from test_study_cli import _run  # the CLI's exit status, stdout and stderr

from serq.cli.commands import _parser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MG1 = "examples/single-turn/mg1.sq"



def _page(name: str) -> str:
    with open(os.path.join(ROOT, "docs", name), encoding="utf-8") as fh:
        return fh.read()


def test_the_studies_guide_installs_from_a_clone():
    pages = glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True)
    pages.append(os.path.join(ROOT, "README.md"))
    for path in pages:
        text = open(path, encoding="utf-8").read()
        # the package is not on PyPI: extras are installed from the clone
        assert not re.search(r"pip install ['\"]?serq-simpy", text), path
    assert "pip install -e '.[study,plot]'" in _page("guide/studies.md")


def _script(name: str):
    """The module `scripts/<name>.py`."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def _figures() -> tuple[str, ...]:
    return _script("study_figures").FIGURES


def test_the_site_shows_the_figures():
    figures = _figures()
    on_disk = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "docs", "img",
                                                                         "*.png")))
    assert set(figures) <= set(on_disk)  # scripts/study_figures.py draws these
    studies = _page("guide/studies.md")
    shown = re.findall(r"!\[[^\]]+\]\(\.\./img/([\w.]+)\)", studies)
    # the studies page shows each figure it describes: a sweep's curves, the
    # warm-up series, the histogram, the ECDF and gauges
    assert sorted(shown) == sorted(figures)


CLAIMS = [  # (program, extra arguments, the sentence of its header that claims a run time)
    ("examples/single-turn/vllm_single_turn.sq", [],
     r"serq-simpy runs it in\n// about ([\d.]+) s of CPU time"),
    ("examples/multi-turn/vllm.sq", [], r"serq-simpy runs it in about ([\d.]+) s of CPU time"),
    ("examples/multi-turn/vllm.sq", ["--horizon", "400"],
     r"with `--horizon 400` serq-simpy runs it in about\n// ([\d.]+) s"),
    ("examples/multi-turn/replica.sq", [], r"serq-simpy runs it in about ([\d.]+) s\n// of CPU"),
]


def test_every_run_time_claim_is_listed():
    # a header that says how long a run takes says it in CLAIMS' words
    pattern = re.compile(r"(?:about|~) ?[\d.]+ ?s\b[^\n]*\n?[^\n]*(?:serq-simpy|CPU|pyserq)|"
                         r"(?:takes|runs? (?:it )?in|Runtime:?|Run time:?) about", re.I)
    claimed = {p for p, _, _ in CLAIMS}
    for path in glob.glob(os.path.join(ROOT, "examples", "**", "*.sq"), recursive=True):
        rel = os.path.relpath(path, ROOT)
        header = "".join(ln for ln in open(path, encoding="utf-8") if ln.startswith("//"))
        if pattern.search(header):
            assert rel in claimed, f"{rel} claims a run time: add it to CLAIMS"


# The yardstick: the hand-written SimPy model of replica.sq (R = 4, horizon
# 400), a pure SimPy program of the same kind as the claims' runs. Machines
# differ by three times and more in how fast they run Python (CI's machines
# have taken from 1.4 to 4 times the claimed times, CI run of 2026-12-06), so
# a claim is checked against the yardstick's time on the same machine, taken
# just before and just after the run, not against the clock alone.
YARDSTICK = ["scripts/handwritten_replica.py", "--horizon", "400"]
# The claims were measured on a fast machine (idle core, 2026-12-05:
# 0.41-0.55 s, 1.27-1.35 s, 0.34-0.42 s and 0.74-0.83 s, three runs each),
# whose yardstick time was not taken then. The yardstick's time is the
# performance page's, measured on a fast machine (0.30 s, wall time, best of
# five; not checked to be the claims' own). Not fitted to the claims: on a
# machine three times slower (2026-12-07, five rounds, yardstick then
# claim) the yardstick took 0.56-1.03 s and each claim's run 1.4-1.7,
# 4.5-7.1, 1.25-1.6 and 2.2-2.9 times its yardstick, so those runs put the
# yardstick at 0.24-0.28, 0.18-0.29, 0.22-0.28 and 0.26-0.34 s on the
# claims' machine: consistent with 0.30, within the factor of two below.
YARDSTICK_CPU = 0.30


def _cpu_seconds(argv: list[str]) -> float:
    """The CPU time of one whole Python process, as scripts/bench.py measures it."""
    bench = _script("bench")
    runs = bench.Runs()
    bench.measure([sys.executable, *argv], dict(os.environ), runs)
    assert runs.failed is None, (argv, runs.failed)
    return runs.cpu[0]


@pytest.mark.slow
@pytest.mark.parametrize("path, extra, claim", CLAIMS)
def test_run_time_claims_hold(path, extra, claim):
    """The measured CPU time, scaled to the claims' machine by the yardstick,
    is between half and twice the claimed one (the issue found claims off by
    three times in both directions)."""
    text = open(os.path.join(ROOT, path), encoding="utf-8").read()
    m = re.search(claim, text)
    assert m, (path, claim)
    before = _cpu_seconds(YARDSTICK)
    cpu = _cpu_seconds(["-m", "serq", "run", path, "--no-progress", *extra])
    after = _cpu_seconds(YARDSTICK)
    # this machine's slowness against the claims' machine; a machine whose
    # speed changes from minute to minute is caught by one side or the other
    slower = (before * after) ** 0.5 / YARDSTICK_CPU
    scaled = cpu / slower
    assert float(m.group(1)) / 2 <= scaled <= float(m.group(1)) * 2, (path, extra, cpu, slower)


def test_dump_says_where_it_wrote(capsys, tmp_path):
    target = tmp_path / "samples"
    code, out, err = _run(capsys, "run", MG1, "--horizon", "50", "--dump", str(target))
    assert code == 0 and out.startswith("run: horizon 50")
    assert err == (f"--dump: wrote the samples to {target}{os.sep} (1 observation(s) as "
                   "NAME.csv, the client series and the per-request table (requests.csv) in client/)\n")
    assert (target / "response.csv").exists()


def test_one_progress_switch(capsys):
    code, out, err = _run(capsys, "run", MG1, "--horizon", "50", "--no-progress")
    assert code == 0 and err == ""
    code, out2, err = _run(capsys, "run", MG1, "--horizon", "50", "--quiet")
    assert code == 0 and out2 == out
    assert err == ("serq-simpy: warning: --quiet is deprecated and will be removed: use "
                   "--no-progress (it does the same)\n")
    helps = {a.dest: a.help for a in _subparser("sweep")._actions}
    assert "no_progress" in helps and helps["quiet"].startswith("deprecated")


def _subparser(name: str):
    import argparse
    parser = _parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]


@pytest.mark.parametrize("command", ["run", "plot", "sweep"])
def test_warmup_help_mentions_auto(command):
    action = next(a for a in _subparser(command)._actions if a.dest == "warmup")
    assert "`auto`" in action.help and "MSER-5" in action.help


def test_a_sweep_writes_nothing_unless_asked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, "sweep", os.path.join(ROOT, MG1), "--grid", "lam=0.5",
                        "--horizon", "50", "--jobs", "1", "--no-progress")
    assert code == 0 and "1 runs computed" in out
    assert os.listdir(tmp_path) == []
    out_help = next(a for a in _subparser("sweep")._actions if a.dest == "out").help
    assert "Without it nothing is written" in out_help
