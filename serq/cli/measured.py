"""The commands that hold a program against a measured run: `trace` (a
measured log to a replay trace), `validate` (replay and compare, request by
request) and `calibrate` (fit `let` constants, with 95 % intervals): their
parsers and how they run (`serq.measured`, `serq.study.replay`,
`serq.study.validate`, `serq.study.calibrate`)."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from ..core.errors import UsageError
from .guard import write_stdout
from .options import count, seed

MEASURED_COMMANDS = ("trace", "validate", "calibrate")
_FORMATS = ("rounds", "llmservingsim", "vllm-bench", "csv")


def _observe(text: str) -> tuple[str, str]:
    metric, eq, name = text.partition("=")
    if not eq or metric not in ("ttft", "tpot", "e2e") or not name.strip():
        raise argparse.ArgumentTypeError(f"`{text}`: expected ttft=NAME, tpot=NAME or e2e=NAME")
    return metric, name.strip()


def _replay_options(q: argparse.ArgumentParser) -> None:
    q.add_argument("--measured", required=True, metavar="RUN",
                   help="the measured run: a log file (or LLMServingSim directory); "
                        "RUN@A:B scores only the requests from fraction A to B by arrival")
    q.add_argument("--format", choices=_FORMATS, help="the log's format (default: detected)")
    q.add_argument("--seed", type=seed, help="the random seed (default: the program's)")
    q.add_argument("--horizon", type=float, help="simulated time at which the replay stops")
    q.add_argument("--observe", action="append", default=[], type=_observe,
                   metavar="METRIC=NAME",
                   help="take ttft, tpot or e2e from the program's observation NAME "
                        "(default: the client series ttft, tpot, response)")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.add_argument("--plot", metavar="PREFIX",
                   help="also draw PREFIX_requests.png (simulated vs measured per request) "
                        "and PREFIX_ecdf.png (the ECDFs overlaid); needs matplotlib")


def add_measured_commands(sub: Any, common: Callable) -> None:
    """The `trace`, `validate` and `calibrate` commands (run by `execute` below)."""
    tr = sub.add_parser("trace", help="turn a measured request log into a replay trace CSV")
    tr.add_argument("file", metavar="LOG", help="the measured log (see `validate --measured`)")
    tr.add_argument("-o", "--out", required=True, metavar="CSV", help="the trace file to write")
    tr.add_argument("--format", choices=_FORMATS, help="the log's format (default: detected)")
    tr.add_argument("--frame", metavar="CSV",
                    help="also write the run's tidy frame (serq-simpy's measured CSV)")
    va = sub.add_parser("validate", help="replay a measured run and compare, request by request")
    common(va)
    _replay_options(va)
    ca = sub.add_parser("calibrate", help="fit `let` constants to a measured run, with 95%% "
                                          "intervals")
    common(ca)
    _replay_options(ca)
    ca.add_argument("--fit", action="append", required=True, metavar="NAME=LO:HI",
                    help="a constant to fit and its bounds (repeatable)")
    ca.add_argument("--holdout", action="append", default=[], metavar="RUN",
                    help="validate the fitted program on this run, with prediction "
                         "intervals (repeatable)")
    ca.add_argument("--holdout-set", dest="holdout_sets", action="append", default=[],
                    metavar="NAME=EXPR",
                    help="replace `let NAME` in the held-out replays only (NP=2)")
    ca.add_argument("--objective", default="ttft,tpot", metavar="METRICS",
                    help="the metrics the fit matches, request by request (default ttft,tpot)")
    ca.add_argument("--match", choices=("quantiles", "requests"), default="quantiles",
                    help="match the metrics' mean and percentiles (default) or each "
                         "request's values")
    ca.add_argument("--bootstrap", type=count, default=1000, metavar="B",
                    help="session resamples for the 95%% intervals (default 1000)")
    ca.add_argument("--draws", type=count, default=20, metavar="K",
                    help="fitted-constant draws simulated for each prediction interval "
                         "(default 20)")
    ca.add_argument("--max-evals", type=count, default=30, metavar="N",
                    help="most optimizer iterations (default 30)")
    ca.add_argument("--probe", metavar="FILE",
                    help="lone-request probes: also print the direct least-squares fit of "
                         "the cost terms")
    ca.add_argument("--jobs", type=count, metavar="N", help="local worker processes")
    ca.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster")
    ca.add_argument("--quiet", action="store_true", help="no progress lines")





def execute(args: argparse.Namespace, inputs: list[tuple[str, str]]) -> int:
    """Run `trace`, `validate` or `calibrate`; returns the exit status."""
    if args.command == "trace":
        return _trace(args)
    sets = dict(args.sets)
    sets.update(inputs)
    kw = dict(sets=sets, defs=dict(args.defs), seed=args.seed, horizon=args.horizon,
              observes=dict(args.observe))
    if args.workload:
        raise UsageError("--workload does not combine with a replay: the trace is the workload")
    if args.command == "validate":
        return _validate(args, kw)
    return _calibrate(args, kw)


def _trace(args: argparse.Namespace) -> int:
    from ..measured import read_run
    from ..measured.trace import trace_text
    run = read_run(args.file, args.format)
    text = trace_text(run)
    _write(args.out, text)
    if args.frame:
        _write(args.frame, run.frame.to_csv(index=False))
    f = run.frame
    write_stdout(f"{args.out}: {f['session'].nunique()} sessions, {len(f)} requests "
                 f"({run.kind})\n")
    return 0


def _write(path: str, text: str) -> None:
    from .guard import OutputError
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _validate(args: argparse.Namespace, kw: dict) -> int:
    from ..measured import read_run
    from ..study.validate import validate
    run = read_run(args.measured, args.format)
    result = validate(args.file, run, **kw)
    _emit(args, result.to_dict(), result.text(), [result])
    return 0


def _emit(args: argparse.Namespace, data: dict, text: str, validations: list) -> None:
    if args.plot:
        from ..study.validate_plots import draw
        for i, v in enumerate(validations):
            suffix = "" if i == 0 else f"_holdout{i}"
            draw(v, f"{args.plot}{suffix}")
    if args.json:
        from ..report.json_report import dumps
        write_stdout(dumps(data) + "\n")
    else:
        write_stdout(text)


def _calibrate(args: argparse.Namespace, kw: dict) -> int:
    from ..measured import read_run
    from ..study.calibrate import calibrate, parse_fit
    fits = [parse_fit(t) for t in args.fit]
    objective = tuple(m.strip() for m in args.objective.split(",") if m.strip())
    bad = [m for m in objective if m not in ("ttft", "tpot", "e2e")]
    if bad or not objective:
        raise UsageError(f"--objective {args.objective}: metrics among ttft, tpot, e2e")
    run = read_run(args.measured, args.format)
    holdouts = [read_run(h, args.format) for h in args.holdout]
    holdout_sets = {}
    for text in args.holdout_sets:
        name, eq, value = text.partition("=")
        if not eq or not name.strip():
            raise UsageError(f"--holdout-set {text}: expected NAME=EXPR")
        holdout_sets[name.strip()] = value
    progress = None if args.quiet or args.json else (lambda msg: sys.stderr.write(msg + "\n"))
    result = calibrate(args.file, run, fits, holdouts=holdouts, holdout_sets=holdout_sets,
                       objective=objective, match=args.match,
                       bootstrap=args.bootstrap, draws=args.draws, max_evals=args.max_evals,
                       executor=args.dask, jobs=args.jobs, probe=args.probe,
                       progress=progress, **kw)
    _emit(args, result.to_dict(), result.text(), [result.fitted, *result.holdouts])
    return 0
