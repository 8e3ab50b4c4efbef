"""Start-up of the `serq-simpy` command (issue 11): what it sets before numpy loads.

numpy's OpenBLAS starts one spinning thread per core when it is imported
unless OPENBLAS_NUM_THREADS says otherwise; the command does no linear
algebra, so it asks for one thread, and a user's own setting stays.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from serq.cli import commands as cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MG1 = os.path.join(ROOT, "examples", "single-turn", "mg1.sq")


def test_one_openblas_thread_unless_set(monkeypatch, capsys):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setattr(cli, "_settle_gc", lambda entry: None)  # not this test's business
    assert cli.main(["check", MG1]) == 0  # a call from a program: its environment stays
    assert "OPENBLAS_NUM_THREADS" not in os.environ
    monkeypatch.setattr(sys, "argv", ["serq-simpy", "check", MG1])
    assert cli.main() == 0  # the command
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    assert cli.main() == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "3"
    capsys.readouterr()


def test_numpy_starts_no_blas_threads(tmp_path):
    # the threads of the process once a run imported numpy: the main thread only
    # (threads the run started and joined may take a moment to leave /proc)
    code = ("import sys, time, os; from serq.cli.commands import main; "
            "sys.argv = ['serq-simpy', 'run', sys.argv[1], '--json', '--horizon', '10']; "
            "rc = main(); "
            "n = [len(os.listdir('/proc/self/task')) for _ in range(50) if time.sleep(0.02) "
            "is None]; print(min(n))")
    env = dict(os.environ, SERQ_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    env.pop("OPENBLAS_NUM_THREADS", None)
    if not os.path.isdir("/proc/self/task"):
        pytest.skip("threads are counted in /proc (Linux)")
    out = subprocess.run([sys.executable, "-c", code, MG1], capture_output=True, text=True,
                         check=True, env=env)
    assert out.stdout.strip().splitlines()[-1] == "1"


def test_plain_decimal_writes_what_decimal_writes():
    # the report's numbers were written with format(Decimal(repr(x)), "f"); the
    # replacement (no `decimal` import at start) must write the same characters
    import math
    import random
    import struct
    from decimal import Decimal

    from serq.report.json_report import plain_decimal
    r = random.Random(7)
    values = [0.0, -0.0, 1e16, 1e-7, 1.5e16, -2.5e-8, 1e22, 5e-324, 1.7976931348623157e308,
              2.2250738585072014e-308, 0.1, 1e15, 9999999999999998.0, 1e-5, 1e-4]
    for _ in range(50000):
        bits = struct.unpack("d", struct.pack("Q", r.getrandbits(64)))[0]
        values += [bits] if math.isfinite(bits) else []
        values.append(r.uniform(-1e6, 1e6) * 10.0 ** r.randint(-30, 30))
    for v in values:
        assert plain_decimal(repr(v)) == format(Decimal(repr(v)), "f"), repr(v)


def test_the_command_freezes_what_it_loaded(capsys):
    # objects made before the run leave the cyclic GC's sight (its collections at
    # exit then skip them), only when main() is the process's command
    code = ("import gc, sys; from serq.cli.commands import main; sys.argv = ['serq-simpy', *sys.argv[1:]]; "
            "rc = main(); print(rc, gc.get_freeze_count() > 10000)")
    env = dict(os.environ, SERQ_CACHE_DIR="", PYTHONPATH=ROOT)
    for args in (["check", MG1], ["run", MG1, "--horizon", "10", "--json"]):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                             text=True, check=True, env=env)
        assert out.stdout.strip().splitlines()[-1] == "0 True"
    import gc
    before = gc.get_freeze_count()
    assert cli.main(["check", MG1]) == 0  # called with arguments: a library call
    assert gc.get_freeze_count() == before
    capsys.readouterr()


def test_the_command_freezes_the_finished_run_before_its_report():
    # the run's objects (garbage in cycles once it returns) leave the collector's
    # sight before the report is written: the report's imports set off no
    # collection that visits them (docs/guide/performance.md); the count of frozen
    # objects grows between the start of the run and the report (gc.freeze is
    # the only thing that changes it: without the call the two counts are
    # equal), and a stopped run's report is written the same way. The exit
    # statuses: 0 for mg1's run (no pool is stuck), 1 for a run stopped by
    # --max-memory (`_stopped`: 1 unless the stop was an interrupt)
    code = ("import gc, sys; from serq import api; from serq.cli import commands as c; "
            "seen = []; run, write, stopped = api.run, c._write_report, c._stopped; "
            "api.run = lambda *a, **k: (seen.append(gc.get_freeze_count()), run(*a, **k))[1]; "
            "c._write_report = lambda *a, **k: (seen.append(gc.get_freeze_count()), write(*a, **k))[1]; "
            "c._stopped = lambda *a, **k: (seen.append(gc.get_freeze_count()), stopped(*a, **k))[1]; "
            "sys.argv = ['serq-simpy', *sys.argv[1:]]; rc = c.main(); "
            "print(rc, seen[1] > seen[0])")
    env = dict(os.environ, SERQ_CACHE_DIR="", PYTHONPATH=ROOT)
    for args, rc in ((["run", MG1, "--horizon", "200", "--json"], "0"),
                     (["run", MG1, "--horizon", "1e9", "--max-memory", "1"], "1")):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                             text=True, env=env)
        assert out.stdout.strip().splitlines()[-1] == f"{rc} True", out.stderr


def test_the_report_package_lists_its_lazy_names():
    # serq.report imports its names on first use; dir() (completion, pydoc) still
    # shows each of them, and each is the object of its module
    import serq.report as report
    from serq.report import json_report, model
    assert set(report.__all__) <= set(dir(report))
    assert report.to_json is json_report.to_json and report.Report is model.Report
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        report.nothing
