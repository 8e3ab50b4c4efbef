"""The study side of the command line: `run --replications/--jobs/--dask/
--warmup auto/--precision/--observe`, and the commands `sweep`, `summary`
and `plot`, `capacity` and `compare` (and, from `measured.py`, `trace`, `validate`,
`calibrate`). `serq.cli.commands` calls `add_run_options`, `add_commands`, `handles`
and `execute`; everything heavy is imported only when a command runs.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Optional

from .options import count, horizon as _horizon, policy
from .guard import write_stdout
from .measured import MEASURED_COMMANDS
from ..core.errors import UsageError


def _fraction(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a number") from None
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(
            f"the precision is {text}: a relative half-width between 0 and 1 (0.02 = ±2%)")
    return v


def _executor_options(q: argparse.ArgumentParser) -> None:
    q.add_argument("--jobs", type=count, metavar="N",
                   help="local worker processes (default: the machine's cores)")
    q.add_argument("--dask", metavar="ADDRESS",
                   help="run on a Dask distributed cluster (tcp://host:8786)")
    q.add_argument("--quiet", action="store_true",
                   help="deprecated: the same as --no-progress (a warning says so)")


def out_option(q: argparse.ArgumentParser) -> None:
    """`--out DIR`: the results directory of a sweep or a capacity search."""
    q.add_argument("--out", metavar="DIR",
                   help="keep every finished run in DIR (created); a rerun computes only what "
                        "is missing. Without it nothing is written: the summary is printed")


def add_run_options(run: argparse.ArgumentParser) -> None:
    """The study options of `run`."""
    run.add_argument("--replications", type=count, default=1, metavar="R",
                     help="independent replications, seeds SEED, SEED+1, … (a study report)")
    _executor_options(run)
    run.add_argument("--precision", type=_fraction, metavar="REL",
                     help="add replications (or, with one, extend the horizon) until the "
                          "--observe statistic's relative half-width is at most REL")
    run.add_argument("--observe", metavar="NAME[:STAT]",
                     help="the series --warmup auto and --precision look at (STAT: mean, p99)")
    run.add_argument("--budget", type=count, metavar="R",
                     help="most replications a precision target may use (default 100)")
    run.add_argument("--max-horizon", type=_horizon, metavar="T",
                     help="largest horizon a one-run precision target may reach "
                          "(default 64 × the horizon)")


def add_commands(sub: Any, common: Callable, settings: Callable) -> None:
    """The `sweep`, `summary`, `plot` and `capacity` commands."""
    sw = sub.add_parser("sweep", help="run a program over a grid of --set values")
    common(sw)
    settings(sw)
    sw.add_argument("--grid", action="append", required=True, metavar="NAME=VALUES",
                    help="NAME=START:STOP:STEP or NAME=V1,V2,… (repeatable)")
    sw.add_argument("--replications", type=count, default=1, metavar="R",
                    help="runs per grid point, seeds SEED, SEED+1, … (the same at every point)")
    out_option(sw)
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")
    sw.add_argument("--retry-failed", action="store_true",
                    help="recompute the runs recorded as failed in --out")
    kept = sw.add_mutually_exclusive_group()
    kept.add_argument("--extend", dest="store_mode", action="store_const", const="extend",
                      help="--out holds another sweep (grid, program, settings): keep its "
                           "runs and add this sweep's")
    kept.add_argument("--replace", dest="store_mode", action="store_const", const="replace",
                      help="--out holds another sweep: discard its runs first")
    sw.add_argument("--json", action="store_true", help="print the summary as JSON")
    sw.add_argument("--policy", action="append", default=[], type=policy,
                    metavar="NAME=module:Class",
                    help="bind a policy class at every point (importable on the workers)")
    _executor_options(sw)
    sm = sub.add_parser("summary", help="print a sweep's summary table from its --out DIR")
    sm.add_argument("file", metavar="DIR", help="the --out directory of a sweep")
    sm.add_argument("--y", action="append", default=[], metavar="STAT",
                    help="statistics to show: ttft:p99, observe.response, stage.svc:utilization")
    pl = sub.add_parser("plot", help="draw a figure of a run or of a sweep's results")
    common(pl)
    settings(pl)
    pl.add_argument("--out", required=True, metavar="FIG",
                    help="the figure file (.png, .svg or .pdf)")
    pl.add_argument("--kind", choices=("series", "hist", "ecdf", "gauges"), default="series",
                    help="of a run: samples over time, histogram, ECDF, gauges over time")
    pl.add_argument("--observe", metavar="NAME", help="of a run: the series (or gauge) to draw")
    pl.add_argument("--y", metavar="STAT", help="of a sweep: the statistic (ttft:p99)")
    pl.add_argument("--x", metavar="PARAM", help="of a sweep: the grid parameter on the x axis")
    pl.add_argument("--by", metavar="PARAM", help="of a sweep: one line per value of PARAM")
    add_capacity(sub, common, settings)
    from .measured import add_measured_commands
    add_measured_commands(sub, common)


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a number") from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"the start value is {text}: a number above 0")
    return v


def add_capacity(sub: Any, common: Callable, settings: Callable) -> None:
    """The `capacity` command (run by `serq.cli.capacity`)."""
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
                   help="the interval's relative half-width aimed at (default 0.02): the "
                        "final batch is sized for it and reported as it comes out")
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
    c.add_argument("--no-progress", action="store_true", help="no progress bar")
    _executor_options(c)


def add_compare(sub: Any, settings: Callable, assignment: Callable, policy: Callable,
                count: Callable) -> None:
    """The `compare` command's parser (`serq.cli.compare` runs it)."""
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
    c.add_argument("--no-progress", action="store_true", help="no progress indicator")
    c.add_argument("--quiet", action="store_true",
                   help="deprecated: the same as --no-progress (a warning says so)")


def handles(args: argparse.Namespace) -> bool:
    """Whether the study side runs this command."""
    if args.command in ("sweep", "summary", "plot", "capacity", "compare") + MEASURED_COMMANDS:
        return True
    if args.command == "ir" and getattr(args, "warmup", None) == "auto":
        raise UsageError("--warmup auto applies to run and plot")
    if args.command != "run":
        return False
    if args.replications == 1 and args.precision is None and args.warmup != "auto":
        if args.dask or args.observe:
            raise UsageError("--dask and --observe go with --replications, --precision "
                             "or --warmup auto")
        return False
    return True


def execute(args: argparse.Namespace, inputs: list[tuple[str, str]]) -> int:
    """Run a study command (`inputs`: the program inputs after `--`);
    returns the exit status."""
    if args.command in MEASURED_COMMANDS:
        from . import measured as measured_cli
        try:
            return measured_cli.execute(args, inputs)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    kw: dict = {}
    if args.command != "summary":
        sets = dict(args.sets)
        sets.update(inputs)
        kw = dict(sets=sets, defs=dict(args.defs), workload=args.workload)
    try:
        if args.command == "sweep":
            return _sweep(args, kw)
        if args.command == "summary":
            return _summary(args)
        if args.command == "plot":
            return _plot(args, kw)
        if args.command == "capacity":
            from .capacity import run_capacity
            return run_capacity(args, _settings(args, kw), _count_bar(args, "runs", args.json))
        if args.command == "compare":
            from .compare import execute as compare
            text, status = compare(args, inputs)
            write_stdout(text)
            return status
        return _run(args, kw)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except (RuntimeError, FileNotFoundError) as exc:
        sys.stderr.write(f"serq-simpy: error: {exc}\n")
        return 1


def _executor(args: argparse.Namespace) -> Any:
    return args.dask if args.dask else None


def _settings(args: argparse.Namespace, kw: dict) -> dict:
    return dict(sets=kw["sets"], defs=kw["defs"], workload=kw["workload"],
                trace=args.trace, horizon=args.horizon, arrivals=args.arrivals)


def _count_bar(args: argparse.Namespace, desc: str, json_out: bool = False):
    from ..study.progress import CountBar, wanted
    return CountBar(0, desc) if wanted(args.no_progress, json_out) else None


def _run(args: argparse.Namespace, kw: dict) -> int:
    from ..study.replications import replicate
    if args.dump:
        raise UsageError("--dump writes one run's samples: rerun one replication with "
                         "--seed SEED+i (the study's seed rule)")
    bar = _count_bar(args, "replications", args.json)
    try:
        study = replicate(args.file, args.replications, seed=args.seed,
                          executor=_executor(args), jobs=args.jobs, warmup=args.warmup,
                          observe=args.observe, precision=args.precision,
                          budget=args.budget, max_horizon=args.max_horizon,
                          policies=dict(args.policy), progress=bar, **_settings(args, kw))
    finally:
        if bar is not None:
            bar.close()
    if study.replications == 1:
        return _one_run(study, args.json)
    write_stdout(study.json() + "\n" if args.json else study.text())
    return 1 if any(p.stuck for r in study.reports for p in r.pools) else 0


def _one_run(study: Any, json_out: bool) -> int:
    """One replication: the ordinary report, with the warm-up and precision
    outcome (stored in the JSON's serq_simpy object)."""
    report = study.reports[0]
    notes = [x for x in (study.warmup_choice, study.precision) if x is not None]
    if json_out:
        from ..report.json_report import dumps, to_dict
        d = to_dict(report)
        if study.warmup_choice is not None:
            d["serq_simpy"]["warmup_rule"] = study.warmup_choice.to_dict()
        if study.precision is not None:
            d["serq_simpy"]["precision"] = study.precision.to_dict()
        write_stdout(dumps(d) + "\n")
    else:
        from ..report.text_report import to_text
        write_stdout("".join(n.describe() + "\n" for n in notes) + to_text(report))
    return 1 if any(p.stuck for p in report.pools) else 0


def _sweep(args: argparse.Namespace, kw: dict) -> int:
    from ..study.sweeps import sweep
    if args.warmup == "auto":
        raise UsageError("a sweep takes a numeric --warmup; choose one with "
                         "`serq-simpy run MODEL --warmup auto` at the most loaded point")
    bar = _count_bar(args, "runs", args.json)
    try:
        result = sweep(args.file, args.grid, replications=args.replications, seed=args.seed,
                       executor=_executor(args), jobs=args.jobs, out=args.out,
                       warmup=args.warmup, retry_failed=args.retry_failed,
                       policies=dict(args.policy), progress=bar, store_mode=args.store_mode,
                       warn=_warning, **_settings(args, kw))
    finally:
        if bar is not None:
            bar.close()
    from ..study.table import summary_text, unsettled_warning
    params = list(result.grid)
    warning = unsettled_warning(result.summary, params)
    if warning is not None:
        sys.stderr.write(warning + "\n")
    if args.json:
        from ..report.json_report import dumps
        write_stdout(dumps({
            "grid": result.grid, "computed": result.computed, "reused": result.reused,
            "summary": result.summary.to_dict(orient="records"),
            "errors": result.errors.to_dict(orient="records")}) + "\n")
    else:
        write_stdout(summary_text(result.summary, params, []))
        write_stdout(f"\n{result.computed} runs computed, {result.reused} read back"
                         + (f" from {args.out}" if args.out else "")
                         + f", {len(result.errors)} failed\n")
        for row in result.errors.to_dict(orient="records"):  # names like `lambda` stay keys
            point = ", ".join(f"{p}={row[p]}" for p in params)
            write_stdout(f"failed: {point}, seed {row['seed']}: {row['error']}\n")
    return 1 if len(result.errors) else 0


def _warning(text: str) -> None:
    sys.stderr.write(f"serq-simpy: warning: {text}\n")


def _summary(args: argparse.Namespace) -> int:
    from ..study.store import StoreError, latest_frame, read_manifest
    from ..study.table import summary_text
    manifest = read_manifest(args.file)
    summary = latest_frame(args.file, "summary")
    if summary.empty:
        sys.stderr.write(f"serq-simpy: error: {args.file}: no finished runs (the failed "
                         "ones are listed in its errors.csv)\n")
        return 1
    missing = [c for c in list(manifest["grid"]) + ["section", "name", "statistic", "mean",
                                                     "half_width"] if c not in summary.columns]
    if missing:
        raise StoreError(f"{args.file}: its summary has no column {missing[0]} (not this "
                         "sweep's summary); run the sweep again to rewrite it")
    write_stdout(summary_text(summary, list(manifest["grid"]), args.y))
    return 0


def _plot(args: argparse.Namespace, kw: dict) -> int:
    import os
    if os.path.isdir(args.file):
        from ..study.plots import sweep_figure
        from ..study.store import latest_frame, read_manifest
        if not args.y:
            raise UsageError("plotting a sweep needs --y STAT (e.g. --y ttft:p99)")
        manifest = read_manifest(args.file)
        sweep_figure(latest_frame(args.file, "summary"), list(manifest["grid"]), args.y,
                     x=args.x, by=args.by, path=args.out)
        return 0
    from .. import api
    from ..study import plots
    settings = dict(seed=args.seed, horizon=args.horizon, arrivals=args.arrivals)
    program = api.load(args.file, trace=args.trace, need_horizon=True, **kw)
    if args.warmup == "auto":
        from ..study.warmup import choose
        pilot = api.run(program, warmup=0.0, **settings)
        choice = choose(pilot, args.observe if args.kind != "gauges" else None)
        sys.stderr.write(choice.describe() + "\n")
        if args.kind == "series":
            plots.series_figure(pilot, args.observe, warmup=choice.time,
                                method=choice.method, path=args.out)
            return 0
        report = api.run(program, warmup=choice.time, **settings)
    else:
        report = api.run(program, warmup=args.warmup, **settings)
    plots.report_figure(report, args.kind, args.observe, path=args.out)
    return 0
