"""The measured-run commands `trace`, `validate` and `calibrate` (their
options are declared in `serq.study.cli`, which stays light to import;
it calls `execute` here once one of them runs)."""
from __future__ import annotations

import argparse
import sys

from ..cli_guard import write_stdout
from ..errors import UsageError


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
    from ..cli_guard import OutputError
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _validate(args: argparse.Namespace, kw: dict) -> int:
    from ..measured import read_run
    from .validate import validate
    run = read_run(args.measured, args.format)
    result = validate(args.file, run, **kw)
    _emit(args, result.to_dict(), result.text(), [result])
    return 0


def _emit(args: argparse.Namespace, data: dict, text: str, validations: list) -> None:
    if args.plot:
        from .validate_plots import draw
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
    from .calibrate import calibrate, parse_fit
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
