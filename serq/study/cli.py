"""The study side of the command line: `run --replications/--jobs/--dask/
--warmup auto/--precision/--observe`, and the commands `sweep`, `summary`
and `plot`. `serq.cli` calls `add_run_options`, `add_commands`, `handles`
and `execute`; everything heavy is imported only when a command runs.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Optional

from ..cli import _count as _positive_int, _horizon, _policy
from ..cli_guard import write_stdout
from ..errors import UsageError

#: The statistics the sweep and summary tables show by default.
DEFAULT_TABLE_STATS = ("mean", "p99")


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
    q.add_argument("--jobs", type=_positive_int, metavar="N",
                   help="local worker processes (default: the machine's cores)")
    q.add_argument("--dask", metavar="ADDRESS",
                   help="run on a Dask distributed cluster (tcp://host:8786)")
    q.add_argument("--quiet", action="store_true", help="no progress bar")


def add_run_options(run: argparse.ArgumentParser) -> None:
    """The study options of `run`."""
    run.add_argument("--replications", type=_positive_int, default=1, metavar="R",
                     help="independent replications, seeds SEED, SEED+1, … (a study report)")
    _executor_options(run)
    run.add_argument("--precision", type=_fraction, metavar="REL",
                     help="add replications (or, with one, extend the horizon) until the "
                          "--observe statistic's relative half-width is at most REL")
    run.add_argument("--observe", metavar="NAME[:STAT]",
                     help="the series --warmup auto and --precision look at (STAT: mean, p99)")
    run.add_argument("--budget", type=_positive_int, metavar="R",
                     help="most replications a precision target may use (default 100)")
    run.add_argument("--max-horizon", type=_horizon, metavar="T",
                     help="largest horizon a one-run precision target may reach "
                          "(default 64 × the horizon)")


def add_commands(sub: Any, common: Callable, settings: Callable) -> None:
    """The `sweep`, `summary` and `plot` commands."""
    sw = sub.add_parser("sweep", help="run a program over a grid of --set values")
    common(sw)
    settings(sw)
    sw.add_argument("--grid", action="append", required=True, metavar="NAME=VALUES",
                    help="NAME=START:STOP:STEP or NAME=V1,V2,… (repeatable)")
    sw.add_argument("--replications", type=_positive_int, default=1, metavar="R",
                    help="runs per grid point, seeds SEED, SEED+1, … (the same at every point)")
    sw.add_argument("--out", metavar="DIR",
                    help="keep every finished run here; a rerun computes only what is missing")
    sw.add_argument("--retry-failed", action="store_true",
                    help="recompute the runs recorded as failed in --out")
    kept = sw.add_mutually_exclusive_group()
    kept.add_argument("--extend", dest="store_mode", action="store_const", const="extend",
                      help="--out holds another sweep (grid, program, settings): keep its "
                           "runs and add this sweep's")
    kept.add_argument("--replace", dest="store_mode", action="store_const", const="replace",
                      help="--out holds another sweep: discard its runs first")
    sw.add_argument("--json", action="store_true", help="print the summary as JSON")
    sw.add_argument("--policy", action="append", default=[], type=_policy,
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


def handles(args: argparse.Namespace) -> bool:
    """Whether the study side runs this command."""
    if args.command in ("sweep", "summary", "plot"):
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
    from .progress import CountBar, wanted
    return CountBar(0, desc) if wanted(args.quiet, json_out) else None


def _run(args: argparse.Namespace, kw: dict) -> int:
    from .replications import replicate
    if args.dump:
        raise UsageError("--dump writes one run's samples: rerun one replication with "
                         "--seed SEED+i (the study's seed rule)")
    bar = _count_bar(args, "replications", args.json or args.no_progress)
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
    from .sweeps import sweep
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
    if args.json:
        from ..report.json_report import dumps
        write_stdout(dumps({
            "grid": result.grid, "computed": result.computed, "reused": result.reused,
            "summary": result.summary.to_dict(orient="records"),
            "errors": result.errors.to_dict(orient="records")}) + "\n")
    else:
        write_stdout(summary_text(result.summary, list(result.grid), []))
        write_stdout(f"\n{result.computed} runs computed, {result.reused} read back"
                         + (f" from {args.out}" if args.out else "")
                         + f", {len(result.errors)} failed\n")
        for row in result.errors.itertuples(index=False):
            point = ", ".join(f"{p}={getattr(row, p)}" for p in result.grid)
            write_stdout(f"failed: {point}, seed {row.seed}: {row.error}\n")
    return 1 if len(result.errors) else 0


def _warning(text: str) -> None:
    sys.stderr.write(f"serq-simpy: warning: {text}\n")


def summary_text(summary: Any, params: list[str], wanted: list[str]) -> str:
    """A table: one row per grid point, one column per statistic, `mean ±hw`."""
    from ..report.text_report import fixed, table
    from .plots import parse_statistic
    pairs = set(zip(summary["section"], summary["name"]))
    if wanted:
        stats = [parse_statistic(w, pairs) for w in wanted]
        present = set(zip(summary["section"], summary["name"], summary["statistic"]))
        for w, st in zip(wanted, stats):
            if st not in present:
                known = ", ".join(sorted(k[2] for k in present if k[:2] == st[:2]))
                raise ValueError(f"--y {w}: no statistic {st[2]!r} of {st[0]} {st[1]} in "
                                 f"the results (it has {known})")
    else:
        stats = []
        for s, n, st, v in zip(summary["section"], summary["name"], summary["statistic"],
                               summary["mean"]):
            if s in ("observe", "client") and st in DEFAULT_TABLE_STATS and v == v \
                    and (s, n, st) not in stats:
                stats.append((s, n, st))
    cells: dict[tuple, dict[tuple, str]] = {}
    for row in summary.itertuples(index=False):
        key = (row.section, row.name, row.statistic)
        if key in stats:
            point = tuple(getattr(row, p) for p in params)
            cells.setdefault(point, {})[key] = (f"{fixed(row.mean, 4)} "
                                                f"±{fixed(row.half_width, 4)}")
    if not cells:
        return "no finished runs\n"
    names = [n for _s, n, _st in stats]
    header = params + [f"{s}.{n} {st}" if names.count(n) > len(
        [1 for s2, n2, st2 in stats if n2 == n and s2 == s]) else f"{n} {st}"
                       for s, n, st in stats]
    rows = [[str(v) for v in point] + [c.get(k, "") for k in stats]
            for point, c in cells.items()]
    return "\n".join(table(header, rows)[1:]) + "\n"


def _summary(args: argparse.Namespace) -> int:
    from .store import StoreError, latest_frame, read_manifest
    manifest = read_manifest(args.file)
    summary = latest_frame(args.file, "summary")
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
        from .plots import sweep_figure
        from .store import latest_frame, read_manifest
        if not args.y:
            raise UsageError("plotting a sweep needs --y STAT (e.g. --y ttft:p99)")
        manifest = read_manifest(args.file)
        sweep_figure(latest_frame(args.file, "summary"), list(manifest["grid"]), args.y,
                     x=args.x, by=args.by, path=args.out)
        return 0
    import serq
    from . import plots
    settings = dict(seed=args.seed, horizon=args.horizon, arrivals=args.arrivals)
    program = serq.load(args.file, trace=args.trace, need_horizon=True, **kw)
    if args.warmup == "auto":
        from .warmup import choose
        pilot = serq.run(program, warmup=0.0, **settings)
        choice = choose(pilot, args.observe if args.kind != "gauges" else None)
        sys.stderr.write(choice.describe() + "\n")
        if args.kind == "series":
            plots.series_figure(pilot, args.observe, warmup=choice.time,
                                method=choice.method, path=args.out)
            return 0
        report = serq.run(program, warmup=choice.time, **settings)
    else:
        report = serq.run(program, warmup=args.warmup, **settings)
    plots.report_figure(report, args.kind, args.observe, path=args.out)
    return 0
