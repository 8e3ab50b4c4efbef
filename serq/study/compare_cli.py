"""`serq-simpy compare A.sq [B.sq]`: paired replications of two programs,
two policies or two settings (`serq.study.comparison`)."""
from __future__ import annotations

import argparse
from typing import Any, Callable


def add_command(sub: Any, settings: Callable, assignment: Callable, policy: Callable,
                count: Callable) -> None:
    """The `compare` command's parser."""
    c = sub.add_parser(
        "compare", help="compare two programs, policies or settings over paired replications",
        description="Run A and B with the same seeds (common random numbers) and report "
                    "each statistic's difference B − A with a paired Student-t interval; "
                    "`*` marks a difference whose interval excludes 0. Without B.sq, B is "
                    "A.sq changed by --b-set and --b-policy.")
    c.add_argument("file", help="program A (.sq)")
    c.add_argument("file_b", nargs="?", metavar="B.sq", help="program B (default: A again)")
    c.add_argument("--set", dest="sets", action="append", default=[], type=assignment,
                   metavar="NAME=EXPR", help="replace `let NAME` on both sides (repeatable)")
    c.add_argument("--def", dest="defs", action="append", default=[], type=assignment,
                   metavar="NAME=EXPR", help="replace `def NAME` on both sides (repeatable)")
    c.add_argument("--workload", metavar="W", help="take both sides' workload from the file W")
    c.add_argument("--policy", action="append", default=[], type=policy,
                   metavar="NAME=module:Class", help="bind a policy on both sides (repeatable)")
    c.add_argument("--b-set", action="append", default=[], type=assignment,
                   metavar="NAME=EXPR", help="replace `let NAME` on side B only (repeatable)")
    c.add_argument("--b-policy", action="append", default=[], type=policy,
                   metavar="NAME=module:Class", help="bind a policy on side B only (repeatable)")
    settings(c)
    c.add_argument("--replications", type=count, default=10, metavar="R",
                   help="paired replications, seeds SEED … SEED+R−1 on both sides "
                        "(default 10)")
    c.add_argument("--all", action="store_true",
                   help="show every statistic (default: means, p50, p90, p99 and the "
                        "stages' and pools' main columns)")
    c.add_argument("--json", action="store_true", help="print the comparison as JSON")
    c.add_argument("--plot", metavar="FIG", help="also draw the differences (.png/.svg/.pdf)")
    c.add_argument("--jobs", type=count, metavar="N", help="local worker processes")
    c.add_argument("--quiet", action="store_true", help="no progress indicator")


def execute(args: argparse.Namespace, inputs: list[tuple[str, str]]) -> tuple[str, int]:
    """Run the comparison; what to print and the exit status (0, or 1 if a
    run ended stuck)."""
    from .comparison import compare
    from .progress import CountBar, wanted
    sets = dict(args.sets)
    sets.update(inputs)
    bar = CountBar(0, "runs") if wanted(args.quiet, args.json) else None
    try:
        result = compare(args.file, args.file_b, args.replications, seed=args.seed,
                         jobs=args.jobs, sets=sets, sets_b=dict(args.b_set),
                         policies=dict(args.policy), policies_b=dict(args.b_policy),
                         defs=dict(args.defs), horizon=args.horizon, warmup=args.warmup,
                         arrivals=args.arrivals, workload=args.workload, trace=args.trace,
                         progress=bar)
    finally:
        if bar is not None:
            bar.close()
    if args.plot:
        result.plot(path=args.plot)
    stuck = any(p.stuck for side in (result.a, result.b) for r in side.reports
                for p in r.pools)
    return (result.json() + "\n" if args.json else result.text(every=args.all)), int(stuck)
