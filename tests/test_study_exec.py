"""Sweeps on every executor give the same frames; an interrupted sweep
loses no finished run and its rerun computes only the missing ones."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import serq.study as study

MG1 = "examples/single-turn/mg1.sq"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _sweep(**kw):
    return study.sweep(MG1, {"lam": "0.5:0.8:0.1"}, replications=2, horizon=300, warmup=20,
                       **kw)


def test_local_cluster_gives_the_local_frames(capsys):
    """A real distributed.LocalCluster (scheduler and two worker processes):
    value for value the frames of --jobs 1; each worker compiled each point's
    program once, and the work ran in the workers, not in this process."""
    distributed = pytest.importorskip("distributed")
    from serq.study.worker import compile_count, worker_pid
    local = _sweep(jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = _sweep(executor=client)
        compiled = client.run(compile_count)
        pids = client.run(worker_pid)
        # the CLI's --dask ADDRESS: the same study as --jobs 1
        from serq.cli.commands import main
        argv = ["run", MG1, "--horizon", "300", "--replications", "2", "--json"]
        assert main(argv + ["--dask", cluster.scheduler_address]) == 0
        on_dask = capsys.readouterr().out
    assert main(argv + ["--jobs", "1"]) == 0
    assert capsys.readouterr().out == on_dask
    assert remote.tidy.equals(local.tidy)
    assert remote.summary.equals(local.summary)
    # 4 points x 2 replications: 4 programs, each compiled at most once per worker
    assert all(n <= 4 for n in compiled.values()) and sum(compiled.values()) >= 4
    assert os.getpid() not in pids.values()


def test_replicate_on_processes_equals_inline():
    a = study.replicate(MG1, 3, horizon=300, jobs=1)
    b = study.replicate(MG1, 3, horizon=300, jobs=2)
    assert a.json() == b.json()


def test_killed_sweep_reruns_only_the_missing_points(tmp_path):
    out = tmp_path / "res"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "serq.cli", "sweep", MG1, "--grid", "lam=0.5:0.8:0.05",
           "--replications", "2", "--horizon", "20000", "--jobs", "1", "--quiet",
           "--out", str(out)]
    # runs long enough (about 0.2 s each on the M/M/1 core path) that the poll
    # below sees the first ones finish before the last, even on a loaded machine
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    runs = out / "runs"
    deadline = time.time() + 300
    while time.time() < deadline:
        # finished runs only: a `.tmp` file is a run being written
        done = [f for f in os.listdir(runs) if ".tmp" not in f] if runs.exists() else []
        if len(done) >= 2 or proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = [f for f in os.listdir(runs) if ".tmp" not in f]
    assert 2 <= len(finished) < 14, proc.stderr.read()
    total = 7 * 2  # lam 0.5, 0.55, …, 0.8 (7 points) x 2 replications
    rest = study.sweep(MG1, {"lam": "0.5:0.8:0.05"}, replications=2, horizon=20000, jobs=1,
                       out=str(out))
    assert rest.reused == len(finished)
    assert rest.computed == total - len(finished)
    again = study.sweep(MG1, {"lam": "0.5:0.8:0.05"}, replications=2, horizon=20000, jobs=1,
                        out=str(out))
    assert again.computed == 0 and again.tidy.equals(rest.tidy)
