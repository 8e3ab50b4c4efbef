"""Loaded programs, cached as Python caches compiled modules.

Loading a program (textX's parse, the front end's rewrites and checks)
costs tens of milliseconds, and importing textX and the front end as many
again; `serq-simpy run` repeats it for the same file over and over. So the
command keeps the loaded kernel program (`serq.core.ir.Program`, pickled) in
the user's cache directory (`serq.core.caches.cache_dir`, next to the grammar's
metamodel) and, when nothing it was made from has changed, reads it back
instead: then neither textX nor the front end is imported at all.

An entry is found by the program's path, the working directory and the
load's options (`--set`, `--def`, program inputs, `--workload`, `--trace`,
the settings): one entry for each, rewritten when it no longer fits, and
at most `MAX_ENTRIES` of them (the least recently written go first), each
of at most `MAX_ENTRY_BYTES`. It
is used only when its key matches: a hash of the program's bytes, of this
package's front-end sources and grammar (their sizes and modification
times, as `.pyc` files check theirs), of the textX and Arpeggio
installations, the serq-simpy and Python versions, and of that entry's
identity; and when every other file the load read (libraries of `use`, a
workload file, a trace) still has the bytes and the real path it had.
Only programs that load without error are kept (a load prints nothing but
its error, so a cached load prints exactly what a fresh one does:
nothing). Any failure to read or write an entry falls back to loading
the program; `SERQ_CACHE_DIR` set to an empty string turns the cache off.
"""
from __future__ import annotations

import io
import os
import pickle
import stat
import sys
import time
from typing import Any, Optional

from ..core.version import __version__
from ..core import ir
from ..core.caches import (Read, cache_dir, digest, grammar_dir, recording, still_read,
                     stop_recording, write_atomic)

#: Bump when the form of an entry changes.
_FORMAT = 2
#: Entries kept: past this many, writing one removes the least recently written.
MAX_ENTRIES = 256
#: A temporary file older than this (seconds) is a dead writer's, removed by a prune.
TMP_AGE = 3600.0
#: An entry larger than this is not written (a program with a large trace
#: loads from its files each time instead of filling the cache).
MAX_ENTRY_BYTES = 8 << 20
#: A program file larger than this is not looked up (the front end refuses
#: anything over `serq.frontend.parse.source.MAX_SOURCE_BYTES`, far below).
READ_LIMIT = 1 << 22

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # serq/


def load(path: str, **options: Any) -> ir.Program:
    """`serq.api.load(path, **options)`, read from the cache when it holds
    this load; a fresh load is written to it."""
    folder = cache_dir()
    if folder is None:
        return _fresh(path, options)
    keys = _lookup_keys(path, options)
    if keys is None:
        return _fresh(path, options)
    slot, key, main_digest = keys
    main = os.path.abspath(path)
    entry = os.path.join(folder, "programs", f"{slot}.pickle")
    program = read_entry(entry, key, main)
    if program is not None:
        return program
    reads, token = recording()
    try:
        program = _fresh(path, options)
    finally:
        stop_recording(token)
    mains = [was for read, _, was in reads if read == main]  # none: the reads went unseen
    if mains and all(was == main_digest for was in mains):  # else edited meanwhile
        _write_entry(entry, key, reads, program)
    return program


def _fresh(path: str, options: dict[str, Any]) -> ir.Program:
    from ..api import load as api_load
    return api_load(path, **options)


def _lookup_keys(path: str, options: dict[str, Any]) -> Optional[tuple[str, str, str]]:
    """`_keys` of the program file and the `digest` of its bytes, or None
    when it is not looked up: a pipe (opened once, by the load), a file too
    large, one that cannot be read (the load says why), an option without
    a stable repr."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > READ_LIMIT:
            return None
        with open(path, "rb") as f:
            data = f.read()
        return _keys(path, digest(data), options)
    except Exception:
        return None


def _keys(path: str, data_digest: str, options: dict[str, Any]) -> tuple[str, str, str]:
    """The entry's name (what the load was asked), its key (what it read)
    and `data_digest` (the program file's bytes, the load must read them)."""
    asked = repr((_FORMAT, path, os.path.abspath(path), os.path.realpath(path), os.getcwd(),
                  sorted(options.items())))
    slot = digest(asked.encode())[:32]
    made_of = repr((asked, __version__, sys.version, sys.implementation.cache_tag,
                    pickle.HIGHEST_PROTOCOL, sources_stamp(), data_digest))
    return slot, digest(made_of.encode()), data_digest


def sources_stamp() -> list[tuple[str, int, int]]:
    """Name, size and modification time of every file a load depends on:
    the package's top-level and core modules and the front end, the grammar, and the
    textX and Arpeggio packages (found without importing them)."""
    stamp: list[tuple[str, int, int]] = []
    front = os.path.join(_PACKAGE, "frontend")
    folders = [_PACKAGE, os.path.join(_PACKAGE, "core"), front, grammar_dir()]
    folders += sorted(e.path for e in os.scandir(front) if e.is_dir() and e.name[0] != "_")
    from importlib.util import find_spec
    for name in ("textx", "arpeggio"):
        spec = find_spec(name)
        if spec is not None and spec.origin:
            folders.append(os.path.dirname(spec.origin))
    for folder in folders:
        with os.scandir(folder) as entries:
            for e in entries:
                if e.name.endswith((".py", ".tx")):
                    st = e.stat()
                    stamp.append((e.path, st.st_size, st.st_mtime_ns))
    return sorted(stamp)


def read_entry(entry: str, key: str, main: str) -> Optional[ir.Program]:
    """The program of the cache entry `entry` if its key is `key` and every
    file it was read from (but the program file `main`, whose bytes and
    real path are in the key) is still the same (`caches.still_read`);
    else None."""
    try:
        with open(entry, "rb") as f:
            stored_key, reads = pickle.load(f)
            if stored_key != key:
                return None
            for read in reads:
                if read[0] != main and not still_read(read):
                    return None
            program = pickle.load(f)
    except Exception:  # missing, damaged or stale: load the program afresh
        return None
    return program if isinstance(program, ir.Program) else None


def _write_entry(entry: str, key: str, reads: list[Read],
                 program: ir.Program) -> None:
    """Write the entry (key and files read, then the program); give up
    silently on any error, and when a file read cannot be checked again (a pipe)."""
    if any(was is None for _, _, was in reads):
        return
    try:
        buf = io.BytesIO()
        pickle.dump((key, sorted(set(reads))), buf, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.dump(program, buf, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return
    if buf.tell() > MAX_ENTRY_BYTES:
        return
    folder = os.path.dirname(entry)
    write_atomic(folder, entry, buf.getvalue())
    _prune(folder)


def _prune(folder: str) -> None:
    """Keep the newest `MAX_ENTRIES` entries of `folder` (programs written
    in temporary directories would otherwise pile up), and remove the
    temporary files of writers that died before their rename."""
    try:
        found, left = [], []
        with os.scandir(folder) as it:
            for e in it:
                if e.name.startswith(".tmp-"):
                    left.append((e.stat().st_mtime, e.path))
                elif e.name.endswith(".pickle") and not e.name.startswith("."):
                    found.append((e.stat().st_mtime_ns, e.path))
        dead = time.time() - TMP_AGE
        for path in [p for mtime, p in left if mtime < dead] + \
                [p for _, p in sorted(found)[:max(len(found) - MAX_ENTRIES, 0)]]:
            os.unlink(path)
    except OSError:  # another process pruned first, or the folder went away
        pass
