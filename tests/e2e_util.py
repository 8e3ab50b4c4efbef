"""Helpers shared by the end-to-end example tests (test_p0*_examples.py,
test_p04_stages.py, test_p06_reports.py, test_p07_programs.py,
test_differential.py).

A test runs a program through the public API (`serq.load` then `serq.run`)
and reads the `Report`; these helpers only shorten that.
"""
from __future__ import annotations

import math
from array import array
import os
import textwrap
from typing import Any, Iterable, Optional

import serq
from serq.report.json_report import to_dict

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "e2e")

#: Relative tolerance for every float that is not a count or an exact sample
#: (spec README, "Exactness").
REL = 1e-9


def data(name: str) -> str:
    """Absolute path of a file under tests/data/e2e/."""
    return os.path.join(DATA, name)


def load(source: Optional[str] = None, *, path: Optional[str] = None, **kw: Any):
    """`serq.load` of a source text (dedented) or a file."""
    if path is not None:
        return serq.load(path, **kw)
    return serq.load(None, source=textwrap.dedent(source), **kw)


def run(source: Optional[str] = None, *, path: Optional[str] = None, **kw: Any):
    """Load and run; load-time keywords (sets, horizon, warmup, seed, arrivals,
    trace, defs) go to `serq.load`."""
    return serq.run(load(source, path=path, **kw))


def report_dict(source: Optional[str] = None, *, path: Optional[str] = None, **kw: Any) -> dict:
    """The JSON structure of the report (`to_dict`)."""
    return to_dict(run(source, path=path, **kw))


def samples(rep, name: str) -> list[tuple]:
    """(value, time, session, turn) of every sample of observation `name`."""
    s = rep.observes[name]
    return list(zip(s.values, s.times, s.sessions, s.turns))


def values(rep, name: str) -> list[float]:
    return list(rep.observes[name].values)


def times(rep, name: str) -> list[float]:
    return list(rep.observes[name].times)


def sessions(rep, name: str) -> list[int]:
    return list(rep.observes[name].sessions)


def turns(rep, name: str) -> list[int]:
    return list(rep.observes[name].turns)


def close(actual: Any, expected: Any, rel: float = REL) -> bool:
    """Numbers (or equal-length sequences of numbers) equal to a relative `rel`;
    None only equals None, NaN only NaN, infinities exactly."""
    if isinstance(expected, (list, tuple)):
        # a report's samples are compact arrays (serq.stats.samples), not lists
        return (isinstance(actual, (list, tuple, array)) and len(actual) == len(expected)
                and all(close(a, e, rel) for a, e in zip(actual, expected)))
    if expected is None or actual is None:
        return expected is None and actual is None
    a, e = float(actual), float(expected)
    if math.isnan(e):
        return math.isnan(a)
    if math.isinf(e):
        return a == e
    return math.isclose(a, e, rel_tol=rel, abs_tol=0.0)


def assert_close(actual: Any, expected: Any, rel: float = REL, what: str = "") -> None:
    assert close(actual, expected, rel), f"{what}: {actual!r} != expected {expected!r} (rel {rel})"


def stage(rep, name: str, index: Optional[int] = None):
    row = rep.stage(name, index)
    assert row is not None, f"no stage row {name}[{index}] in {[s.label for s in rep.stages]}"
    return row


def per_session(rep, name: str, serial: int) -> list[float]:
    """Values of `name` recorded by session `serial`, in recording order."""
    s = rep.observes[name]
    return [v for v, k in zip(s.values, s.sessions) if k == serial]


def triples(rep, name: str) -> list[tuple[int, int, float]]:
    """(serial, turn_no, value) in recording order (the layout of Part 07 §11.4)."""
    s = rep.observes[name]
    return [(int(k), int(t), v) for v, k, t in zip(s.values, s.sessions, s.turns)]


def flatten(xs: Iterable[Iterable[Any]]) -> list[Any]:
    return [x for sub in xs for x in sub]
