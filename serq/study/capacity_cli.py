"""The `capacity` command: `serq-simpy capacity MODEL --vary lam --slo
'ttft:p99<=0.5' [--grid NAME=V1,V2 … --cost EXPR --load lam=2.0]`
(registered by `serq.study.cli`, run by `serq.study.capacity_run.capacity`)."""
from __future__ import annotations

import argparse
from typing import Any

from ..cli_guard import write_stdout
from ..errors import UsageError
from .cli import _fraction, out_option


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a number") from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"the start value is {text}: a number above 0")
    return v


def add_capacity(sub: Any, common: Any, settings: Any, executor_options: Any,
                 count: Any, policy: Any) -> None:
    """Register `capacity` (its options: see `--help`)."""
    c = sub.add_parser("capacity", help="the highest load (or the cheapest configuration) "
                                        "that meets SLOs, with a 95%% interval")
    common(c)
    settings(c)
    c.add_argument("--vary", metavar="NAME",
                   help="the --set parameter that carries the load (an arrival rate)")
    c.add_argument("--slo", action="append", default=[], required=True, metavar="SLO",
                   help="an objective: ttft:p99<=0.5, tpot:mean<=0.05, ttft<=0.2 for 90%% "
                        "(repeatable; all must hold)")
    c.add_argument("--start", type=_positive, metavar="X",
                   help="the first value tried (default: --load's, else the program's)")
    c.add_argument("--precision", type=_fraction, default=0.02, metavar="REL",
                   help="the interval's relative half-width to reach (default 0.02)")
    c.add_argument("--replications", type=count, default=4, metavar="R",
                   help="first replications at a probe (default 4; seeds SEED, SEED+1, …)")
    c.add_argument("--max-replications", type=count, default=200, metavar="R",
                   help="most replications at one probe (default 200)")
    c.add_argument("--max-runs", type=count, default=4000, metavar="N",
                   help="most runs of one configuration's search (default 4000)")
    c.add_argument("--grid", action="append", default=[], metavar="NAME=VALUES",
                   help="configurations: NAME=V1,V2,… or NAME=START:STOP:STEP (repeatable)")
    c.add_argument("--cost", metavar="EXPR",
                   help="the cost of a configuration, from its --grid names (replicas*2)")
    c.add_argument("--load", metavar="NAME=VALUE",
                   help="the load to carry: the cheapest configuration that does is named")
    out_option(c)
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    c.add_argument("--plot", metavar="FIG",
                   help="draw the search (one configuration) or the capacity per "
                        "configuration (a grid) to FIG (.png, .svg, .pdf)")
    c.add_argument("--policy", action="append", default=[], type=policy,
                   metavar="NAME=module:Class", help="bind a policy class at every probe")
    executor_options(c)


def run_capacity(args: argparse.Namespace, settings: dict, bar: Any) -> int:
    """Run the command; 0 when every configuration's search reached its
    precision (1 otherwise: the table says which did not)."""
    from .capacity_run import capacity
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
