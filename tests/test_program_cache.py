"""The cache of loaded programs (serq/cli/program_cache.py) behind `serq-simpy run`.

A run whose program comes from the cache prints exactly what a run that
loads it prints (report and standard error), without the front end; an
entry is not used once the program, a library it uses, its trace, a
`--def`/`--set` or the front end changed, nor when it is damaged; a
program that does not load is never cached; `SERQ_CACHE_DIR=""` turns the
cache off; and a run from the cache imports neither textX nor the front
end (nor anything else it does not need).
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import threading
import warnings

import pytest

from serq.cli import commands as cli, program_cache
from serq.core.errors import SerqError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "tests", "data", "trace_short.csv")

# A program that reads two more files: a library (`use`) and a trace.
MAIN = """use "lib.sq";
stage svc : delay;
workload {
  arrive batch(8);
  trace "t.csv";
  session { turn; request; }
}
server {
  observe first_new = new;
  run svc (scale(1));
}
run { horizon 100; }
"""
LIB = "def scale(x) = x * 1;\n"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache directory, and a program with its library and trace."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("SERQ_CACHE_DIR", str(folder))
    (tmp_path / "main.sq").write_text(MAIN)
    (tmp_path / "lib.sq").write_text(LIB)
    shutil.copy(TRACE, tmp_path / "t.csv")
    return folder


def _run(capsys, *args):
    rc = cli.main(["run", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _entries(folder):
    return sorted((folder / "programs").glob("*.pickle")) if (folder / "programs").exists() else []


def _no_front_end(monkeypatch):
    def fail(path, options):
        raise AssertionError("the program should have come from the cache")
    monkeypatch.setattr(program_cache, "_fresh", fail)


@pytest.mark.parametrize("args", [
    ["examples/multi-turn/prefix_cache.sq", "--json", "--horizon", "300"],
    ["examples/single-turn/mg1.sq", "--horizon", "50", "--set", "lam=0.5"],  # warns: few samples
    ["examples/single-turn/arguments.sq", "--horizon", "50", "--", "--rho", "0.5"],
    ["examples/papers/orca.sq", "--horizon", "20", "--warmup", "0", "--json"],  # a library two levels deep
])
def test_cached_run_prints_the_same(args, cache, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    fresh = _run(capsys, *args)
    assert fresh[0] == 0 and fresh[1]
    assert len(_entries(cache)) == 1
    _no_front_end(monkeypatch)
    assert _run(capsys, *args) == fresh  # exit status, report and standard error


def test_trace_and_library_are_checked(tmp_path, cache, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = _run(capsys, "main.sq", "--json")
    assert first[0] == 0
    assert _run(capsys, "main.sq", "--json") == first
    # the trace's first session asks for 600 new tokens; now 601: a new report
    trace = (tmp_path / "t.csv").read_text()
    (tmp_path / "t.csv").write_text(trace.replace("0,0,600,", "0,0,601,"))
    second = _run(capsys, "main.sq", "--json")
    assert second[0] == 0 and second[1] != first[1]
    # the library's delay doubles: a new report again
    (tmp_path / "lib.sq").write_text("def scale(x) = x * 2;\n")
    third = _run(capsys, "main.sq", "--json")
    assert third[1] not in (first[1], second[1])
    assert len(_entries(cache)) == 1  # one entry per program and options, rewritten
    _no_front_end(monkeypatch)
    assert _run(capsys, "main.sq", "--json") == third


def test_editing_the_program_or_an_option_misses(tmp_path, cache, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = _run(capsys, "main.sq", "--json")
    defs = _run(capsys, "main.sq", "--json", "--def", "scale=x*3")
    assert defs[1] != base[1] and len(_entries(cache)) == 2
    sets = _run(capsys, "main.sq", "--json", "--horizon", "80")
    assert sets[1] != base[1] and len(_entries(cache)) == 3
    with monkeypatch.context() as m:
        _no_front_end(m)  # each of them is now a hit
        assert _run(capsys, "main.sq", "--json", "--def", "scale=x*3") == defs
        assert _run(capsys, "main.sq", "--json", "--horizon", "80") == sets
        assert _run(capsys, "main.sq", "--json") == base
    (tmp_path / "main.sq").write_text(MAIN.replace("horizon 100", "horizon 90"))
    edited = _run(capsys, "main.sq", "--json")
    assert edited[1] != base[1] and '"horizon":90,' in edited[1]
    assert _run(capsys, "main.sq", "--json", "--def", "scale=x*3")[1] != defs[1]


def test_front_end_sources_are_in_the_key(tmp_path, cache, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _run(capsys, "main.sq")
    stamp = program_cache.sources_stamp()
    assert any(p.endswith(os.path.join("frontend", "link", "lower.py")) for p, _, _ in stamp)
    assert any(p.endswith("stmt.tx") for p, _, _ in stamp)
    assert any(p.endswith(os.path.join("serq", "core", "ir.py")) for p, _, _ in stamp)
    changed = [(p, size, mtime + 1 if p.endswith("lower.py") else mtime)
               for p, size, mtime in stamp]
    monkeypatch.setattr(program_cache, "sources_stamp", lambda: changed)
    loads = []
    real = program_cache._fresh
    monkeypatch.setattr(program_cache, "_fresh", lambda p, o: loads.append(p) or real(p, o))
    _run(capsys, "main.sq")
    assert loads == ["main.sq"]


def test_damaged_entry_is_rebuilt(tmp_path, cache, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = _run(capsys, "main.sq")
    (entry,) = _entries(cache)
    for damage in (b"", b"not a pickle", entry.read_bytes()[:-20]):
        entry.write_bytes(damage)
        assert _run(capsys, "main.sq") == first
        assert entry.read_bytes() != damage  # written afresh


def test_bad_program_is_not_cached(tmp_path, cache, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.sq").write_text(MAIN.replace("scale(1)", "scale(1"))
    first = _run(capsys, "bad.sq")
    assert first[0] == 1 and "bad.sq:10:" in first[2] and not first[1]
    assert _run(capsys, "bad.sq") == first
    assert _entries(cache) == []
    os.remove(tmp_path / "lib.sq")  # a library that is missing: the same
    missing = _run(capsys, "main.sq")
    assert missing[0] == 1 and "lib.sq" in missing[2] and _entries(cache) == []


def _through_fifo(path, text):
    """`path` becomes a named pipe that a thread writes `text` into once."""
    os.mkfifo(path)

    def write():
        with open(path, "w") as f:
            f.write(text)
    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_pipes_are_read_once_and_not_cached(tmp_path, cache, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    expected = _run(capsys, "main.sq", "--json")
    os.remove(cache / "programs" / os.listdir(cache / "programs")[0])
    trace = (tmp_path / "t.csv").read_text()
    for _ in range(2):  # a trace from a pipe: the same report, nothing cached
        writer = _through_fifo(tmp_path / "pipe.csv", trace)
        assert _run(capsys, "main.sq", "--json", "--trace", "pipe.csv") == expected
        writer.join()
        os.remove(tmp_path / "pipe.csv")
    assert _entries(cache) == []
    writer = _through_fifo(tmp_path / "pipe.sq", MAIN)  # the program from a pipe
    assert _run(capsys, "pipe.sq", "--json") == expected
    writer.join()
    assert _entries(cache) == []


def test_loads_print_nothing(capsys):
    # what makes a cached load print what a fresh one prints: a load that succeeds
    # writes nothing and warns nothing (else the cache would have to replay it)
    examples = sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.sq"), recursive=True))
    loaded = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for path in examples:
            try:
                program_cache._fresh(path, {"need_horizon": False})
                loaded += 1
            except SerqError:
                pass
    assert loaded > 30 and caught == []
    assert capsys.readouterr() == ("", "")


def test_large_files_are_left_to_the_front_end():
    from serq.frontend.parse.source import MAX_SOURCE_BYTES
    assert program_cache.READ_LIMIT >= MAX_SOURCE_BYTES  # a file it skips is refused anyway


def test_cache_off(tmp_path, capsys, monkeypatch):
    # the default location would be under XDG_CACHE_HOME: off, nothing is written there
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SERQ_CACHE_DIR", "")
    monkeypatch.chdir(ROOT)
    assert _run(capsys, "examples/single-turn/mg1.sq", "--horizon", "10")[0] == 0
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()


def test_old_entries_are_pruned(tmp_path, cache, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(program_cache, "MAX_ENTRIES", 2)
    for h in ("10", "20", "30"):  # three settings: three entries, the oldest goes
        _run(capsys, "main.sq", "--horizon", h)
        entries = _entries(cache)
        os.utime(max(entries, key=os.path.getmtime), ns=(10 ** 18 + int(h), 10 ** 18 + int(h)))
    assert len(_entries(cache)) == 2


def test_run_imports_only_what_it_needs(tmp_path):
    # the command line's parser takes the study options from serq.cli.study (a light
    # module); a short run draws too little to need randomgen (serq.runtime.random.rng)
    code = ("import sys; from serq.cli.commands import main; rc = main(['run', sys.argv[1], '--json', "
            "'--horizon', '10']); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textx', 'arpeggio', "
            "'pandas', 'pyarrow', 'matplotlib', 'scipy', 'tqdm', 'randomgen', 'hashlib', "
            "'decimal', 'traceback') or m.startswith(("
            "'serq.frontend', 'serq.study.', 'serq.report.text_report', 'serq.report.dump', "
            "'serq.report.frames', 'numpy.random')) and m != 'serq.cli.study'))")
    env = dict(os.environ, SERQ_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    path = os.path.join(ROOT, "examples", "single-turn", "mg1.sq")
    runs = [subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                           check=True, env=env).stdout.strip().splitlines()[-1]
            for _ in range(2)]
    assert "serq.frontend" in runs[0]  # the first run loads the program
    assert runs[1] == "[]"  # the second reads it from the cache


def test_a_program_edited_while_it_loads_is_not_kept(tmp_path, cache, capsys, monkeypatch):
    # the file changes after the cache hashed it for the key and before the front end
    # read it: an entry named by the first bytes must not hold the second program
    monkeypatch.chdir(tmp_path)
    real = program_cache._fresh

    def edit_then_load(path, options):
        (tmp_path / "main.sq").write_text(MAIN.replace("horizon 100", "horizon 90"))
        return real(path, options)
    with monkeypatch.context() as m:
        m.setattr(program_cache, "_fresh", edit_then_load)
        assert '"horizon":90,' in _run(capsys, "main.sq", "--json")[1]
    (tmp_path / "main.sq").write_text(MAIN)  # the bytes the key was made of
    assert '"horizon":100,' in _run(capsys, "main.sq", "--json")[1]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
def test_a_library_link_moved_to_a_twin_misses(tmp_path, cache, capsys, monkeypatch):
    # lib.sq links to a/lib.sq, then to b/lib.sq: the same bytes, but each uses the
    # inner.sq next to it (a library's `use` is read beside the file it links to)
    monkeypatch.chdir(tmp_path)
    for folder, factor in (("a", 1), ("b", 2)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "lib.sq").write_text('use "inner.sq";\n')
        (tmp_path / folder / "inner.sq").write_text(f"def scale(x) = x * {factor};\n")
    os.remove(tmp_path / "lib.sq")
    os.symlink(tmp_path / "a" / "lib.sq", tmp_path / "lib.sq")
    first = _run(capsys, "main.sq", "--json")
    assert first[0] == 0 and len(_entries(cache)) == 1
    os.remove(tmp_path / "lib.sq")
    os.symlink(tmp_path / "b" / "lib.sq", tmp_path / "lib.sq")
    second = _run(capsys, "main.sq", "--json")
    assert second[0] == 0 and second[1] != first[1]
    monkeypatch.setenv("SERQ_CACHE_DIR", "")  # what a load without the cache gives
    assert _run(capsys, "main.sq", "--json") == second


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX user without a home")
def test_no_home_no_cache(tmp_path, capsys, monkeypatch):
    # no HOME and a user the password database does not know (a container's
    # numeric uid): `~` stays `~`, and the caches would be written into a folder
    # named `~` in the working directory; then there is no cache
    import pwd

    from serq.core import caches

    def unknown(uid):
        raise KeyError(uid)
    monkeypatch.delenv("SERQ_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", unknown)
    assert caches.cache_dir() is None
    monkeypatch.chdir(tmp_path)
    shutil.copy(os.path.join(ROOT, "examples", "single-turn", "mg1.sq"), tmp_path)
    assert _run(capsys, "mg1.sq", "--horizon", "10")[0] == 0
    assert os.listdir(tmp_path) == ["mg1.sq"]
    # XDG_CACHE_HOME must be absolute (the XDG base directory rules): a relative one is not used
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    assert caches.cache_dir() == os.path.join(str(tmp_path / "home"), ".cache", "serq-simpy")


def test_a_load_whose_reads_were_not_seen_is_not_kept(tmp_path, cache, capsys, monkeypatch):
    # the entry trusts the list of files the load read; should that list miss the
    # reads (a thread without the recording context), the program file is missing
    # from it too, and nothing is kept: a library edited later must be seen
    from serq.frontend.parse import source
    from serq.frontend.link import trace
    monkeypatch.chdir(tmp_path)
    with monkeypatch.context() as m:
        m.setattr(source, "note_read", lambda path, data=None: None)
        m.setattr(trace, "note_read", lambda path, data=None: None)
        first = _run(capsys, "main.sq", "--json")
    assert first[0] == 0 and _entries(cache) == []


def test_left_temporary_files_are_pruned(tmp_path, cache, capsys, monkeypatch):
    # a writer killed between its temporary file and the rename leaves the file
    # behind; an hour later it is no one's and goes with the next prune (a newer
    # one may be a writer's at work and stays)
    monkeypatch.chdir(tmp_path)
    folder = cache / "programs"
    folder.mkdir(parents=True)
    old, new = folder / ".tmp-old.pickle", folder / ".tmp-new.pickle"
    old.write_bytes(b"half")
    new.write_bytes(b"half")
    os.utime(old, (1e9, 1e9))
    assert _run(capsys, "main.sq")[0] == 0
    assert not old.exists() and new.exists()
    assert len([e for e in _entries(cache) if not e.name.startswith(".")]) == 1


def test_a_cache_directory_another_user_owns_is_not_used(tmp_path, monkeypatch):
    # entries are pickles: reading one from a folder another user can write
    # would run their code here, so such a folder turns the caches off
    import os

    from serq.core import caches
    folder = tmp_path / "shared"
    folder.mkdir()
    monkeypatch.setenv("SERQ_CACHE_DIR", str(folder))
    assert caches.cache_dir() == str(folder)
    if not hasattr(os, "getuid"):
        return  # (no owners on Windows)
    mine = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: mine + 1)
    assert caches.cache_dir() is None
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "not-yet"))
    assert caches.cache_dir() == str(tmp_path / "not-yet")  # made by this user when written
