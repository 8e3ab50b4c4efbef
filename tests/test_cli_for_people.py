"""The command line and the text report as people read them (issue 13 item 2):
help on every option, `python -m serq`, numbers with the digits they need,
`–` for an undefined figure, warnings about figures that cannot be trusted,
and the diagnostics that point where the mistake is."""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

import pytest

import serq
from serq.cli.commands import _parser
from serq.core.errors import SerqError
from serq.report.numbers import DASH, mean_cells, row_decimals, sig
from serq.report.text_report import to_text
from serq.report.trust import findings, lag1_correlation, trend_z

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MG1 = os.path.join(ROOT, "examples", "single-turn", "mg1.sq")


def _commands(parser: argparse.ArgumentParser):
    yield "serq-simpy", parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub


def test_every_option_of_every_command_has_help():
    missing = [f"{name} {'/'.join(a.option_strings) or a.dest}"
               for name, parser in _commands(_parser()) for a in parser._actions
               if not isinstance(a, argparse._SubParsersAction)
               and (a.help is None or not a.help.strip())]
    assert missing == []


def test_every_command_has_help():
    for action in _parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {c.dest: c.help for c in action._choices_actions}
            assert set(helps) == set(action.choices) and all(helps.values()), helps


def test_python_dash_m_serq_and_version():
    out = subprocess.run([sys.executable, "-m", "serq", "--version"], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout == f"serq-simpy {serq.__version__}\n"
    out = subprocess.run([sys.executable, "-m", "serq", "check", MG1], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.startswith("OK:"), out.stderr


def test_ir_refers_to_the_trace_unless_inline(tmp_path):
    program = os.path.join(ROOT, "tests", "data", "e2e", "w7.sq")
    plain = subprocess.run([sys.executable, "-m", "serq", "ir", program], capture_output=True,
                           text=True, cwd=ROOT)
    inline = subprocess.run([sys.executable, "-m", "serq", "ir", program, "--inline-trace"],
                            capture_output=True, text=True, cwd=ROOT)
    a = json.loads(plain.stdout)["workload"]["trace"]
    b = json.loads(inline.stdout)["workload"]["trace"]
    assert a["path"] == b["path"] and a["path"].endswith("chat.csv")
    assert a["sessions"] == [] and len(b["sessions"]) > 0  # Part 06 §11.2 --inline-trace


# ------------------------------------------------------------------ numbers

def test_the_issue_example_reads_with_its_digits():
    # issue 13: `tpot 0.0002 ±0.0000` must read `0.000213 ±0.000004`
    assert mean_cells(0.000213, 0.000004) == ["0.000213", "±0.000004"]


@pytest.mark.parametrize("mean, ci, cells", [
    (5.0213, 0.71, ["5.02", "±0.71"]),          # the interval's first digit, mean ≥ 3 digits
    (1645.2, 435.0, ["1645", "±435"]),
    (12.3456, 1e-9, ["12.3456", "±0.0000"]),    # the mean keeps at most 6 digits
    (3.0, math.inf, ["3.000", DASH]),           # no interval: 4 digits and a dash
    (math.nan, math.inf, [DASH, DASH]),         # no sample
])
def test_mean_and_interval_share_decimals(mean, ci, cells):
    assert mean_cells(mean, ci) == cells


def test_other_figures_have_four_significant_digits():
    assert [sig(x) for x in (0.06, 3.1666667, 1.0, 0.0, 10.35, 2.5e-4, math.nan)] == \
        ["0.06", "3.167", "1", "0", "10.35", "0.00025", DASH]
    assert row_decimals(0.0, 0.02) == 2


# ------------------------------------------------------------------ warnings

def _mg1(lam: float, horizon: float):
    return serq.run(serq.load(MG1, sets={"lam": lam}), horizon=horizon, seed=3)


def test_an_unstable_queue_is_said_to_grow():
    # M/M/1 with λ = 1.2 > μ = 1 has no steady state (ρ > 1): the responses grow
    report = _mg1(1.2, 5000)
    said = findings(report)
    assert any("`response` grows through the run" in w and "stage `svc` is busy" in w
               for w in said), said
    assert "warning: observe `response` grows through the run" in to_text(report)


def test_a_stable_queue_gets_no_warning():
    # M/M/1 with ρ = 0.5 over 20 000 time units (about 10 000 samples, batches of 500)
    assert findings(_mg1(0.5, 20000)) == []


def test_trend_and_correlation_statistics():
    rising = [float(k) for k in range(20)]
    # Mann–Kendall: S = C(20, 2) = 190 for a rising series, Var S = n(n−1)(2n+5)/18 =
    # 20·19·45/18 = 950, z = S/√Var S (scipy.stats.kendalltau's asymptotic test)
    assert trend_z(rising) == pytest.approx(190 / math.sqrt(950), rel=1e-12)
    assert trend_z(rising[::-1]) < 0
    assert lag1_correlation([1.0, -1.0] * 10) == pytest.approx(-0.95)  # alternating: −(n−1)/n
    assert math.isnan(lag1_correlation([2.0] * 20))


def test_few_samples_and_idle_stages_are_said():
    src = """
    stage svc : fifo;
    stage spare : fifo;
    workload { arrive batch(3); }
    session { turn; set t0 = now; run svc (1); observe response = now - t0; }
    run { horizon 10; }
    """
    report = serq.run(serq.load(source=src))
    said = findings(report)
    assert said[0].startswith("too few samples after the warm-up for an interval (it needs "
                              "40): observe `response` (3)")
    assert "stage `spare` served nothing after the warm-up" in said


# ------------------------------------------------------------------ diagnostics

def _error(src: str) -> SerqError:
    with pytest.raises(SerqError) as info:
        serq.load(source=src)
    return info.value


def test_unclosed_brace_is_reported_at_the_brace():
    src = ("stage svc : fifo;\nworkload { arrive batch(1); }\nsession {\n  turn;\n"
           "  if (1) {\n    run svc (1);\n}\nrun { horizon 10; }\n")
    err = _error(src)
    assert (err.pos.line, err.pos.col) == (5, 10)  # the `if` block's `{`
    assert err.message == "this `{` is never closed"
    assert "8:5" in err.help  # where the parser gave up: `run {` at top level


def test_a_balanced_program_keeps_the_parser_message():
    err = _error("stage svc : fifo\nworkload { arrive batch(1); }\n")
    assert "expected `;`" in err.message


@pytest.mark.parametrize("src, help", [
    ("let lamda = 0.5; stage s : fifo; workload { arrive poisson(lambda); }\n"
     "session { turn; run s (1); } run { horizon 1; }", "did you mean constant `lamda`?"),
    ("stage s : fifo; workload { arrive batch(1); }\n"
     "session { turn; run s (expo(1)); } run { horizon 1; }", "did you mean `exp`?"),
    ("stage s : fifo; pool kvcache { cap 4; } workload { arrive batch(1); }\n"
     "session { turn; hold kvcahe (1) { run s (1); } } run { horizon 1; }",
     "did you mean pool `kvcache`?"),
    ("stage s : fifo; workload { arrive batch(1); }\n"
     "session { turn; set size0 = 2; run s (sizeO); } run { horizon 1; }",
     "did you mean attribute `size0`?"),
])
def test_did_you_mean(src, help):
    assert _error(src).help == help


def test_no_suggestion_of_a_function_the_moment_cannot_read():
    # `count(o)` aggregates observations for a claim `at end` only: `round` in a
    # session must not be told to read it (Levenshtein distance 2)
    src = ("stage s : fifo; workload { arrive batch(1); }\n"
           "session { turn; run s (round(1.5)); } run { horizon 1; }")
    assert _error(src).help is None
