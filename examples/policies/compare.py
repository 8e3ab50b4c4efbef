"""Run one program under the built-in policy and under a user policy, with
the same seed (common random numbers), and compare metrics with their 95 %
confidence intervals. Shared by the three examples of this directory.

    from compare import compare, print_comparison
    rows = compare("prog.sq", {"reqs": MyPool}, ["ttft"], seed=1)
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import serq

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass
class Row:
    """One metric under both policies: mean and 95 % half-width of each."""

    metric: str
    builtin_mean: float
    builtin_ci: float
    policy_mean: float
    policy_ci: float

    @property
    def effect(self) -> float:
        """policy mean − built-in mean."""
        return self.policy_mean - self.builtin_mean

    @property
    def separated(self) -> bool:
        """Whether the two 95 % intervals do not overlap."""
        return (self.policy_mean + self.policy_ci < self.builtin_mean - self.builtin_ci
                or self.builtin_mean + self.builtin_ci < self.policy_mean - self.policy_ci)


def program_path(name: str) -> str:
    """A program of this directory, by file name."""
    return os.path.join(HERE, name)


def compare(program: str, policies: Mapping[str, Any], metrics: Sequence[str], *,
            seed: int = 1, sets: Optional[Mapping[str, Any]] = None,
            **settings: Any) -> list[Row]:
    """Run `program` twice with `seed` (built-in, then `policies`) and
    compare the observations `metrics`; `settings` go to `serq.run`."""
    prog = serq.load(program, sets=dict(sets or {}))
    base = serq.run(prog, seed=seed, **settings)
    user = serq.run(prog, seed=seed, policies=policies, **settings)
    rows = []
    for name in metrics:
        b, u = base.observe(name), user.observe(name)
        rows.append(Row(name, b.mean, b.ci, u.mean, u.ci))
    return rows


def print_comparison(title: str, rows: Sequence[Row]) -> None:
    """The comparison as a small table (mean ± 95 % half-width)."""
    print(title)
    print(f"{'metric':<18}{'built-in':>22}{'policy':>22}{'effect':>10}  intervals")
    for r in rows:
        print(f"{r.metric:<18}{r.builtin_mean:>12.4f} ± {r.builtin_ci:<7.4f}"
              f"{r.policy_mean:>12.4f} ± {r.policy_ci:<7.4f}{r.effect:>+10.4f}  "
              + ("disjoint" if r.separated else "overlap"))
