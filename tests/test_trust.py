"""Issue 26: studies and inputs that a careful or a hostile user hands serq-simpy.

Each reproducer of the issue runs as a command (the console script, so the
working directory is not put first on `sys.path`) and must end with a message,
no traceback, a non-zero exit status where it failed, within 5 s of CPU time and
200 MB of memory (`os.wait4`'s usage of the child). The inputs are in
tests/hostile/ (README.md there); store states are made here.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

import pytest

import serq.study as study
from serq.study import executors
from serq.study.inputs import with_reads
from serq.study.store import Store, StoreError

HERE = os.path.dirname(os.path.abspath(__file__))
HOSTILE = os.path.join(HERE, "hostile")
EXE = os.path.join(os.path.dirname(sys.executable), "serq-simpy")
CPU_SECONDS = 5.0
MEGABYTES = 200.0


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    cpu: float
    mb: float
    wall: float


#: Runs a command and reports its own CPU time and peak memory. Linux keeps
#: a process's peak resident memory across fork and exec, so a command
#: started from this (large) test process would report at least the test
#: process's size; started from this small launcher it reports its own.
_LAUNCHER = """
import json, os, signal, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
def forward(n, _frame):
    os.kill(pid, n)
for n in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1):
    signal.signal(n, forward)
while True:
    try:
        _pid, status, ru = os.wait4(pid, 0)
        break
    except InterruptedError:
        continue
with open(sys.argv[1], "w") as fh:
    json.dump([ru.ru_utime + ru.ru_stime, ru.ru_maxrss], fh)
if os.WIFSIGNALED(status):
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def cli(*args: str, cwd: str, timeout: float = 60.0, signals: tuple = (),
        cache: str = "") -> Outcome:
    """Run `serq-simpy ARGS` in `cwd` (with the program cache in `cache`, by
    default off); `signals`: (seconds, signal) sent to it."""
    env = dict(os.environ, SERQ_CACHE_DIR=cache)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryDirectory() as scratch:
        usage_file = os.path.join(scratch, "usage.json")
        start = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-S", "-c", _LAUNCHER, usage_file, EXE, *args],
                                cwd=cwd, stdout=out, stderr=err, env=env,
                                start_new_session=True)
        timers = [threading.Timer(t, os.kill, (proc.pid, s)) for t, s in signals]
        timers.append(threading.Timer(timeout, os.killpg, (proc.pid, signal.SIGKILL)))
        for t in timers:
            t.start()
        proc.wait()
        for t in timers:
            t.cancel()
        wall = time.monotonic() - start
        cpu, maxrss = 0.0, 0
        if os.path.exists(usage_file):
            with open(usage_file) as fh:
                cpu, maxrss = json.load(fh)
        out.seek(0)
        err.seek(0)
        return Outcome(proc.returncode, out.read().decode(), err.read().decode(),
                       cpu, maxrss / 1024, wall)


def fails_cleanly(r: Outcome, code: int = 1) -> None:
    """A message, no traceback, the exit status, in bounded CPU time and memory."""
    assert r.code == code, (r.code, r.err)
    assert r.err.strip() and "Traceback" not in r.err, r.err
    assert r.cpu < CPU_SECONDS and r.mb < MEGABYTES, (r.cpu, r.mb)


@pytest.fixture
def hostile(tmp_path):
    """A private copy of tests/hostile/."""
    dst = tmp_path / "hostile"
    shutil.copytree(HOSTILE, dst)
    return dst


# -- 1. a run is keyed by everything it reads -------------------------------------------

def _key(path, **kw) -> str:
    spec = study.ProgramSpec.make(str(path), **kw)
    return with_reads(spec).key(1)


def test_keys_change_with_exactly_the_files_a_run_reads(hostile):
    lib, trace = hostile / "mm1_lib.sq", hostile / "turns.csv"
    policy = hostile / "shadow" / "mypolicy.py"
    plain, uses_lib, traced = hostile / "mm1.sq", hostile / "mm1_uses_lib.sq", \
        hostile / "trace_mm1.sq"
    pooled = hostile / "pooled.sq"
    pol = {"slots": f"{policy}:Plain"}
    before = {p: _key(p) for p in (plain, uses_lib, traced, pooled)}
    before["policy"] = _key(pooled, policies=pol)
    lib.write_text(lib.read_text().replace("1.0", "0.1"))
    assert _key(uses_lib) != before[uses_lib]
    assert _key(plain) == before[plain] and _key(traced) == before[traced]
    trace.write_text(trace.read_text().replace("1500", "150"))
    assert _key(traced) != before[traced]
    assert _key(plain) == before[plain] and _key(pooled) == before[pooled]
    policy.write_text(policy.read_text() + "\n# edited\n")
    assert _key(pooled, policies=pol) != before["policy"]
    assert _key(pooled) == before[pooled]


def test_a_library_edit_is_not_read_back_from_the_store(hostile, tmp_path):
    out = str(tmp_path / "out")
    prog = str(hostile / "mm1_uses_lib.sq")
    first = study.sweep(prog, {"lam": [0.3, 0.5]}, jobs=1, out=out)
    lib = hostile / "mm1_lib.sq"
    lib.write_text(lib.read_text().replace("1.0", "0.1"))
    second = study.sweep(prog, {"lam": [0.3, 0.5]}, jobs=1, out=out)
    assert second.computed == 2 and second.reused == 0
    def mean(r):
        s = r.summary
        return s[(s.section == "observe") & (s.name == "response")
                 & (s.statistic == "mean")]["mean"].tolist()
    assert all(b < a / 3 for a, b in zip(mean(first), mean(second)))  # service 10× shorter


# -- 2. damaged stores --------------------------------------------------------------------

def _sweep(out, **kw):
    return study.sweep(os.path.join(HOSTILE, "mm1.sq"), {"lam": [0.3, 0.5, 0.7]},
                       jobs=1, out=str(out), **kw)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_damaged_run_files_are_recomputed_with_a_warning(tmp_path, monkeypatch, fmt):
    from serq.study import store as store_mod
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    monkeypatch.setattr(store_mod, "has_pyarrow", lambda: fmt == "parquet")
    first = _sweep(tmp_path)
    runs = sorted((tmp_path / "runs").iterdir())
    assert len(runs) == 3 and all(p.suffix == f".{fmt}" for p in runs)
    data = runs[0].read_bytes()
    runs[0].write_bytes(data[:len(data) // 2])  # truncated
    runs[1].write_bytes(b"PAR1 garbage" * 10)     # garbage
    warned: list[str] = []
    second = _sweep(tmp_path, warn=warned.append)
    assert second.computed == 2 and second.reused == 1
    assert sorted(w.split(":")[0] for w in warned) == [str(runs[0]), str(runs[1])]
    assert second.summary.equals(first.summary)
    third = _sweep(tmp_path, warn=warned.append)
    assert third.computed == 0 and len(warned) == 2


def test_a_run_file_with_the_wrong_columns_is_recomputed(tmp_path):
    first = _sweep(tmp_path)
    store = Store(str(tmp_path), fmt="csv")
    victim = sorted((tmp_path / "runs").iterdir())[0]
    key = victim.name.split("-")[0]
    victim.unlink()
    import pandas as pd
    store.write_run(key, pd.DataFrame({"a": [1.0]}))  # a whole file, not a run's
    warned: list[str] = []
    second = _sweep(tmp_path, warn=warned.append)
    assert second.computed == 1 and "columns" in warned[0]
    assert second.summary.equals(first.summary)


def test_store_states_that_are_not_a_sweeps_get_messages(tmp_path):
    prog = os.path.join(HOSTILE, "mm1.sq")
    sweep = ("sweep", prog, "--grid", "lam=0.3,0.5", "--jobs", "1", "--quiet")
    out = tmp_path / "out"
    assert cli(*sweep, "--out", str(out), cwd=str(tmp_path)).code == 0
    run_file = sorted((out / "runs").iterdir())[0]
    run_file.unlink()
    run_file.mkdir()  # a folder where a run file belongs
    r = cli(*sweep, "--out", str(out), cwd=str(tmp_path))
    fails_cleanly(r)
    assert run_file.name in r.err and "folder" in r.err
    run_file.rmdir()
    (out / "sweep.json").write_text("[1, 2, 3]")  # not a sweep's description
    for args in (sweep + ("--out", str(out)), ("summary", str(out))):
        r = cli(*args, cwd=str(tmp_path))
        fails_cleanly(r)
        assert "sweep.json" in r.err and "not a sweep" in r.err
    (tmp_path / "file").write_text("x")
    r = cli(*sweep, "--out", str(tmp_path / "file"), cwd=str(tmp_path))
    fails_cleanly(r)
    assert "directory" in r.err


# -- 4. one sweep at a time, and no silent replacement --------------------------------------

def test_a_store_in_use_is_refused(tmp_path):
    holder = Store(str(tmp_path))
    holder.lock()
    try:
        with pytest.raises(StoreError, match="another sweep is writing"):
            _sweep(tmp_path)
    finally:
        holder.unlock()
    assert _sweep(tmp_path).computed == 3


def test_another_grid_is_refused_unless_extended_or_replaced(tmp_path):
    prog = os.path.join(HOSTILE, "mm1.sq")
    first = study.sweep(prog, {"lam": [0.3, 0.5]}, jobs=1, out=str(tmp_path))
    with pytest.raises(StoreError, match="holds another sweep.*grid"):
        study.sweep(prog, {"lam": [0.5, 0.7]}, jobs=1, out=str(tmp_path))
    manifest = json.loads((tmp_path / "sweep.json").read_text())
    assert manifest["grid"] == {"lam": [0.3, 0.5]}  # untouched
    ext = study.sweep(prog, {"lam": [0.5, 0.7]}, jobs=1, out=str(tmp_path), store_mode="extend")
    assert ext.reused == 1 and ext.computed == 1
    assert len(os.listdir(tmp_path / "runs")) == 3
    rep = study.sweep(prog, {"lam": [0.3]}, jobs=1, out=str(tmp_path), store_mode="replace")
    assert rep.computed == 1 and len(os.listdir(tmp_path / "runs")) == 1
    assert rep.summary.equals(first.summary[first.summary.lam == 0.3].reset_index(drop=True))


# -- 5. summary and plot of a CSV store ------------------------------------------------------

def test_summary_and_plot_read_a_csv_store(tmp_path):
    out = tmp_path / "out"
    r = cli("sweep", os.path.join(HOSTILE, "mm1.sq"), "--grid", "lam=0.3,0.5", "--jobs", "1",
            "--quiet", "--out", str(out), cwd=str(tmp_path))
    assert r.code == 0, r.err
    import pandas as pd
    for name in ("summary", "results"):  # as a store without pyarrow has them
        parquet = out / f"{name}.parquet"
        if parquet.exists():
            pd.read_parquet(parquet).to_csv(out / f"{name}.csv", index=False)
            parquet.unlink()
    r = cli("summary", str(out), cwd=str(tmp_path))
    assert r.code == 0 and "lam" in r.out and "response" in r.out, r.err
    r = cli("plot", str(out), "--y", "response", "--out", str(tmp_path / "f.png"),
            cwd=str(tmp_path))
    assert r.code == 0 and (tmp_path / "f.png").stat().st_size > 0, r.err


# -- 3, 8. policies that corrupt, escape, hang -------------------------------------------------

@pytest.mark.parametrize("policy, words", [
    ("corrupt.py:NegativeUsed", "NegativeUsed.has_room of pool `slots` left the pool with "
                                "-999999741 units used"),
    ("corrupt.py:BiggerCap", "BiggerCap.select_candidate of pool `slots` changed the pool's cap"),
    ("escapes.py:ExitsZero", "ExitsZero.has_room of pool `slots` raised SystemExit"),
    ("escapes.py:ExitsInInit", "ExitsInInit.__init__ of a pool raised SystemExit"),
])
def test_policies_that_break_the_runtime_get_a_policy_error(hostile, policy, words):
    r = cli("run", "pooled.sq", "--policy", f"slots=policies/{policy}", cwd=str(hostile))
    fails_cleanly(r)
    assert words in r.err and not r.out


@pytest.mark.parametrize("policy", ["Sleeps", "Spins"])
def test_a_policy_call_that_does_not_return_is_diagnosed(hostile, policy):
    r = cli("run", "pooled.sq", "--policy", f"slots=policies/escapes.py:{policy}",
            cwd=str(hostile), timeout=30)
    assert r.code == 1 and "Traceback" not in r.err, r.err
    assert f"policy {policy}.has_room of pool `slots` did not return within" in r.err
    assert r.mb < MEGABYTES and r.wall < 20


def test_the_first_ctrl_c_stops_a_sleeping_policy(hostile):
    r = cli("run", "pooled.sq", "--policy", "slots=policies/escapes.py:Sleeps",
            cwd=str(hostile), timeout=30, signals=((1.5, signal.SIGINT),))
    assert r.code == 130 and "Traceback" not in r.err and "interrupted" in r.err, r.err
    assert r.wall < 10


def test_a_policy_thread_does_not_keep_the_command_alive(hostile):
    r = cli("run", "pooled.sq", "--policy", "slots=policies/escapes.py:StartsThread",
            cwd=str(hostile), timeout=30)
    assert r.code == 0 and r.out.startswith("run:") and "policy-thread" in r.err, r.err
    assert r.wall < 20


# -- 6. usage errors, odd numbers ----------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (("sweep", "mm1.sq", "--grid", "lam=nan:1:0.1"), "finite"),
    (("sweep", "mm1.sq", "--grid", "lam=0:inf:1"), "finite"),
    (("sweep", "mm1.sq", "--grid", "lam=0:1e999999999:1"), "more than"),
    (("run", "mm1.sq", "--replications", "2", "--precision", "0.1", "--observe", "response",
      "--max-horizon", "-5"), "horizon"),
    (("run", "mm1.sq", "--dump", ""), "empty"),
])
def test_bad_options_are_usage_errors(hostile, args, words):
    r = cli(*args, cwd=str(hostile))
    fails_cleanly(r, code=2)
    assert words in r.err


def test_summary_of_an_unknown_statistic_is_a_usage_error(tmp_path):
    out = tmp_path / "out"
    cli("sweep", os.path.join(HOSTILE, "mm1.sq"), "--grid", "lam=0.3,0.5", "--jobs", "1",
        "--quiet", "--out", str(out), cwd=str(tmp_path))
    r = cli("summary", str(out), "--y", "stage.svc:bogus", cwd=str(tmp_path))
    fails_cleanly(r, code=2)
    assert "bogus" in r.err and "utilization" in r.err


def test_a_trace_with_a_byte_order_mark_is_read(hostile):
    with_bom = cli("run", "trace_mm1.sq", "--trace", "bom.csv", "--json", cwd=str(hostile))
    assert with_bom.code == 0, with_bom.err
    (hostile / "plain.csv").write_bytes((hostile / "bom.csv").read_bytes()[3:])
    plain = cli("run", "trace_mm1.sq", "--trace", "plain.csv", "--json", cwd=str(hostile))
    assert json.loads(with_bom.out)["observes"] == json.loads(plain.out)["observes"]


@pytest.mark.parametrize("trace, column", [("inf_amount.csv", "column 4 (out)"),
                                           ("huge_amount.csv", "column 3 (new)")])
def test_trace_amounts_that_never_finish_are_refused(hostile, trace, column):
    r = cli("run", "trace_mm1.sq", "--trace", trace, cwd=str(hostile))
    fails_cleanly(r)
    assert f"{trace}: line 2: {column}" in r.err and "finite" in r.err


def test_running_out_of_memory_is_a_message(monkeypatch, capsys):
    import serq.api
    from serq.cli import main

    def huge(*a, **k):  # what numpy raises under `ulimit -v`: a MemoryError
        raise type("_ArrayMemoryError", (MemoryError,), {})("Unable to allocate 8.0 TiB")
    monkeypatch.setattr(serq.api, "run", huge)
    assert main(["run", os.path.join(HOSTILE, "mm1.sq")]) == 1
    err = capsys.readouterr().err
    assert "out of memory" in err and "Traceback" not in err


# -- 10, 11. inputs that read the machine -------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("check", "reads_zero.sq"), ("run", "/dev/zero"), ("run", "mm1.sq", "--workload", "/dev/zero"),
    ("run", "trace_mm1.sq", "--trace", "/dev/zero"), ("run", "/"),
])
def test_devices_are_refused_before_they_are_read(hostile, args):
    r = cli(*args, cwd=str(hostile), timeout=30)
    fails_cleanly(r)
    assert "not a file" in r.err or "folder" in r.err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_library_that_is_a_pipe_is_refused(hostile):
    os.mkfifo(hostile / "pipe.sq")
    (hostile / "main.sq").write_text('use "pipe.sq";\nstage s : fifo;\n')
    r = cli("check", "main.sq", cwd=str(hostile), timeout=30)
    fails_cleanly(r)
    assert "named pipe" in r.err


@pytest.mark.parametrize("program, secret", [
    ("reads_passwd.sq", "root:"),
    ("reads_environ.sq", "SERQ_CACHE_DIR="),
])
def test_errors_do_not_echo_files_that_are_not_programs(hostile, program, secret):
    if not os.path.exists(open(hostile / program).read().split('"')[1]):
        pytest.skip("no such system file here")
    r = cli("check", program, cwd=str(hostile))
    fails_cleanly(r)
    assert secret not in r.err and "content is not shown" in r.err


def test_trace_errors_quote_csv_files_only(hostile):
    (hostile / "turns.txt").write_text("session,turn,new,out,think\n0,0,secret,1,0\n")
    r = cli("run", "trace_mm1.sq", "--trace", "turns.txt", cwd=str(hostile))
    fails_cleanly(r)
    assert "secret" not in r.err and "line 2: column 3 (new)" in r.err


# -- 12. memory bounded before the run ----------------------------------------------------------

def test_a_trace_over_the_limit_is_refused_unread(hostile):
    with open(hostile / "big.csv", "wb") as f:
        f.truncate(200 * 2 ** 20)  # 200 MiB (sparse: nothing to read)
    for cache in ("", str(hostile / "cache")):  # (the program cache hashes what is read)
        r = cli("run", "trace_mm1.sq", "--trace", "big.csv", "--max-memory", "500",
                cwd=str(hostile), cache=cache)
        fails_cleanly(r)
        assert "200.0 MiB, more than a trace's 16 MiB" in r.err


@pytest.mark.parametrize("args, words", [
    (("sweep", "mm1.sq", "--grid", "lam=0:99999:1", "--grid", "mu=0:99999:1"),
     "10000000000 points"),
    (("sweep", "mm1.sq", "--grid", "lam=0.3,0.5", "--replications", "1000000000"),
     "2000000000 runs"),
    (("run", "mm1.sq", "--replications", "1000000000"), "1000000000 replications"),
])
def test_plans_too_large_are_refused_before_anything_runs(hostile, args, words):
    r = cli(*args, cwd=str(hostile))
    fails_cleanly(r, code=2)
    assert words in r.err


def test_jobs_are_capped():
    ex = executors.resolve(None, 1000, 10_000)
    try:
        assert ex.pool._max_workers == executors.max_jobs() <= max(4, 2 * os.cpu_count())
    finally:
        ex.close()


def test_large_program_cache_entries_are_not_written(tmp_path, monkeypatch):
    from serq.cli import program_cache
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    prog = os.path.join(HOSTILE, "mm1.sq")
    program_cache.load(prog)
    assert len(os.listdir(tmp_path / "cache" / "programs")) == 1
    shutil.rmtree(tmp_path / "cache" / "programs")
    monkeypatch.setattr(program_cache, "MAX_ENTRY_BYTES", 100)
    program_cache.load(prog)
    assert not os.path.exists(tmp_path / "cache" / "programs") or \
        not os.listdir(tmp_path / "cache" / "programs")


# -- 13. policies imported without shadowing installed packages ---------------------------------

def test_a_policy_beside_a_pandas_py_does_not_replace_pandas(hostile):
    r = cli("sweep", "../pooled.sq", "--grid", "lam=0.5,1", "--jobs", "1", "--quiet",
            "--policy", "slots=mypolicy:Plain", cwd=str(hostile / "shadow"))
    assert r.code == 0 and "pandas.py was imported" not in r.err, r.err


# -- 7. signals and orphaned workers ------------------------------------------------------------

def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pids: list[int]) -> list[int]:
    left = []
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    left.append(p)
        except OSError:
            pass
    return left


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_workers_end_with_their_sweep(hostile, tmp_path, sig):
    out = tmp_path / "out"
    proc = subprocess.Popen([EXE, "sweep", "mm1.sq", "--grid", "lam=0.5,0.6,0.7", "--jobs",
                             "2", "--quiet", "--horizon", "1e8", "--out", str(out)],
                            cwd=str(hostile), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=dict(os.environ, SERQ_CACHE_DIR=""))
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
        workers = _children(proc.pid)
    assert len(workers) >= 2
    time.sleep(0.5)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while _alive(workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(workers)
    if sig == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM and b"Traceback" not in err, err


# -- 9. a Dask address that never answers --------------------------------------------------------

def test_a_dask_address_that_never_speaks_times_out(hostile):
    pytest.importorskip("distributed")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    try:
        r = cli("run", "mm1.sq", "--replications", "2", "--dask", f"tcp://127.0.0.1:{port}",
                cwd=str(hostile), timeout=60)
    finally:
        server.close()
    fails_cleanly(r)
    assert "no Dask scheduler answered within" in r.err and r.wall < 30
