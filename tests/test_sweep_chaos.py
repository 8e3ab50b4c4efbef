"""Issue 26's chaos test of sweeps (slow): a sweep stopped at 20 random moments —
SIGKILL, SIGTERM or SIGINT of its main process, on local worker processes and on
a Dask LocalCluster one of whose workers is killed as well. After each stop no
process of the sweep remains, and running the sweep again gives a summary
byte-identical to the one of a sweep that was never stopped (every finished run
was kept exactly once; nothing partial was read back).
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

import serq.study as study

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "hostile", "mm1.sq")
EXE = os.path.join(os.path.dirname(sys.executable), "serq-simpy")
GRID = {"lam": [0.3, 0.4, 0.5, 0.6, 0.7]}
REPLICATIONS = 2
HORIZON = "4000"  # about a tenth of a second per run
SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGINT)

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux /proc")]


def _session(sid: int) -> list[int]:
    """Live processes of session `sid` (the sweep and its workers)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(entry))
    return found


def _holder(out: str) -> int:
    """The process id the store's lock file names (0: none yet)."""
    try:
        with open(os.path.join(out, ".lock")) as f:
            return int(f.read() or 0)
    except (OSError, ValueError):
        return 0


def _rerun(out: str, dask: object = None) -> bytes:
    """The sweep again, uninterrupted: its summary file's bytes."""
    result = study.sweep(PROGRAM, GRID, replications=REPLICATIONS, horizon=float(HORIZON),
                         executor=dask, jobs=1, out=out)
    with open(result.paths["summary"], "rb") as f:
        return f.read()


def _stop_once(rng: random.Random, out: str, address: str = "", workers=None) -> None:
    """Start the sweep into `out`, stop it at a random moment, check that
    none of its processes is left."""
    args = [EXE, "sweep", PROGRAM, "--grid", "lam=0.3:0.7:0.1", "--replications",
            str(REPLICATIONS), "--horizon", HORIZON, "--quiet", "--out", out]
    args += ["--dask", address] if address else ["--jobs", "2"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True, env=dict(os.environ, SERQ_CACHE_DIR=""))
    sig = rng.choice(SIGNALS)
    deadline = time.monotonic() + 60  # the moment is counted from the sweep's start:
    while _holder(out) != proc.pid and time.monotonic() < deadline:  # its store is locked
        time.sleep(0.05)
    time.sleep(rng.uniform(0.0, 3.0))
    if workers is not None:  # a Dask worker dies too (its nanny starts another)
        pids = list(workers().values())
        if pids:
            os.kill(rng.choice(pids), signal.SIGKILL)
    if proc.poll() is None:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err, err.decode()
    deadline = time.monotonic() + 10
    while _session(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _session(proc.pid), f"processes left after {sig!r}: {_session(proc.pid)}"


def test_stopped_sweeps_leave_no_process_and_rerun_to_the_same_summary(tmp_path):
    reference = _rerun(str(tmp_path / "reference"))
    rng = random.Random(26)
    for trial in range(14):
        out = str(tmp_path / f"local{trial % 3}")  # some stores are stopped again and again
        _stop_once(rng, out)
        assert _rerun(out) == reference, f"trial {trial}"
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        def workers():
            return client.run(os.getpid)
        for trial in range(6):
            out = str(tmp_path / f"dask{trial % 2}")
            _stop_once(rng, out, cluster.scheduler_address, workers)
            client.wait_for_workers(2, timeout=180)  # the nanny restarts a killed worker; slow on a loaded machine
            assert _rerun(out, client) == reference, f"dask trial {trial}"
