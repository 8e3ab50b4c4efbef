"""The study store (`serq/study/store.py`) on its own, without a sweep: the
layout its module docstring documents (`runs/<key>-<check>.<fmt>` with a
16-hex-digit check of the file's bytes, `sweep.json`, the assembled
frames), the lock, damaged files and the refusals. Written for the
mutation run of issue 27 (the sweep tests reach the store only through
whole sweeps, seconds each); every expected value is the documented
behaviour, stated in each test."""
from __future__ import annotations

import json
import math
import os
import stat

import pandas as pd
import pytest

from serq.core.caches import digest
from serq.study import store as store_mod
from serq.study.store import (RUN_COLUMNS, Store, StoreError, frame_bytes, has_pyarrow,
                              latest_frame, read_frame, read_manifest)

MANIFEST = {"program": "p", "grid": {"lam": [0.5]}, "replications": 2, "base_seed": 1}


def run_frame(value: float = 0.25, error=None, lam: float = 0.5) -> pd.DataFrame:
    """One run's rows: the grid parameter `lam`, then `RUN_COLUMNS`."""
    return pd.DataFrame({"lam": [lam], "key": ["k"], "seed": [1], "section": ["observe"],
                         "name": ["w"], "statistic": ["mean"], "value": [value],
                         "error": [error]})


def test_a_file_where_the_directory_belongs_is_refused(tmp_path):
    (tmp_path / "out").write_text("x")
    with pytest.raises(StoreError, match="--out must be a directory"):
        Store(str(tmp_path / "out"))


def test_the_default_format_is_parquet_when_pyarrow_is_installed(tmp_path):
    assert has_pyarrow()  # (the test extras install pyarrow)
    assert Store(str(tmp_path)).fmt == "parquet"
    assert Store(str(tmp_path), fmt="csv").fmt == "csv"


def test_without_pyarrow_the_format_is_csv(tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` raises ImportError
    assert not has_pyarrow()
    assert Store(str(tmp_path)).fmt == "csv"


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_run_is_written_under_its_key_and_check_and_read_back_exactly(tmp_path, fmt):
    """`runs/<key>-<check>.<fmt>`, the check the first 16 hex digits of the
    BLAKE2b digest of the file's bytes; floats come back bit for bit."""
    st = Store(str(tmp_path), fmt=fmt)
    frame = run_frame(0.1 + 0.2)
    st.write_run("abc", frame)
    data = frame_bytes(frame, fmt)
    name = f"abc-{digest(data)[:16]}.{fmt}"
    assert os.listdir(st.runs) == [name]
    assert st.find("abc") == os.path.join(st.runs, name)
    back = st.read_run(st.find("abc"))
    assert list(back.columns) == ["lam"] + RUN_COLUMNS
    assert back["value"][0] == 0.1 + 0.2 and back["error"][0] is None
    # a second store on the same directory lists the file from the disk
    assert Store(str(tmp_path), fmt=fmt).find("abc") == os.path.join(st.runs, name)


def test_the_csv_file_is_plain_csv_without_an_index(tmp_path):
    st = Store(str(tmp_path), fmt="csv")
    st.write_run("k", run_frame(0.5))
    text = open(st.find("k"), encoding="utf-8").read()
    assert text.splitlines() == ["lam,key,seed,section,name,statistic,value,error",
                                 "0.5,k,1,observe,w,mean,0.5,"]


def test_the_parquet_file_holds_no_index():
    import pyarrow.parquet as pq
    import io
    schema = pq.read_schema(io.BytesIO(frame_bytes(run_frame(), "parquet")))
    assert schema.names == ["lam"] + RUN_COLUMNS
    assert schema.pandas_metadata["index_columns"] == []


def test_the_latest_write_of_a_key_is_found_first(tmp_path):
    """A key written again (another frame, another check) is found as its
    latest file, however many files it has."""
    st = Store(str(tmp_path), fmt="csv")
    for v in (1.0, 2.0, 3.0):
        st.write_run("k", run_frame(v))
        assert st.read_run(st.find("k"))["value"][0] == v


def test_only_names_of_run_files_are_listed(tmp_path):
    """Only `<key>-<16 hex digits>.parquet|csv` is a run file."""
    st = Store(str(tmp_path))
    check = "0123456789abcdef"
    for name in ["k1", f"k2-{check}", f"k3-{check}.txt", f"k4-{check[:15]}.csv",
                 f"k5-{check}0.csv", f"k6{check}.csv", f"k7-{check}.csv",
                 f"k8-{check}.parquet"]:
        (tmp_path / "runs" / name).write_text("")
    assert {k: v for k, v in st._listing().items()} == {
        "k7": [f"k7-{check}.csv"], "k8": [f"k8-{check}.parquet"]}
    assert st.find("k2") is None and st.find("k9") is None


def test_a_folder_named_as_a_run_file_is_refused(tmp_path):
    st = Store(str(tmp_path), fmt="csv")
    frame = run_frame()
    name = f"k-{digest(frame_bytes(frame, 'csv'))[:16]}.csv"
    os.mkdir(os.path.join(st.runs, name))
    with pytest.raises(StoreError, match="a folder where a run file belongs; remove it$"):
        st.write_run("k", frame)
    with pytest.raises(StoreError, match=r"a folder where a run file belongs; remove it \(the run"):
        Store(str(tmp_path), fmt="csv").find("k")


def _damaged(tmp_path, content: bytes, name: str | None = None):
    st = Store(str(tmp_path), fmt="csv")
    warned: list[str] = []
    st.warn = warned.append
    path = os.path.join(st.runs, name or f"k-{digest(content)[:16]}.csv")
    with open(path, "wb") as fh:
        fh.write(content)
    return st, path, warned


@pytest.mark.parametrize("content, why", [
    (b"lam,key\n1,2\n", "its columns are not a run file's"),
    (b"\x00\xff\xfe", "does not read as a run file"),
])
def test_a_damaged_run_file_is_reported_removed_and_forgotten(tmp_path, content, why):
    st, path, warned = _damaged(tmp_path, content)
    assert st.find("k") == path
    assert st.read_run(path) is None
    assert len(warned) == 1 and warned[0].startswith(f"{path}: {why}")
    assert warned[0].endswith("; the run is computed again")
    assert not os.path.exists(path) and st.find("k") is None


def test_a_file_whose_bytes_do_not_match_its_check_is_damaged(tmp_path):
    good = frame_bytes(run_frame(), "csv")
    st, path, warned = _damaged(tmp_path, good[:-3], f"k-{digest(good)[:16]}.csv")
    assert st.read_run(path) is None
    assert warned == [f"{path}: its bytes do not match its check (a partial or damaged "
                      "file); the run is computed again"]
    assert not os.path.exists(path)


def test_a_run_file_that_cannot_be_read_is_reported(tmp_path):
    st = Store(str(tmp_path), fmt="csv")
    warned: list[str] = []
    st.warn = warned.append
    path = os.path.join(st.runs, "k-0123456789abcdef.csv")
    assert st.read_run(path) is None
    assert warned == [f"{path}: cannot be read (No such file or directory); "
                      "the run is computed again"]


def test_discard_forgets_only_that_file(tmp_path):
    """(A store whose listing was first read by `write_run` listed the new
    file twice, and `discard` forgot it once: `find` then named a removed
    file. Fixed with this test.)"""
    st = Store(str(tmp_path), fmt="csv")
    st.write_run("a", run_frame(1.0))
    st.write_run("b", run_frame(2.0))
    st.discard(st.find("a"))
    assert st.find("a") is None and st.read_run(st.find("b"))["value"][0] == 2.0
    assert len(os.listdir(st.runs)) == 1


def test_the_lock_is_exclusive_and_given_back(tmp_path):
    """One sweep at a time: a second store on the directory is refused with
    the holder's process id; after `unlock` it may take the lock. The lock
    file is `.lock`, mode 0644 (less the umask)."""
    a, b = Store(str(tmp_path)), Store(str(tmp_path))
    a.lock()
    path = tmp_path / ".lock"
    assert path.read_text() == str(os.getpid())
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644 & ~umask
    with pytest.raises(StoreError, match=rf"another sweep is writing this directory "
                                         rf"\(process {os.getpid()}\); wait"):
        b.lock()
    a.unlock()
    assert a._lock_fd is None
    a.unlock()  # twice is harmless
    b.lock()
    b.unlock()


def test_a_lock_file_read_for_the_message_is_cut_at_32_bytes(tmp_path):
    a, b = Store(str(tmp_path)), Store(str(tmp_path))
    a.lock()
    (tmp_path / ".lock").write_text("9" * 40)
    with pytest.raises(StoreError, match=r"\(process 9{32}\)"):
        b.lock()
    (tmp_path / ".lock").write_text("")
    with pytest.raises(StoreError, match=r"\(process another process\)"):
        b.lock()
    a.unlock()


def test_the_lock_overwrites_an_older_holder_id(tmp_path):
    (tmp_path / ".lock").write_text("9" * 20)
    st = Store(str(tmp_path))
    st.lock()
    assert (tmp_path / ".lock").read_text() == str(os.getpid())
    st.unlock()


def test_the_lock_removes_the_temporary_files_of_dead_writers(tmp_path):
    """`_write_bytes` writes `<path>.tmp<pid>`: such files, in the store and
    in `runs/`, are a writer's that died before its rename; others stay."""
    st = Store(str(tmp_path))
    dead = [tmp_path / "results.csv.tmp123", tmp_path / "runs" / "k-x.csv.tmp9"]
    kept = [tmp_path / "notes.tmpx", tmp_path / ".tmp123", tmp_path / "runs" / "a.tmp"]
    for f in dead + kept:
        f.write_text("")
    st.lock()
    st.unlock()
    assert [f.exists() for f in dead] == [False, False]
    assert [f.exists() for f in kept] == [True, True, True]


def test_write_frame_and_manifest(tmp_path):
    st = Store(str(tmp_path), fmt="csv")
    path = st.write_frame("summary", pd.DataFrame({"a": [1.5]}))
    assert path == os.path.join(str(tmp_path), "summary.csv")
    assert open(path).read() == "a\n1.5\n"
    st.write_manifest(MANIFEST)
    # `json.dumps(…, indent=1)`, the layout stores have been written in
    assert (tmp_path / "sweep.json").read_text() == (
        '{\n "program": "p",\n "grid": {\n  "lam": [\n   0.5\n  ]\n },\n'
        ' "replications": 2,\n "base_seed": 1\n}')
    assert read_manifest(str(tmp_path)) == MANIFEST
    assert sorted(os.listdir(tmp_path)) == ["runs", "summary.csv", "sweep.json"]


def test_a_folder_where_a_frame_belongs_is_refused_and_leaves_no_temporary(tmp_path):
    st = Store(str(tmp_path), fmt="csv")
    os.mkdir(tmp_path / "results.csv")
    with pytest.raises(StoreError, match="results.csv: a folder where a file belongs"):
        st.write_frame("results", pd.DataFrame({"a": [1]}))
    assert sorted(os.listdir(tmp_path)) == ["results.csv", "runs"]


def test_prepare_refuses_another_sweep_naming_what_differs(tmp_path):
    st = Store(str(tmp_path))
    st.prepare(MANIFEST)  # a fresh store takes any sweep
    st.prepare(dict(MANIFEST, seed_rule="x"))  # the seed rule is not compared
    with pytest.raises(StoreError, match=r"\(its grid differs\): --extend"):
        st.prepare(dict(MANIFEST, grid={"lam": [0.7]}))
    with pytest.raises(StoreError, match=r"\(its program, grid differ\): --extend"):
        st.prepare(dict(MANIFEST, program="q", grid={"lam": [0.7]}))
    with pytest.raises(StoreError, match=r"\(its program, grid, replications differ\)"):
        st.prepare(dict(MANIFEST, program="q", grid={}, replications=3))
    st.prepare(dict(MANIFEST, grid={"lam": [0.7]}), mode="extend")
    assert read_manifest(str(tmp_path))["grid"] == {"lam": [0.7]}


def test_prepare_replace_removes_runs_and_assembled_frames(tmp_path):
    st = Store(str(tmp_path), fmt="csv")
    st.prepare(MANIFEST)
    st.write_run("k", run_frame())
    os.mkdir(os.path.join(st.runs, "stray"))
    for name in ("results.csv", "summary.parquet", "errors.csv", "notes.csv"):
        (tmp_path / name).write_text("")
    st.prepare(dict(MANIFEST, grid={"lam": [0.7]}), mode="replace")
    assert os.listdir(st.runs) == [] and st.find("k") is None
    assert sorted(os.listdir(tmp_path)) == ["notes.csv", "runs", "sweep.json"]


@pytest.mark.parametrize("content, message", [
    (None, "no sweep.json (not a sweep's results directory"),
    (b"{", "sweep.json: not a sweep's description (Expecting"),
    (b"[1]", "sweep.json: not a sweep's description (it has no grid"),
    (json.dumps({k: 1 for k in ("program", "grid", "replications")}).encode(),
     "it has no grid"),
    (json.dumps({"program": "p", "grid": {}, "replications": 1}).encode(), "it has no grid"),
    (json.dumps({k: 1 for k in ("program", "grid", "replications", "base_seed")}).encode(),
     "it has no grid"),
])
def test_a_manifest_that_is_not_a_sweeps_is_refused(tmp_path, content, message):
    if content is not None:
        (tmp_path / "sweep.json").write_bytes(content)
    with pytest.raises(StoreError, match=message.replace("(", r"\(")):
        read_manifest(str(tmp_path))


def test_a_manifest_folder_is_refused(tmp_path):
    os.mkdir(tmp_path / "sweep.json")
    with pytest.raises(StoreError, match="sweep.json: a folder, not a sweep's description"):
        read_manifest(str(tmp_path))


@pytest.mark.parametrize("mib, whole", [(15, True), (17, False)])
def test_a_manifest_is_read_up_to_16_mib(tmp_path, mib, whole):
    """`read_manifest` reads at most 2**24 bytes (a hostile file is not read
    whole): a larger one is cut, and is then no JSON."""
    text = json.dumps(dict(MANIFEST, program="x" * (mib << 20)))
    (tmp_path / "sweep.json").write_text(text)
    if whole:
        assert read_manifest(str(tmp_path))["program"] == "x" * (mib << 20)
    else:
        with pytest.raises(StoreError, match="not a sweep's description"):
            read_manifest(str(tmp_path))


def test_read_frame_keeps_strings_and_reads_floats_exactly(tmp_path):
    """CSV: `value` as written (float() reads back every double, an empty
    cell is NaN), `error` as text (`NA` is an error's text, not a missing
    value; an empty cell is None)."""
    path = tmp_path / "f.csv"
    path.write_text("key,value,error\nNA,0.30000000000000004,NA\nb,,\n")
    frame = read_frame(str(path))
    assert list(frame["key"]) == ["NA", "b"]
    assert frame["value"][0] == 0.30000000000000004 and math.isnan(frame["value"][1])
    assert frame["error"][0] == "NA" and pd.isna(frame["error"][1])
    assert read_frame(str(path), path.read_bytes()).equals(frame)
    plain = tmp_path / "g.csv"
    plain.write_text("a\n1\n")
    assert list(read_frame(str(plain)).columns) == ["a"]


def test_latest_frame_prefers_parquet_and_names_what_is_missing(tmp_path):
    Store(str(tmp_path), fmt="csv").write_frame("summary", pd.DataFrame({"a": [1.0]}))
    assert latest_frame(str(tmp_path), "summary")["a"][0] == 1.0
    Store(str(tmp_path), fmt="parquet").write_frame("summary", pd.DataFrame({"a": [2.0]}))
    assert latest_frame(str(tmp_path), "summary")["a"][0] == 2.0
    with pytest.raises(StoreError, match=r"no results.parquet or results.csv \(the sweep"):
        latest_frame(str(tmp_path), "results")
    (tmp_path / "results.parquet").write_bytes(b"not parquet")
    with pytest.raises(StoreError, match=r"results.parquet: cannot be read \(\w+\); run"):
        latest_frame(str(tmp_path), "results")



def test_without_a_warn_function_a_damaged_file_is_dropped_silently(tmp_path):
    st = Store(str(tmp_path), fmt="csv")
    path = os.path.join(st.runs, "k-0123456789abcdef.csv")
    with open(path, "w") as fh:
        fh.write("damaged")
    assert st.read_run(path) is None and not os.path.exists(path)
