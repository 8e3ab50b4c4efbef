"""serq-simpy: run serQ serving-specification programs as SimPy simulations.

>>> import serq
>>> program = serq.load("examples/single-turn/mg1.sq")
>>> report = serq.run(program, seed=1, horizon=1000)
"""
from __future__ import annotations

__version__ = "0.1.0"

from .api import load, run  # noqa: E402

__all__ = ["load", "run", "__version__"]
