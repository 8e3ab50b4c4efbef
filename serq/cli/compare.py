"""`serq-simpy compare A.sq [B.sq]`: paired replications of two programs,
two policies or two settings (`serq.study.comparison`). The parser is
`serq.cli.study.add_compare` (imported with every command; this module
only when `compare` runs)."""
from __future__ import annotations

import argparse


def execute(args: argparse.Namespace, inputs: list[tuple[str, str]]) -> tuple[str, int]:
    """Run the comparison; what to print and the exit status (0, or 1 if a
    run ended stuck)."""
    from ..study.comparison import compare
    from ..study.progress import CountBar, wanted
    sets = dict(args.sets)
    sets.update(inputs)
    bar = CountBar(0, "runs") if wanted(args.no_progress or args.quiet, args.json) else None
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
