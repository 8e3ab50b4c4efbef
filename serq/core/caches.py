"""The user's cache directory and what the caches in it share.

Two caches live there: the grammar's built metamodel
(`serq/frontend/parse/grammar.py`) and loaded programs (`serq/cli/program_cache.py`).
Both are optimisations only: any failure to read or write one falls back
to building what it would have held.

`SERQ_CACHE_DIR` chooses the directory; set to an empty string it turns
both caches off. This module is imported before anything heavy (a cached
program is loaded without the front end), so it imports little itself.
"""
from __future__ import annotations

import contextvars
import os
import stat
import sys
from typing import Optional

#: A file the front end read: its absolute path, its real path (a link
#: moved to another file with the same bytes reads other files beside it)
#: and the `digest` of its bytes (None: not a regular file).
Read = tuple[str, str, Optional[str]]

#: While a program is loaded for the program cache: every file the front
#: end reads (libraries, a workload file, a trace).
_READS: contextvars.ContextVar[Optional[list[Read]]] = \
    contextvars.ContextVar("serq_reads", default=None)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # serq/
#: Larger files are not hashed (no input a load accepts is this large).
DIGEST_LIMIT = 1 << 26


def grammar_dir() -> str:
    """The directory of the grammar's `.tx` files: `serq/grammar` in an
    installed package, the repository's `metamodel/` in a source checkout."""
    packaged = os.path.join(_PACKAGE, "grammar")
    if os.path.isfile(os.path.join(packaged, "program.tx")):
        return packaged
    return os.path.join(os.path.dirname(_PACKAGE), "metamodel")


def _ours(path: str) -> bool:
    """Whether the cache directory `path` may be read: it does not exist yet
    (it will be made by this user) or this user owns it. Its entries are
    pickles, and reading them runs code: a folder another user owns (a
    shared `SERQ_CACHE_DIR`) is not read. (No owners on Windows: yes.)"""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return True
    try:
        return os.stat(path).st_uid == getuid()
    except OSError:
        return True


def cache_dir() -> Optional[str]:
    """Where the caches are kept, or None when caching is off: by default
    also when the user has no home directory (`~` would stay `~`, a folder
    of that name in the working directory), and when another user owns the
    directory (`_ours`)."""
    path = _where()
    return path if path is not None and _ours(path) else None


def _where() -> Optional[str]:
    """The cache directory the environment names (None: caching is off)."""
    env = os.environ.get("SERQ_CACHE_DIR")
    if env is not None:
        return env or None
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")  # used only when absolute (XDG rules)
        base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "serq-simpy") if os.path.isabs(base) else None


def write_atomic(folder: str, path: str, data: bytes) -> None:
    """Write `data` to `path` (in `folder`, created if missing) through a
    temporary file and a rename, so no reader sees half a file; give up
    silently on any error."""
    try:
        import tempfile
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".pickle")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except Exception:
        pass


def digest(data: bytes) -> str:
    """A 256-bit BLAKE2b hash of `data` in hex (CPython's own `_blake2`:
    `hashlib` would load OpenSSL first, 2 ms of a start)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - another Python
        from hashlib import blake2b
    return blake2b(data, digest_size=32).hexdigest()


def file_digest(path: str) -> Optional[str]:
    """The `digest` of the bytes of the regular file `path`, or None when it
    is not one (a pipe is not opened: its bytes are for its reader), is
    larger than `DIGEST_LIMIT` (the load refuses it) or cannot be read."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > DIGEST_LIMIT:
            return None
        with open(path, "rb") as f:
            return digest(f.read(DIGEST_LIMIT + 1))
    except OSError:
        return None


def note_read(path: str, data: Optional[bytes] = None) -> None:
    """The front end read the file `path` (its bytes `data`, or read here
    when not given): remembered while a program is loaded for the cache. A
    file that is not a regular file (a pipe) is remembered as unknown
    (None), never read here: such a load is not cached."""
    reads = _READS.get()
    if reads is None:
        return
    if data is None:
        known = file_digest(path)
    else:
        try:
            known = digest(data) if stat.S_ISREG(os.stat(path).st_mode) else None
        except OSError:
            known = None
    reads.append((os.path.abspath(path), os.path.realpath(path), known))


def still_read(read: Read) -> bool:
    """Whether the file of `read` (see `Read`) is still the same: the same
    real path and the same bytes."""
    path, real, known = read
    return os.path.realpath(path) == real and file_digest(path) == known


def recording() -> tuple[list[Read], contextvars.Token]:
    """Start remembering the files read (in this context): the list and the
    token that `stop_recording` takes."""
    reads: list[Read] = []
    return reads, _READS.set(reads)


def stop_recording(token: contextvars.Token) -> None:
    """Stop remembering the files read."""
    _READS.reset(token)
