"""A sweep's results directory: one file per finished run, written the
moment it finishes, named by the run's key (a hash of the program text,
settings and seed).

Layout of `out/`:

- `sweep.json` — what the sweep was (program, grid, replications, seeds);
- `runs/<key>-<check>.parquet` (or `.csv` without pyarrow) — one run's
  statistic rows, or its error; `<check>` is a hash of the file's bytes,
  so a damaged or partial file is detected, reported and recomputed;
- `results.*`, `summary.*`, `errors.csv` — the assembled frames, rewritten
  at the end of every sweep.

Each file is written to a temporary name and renamed, so an interrupted
sweep leaves only whole files; running the sweep again reads them back and
computes only the runs without one. One sweep at a time writes a store
(`Store.lock`, an advisory lock on `.lock`), and a sweep of another
grid or program is refused unless told to extend or replace the store.
"""
from __future__ import annotations

import io
import json
import math
import os
import shutil
from typing import Any, Callable, Optional

#: Columns of every run file after the grid parameters.
RUN_COLUMNS = ["key", "seed", "section", "name", "statistic", "value", "error"]
#: Hex digits of a run file's check (a hash of its bytes) in its name.
CHECK_DIGITS = 16
#: What `sweep.json` must hold to be a sweep's.
MANIFEST_KEYS = ("program", "grid", "replications", "base_seed")


class StoreError(RuntimeError):
    """A results directory that cannot be used as it is (the message names
    the file and what to do)."""


def has_pyarrow() -> bool:
    """Whether Parquet can be written (pyarrow installed)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _check(data: bytes) -> str:
    from ..core.caches import digest
    return digest(data)[:CHECK_DIGITS]


class Store:
    """The results directory of one sweep. `warn(text)` is told of every
    damaged run file found (it is then recomputed)."""

    def __init__(self, root: str, fmt: Optional[str] = None,
                 warn: Optional[Callable[[str], None]] = None):
        self.root = root
        self.runs = os.path.join(root, "runs")
        try:
            os.makedirs(self.runs, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise StoreError(f"{root}: --out must be a directory (a file of that name "
                             "is in the way)") from None
        self.fmt = fmt or ("parquet" if has_pyarrow() else "csv")
        self.warn = warn or (lambda text: None)
        self._lock_fd: Optional[int] = None
        self._files: Optional[dict[str, list[str]]] = None

    # -- one sweep at a time ---------------------------------------------------
    def lock(self) -> None:
        """Take the store for this process: another sweep writing it is refused."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return
        path = os.path.join(self.root, ".lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise StoreError(f"{self.root}: another sweep is writing this directory "
                             f"(process {holder}); wait for it to finish or choose another "
                             "--out") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock_fd = fd
        for folder in (self.root, self.runs):  # writers that died before their rename
            for name in os.listdir(folder):
                stem, _, pid = name.rpartition(".tmp")
                if stem and pid.isdigit():
                    try:
                        os.unlink(os.path.join(folder, name))
                    except OSError:
                        pass

    def unlock(self) -> None:
        """Give the store back (closing the file releases the lock)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- run files --------------------------------------------------------------
    def _listing(self) -> dict[str, list[str]]:
        if self._files is None:
            files: dict[str, list[str]] = {}
            for name in sorted(os.listdir(self.runs)):
                stem, dot, fmt = name.rpartition(".")
                key, dash, check = stem.rpartition("-")
                if dot and dash and fmt in ("parquet", "csv") and len(check) == CHECK_DIGITS:
                    files.setdefault(key, []).append(name)
            self._files = files
        return self._files

    def find(self, key: str) -> Optional[str]:
        """The file of run `key`, if a whole one was written (either format)."""
        for name in self._listing().get(key, []):
            path = os.path.join(self.runs, name)
            if os.path.isdir(path):
                raise StoreError(f"{path}: a folder where a run file belongs; remove it "
                                 "(the run is then computed again)")
            return path
        return None

    def write_run(self, key: str, frame: Any) -> None:
        """Write one run's frame atomically, its check in its name."""
        data = frame_bytes(frame, self.fmt)
        name = f"{key}-{_check(data)}.{self.fmt}"
        path = os.path.join(self.runs, name)
        if os.path.isdir(path):
            raise StoreError(f"{path}: a folder where a run file belongs; remove it")
        _write_bytes(path, data)
        names = self._listing().setdefault(key, [])  # (it may list the file already)
        if name in names:
            names.remove(name)
        names.insert(0, name)

    def read_run(self, path: str) -> Any:
        """A run frame written by `write_run`, or None (after telling `warn`)
        when the file is damaged: its bytes do not match its check, it does
        not read as a frame, or its columns are not a run's."""
        why = None
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            why = f"cannot be read ({exc.strerror or exc})"
        else:
            stem = os.path.basename(path).rpartition(".")[0]
            if _check(data) != stem.rpartition("-")[2]:
                why = "its bytes do not match its check (a partial or damaged file)"
            else:
                try:
                    frame = read_frame(path, data)
                except Exception as exc:  # noqa: BLE001 - any reader's complaint
                    why = f"does not read as a run file ({type(exc).__name__})"
                else:
                    if list(frame.columns)[-len(RUN_COLUMNS):] != RUN_COLUMNS:
                        why = "its columns are not a run file's"
                    else:
                        return frame
        self.warn(f"{path}: {why}; the run is computed again")
        self.discard(path)
        return None

    def discard(self, path: str) -> None:
        """Forget (and remove) the run file `path`."""
        name = os.path.basename(path)
        for names in self._listing().values():
            if name in names:
                names.remove(name)
        try:
            os.unlink(path)
        except OSError:
            pass

    # -- the sweep's description and frames --------------------------------------
    def write_frame(self, name: str, frame: Any) -> str:
        """Write an assembled frame as `name.parquet` (or `.csv`); its path."""
        path = os.path.join(self.root, f"{name}.{self.fmt}")
        _write_bytes(path, frame_bytes(frame, self.fmt))
        return path

    def write_manifest(self, manifest: dict, name: str = "sweep.json") -> None:
        """Write `sweep.json` (or the manifest file `name`)."""
        path = os.path.join(self.root, name)
        _write_bytes(path, json.dumps(manifest, indent=1).encode())

    def prepare(self, manifest: dict, mode: Optional[str] = None) -> None:
        """Check `manifest` against the store's `sweep.json` and write it.
        A store of another sweep is refused, unless `mode` is "extend" (its
        runs are kept, and read back where they fit) or "replace" (its runs
        are removed first)."""
        old = None
        if os.path.exists(os.path.join(self.root, "sweep.json")):
            old = read_manifest(self.root)
        if mode == "replace":
            for name in os.listdir(self.runs):
                target = os.path.join(self.runs, name)
                shutil.rmtree(target) if os.path.isdir(target) else os.unlink(target)
            for name in os.listdir(self.root):
                if name.split(".")[0] in ("results", "summary", "errors"):
                    os.unlink(os.path.join(self.root, name))
            self._files = None
        elif old is not None and mode != "extend":
            differs = [k for k in manifest if k != "seed_rule" and old.get(k) != manifest[k]]
            if differs:
                raise StoreError(
                    f"{self.root} holds another sweep (its {', '.join(differs)} differ"
                    f"{'s' if len(differs) == 1 else ''}): --extend adds this sweep's runs "
                    "to it, --replace discards it, or choose another --out")
        self.write_manifest(manifest)


def frame_bytes(frame: Any, fmt: str) -> bytes:
    """A frame as the bytes of a `.parquet` or `.csv` file."""
    buf = io.BytesIO()
    if fmt == "parquet":
        frame.to_parquet(buf, index=False)
    else:
        buf.write(frame.to_csv(index=False).encode())
    return buf.getvalue()


def _write_bytes(path: str, data: bytes) -> None:
    """Write `data` to `path` through a temporary file and a rename."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except IsADirectoryError:
        os.unlink(tmp)
        raise StoreError(f"{path}: a folder where a file belongs; remove it") from None


def read_frame(path: str, data: Optional[bytes] = None) -> Any:
    """A frame from a `.parquet` or `.csv` file (or its bytes `data`; floats
    read back exactly)."""
    import pandas as pd
    source: Any = io.BytesIO(data) if data is not None else path
    if path.endswith(".parquet"):
        return pd.read_parquet(source)
    frame = pd.read_csv(source, dtype={"value": str, "error": str}, keep_default_na=False,
                        na_values=[""])
    # Python's float() reads every written double back exactly
    if "value" in frame.columns:
        frame["value"] = [float(v) if isinstance(v, str) else math.nan
                          for v in frame["value"]]
    if "error" in frame.columns:
        frame["error"] = [e if isinstance(e, str) and e else None for e in frame["error"]]
    return frame


def read_manifest(root: str) -> dict:
    """`sweep.json` of a results directory (a `StoreError` naming it when
    it is missing or not a sweep's)."""
    path = os.path.join(root, "sweep.json")
    try:
        with open(path, "rb") as fh:
            data = fh.read(1 << 24)
        manifest = json.loads(data)
    except FileNotFoundError:
        raise StoreError(f"{root}: no sweep.json (not a sweep's results directory: "
                         "`serq-simpy sweep … --out DIR` writes one)") from None
    except IsADirectoryError:
        raise StoreError(f"{path}: a folder, not a sweep's description") from None
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path}: not a sweep's description "
                         f"({getattr(exc, 'strerror', None) or exc})") from None
    if not isinstance(manifest, dict) or any(k not in manifest for k in MANIFEST_KEYS) \
            or not isinstance(manifest["grid"], dict):
        raise StoreError(f"{path}: not a sweep's description (it has no grid, program, "
                         "replications and base_seed); remove it or choose another --out")
    return manifest


def latest_frame(root: str, name: str) -> Any:
    """The assembled frame `name` (`summary`, `results`) of a results directory."""
    for fmt in ("parquet", "csv"):
        path = os.path.join(root, f"{name}.{fmt}")
        if os.path.isfile(path):
            try:
                return read_frame(path)
            except Exception as exc:  # noqa: BLE001 - any reader's complaint
                raise StoreError(f"{path}: cannot be read ({type(exc).__name__}); run the "
                                 "sweep again to rewrite it") from None
    raise StoreError(f"{root}: no {name}.parquet or {name}.csv "
                     "(the sweep has not finished once)")
