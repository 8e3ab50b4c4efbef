"""The `serq-simpy` command line (spec Part 06 §11).

Exit status: 0 success; 1 a program that does not load, a run-time error,
an output that cannot be written, a run stopped by `--max-memory`, or a run
ending with a stuck session; 2 a usage error; 130 a run interrupted with
Ctrl-C (docs/guide/limits.md). Diagnostics go to standard error; a failed command writes
no report to standard output.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
from typing import Any, Optional, Sequence

from ..core.version import __version__
from .options import count, horizon as _horizon, number as _number, policy, seed as _seed
from .guard import (EXIT_INTERRUPTED, OutputError, add_limit_options, check_stdout,
                        stopping_on_signals, write_stdout)
from ..core.deep import call_deep
from ..core.errors import SerqError, UsageError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # exit status 2, one line
        self.print_usage(sys.stderr)
        sys.stderr.write(f"serq-simpy: error: {message}\n")
        sys.exit(2)


def _warmup(text: str):
    if text == "auto":  # MSER-5 (serq.study.warmup)
        return text
    v = _number(text)
    if not (0 <= v < math.inf):
        raise argparse.ArgumentTypeError(f"the warm-up is {text}: a finite number, at least 0")
    return v


def _percentiles(text: str) -> tuple[float, ...]:
    from ..stats.summary import parse_percentiles
    try:
        return parse_percentiles(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _folder(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty folder name")
    return text


def _assignment(text: str) -> tuple[str, str]:
    name, eq, value = text.partition("=")
    if not eq or not name.strip():
        raise argparse.ArgumentTypeError(f"`{text}`: expected NAME=EXPR")
    return name.strip(), value


def _parser() -> _Parser:
    p = _Parser(prog="serq-simpy", description="Simulate serQ programs on SimPy.")
    p.add_argument("-V", "--version", action="version", version=f"serq-simpy {__version__}",
                   help="print serq-simpy's version and exit")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    sub.required = True

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("file", help="the .sq program")
        q.add_argument("--set", dest="sets", action="append", default=[], type=_assignment,
                       metavar="NAME=EXPR",
                       help="replace the value of the constant `let NAME` (repeatable)")
        q.add_argument("--def", dest="defs", action="append", default=[], type=_assignment,
                       metavar="NAME=EXPR",
                       help="replace the body of the definition `def NAME` (repeatable)")
        q.add_argument("--workload", metavar="W",
                       help="take the workload from the file W instead of the program's")

    def settings(q: argparse.ArgumentParser) -> None:
        q.add_argument("--seed", type=_seed,
                       help="the random seed, an integer 0 … 2^53 (default: the run block's, "
                            "else 1)")
        q.add_argument("--horizon", type=_horizon,
                       help="simulated time at which the run stops (overrides the run block)")
        q.add_argument("--warmup", type=_warmup, metavar="T|auto",
                       help="simulated time before which no statistic is collected (overrides "
                            "the run block); `auto`: chosen by MSER-5 from a pilot run "
                            "(run and plot)")
        q.add_argument("--arrivals", type=count,
                       help="stop admitting sessions after N arrivals and run until they end")
        q.add_argument("--trace", metavar="F",
                       help="replay the trace CSV F (relative to the working directory)")

    run = sub.add_parser("run", help="simulate and print the report")
    common(run)
    settings(run)
    run.add_argument("--json", action="store_true", help="print the JSON report")
    run.add_argument("--dump", metavar="DIR", type=_folder,
                     help="also write the samples as CSV files into DIR (created; the files "
                          "written are named on standard error)")
    run.add_argument("--percentiles", type=_percentiles, metavar="Q,Q,…",
                     help="the percentiles of every observation and client series "
                          "(default 50,90,95,99; p99 is always reported)")
    run.add_argument("--policy", action="append", default=[], type=policy,
                     metavar="NAME=module:Class",
                     help="bind a policy class (a subclass from serq.policies) to a declared "
                          "stage or pool (repeatable)")
    run.add_argument("--no-progress", action="store_true", help="no progress indicator")
    add_limit_options(run, count)
    from . import study as study_cli
    study_cli.add_run_options(run)
    study_cli.add_commands(sub, common, settings)
    study_cli.add_compare(sub, settings, _assignment, policy, count)
    check = sub.add_parser("check", help="parse, link and validate; print a summary")
    check.add_argument("--kernel", action="store_true",
                       help="print the program after the rewrites (queues, calls, "
                            "serving forms) as kernel statements")
    common(check)
    irp = sub.add_parser("ir", help="print the kernel program as JSON")
    common(irp)
    settings(irp)
    irp.add_argument("--inline-trace", action="store_true",
                     help="include the trace's rows in the printed program")
    return p


def _program_inputs(rest: Sequence[str]) -> list[tuple[str, str]]:
    """`-- --NAME VALUE` and `-- --NAME=VALUE` program inputs."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        if not arg.startswith("--") or len(arg) == 2:
            raise UsageError(f"program inputs after `--` are `--NAME VALUE`, found `{arg}`")
        body = arg[2:]
        if "=" in body:
            name, _, value = body.partition("=")
        else:
            if i + 1 >= len(rest):
                raise UsageError(f"program input `{arg}` needs a value")
            name, value = body, rest[i + 1]
            i += 1
        out.append((name, value))
        i += 1
    return out


def _to_json(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        d = {"node": type(obj).__name__}
        for f in dataclasses.fields(obj):
            d[f.name] = _to_json(getattr(obj, f.name))
        return d
    if isinstance(obj, (list, tuple)):
        return [_to_json(x) for x in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if obj != obj else ("inf" if obj > 0 else "-inf")
    return obj


def _load_policies(specs: list[tuple[str, str]]) -> dict[str, type]:
    """`--policy NAME=package.module:Class`: import each class (the binding
    to the program's names is checked once the program is loaded)."""
    if not specs:
        return {}
    from ..runtime.policy.guards import load_policy
    if os.getcwd() not in sys.path and "" not in sys.path:
        # modules of the working directory are found, after the installed ones: a
        # `pandas.py` there does not replace pandas
        sys.path.append(os.getcwd())
    out: dict[str, type] = {}
    for name, target in specs:
        try:
            out[name] = load_policy(target.strip())
        except UsageError as exc:
            raise UsageError(f"--policy {name}={target}: {exc}") from None
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the `serq-simpy` command; returns the exit status."""
    try:
        status = _main(argv)
    except KeyboardInterrupt:  # (Ctrl-C while the command line was read)
        sys.stderr.write("interrupted\n")
        status = EXIT_INTERRUPTED
    if argv is None:
        _end_lingering_threads(status)
    return status


def _end_lingering_threads(status: int) -> None:
    """The command is the process and is done: threads left running (a
    policy may start some) would keep it alive; end it with `status`."""
    import threading
    left = [t for t in threading.enumerate()
            if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if not left:
        return
    try:
        sys.stdout.flush()
        sys.stderr.write(f"serq-simpy: note: {len(left)} thread(s) started during the run "
                         f"(`{left[0].name}`) were still running; they were ended\n")
        sys.stderr.flush()
    finally:
        os._exit(status)


def _main(argv: Optional[Sequence[str]] = None) -> int:
    if argv is None:  # the process is the command (not a call from a program):
        # numpy's OpenBLAS otherwise starts a thread per core at import, which spin
        # for ~40 ms of CPU time; the command does no linear algebra (a setting stays)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    args_in = list(sys.argv[1:] if argv is None else argv)
    rest: list[str] = []
    if "--" in args_in:
        k = args_in.index("--")
        args_in, rest = args_in[:k], args_in[k + 1:]
    args = _parser().parse_args(args_in)
    if getattr(args, "quiet", False):
        sys.stderr.write("serq-simpy: warning: --quiet is deprecated and will be removed: "
                         "use --no-progress (it does the same)\n")
        args.no_progress = True
    try:
        inputs = _program_inputs(rest)
        policies = _load_policies(getattr(args, "policy", []))
    except UsageError as exc:
        sys.stderr.write(f"serq-simpy: error: {exc}\n")
        return 2
    try:
        check_stdout()
        return stopping_on_signals(lambda: _execute(args, inputs, policies,
                                                    entry=argv is None))
    except OutputError as exc:
        sys.stderr.write(f"serq-simpy: error: {exc}\n")
        return 1
    except SerqError as exc:
        sys.stderr.write(exc.format(args.file) + "\n")
        return 1
    except UsageError as exc:
        sys.stderr.write(f"serq-simpy: error: {exc}\n")
        return 2
    except OSError as exc:
        sys.stderr.write(f"{args.file}: error: {exc}\n")
        return 1
    except KeyboardInterrupt as exc:
        sys.stderr.write("interrupted\n" if getattr(exc, "signum", 2) == 2 else
                         "terminated (SIGTERM)\n")
        return getattr(exc, "status", EXIT_INTERRUPTED)
    except MemoryError:
        sys.stderr.write(f"{args.file}: error: out of memory (the process's limit, e.g. "
                         "`ulimit -v`, was reached)\nhelp: shorten the horizon, or bound the "
                         "run with --max-memory MB below the limit\n")
        return 1


def _settle_gc(entry: bool) -> None:
    """When the command is the process (`main()` without arguments, as the
    console script and `python -m serq` call it): move every object made so
    far out of the cyclic garbage collector's sight. Called before the run
    (imported modules, the loaded program: its collections at interpreter
    exit then skip them, ~20 ms of a start) and after it: the finished
    run's objects, garbage in cycles (sessions, resources and the calendar
    point to each other), are then neither visited nor freed by the
    collections the report's imports set off, nor at exit -- the process
    ends after the report (replica.sq at R = 256, horizon 400: 2.4 s from
    the run's end to the exit became 0.6 s, docs/guide/performance.md)."""
    if entry:
        import gc
        gc.freeze()


def _execute(args: argparse.Namespace, inputs: list[tuple[str, str]],
             policies: dict[str, type], entry: bool = False) -> int:
    from .. import api
    from . import study as study_cli
    if study_cli.handles(args):  # replications, sweeps, plots
        return study_cli.execute(args, inputs)
    sets = dict(args.sets)
    sets.update(inputs)
    kw: dict[str, Any] = dict(sets=sets, defs=dict(args.defs), workload=args.workload)
    if args.command == "check":
        from ..frontend import kernel_text, summary
        if args.kernel:
            write_stdout(call_deep(kernel_text, args.file, **kw))
            return 0
        program = api.load(args.file, **kw)
        _settle_gc(entry)
        write_stdout(summary(program) + "\n")
        return 0
    from . import program_cache  # a program loaded before is read back, without the front end
    program = program_cache.load(args.file, trace=args.trace, horizon=args.horizon,
                                 warmup=args.warmup, seed=args.seed, arrivals=args.arrivals,
                                 need_horizon=True, **kw)
    if args.command == "run":  # the runtime and the report are imported before the freeze
        from ..report import json_report  # noqa: F401
        from ..runtime.sim import simulation  # noqa: F401
    _settle_gc(entry)
    if args.command == "ir":
        program.settings = api.settings_for(program)
        trace = getattr(program.workload, "trace", None)
        if trace is not None and not args.inline_trace:  # refer to the file only (§11.2)
            program.workload.trace = dataclasses.replace(trace, sessions=[])
        write_stdout(call_deep(lambda: json.dumps(_to_json(program), ensure_ascii=False))
                     + "\n")
        return 0
    progress = None
    if not args.json and not args.no_progress and sys.stderr.isatty() \
            and sys.stdout.isatty():
        from ..study.progress import RunBar
        progress = RunBar(program.settings.horizon or 0.0)
    from .guard import interruptible, memory_limit
    from ..runtime.watch.watchdog import RunStopped
    try:
        report = interruptible(lambda: api.run(
            program, policies=policies, progress=progress, max_live=args.max_live,
            max_memory=memory_limit(args)))
    except RunStopped as stop:
        _settle_gc(entry)
        return _stopped(args, stop)
    finally:
        if progress is not None:
            progress.close()
    _settle_gc(entry)
    _write_report(args, report)
    return 1 if any(p.stuck for p in report.pools) else 0


def _write_report(args: argparse.Namespace, report: Any, stop: Any = None) -> None:
    if getattr(args, "percentiles", None):
        report.percentiles = args.percentiles
    if args.dump:
        from ..report.dump import write_dump
        try:
            write_dump(report, args.dump)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            where = f" ({exc.filename})" if exc.filename else ""
            raise OutputError(f"cannot write the samples to --dump {args.dump}: "
                              f"{reason}{where}") from None
        sys.stderr.write(dump_note(report, args.dump) + "\n")
    from . import guard as cli_guard
    if args.json:
        from ..report.json_report import to_json
        write_stdout(cli_guard.stopped_json(report, stop) if stop else to_json(report) + "\n")
    else:
        from ..report.text_report import to_text
        text = to_text(report)
        write_stdout(cli_guard.stopped_text(text, stop) if stop else text)


def dump_note(report: Any, directory: str) -> str:
    """What `--dump` wrote, and where (standard error: the report stays on stdout)."""
    where = os.path.join(os.path.abspath(directory), "")
    parts = [f"{len(report.observes)} observation(s) as NAME.csv",
             "the client series and the per-request table (requests.csv) in client/"]
    if report.gauges:
        parts.append(f"{len(report.gauges)} gauge(s) in gauge/")
    return f"--dump: wrote the samples to {where} ({', '.join(parts)})"


def _stopped(args: argparse.Namespace, stop: Any) -> int:
    """A run stopped by --max-memory or Ctrl-C: its report so far, then why."""
    if stop.report is not None:
        _write_report(args, stop.report, stop)
    sys.stderr.write(stop.format(args.file) + "\n")
    if stop.report is None:
        sys.stderr.write("note: the warm-up had not ended: nothing was measured\n")
    return EXIT_INTERRUPTED if stop.kind == "interrupt" else 1


if __name__ == "__main__":
    sys.exit(main())
