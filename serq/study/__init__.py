"""Studies above the runtime: replications, automatic warm-up, precision
targets, parameter sweeps and capacity under SLOs on local processes or a
Dask cluster, plots.

Everything here uses `serq.load`, `serq.run` and the `Report`, as a user's
script would. Heavy libraries (pandas, pyarrow, matplotlib, distributed,
tqdm) are imported only when a function needs them.

May import: `serq.api`, `serq.policies`, `serq.frontend`, `serq.runtime`,
`serq.report`, `serq.stats`, `serq.core` (never `serq.cli`).
"""
from __future__ import annotations

from typing import Any

__all__ = ["CapacityResult", "Comparison", "ProgramSpec", "StudyReport", "SweepResult", "capacity",
           "compare", "mser5",
           "replicate", "replication_seed", "sweep"]

_WHERE = {
    "ProgramSpec": "spec", "replication_seed": "spec",
    "replicate": "replications", "StudyReport": "report",
    "sweep": "sweeps", "SweepResult": "sweeps", "mser5": "warmup",
    "capacity": "capacity_run", "CapacityResult": "capacity_report",
    "compare": "comparison", "Comparison": "comparison",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        from importlib import import_module
        return getattr(import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
