"""Issue 14: nesting depth, input limits and failure paths that must be
messages (docs/guide/limits.md). The run-time runaways are in
tests/test_run_errors.py; the bad-program corpus has the refusals with a
position (tests/bad_programs/limit_*.sq)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import serq
from serq.core.errors import ParseError, SerqError
from serq.report.text_report import to_text
from serq.runtime.watch.watchdog import RunStopped

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MG1 = os.path.join(ROOT, "examples", "single-turn", "mg1.sq")

HEAD = "stage svc : fifo;\npool mem { cap 2; }\nworkload { arrive poisson(0.5); }\n"


def _nested_ifs(n: int) -> str:
    body = "hold mem (1) { run svc (~exp(1)); } observe resp = now - t0; end;"
    for _ in range(n):
        body = f"if (now >= 0) {{ {body} }} else {{ run svc (1); }}"
    return HEAD + f"session {{ turn; set t0 = now; {body} run svc (5); }}\nrun {{ horizon 500; }}\n"


def _nested_parens(n: int) -> str:
    expr = "x"
    for _ in range(n):
        expr = f"({expr} + now * 0)"
    return HEAD + (f"session {{ turn; set x = 1; set t0 = now; run svc ({expr}); "
                   "observe resp = now - t0; }\nrun { horizon 500; }\n")


@pytest.mark.parametrize("make", [_nested_ifs, _nested_parens], ids=["blocks", "brackets"])
def test_500_levels_run_like_3(make):
    # the same program nested 3 and 500 levels deep: the guards are all true
    # and `+ now * 0` adds nothing, so the reports are identical
    shallow = to_text(serq.run(serq.load(source=make(3))))
    deep = to_text(serq.run(serq.load(source=make(500))))
    assert deep == shallow


def test_deep_nesting_refused_at_the_bracket():
    src = HEAD + "session { turn; run svc (" + "(" * 1100 + "1" + ")" * 1100 + "); }\n"
    with pytest.raises(ParseError) as info:
        serq.load(source=src)
    assert "nests more than 1000 levels" in info.value.message
    assert info.value.pos.line == 4


def test_unary_and_operator_chains_are_not_a_traceback():
    # nesting without brackets: long chains of operators load or are refused
    for expr in ("- " * 600 + "1", " + ".join(["now"] * 600), "!" * 600 + "1"):
        src = HEAD + f"session {{ turn; run svc ({expr}); }}\nrun {{ horizon 5; }}\n"
        try:
            serq.run(serq.load(source=src))
        except SerqError:
            pass


def test_non_utf8_file_has_a_position(tmp_path):
    p = tmp_path / "latin1.sq"
    p.write_bytes("stage svc : fifo;\n// café\n".encode("latin-1"))
    with pytest.raises(ParseError) as info:
        serq.load(str(p))
    assert "not UTF-8" in info.value.message
    assert (info.value.pos.line, info.value.pos.col) == (2, 7)  # the byte 0xe9 of `café`


def test_huge_file_refused_before_reading(tmp_path):
    p = tmp_path / "big.sq"
    with open(p, "wb") as f:
        f.truncate(50 * 2 ** 20)  # 50 MB (sparse): refused by its size
    start = time.monotonic()
    with pytest.raises(ParseError) as info:
        serq.load(str(p))
    assert time.monotonic() - start < 0.5
    assert "at most 1 MiB" in info.value.message


def test_source_text_is_measured_in_bytes():
    # 600 000 two-byte characters: 1.2 MB of UTF-8 (fewer than 2^20 characters),
    # refused as a file of the same text is
    with pytest.raises(ParseError) as info:
        serq.load(source="// " + "é" * 600_000 + "\n")
    assert "at most 1 MiB" in info.value.message


def test_long_unknown_name_is_fast():
    name = "s" * 16384
    src = HEAD + f"session {{ turn; run {name} (1); }}\nrun {{ horizon 5; }}\n"
    serq.load(source=HEAD + "session { turn; run svc (1); }\nrun { horizon 5; }\n")  # warm
    start = time.monotonic()
    with pytest.raises(SerqError) as info:
        serq.load(source=src)
    assert time.monotonic() - start < 1.0
    assert "unknown" in info.value.message


def test_array_of_the_bound_loads_fast():
    src = ("stage s[100000] : fifo;\nworkload { arrive poisson(1); }\n"
           "session { turn; run s[0] (1); }\nrun { horizon 5; }\n")
    start = time.monotonic()
    serq.load(source=src)
    assert time.monotonic() - start < 2.0


# -- the command line ----------------------------------------------------------------
class _Result:
    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def _cli(*args):
    """`serq-simpy ARGS` in this process (standard output and error captured)."""
    import contextlib
    import io
    from serq.cli.commands import main
    out, err = io.StringIO(), io.StringIO()
    out.fileno = sys.__stdout__.fileno  # an open stream, as a terminal or a pipe is
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(cwd)
    return _Result(code, out.getvalue(), err.getvalue())


def test_closed_stdout():
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run(f"{sys.executable} -m serq.cli run {MG1} --horizon 10 >&-",
                       shell=True, cwd=ROOT, env=env, capture_output=False,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 1
    assert "standard output is closed" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_full_stdout():
    env = dict(os.environ, PYTHONPATH=ROOT)
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "serq.cli", "run", MG1, "--horizon", "10"],
                           cwd=ROOT, env=env, stdout=full, stderr=subprocess.PIPE, text=True,
                           timeout=120)
    assert r.returncode == 1
    assert "cannot write the report" in r.stderr and "Traceback" not in r.stderr


def test_unwritable_dump(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = _cli("run", MG1, "--horizon", "10", "--dump", str(blocker / "dump"))
    assert r.returncode == 1
    assert "cannot write the samples to --dump" in r.stderr and "Traceback" not in r.stderr


def test_set_of_a_non_number():
    r = _cli("run", MG1, "--set", "lam=abc")
    assert r.returncode == 1
    assert "`abc` is not a constant" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("body,line,needle", [
    ("    def __init__(self, *a, **k):\n        super().__init__(*a, **k)\n"
     "        raise ValueError('no way')\n", 5, "ValueError: no way"),
    ("    def select_next(self):\n        return 1 / 0\n", 4, "ZeroDivisionError"),
], ids=["constructor", "method"])
def test_policy_that_raises_names_its_file_and_line(tmp_path, body, line, needle):
    pol = tmp_path / "pol.py"
    pol.write_text("from serq.policies import Fifo\nclass P(Fifo):\n" + body)
    r = _cli("run", MG1, "--horizon", "10", "--policy", f"svc={pol}:P")
    assert r.returncode == 1
    assert f"{pol}:{line}" in r.stderr and needle in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("csv,needle", [
    ("session,turn,new,out\n1,0,1,2\n", "expected 5 or 6 fields"),
    ("session,turn,new,out,think\n1,0,abc,2,1\n", "invalid number `abc`"),
    ("", "empty trace"),
    ("session,turn,new,out,think\n", "empty trace"),
])
def test_malformed_trace(tmp_path, csv, needle):
    (tmp_path / "t.csv").write_text(csv)
    (tmp_path / "p.sq").write_text(
        'stage e : fifo;\nworkload { arrive batch(2); trace "t.csv" ordered; }\n'
        "session { turn; run e (new + out); }\nrun { horizon 10; }\n")
    r = _cli("run", str(tmp_path / "p.sq"))
    assert r.returncode == 1
    assert needle in r.stderr and "Traceback" not in r.stderr


def test_negative_trace_value_is_reported_where_used(tmp_path):
    # the reference (pyserq 0.1.3) reads negative numbers and fails where a
    # statement uses one as an amount; so does serq-simpy, with the statement
    (tmp_path / "t.csv").write_text("session,turn,new,out,think\n1,0,-10,2,1\n")
    (tmp_path / "p.sq").write_text(
        'stage e : fifo;\nworkload { arrive batch(1); trace "t.csv" ordered; }\n'
        "session { turn; run e (new + out); }\nrun { horizon 10; }\n")
    r = _cli("run", str(tmp_path / "p.sq"))
    assert r.returncode == 1
    assert "`run e (new + out)`: the amount is -8" in r.stderr


LONG = ("let lam = 0.9;\nstage svc : fifo;\nworkload { arrive poisson(lam); }\n"
        "session { turn; set t0 = now; run svc (~exp(1)); observe response = now - t0; }\n"
        "run { horizon 100000000; }\n")


def test_ctrl_c_prints_the_partial_report(tmp_path):
    p = tmp_path / "long.sq"
    p.write_text(LONG)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen([sys.executable, "-m", "serq.cli", "run", str(p)], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(6.0)  # loaded and running (start-up takes ~1-3 s on a busy machine)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert out.startswith("stopped: interrupted at t = ")
    assert "\nrun: horizon 100000000 end " in out and "response" in out
    assert "interrupted (Ctrl-C)" in err and "Traceback" not in err


def test_max_memory_stops_with_the_report(tmp_path):
    p = tmp_path / "long.sq"
    p.write_text(LONG)
    r = _cli("run", str(p), "--max-memory", "60", "--json")
    assert r.returncode == 1, r.stderr
    assert '"stopped":{"reason":"memory","time":' in r.stdout
    assert "passed the limit of 60.0 MB (--max-memory)" in r.stderr
    assert "Traceback" not in r.stderr


def test_max_memory_api():
    program = serq.load(source=LONG)
    with pytest.raises(RunStopped) as info:
        serq.run(program, max_memory=60 * 2 ** 20)
    rep = info.value.report
    assert rep is not None and rep.end == info.value.time and rep.arrivals > 0


@pytest.mark.parametrize("command", [["ir"], ["check", "--kernel"], ["check"]])
def test_500_levels_through_every_command(tmp_path, command):
    p = tmp_path / "deep.sq"
    p.write_text(_nested_ifs(500))
    r = _cli(*command, str(p))
    assert r.returncode == 0, r.stderr
    assert r.stdout
