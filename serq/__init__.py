"""serq-simpy: run serQ serving-specification programs as SimPy simulations.

>>> import serq
>>> program = serq.load("examples/single-turn/mg1.sq")
>>> report = serq.run(program, seed=1, horizon=1000)
>>> report.observe("response").mean

Policies: subclass a resource class of `serq.policies` and bind it by name,
`serq.run(program, policies={"engine": MyEngine})` (docs/policies.md).
"""
from __future__ import annotations

__version__ = "0.1.0"

from .api import compile, load, run  # noqa: E402
from .report.model import Report  # noqa: E402

__all__ = ["Report", "compile", "load", "run", "__version__"]
