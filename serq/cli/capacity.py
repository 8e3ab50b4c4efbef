"""The `capacity` command run: `serq-simpy capacity MODEL --vary lam --slo
'ttft:p99<=0.5' [--grid NAME=V1,V2 … --cost EXPR --load lam=2.0]` (its
options are registered by `serq.cli.study.add_capacity`; the search is
`serq.study.capacity_run.capacity`)."""
from __future__ import annotations

import argparse
from typing import Any

from .guard import write_stdout
from ..core.errors import UsageError


def run_capacity(args: argparse.Namespace, settings: dict, bar: Any) -> int:
    """Run the command; 0 when every configuration's search ran its final
    batch as planned for the precision (1 otherwise: the table says which
    did not)."""
    from ..study.capacity_run import capacity
    if args.warmup == "auto":
        raise UsageError("a capacity search takes a numeric --warmup; choose one with "
                         "`serq-simpy run MODEL --warmup auto` near the expected capacity")
    try:
        result = capacity(args.file, args.vary, args.slo, start=args.start,
                          precision=args.precision, replications=args.replications,
                          max_replications=args.max_replications, max_runs=args.max_runs,
                          grid=args.grid or None, cost=args.cost, load=args.load,
                          seed=args.seed, executor=args.dask or None, jobs=args.jobs,
                          out=args.out, warmup=args.warmup, policies=dict(args.policy),
                          progress=bar, **settings)
    finally:
        if bar is not None:
            bar.close()
    write_stdout(result.json() + "\n" if args.json else result.text())
    if args.plot:
        if result.grid:
            result.plot_configs(args.plot)
        else:
            result.plot(args.plot)
    return 0 if all(c.status == "found" for c in result.configs) else 1
