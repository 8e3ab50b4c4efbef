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

from serq import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MG1 = os.path.join(ROOT, "examples", "single-turn", "mg1.sq")


def test_one_openblas_thread_unless_set(monkeypatch, capsys):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert cli.main(["check", MG1]) == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    assert cli.main(["check", MG1]) == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "3"
    capsys.readouterr()


def test_numpy_starts_no_blas_threads(tmp_path):
    # the threads of the process once a run imported numpy: the main thread only
    code = ("import sys, threading, os; from serq.cli import main; "
            "rc = main(['run', sys.argv[1], '--json', '--horizon', '10']); "
            "print(len(os.listdir('/proc/self/task')))")
    env = dict(os.environ, SERQ_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    env.pop("OPENBLAS_NUM_THREADS", None)
    if not os.path.isdir("/proc/self/task"):
        pytest.skip("threads are counted in /proc (Linux)")
    out = subprocess.run([sys.executable, "-c", code, MG1], capture_output=True, text=True,
                         check=True, env=env)
    assert out.stdout.strip().splitlines()[-1] == "1"
