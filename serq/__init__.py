"""serq-simpy: run serQ serving-specification programs as SimPy simulations.

>>> import serq
>>> program = serq.load("examples/single-turn/mg1.sq")
>>> report = serq.run(program, seed=1, horizon=1000)
>>> report.observe("response").mean

Studies: `serq.replicate(path, replications=10)`, `serq.sweep(path,
grid={"lam": "0.5:0.9:0.1"})` (serq.study, docs/guide/studies.md) and
`serq.capacity(path, "lam", ["response:p99<=10"])` (docs/guide/capacity.md).
`serq.compare(a, b)`, paired replications with common random numbers
(docs/policies.md).

Policies: subclass a resource class of `serq.policies` and bind it by name,
`serq.run(program, policies={"engine": MyEngine})` (docs/policies.md).
"""
from __future__ import annotations

from .core.version import __version__  # noqa: E402

from typing import TYPE_CHECKING, Any  # noqa: E402

from .api import build, compile, load, run  # noqa: E402

if TYPE_CHECKING:  # for type checkers and the API reference; imported lazily below
    from .report.model import Report
    from .study import capacity, compare, replicate, sweep

__all__ = ["Report", "build", "capacity", "compare", "compile", "load", "replicate", "run",
           "sweep", "__version__"]


def __getattr__(name: str) -> Any:
    """`serq.Report` (the report needs numpy; `serq-simpy check` does not)
    and `serq.replicate`, `serq.sweep`, `serq.capacity`, `serq.compare`
    (serq.study), imported on first use."""
    if name == "Report":
        from .report.model import Report
        return Report
    if name in ("replicate", "sweep", "capacity", "compare"):
        from . import study
        return getattr(study, name)
    raise AttributeError(f"module 'serq' has no attribute {name!r}")
