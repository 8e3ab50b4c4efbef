"""A sweep's results directory: one file per finished run, written the
moment it finishes, named by the run's key (a hash of the program text,
settings and seed).

Layout of `out/`:

- `sweep.json` — what the sweep was (program, grid, replications, seeds);
- `runs/<key>.parquet` (or `.csv` without pyarrow) — one run's statistic
  rows, or its error;
- `results.*`, `summary.*`, `errors.csv` — the assembled frames, rewritten
  at the end of every sweep.

Each file is written to a temporary name and renamed, so an interrupted
sweep leaves only whole files; running the sweep again reads them back and
computes only the runs without one.
"""
from __future__ import annotations

import json
import math
import os
from typing import Any, Optional

#: Columns of every run file after the grid parameters.
RUN_COLUMNS = ["key", "seed", "section", "name", "statistic", "value", "error"]


def has_pyarrow() -> bool:
    """Whether Parquet can be written (pyarrow installed)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


class Store:
    """The results directory of one sweep."""

    def __init__(self, root: str, fmt: Optional[str] = None):
        self.root = root
        self.runs = os.path.join(root, "runs")
        os.makedirs(self.runs, exist_ok=True)
        self.fmt = fmt or ("parquet" if has_pyarrow() else "csv")

    def _path(self, key: str, fmt: str) -> str:
        return os.path.join(self.runs, f"{key}.{fmt}")

    def find(self, key: str) -> Optional[str]:
        """The file of run `key`, if one was written (either format)."""
        for fmt in ("parquet", "csv"):
            p = self._path(key, fmt)
            if os.path.exists(p):
                return p
        return None

    def write_run(self, key: str, frame: Any) -> None:
        """Write one run's frame atomically."""
        path = self._path(key, self.fmt)
        self._write(frame, path)

    def read_run(self, path: str) -> Any:
        """A run frame written by `write_run`."""
        return read_frame(path)

    def _write(self, frame: Any, path: str) -> None:
        tmp = f"{path}.tmp{os.getpid()}"
        if path.endswith(".parquet"):
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False)
        os.replace(tmp, path)

    def write_frame(self, name: str, frame: Any) -> str:
        """Write an assembled frame as `name.parquet` (or `.csv`); its path."""
        path = os.path.join(self.root, f"{name}.{self.fmt}")
        self._write(frame, path)
        return path

    def write_manifest(self, manifest: dict, name: str = "sweep.json") -> None:
        """Write `sweep.json` (or the manifest file `name`)."""
        path = os.path.join(self.root, name)
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, indent=1)
        os.replace(tmp, path)


def read_frame(path: str) -> Any:
    """A frame from a `.parquet` or `.csv` file (floats read back exactly)."""
    import pandas as pd
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    frame = pd.read_csv(path, dtype={"value": str, "error": str},
                        keep_default_na=False, na_values=[""])
    # Python's float() reads every written double back exactly
    frame["value"] = [float(v) if isinstance(v, str) else math.nan for v in frame["value"]]
    frame["error"] = [e if isinstance(e, str) and e else None for e in frame["error"]]
    return frame


def read_manifest(root: str) -> dict:
    """`sweep.json` of a results directory."""
    path = os.path.join(root, "sweep.json")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise FileNotFoundError(f"{root}: no sweep.json (not a sweep's results "
                                "directory: `serq-simpy sweep … --out DIR` writes one)") from None


def latest_frame(root: str, name: str) -> Any:
    """The assembled frame `name` (`summary`, `results`) of a results directory."""
    for fmt in ("parquet", "csv"):
        path = os.path.join(root, f"{name}.{fmt}")
        if os.path.exists(path):
            return read_frame(path)
    raise FileNotFoundError(f"{root}: no {name}.parquet or {name}.csv "
                            "(the sweep has not finished once)")
