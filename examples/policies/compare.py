"""Compare a program under its built-in policy (A) and under a user policy
(B) with `serq.compare`: paired replications with the same seeds on both
sides (common random numbers), and each metric's difference B − A with a
95 % paired Student-t interval. Shared by the three examples of this
directory.

    from compare import compare, print_comparison
    rows = compare("prog.sq", {"reqs": MyPool}, ["ttft"], replications=10)
"""
from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import serq

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass
class Row:
    """One metric's statistic (mean or p99) under both policies."""

    metric: str
    statistic: str
    builtin: float
    policy: float
    diff: float
    half_width: float
    significant: bool


def program_path(name: str) -> str:
    """A program of this directory, by file name."""
    return os.path.join(HERE, name)


def policy_text(cls: type) -> str:
    """`FILE:Class` for a policy class defined in a file (what `--policy`
    takes; it loads in worker processes too, even from a script's `__main__`)."""
    return f"{inspect.getfile(cls)}:{cls.__qualname__}"


def compare(program: str, policies: Mapping[str, Any], metrics: Sequence[str], *,
            replications: int = 10, seed: int = 1, sets: Optional[Mapping[str, Any]] = None,
            statistics: Sequence[str] = ("mean", "p99"), **settings: Any) -> list[Row]:
    """Run `program` `replications` times under the built-in policies and
    under `policies` with the same seeds; a row per observation of `metrics`
    and statistic of `statistics`. `settings` go to `serq.compare`."""
    result = serq.compare(program, replications=replications, seed=seed,
                          sets=dict(sets or {}),
                          policies_b={k: policy_text(v) for k, v in policies.items()},
                          **settings)
    rows = []
    for name in metrics:
        for stat in statistics:
            d = result.difference("observe", name, stat)
            rows.append(Row(name, stat, d.a, d.b, d.diff, d.half_width, d.significant))
    return rows


def print_comparison(title: str, rows: Sequence[Row]) -> None:
    """The comparison as a small table; `*` marks a significant difference."""
    print(title)
    print(f"{'metric':<14}{'stat':<6}{'built-in':>11}{'policy':>11}{'B − A':>22}")
    for r in rows:
        print(f"{r.metric:<14}{r.statistic:<6}{r.builtin:>11.4f}{r.policy:>11.4f}"
              f"{r.diff:>+12.4f} ± {r.half_width:<7.4f}" + (" *" if r.significant else ""))
