#!/usr/bin/env python3
"""Benchmark serq-simpy against the reference and a hand-written SimPy model.

    python scripts/bench.py                     # every benchmark, best of 3
    python scripts/bench.py --repeat 5 --stat median
    python scripts/bench.py --only mm1 startup  # some rows
    python scripts/bench.py --scale 0.01        # every horizon × 0.01 (a quick look)
    python scripts/bench.py --only prefix --floor --repeat 7   # with Python's start-up
    python scripts/bench.py --fleet              # the fleet benchmark (scripts/bench_fleet.py)
    python scripts/bench.py --fleet --instructions   # ... instructions per event (callgrind)
    python scripts/bench.py --fleet --cpu --fleet-repeat 3   # ... CPU time, best of 3 each
    python scripts/bench.py --fleet --fleet-paired --sizes 4 256 --fleet-horizon 400
                                                 # ... growth, the two sizes side by side
    python scripts/bench.py --fleet --fleet-paired --sizes 64 --fleet-horizon 400
                                                 # ... serq-simpy beside the reference

Every contender runs as a process of its own, as a user runs it: serq-simpy
as the `serq-simpy` command (`run FILE --json`, start-up included; the
command on PATH, importing this checkout's `serq`), the reference as a
Python process that imports pyserq, compiles and runs the file (pyserq
0.1.5, 0.1.4 or 0.1.3, the first that accepts the program, found as
tests/oracle.py finds them), and the hand-written SimPy model where there
is one (scripts/handwritten_mm1.py for M/M/1,
scripts/handwritten_prefix_cache.py for prefix_cache.sq,
scripts/handwritten_replica.py for replica.sq). `--floor` adds
more contenders to every row: `python -c pass`, `python -c "import simpy"`
and `python -c "import simpy, numpy"` (this interpreter): the start-up no
Python program, no SimPy program, and no SimPy program that draws Part 07's
streams at numpy's pace can go below; and, in a row that runs a program,
serq-simpy itself at horizon 1e-9 (its start-up for that program: imports,
loading, building, the first streams' keys, the report). The contenders of a row
run alternately, `--repeat` times each after one untimed warm-up run
(bytecode and the grammar cache are then in place, as for an installed
package); the table shows the best (or median) wall time, the ratios of
serq-simpy's time to the others', and each contender's peak resident
memory (the largest of its runs, from `wait4`). `--cpu` reports user +
system CPU time instead of wall time (steadier on a loaded machine).

This is a benchmark, not a test: it asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

REF_DRIVER = ("import sys, pyserq\n"
              "kw = {'path': sys.argv[1], 'seed': int(sys.argv[2])}\n"
              "if sys.argv[3] != '-': kw['horizon'] = float(sys.argv[3])\n"
              "if sys.argv[4] != '-': kw['warmup'] = float(sys.argv[4])\n"
              "sys.stdout.write(pyserq.run(pyserq.compile(**kw)).json())\n")
REF_COMPILE = ("import sys, pyserq\n"
               "pyserq.compile(path=sys.argv[1])\n")
REF_IMPORT = "import pyserq\n"
REF_ORDER = ("0.1.5", "0.1.4", "0.1.3")


@dataclass
class Program:
    """One row: a program file and its horizon (None: the program's own)."""

    key: str
    title: str
    path: Optional[str]
    horizon: Optional[float]
    hand: Optional[str] = None  # the hand-written SimPy model's script, if any
    hand_warmup: bool = False  # the script takes `--warmup` (the program's, scaled)
    command: Optional[list[str]] = None  # serq-simpy arguments instead of `run`
    reference: Optional[str] = None  # the reference's start-up equivalent


PROGRAMS = [
    Program("help", "start-up: serq-simpy --help", None, None, command=["--help"],
            reference="import"),
    Program("check", "start-up: check mg1.sq", "examples/single-turn/mg1.sq", None,
            command=["check"], reference="compile"),
    Program("mm1", "M/M/1 (mg1.sq)", "examples/single-turn/mg1.sq", 250_000.0,
            hand="scripts/handwritten_mm1.py"),
    Program("vllm", "vLLM multi-turn (vllm.sq)", "examples/multi-turn/vllm.sq", 3000.0),
    Program("vllm1", "vLLM single-turn", "examples/single-turn/vllm_single_turn.sq", 1500.0),
    Program("replica", "replica.sq", "examples/multi-turn/replica.sq", None,
            hand="scripts/handwritten_replica.py", hand_warmup=True),
    Program("prefix", "prefix_cache.sq", "examples/multi-turn/prefix_cache.sq", None,
            hand="scripts/handwritten_prefix_cache.py"),
    Program("llmd", "llm-d pull (llmd_nixl_pull.sq)",
            "examples/pd-disaggregation/llmd_nixl_pull.sq", None),
    Program("tworesource", "two-resource replica", "examples/bench/two_resource_replica.sq",
            400.0),
]
STARTUP = ("help", "check")
# --floor: (key, column title, the `python -c` code)
FLOOR = (("pass", "python -c pass", "pass"), ("simpy", "import simpy", "import simpy"),
         ("numpy", "import simpy, numpy", "import simpy, numpy"))
START_AT = "1e-9"  # --floor: serq-simpy's own start-up runs the program this far
START_HORIZON = float(START_AT)
START_TITLE = f"serq-simpy at horizon {START_AT}"
# --floor's columns, in order: (contender key, column title)
FLOOR_COLUMNS = tuple((key, title) for key, title, _code in FLOOR) + (("start", START_TITLE),)


@dataclass
class Runs:
    """The measurements of one contender on one row."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    peak_kib: int = 0
    failed: Optional[str] = None

    def value(self, cpu: bool, stat: str) -> Optional[float]:
        xs = self.cpu if cpu else self.wall
        if self.failed is not None or not xs:
            return None
        return min(xs) if stat == "best" else statistics.median(xs)


def child_env() -> dict[str, str]:
    """The environment of serq-simpy's processes: this checkout's `serq`,
    bytecode caches allowed (as in an installed package)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                     else "")
    return env


def measure(argv: list[str], env: dict[str, str], runs: Runs, cwd: Path = ROOT) -> None:
    """Run `argv` once; add its wall time, CPU time and peak memory to `runs`."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode != 0:
        runs.failed = (err.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:120]
        return
    runs.wall.append(wall)
    runs.cpu.append(usage.ru_utime + usage.ru_stime)
    runs.peak_kib = max(runs.peak_kib, usage.ru_maxrss)


def serq_argv(prog: Program, exe: str, seed: int, scale: float,
              start_only: bool = False) -> list[str]:
    """serq-simpy's command for the row; `start_only`: at horizon
    `START_HORIZON` (warm-up 0), its start-up for the program."""
    if prog.command is not None:
        return [exe, *prog.command] + ([prog.path] if prog.path else [])
    argv = [exe, "run", str(prog.path), "--json", "--no-progress", "--seed", str(seed)]
    horizon, warmup = (START_HORIZON, 0.0) if start_only else settings(prog, scale)
    if horizon is not None:
        argv += ["--horizon", repr(horizon)]
    if warmup is not None:
        argv += ["--warmup", repr(warmup)]
    return argv


def settings(prog: Program, scale: float) -> tuple[Optional[float], Optional[float]]:
    """(horizon, warm-up) to pass, None for the program's own: the row's
    horizon, or with `--scale` the program's own settings scaled."""
    if scale == 1.0:
        return prog.horizon, None
    sys.path.insert(0, str(ROOT))
    import serq
    st = serq.load(str(ROOT / prog.path)).settings
    horizon = prog.horizon if prog.horizon is not None else st.horizon
    return horizon * scale, (st.warmup or 0.0) * scale


def reference_for(prog: Program, order: tuple[str, ...] = REF_ORDER
                  ) -> tuple[Optional[str], Optional[str]]:
    """(version, python) of the first reference version (of `order`) that
    compiles the program, or (None, reason)."""
    try:
        import oracle
    except ImportError:
        return None, "tests/oracle.py not found"
    reasons = []
    for version in order:
        python = oracle.interpreter(version)
        if python is None:
            continue
        if prog.path is None:
            return version, python
        out = subprocess.run([python, "-c", REF_COMPILE, str(ROOT / prog.path)],
                             capture_output=True, text=True, cwd=ROOT)
        if out.returncode == 0:
            return version, python
        reasons.append(version)
    return None, ("does not load in pyserq " + "/".join(reasons) if reasons
                  else "no reference installed (scripts/install_oracles.sh)")


def reference_argv(prog: Program, python: str, seed: int, scale: float) -> list[str]:
    if prog.reference == "import":
        return [python, "-c", REF_IMPORT]
    if prog.reference == "compile":
        return [python, "-c", REF_COMPILE, str(ROOT / prog.path)]
    horizon, warmup = settings(prog, scale)
    return [python, "-c", REF_DRIVER, str(ROOT / prog.path), str(seed),
            "-" if horizon is None else repr(horizon), "-" if warmup is None else repr(warmup)]


def hand_argv(prog: Program, seed: int, scale: float) -> list[str]:
    """The hand-written model's command: the row's horizon (the program's
    own when the row has none), scaled, and the program's warm-up, scaled,
    when the script takes one."""
    assert prog.hand is not None
    horizon, warmup = settings(prog, scale)
    if horizon is None:
        sys.path.insert(0, str(ROOT))
        import serq
        horizon = serq.load(str(ROOT / prog.path)).settings.horizon
    argv = [sys.executable, str(ROOT / prog.hand), "--horizon", repr(horizon),
            "--seed", str(seed)]
    if prog.hand_warmup and warmup is not None:
        argv += ["--warmup", repr(warmup)]
    return argv


def fmt_time(x: Optional[float]) -> str:
    return "—" if x is None else f"{x:.3f}"


def fmt_ratio(a: Optional[float], b: Optional[float]) -> str:
    return "—" if a is None or b is None or b == 0 else f"{a / b:.2f}×"


def fmt_mib(r: Optional[Runs]) -> str:
    return "—" if r is None or not r.peak_kib or r.failed else f"{r.peak_kib / 1024:.0f}"


def bench_row(prog: Program, exe: str, args: argparse.Namespace) -> dict:
    """Time one row's contenders alternately; the row's numbers."""
    env = child_env()
    contenders: dict[str, tuple[list[str], dict[str, str]]] = {
        "serq": (serq_argv(prog, exe, args.seed, args.scale), env)}
    version, python = (None, None) if args.no_reference else reference_for(prog)
    if version is not None:
        contenders["ref"] = (reference_argv(prog, python, args.seed, args.scale), dict(os.environ))
    if prog.hand is not None:
        contenders["hand"] = (hand_argv(prog, args.seed, args.scale), dict(os.environ))
    if args.floor:
        for key, _title, code in FLOOR:
            contenders[key] = ([sys.executable, "-c", code], dict(os.environ))
        if prog.command is None:
            contenders["start"] = (serq_argv(prog, exe, args.seed, args.scale, True), env)
    runs = {k: Runs() for k in contenders}
    for k, (argv, e) in contenders.items():  # warm-up: bytecode, grammar cache
        measure(argv, e, Runs())
    for _ in range(args.repeat):
        for k, (argv, e) in contenders.items():
            if runs[k].failed is None:
                measure(argv, e, runs[k])
    return {"prog": prog, "runs": runs, "version": version,
            "note": None if version is not None or args.no_reference else python}


def print_table(rows: list[dict], args: argparse.Namespace) -> None:
    what = "CPU s" if args.cpu else "wall s"
    head = ["program", "horizon", f"serq-simpy {what}", f"reference {what}", "ref",
            f"SimPy {what}", "serq/ref", "serq/SimPy", "MiB serq", "MiB ref", "MiB SimPy"]
    if args.floor:
        head += [f"{title} {what}" for _key, title in FLOOR_COLUMNS]
    lines = []
    notes = []
    for row in rows:
        prog: Program = row["prog"]
        runs = row["runs"]
        s = runs["serq"].value(args.cpu, args.stat)
        r = runs["ref"].value(args.cpu, args.stat) if "ref" in runs else None
        h = runs["hand"].value(args.cpu, args.stat) if "hand" in runs else None
        horizon = None if prog.command is not None else settings(prog, args.scale)[0]
        hz = "—" if prog.command is not None else (f"{horizon:g}" if horizon is not None
                                                    else "own")
        lines.append([prog.title, hz, fmt_time(s), fmt_time(r), row["version"] or "—",
                      fmt_time(h), fmt_ratio(s, r), fmt_ratio(s, h), fmt_mib(runs["serq"]),
                      fmt_mib(runs.get("ref")), fmt_mib(runs.get("hand"))]
                     + [fmt_time(runs[key].value(args.cpu, args.stat)) if key in runs else "—"
                        for key, _title in (FLOOR_COLUMNS if args.floor else ())])
        for k, label in (("serq", "serq-simpy"), ("ref", "reference"), ("hand", "SimPy"),
                         *FLOOR_COLUMNS):
            if k in runs and runs[k].failed:
                notes.append(f"{prog.title}: {label} failed: {runs[k].failed}")
        if row["note"]:
            notes.append(f"{prog.title}: reference: {row['note']}")
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
    out = [" | ".join(str(x).ljust(w) for x, w in zip(head, widths))]
    out.append("-|-".join("-" * w for w in widths))
    out += [" | ".join(str(x).ljust(w) for x, w in zip(line, widths)) for line in lines]
    print("\n".join(out))
    print(f"\n{args.stat} of {args.repeat} alternating runs per contender, after one warm-up "
          f"run; seed {args.seed}; each a process of its own (start-up included)")
    for n in notes:
        print("note: " + n)


def main(argv: Optional[list[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per contender (3)")
    ap.add_argument("--stat", choices=["best", "median"], default="best")
    ap.add_argument("--cpu", action="store_true", help="user + system CPU time, not wall time")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every horizon")
    ap.add_argument("--only", nargs="+", metavar="ROW",
                    help="rows: startup " + " ".join(p.key for p in PROGRAMS)
                    + " (--fleet: replica llmd)")
    ap.add_argument("--no-reference", action="store_true", help="skip the reference")
    ap.add_argument("--floor", action="store_true",
                    help="also time `python -c pass`, `import simpy`, `import simpy, numpy` "
                         "and serq-simpy at horizon 1e-9 in every row")
    ap.add_argument("--command", default=None,
                    help="the serq-simpy executable (default: `serq-simpy` on PATH)")
    ap.add_argument("--fleet", action="store_true",
                    help="the fleet benchmark instead: replica.sq and llmd_nixl_pull.sq at "
                         "--sizes replicas, per-replica load constant (scripts/bench_fleet.py)")
    ap.add_argument("--sizes", type=int, nargs="+", default=None, metavar="R",
                    help="--fleet: the fleet sizes (4 16 64 256)")
    ap.add_argument("--fleet-horizon", type=float, default=20.0, metavar="T",
                    help="--fleet: the horizon (20; the warm-up is a quarter of it)")
    ap.add_argument("--instructions", action="store_true",
                    help="--fleet: count instructions under valgrind's callgrind instead of "
                         "timing (repeatable on a loaded machine; about 50 times slower)")
    ap.add_argument("--fleet-from", type=float, default=None, metavar="T",
                    help="--fleet: the start-up run's horizon (1e-9): a cost per event counts "
                         "the events and time (or instructions) from T to the horizon")
    ap.add_argument("--fleet-repeat", type=int, default=1, metavar="N",
                    help="--fleet: N runs of each process, the contenders taking turns, the "
                         "fastest kept (1; a shared machine's noise only adds time)")
    ap.add_argument("--fleet-load", type=float, default=1.0, metavar="X",
                    help="--fleet: X times every fleet's arrival rate (1: issue 28's loads, "
                         "under which replica.sq's engines saturate; 0.25: replica.sq's own "
                         "0.1 sessions per second per replica)")
    ap.add_argument("--fleet-paired", action="store_true",
                    help="--fleet: costs compared side by side on two cores, one run once and "
                         "the other again and again beside it, so that both see the same "
                         "machine speed (CPU time): each contender's growth from the smallest "
                         "--sizes to the largest, or with one size serq-simpy's cost against "
                         "the reference's and the hand-written model's")
    ap.add_argument("--reference-sizes", type=int, nargs="+", default=None, metavar="R",
                    help="--fleet: run the reference and the hand-written SimPy model only "
                         "at these sizes (default: all)")
    args = ap.parse_args(argv)
    exe = args.command or shutil.which("serq-simpy")
    if exe is None:
        sys.exit("serq-simpy is not on PATH (pip install -e .)")
    if args.fleet:
        fleet_main(args, exe)
        return
    wanted = set(args.only or [])
    if "startup" in wanted:
        wanted |= set(STARTUP)
    rows = []
    for prog in PROGRAMS:
        if wanted and prog.key not in wanted:
            continue
        if prog.path is not None and not (ROOT / prog.path).exists():
            continue  # e.g. the two-resource replica, where it is not in this checkout
        rows.append(bench_row(prog, exe, args))
        print(f"… {prog.title} done", file=sys.stderr, flush=True)
    print_table(rows, args)


def fleet_main(args: argparse.Namespace, exe: str) -> None:
    """`--fleet`: the fleet benchmark's table (scripts/bench_fleet.py)."""
    import bench_fleet

    def reference(path: str) -> tuple[Optional[str], Optional[str]]:
        if args.no_reference:
            return None, None
        # 0.1.3 first: the reference of issue 28's measurements
        version, python = reference_for(Program(path, path, f"examples/{path}", None),
                                        ("0.1.3",) + tuple(v for v in REF_ORDER if v != "0.1.3"))
        return (version, python) if version is not None else (None, None)

    horizon = args.fleet_horizon
    sizes = tuple(args.sizes or bench_fleet.SIZES)
    if args.fleet_paired:
        if (os.cpu_count() or 1) < 2:
            sys.exit("--fleet-paired needs two cores")
        unused = [name for name, given in (
            ("--instructions", args.instructions), ("--fleet-from", args.fleet_from is not None),
            ("--fleet-repeat", args.fleet_repeat != 1),
            ("--reference-sizes", args.reference_sizes is not None)) if given]
        if unused:  # (it times CPU always, each run from its own start-up run)
            sys.exit(f"--fleet-paired does not take {', '.join(unused)}")
        rows = bench_fleet.paired(sizes, horizon, horizon / 4, args.seed, reference, exe,
                                  child_env(), REF_DRIVER,
                                  lambda text: print(text, file=sys.stderr, flush=True),
                                  tuple(args.only) if args.only else None, args.fleet_load)
        print(bench_fleet.paired_table(rows, horizon, horizon / 4, args.fleet_load))
        return
    start = bench_fleet.START if args.fleet_from is None else args.fleet_from
    rows = bench_fleet.bench(sizes, horizon, horizon / 4,
                             args.seed, reference, exe, child_env(), REF_DRIVER,
                             lambda text: print(text, file=sys.stderr, flush=True),
                             args.instructions,
                             tuple(args.reference_sizes) if args.reference_sizes else None,
                             tuple(args.only) if args.only else None, start, args.fleet_load,
                             args.fleet_repeat, args.cpu)
    print(bench_fleet.table(rows, horizon, horizon / 4, args.cpu, args.instructions, start,
                            args.fleet_load, args.fleet_repeat))


if __name__ == "__main__":
    main()
