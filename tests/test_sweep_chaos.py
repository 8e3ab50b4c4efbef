"""Issue 26's chaos test of sweeps (slow): a sweep stopped at 20 random moments —
SIGKILL, SIGTERM or SIGINT of its main process, on local worker processes and on
a Dask cluster one of whose workers is killed as well. After each stop no
process of the sweep remains, and running the sweep again gives a summary
byte-identical to the one of a sweep that was never stopped (every finished run
was kept exactly once; nothing partial was read back).

Each Dask store has a cluster of its own, started as a user starts one (`dask
scheduler` and `dask worker --nworkers 2`, each in a process group of its own),
so no stop waits on a worker that an earlier one killed, and no cluster object
of this process watches the workers come and go. (With one
`distributed.LocalCluster` for all trials, CI saw a killed worker not come back
within 180 s, and this machine saw the cluster's watcher fail with a KeyError on
the removal of a worker it had not yet recorded.)
"""
from __future__ import annotations

import contextlib
import json
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


def _stop_once(rng: random.Random, out: str, address: str = "", workers=None,
               connected=None) -> None:
    """Start the sweep into `out`, stop it at a random moment, check that
    none of its processes is left. On Dask (`address`) the moment is counted
    from the sweep's connection to the cluster (`connected()` turns true),
    which comes after its store is locked: counted from the lock, most
    stops came before the sweep had reached the cluster."""
    args = [EXE, "sweep", PROGRAM, "--grid", "lam=0.3:0.7:0.1", "--replications",
            str(REPLICATIONS), "--horizon", HORIZON, "--no-progress", "--out", out]
    args += ["--dask", address] if address else ["--jobs", "2"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True, env=dict(os.environ, SERQ_CACHE_DIR=""))
    sig = rng.choice(SIGNALS)
    started = connected or (lambda: _holder(out) == proc.pid)  # (its store is locked)
    deadline = time.monotonic() + 60  # the moment is counted from the sweep's start
    while not started() and proc.poll() is None and time.monotonic() < deadline:
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
    # stopped by the signal (128 + its number, or -9) or finished first (0); not
    # ended by an error of its own: 1 (e.g. a Dask address nobody answers) or 2
    assert proc.returncode not in (1, 2), err.decode()
    deadline = time.monotonic() + 10
    while _session(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _session(proc.pid), f"processes left after {sig!r}: {_session(proc.pid)}"


@contextlib.contextmanager
def _dask_cluster(folder: str):
    """A scheduler and two worker processes (each under its nanny) on this
    machine, and a client of it; all of them are stopped on leaving."""
    distributed = pytest.importorskip("distributed")
    os.makedirs(folder, exist_ok=True)
    info = os.path.join(folder, "scheduler.json")
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    groups = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler",
                                "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                "--scheduler-file", info], **quiet)]
    try:
        deadline = time.monotonic() + 120
        while not _readable_json(info) and time.monotonic() < deadline:
            time.sleep(0.1)
        groups.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker",
                                        "--scheduler-file", info, "--nworkers", "2",
                                        "--nthreads", "1", "--no-dashboard"], **quiet))
        with distributed.Client(scheduler_file=info, timeout=120) as client:
            client.wait_for_workers(2, timeout=120)
            yield client
    finally:
        for proc in reversed(groups):  # the workers' group first, then the scheduler
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _other_clients(client) -> int:
    """How many clients other than `client` (the stopped sweeps) have connected
    to the scheduler: their "add-client" events are kept after they are gone."""
    return sum(msg.get("action") == "add-client" and msg.get("client") != client.id
               for _, msg in client.get_events("all"))


def _readable_json(path: str) -> bool:
    try:
        with open(path) as f:
            return "address" in json.load(f)
    except (OSError, ValueError):
        return False


def test_stopped_sweeps_leave_no_process_and_rerun_to_the_same_summary(tmp_path):
    """20 stops: each store is stopped twice (the second stop resumes what the
    first left) and then run to its end, which must give the reference's
    summary. (A store run to its end is read back whole by the next sweep,
    which then stops nothing: stores are not used again after their rerun.)
    Stopping each local store twice once found a SIGTERM that came while the
    import system released a lock: Python dropped its exception, printed a
    traceback and the sweep ran on (tests/test_signal_guard.py)."""
    reference = _rerun(str(tmp_path / "reference"))
    rng = random.Random(26)
    for store in range(7):
        out = str(tmp_path / f"local{store}")
        for _ in range(2):
            _stop_once(rng, out)
        assert _rerun(out) == reference, f"store {store}"
    for store in range(3):
        out = str(tmp_path / f"dask{store}")
        with _dask_cluster(str(tmp_path / f"cluster{store}")) as client:
            def workers():  # those that answer (one killed a moment ago may
                pids = client.run(os.getpid, on_error="ignore")  # still be listed),
                return pids if len(pids) > 1 else {}  # but never the last one
            for _ in range(2):
                before = _other_clients(client)
                _stop_once(rng, out, client.scheduler.address, workers,
                           connected=lambda: _other_clients(client) > before)
                client.wait_for_workers(1, timeout=120)  # a worker not killed
            assert _rerun(out, client) == reference, f"dask store {store}"
