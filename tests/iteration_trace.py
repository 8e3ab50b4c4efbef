"""Where a run first parts from the reference: the step engines' iterations,
one line each, in serq-simpy and in pyserq, and the first line that differs.

pyserq prints a line per iteration it launches when `SERQ_TRACE_ITER` is
set (0.1.3: `ITER <t> <serial>:<turn>:<p|d><tokens> … | used <u> cached
<c>`, `u` and `c` the engine's memory pool in blocks, or units without a
block, 0 for an engine without memory). `ours` writes the same lines from
serq-simpy's `StepStage._launch`, event by event (the invariant checker's
run, which takes no fast path), under any of the runner's emulations
(tests/fuzz_departures.py). Two reports that differ say that a run parted;
the first differing iteration says when, and which sessions it served:
the cause of mixed fleet program 6629's difference was found this way
(docs/departures.md).

    python tests/iteration_trace.py PROGRAM.sq [--horizon T]
        [--emulate holders_listed,...] [--version 0.1.3]

prints the number of iterations that agree and the first that does not
(exit status 1; 2 when a program or a version cannot be traced).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import ExitStack
from typing import Iterable, Optional
from unittest.mock import patch

from serq.core.errors import shortest as number  # (Rust's `{}` of an f64: `64`, `2.5`)

DRIVER = r"""
import json, sys, pyserq
prog = pyserq.compile(source=sys.stdin.read(), **json.loads(sys.argv[1]))
pyserq.run(prog)
"""


def settings(seed: int, horizon: Optional[float]) -> dict:
    """The run's settings as both implementations take them (the CLI's
    overrides): the seed, and a horizon with no warm-up when one is given."""
    return {"seed": seed} if horizon is None else {"seed": seed, "horizon": horizon, "warmup": 0.0}


def reference(text: str, version: str = "0.1.3", seed: int = 1,
              horizon: Optional[float] = None) -> list[str]:
    """pyserq's iteration lines for `text` (its `SERQ_TRACE_ITER` output)."""
    from oracle import interpreter

    python = interpreter(version)
    if python is None:
        raise RuntimeError(f"pyserq {version} is not installed (tests/oracle.py)")
    env = dict(os.environ, SERQ_TRACE_ITER="1")
    proc = subprocess.run([python, "-c", DRIVER, json.dumps(settings(seed, horizon))],
                          input=text, text=True,
                          capture_output=True, env=env, timeout=600)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        raise RuntimeError(f"pyserq {version}:\n" + "\n".join(lines[-6:]) if lines
                           else f"pyserq {version} exited with {proc.returncode}")
    return [ln for ln in proc.stderr.splitlines() if ln.startswith("ITER ")]


def ours(text: str, seed: int = 1, emulate: Iterable[str] = (),
         horizon: Optional[float] = None) -> list[str]:
    """serq-simpy's iteration lines for `text`, written as pyserq writes
    them, under the named emulations of tests/fuzz_departures.py."""
    import serq
    from serq.runtime.resources.engine import StepStage
    from serq.runtime.sim.simulation import Simulation
    import fuzz_departures

    unknown = [n for n in emulate if not callable(getattr(fuzz_departures, n, None))]
    if unknown:
        raise ValueError(f"no emulation named {', '.join(unknown)} in tests/fuzz_departures.py")
    lines: list[str] = []
    launch = StepStage._launch

    def traced(self, assign, *args, **kw):
        served = " ".join(f"{job.session.sid}:{int(job.session.turn_no)}:"
                          f"{'d' if job.mode == 'decode' else 'p'}{number(t)}"
                          for job, t, _k in assign if job.session is not None)
        mem = self.memory
        if mem is None:
            used = cached = 0.0
        else:
            block = mem.spec.block or 1.0
            used, cached = mem.used / block, mem.cached / block
        lines.append(f"ITER {self.env.now:.4f} {served} | used {number(used)} "
                     f"cached {number(cached)}")
        return launch(self, assign, *args, **kw)

    with ExitStack() as stack:
        for name in emulate:
            stack.enter_context(getattr(fuzz_departures, name)())
        stack.enter_context(patch.object(StepStage, "_launch", traced))
        program = serq.load(source=text, **settings(seed, horizon))
        Simulation(program, check_invariants=True).run()
    return lines


def first_difference(a: list[str], b: list[str]) -> Optional[int]:
    """The index of the first line where `a` and `b` differ (one may end
    first), or None when they are the same."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def main(argv: Optional[list[str]] = None) -> int:
    """Compare the traces of one program; exit status 1 when they differ."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("program")
    ap.add_argument("--horizon", type=float)
    ap.add_argument("--emulate", default="", help="emulations, comma-separated")
    ap.add_argument("--version", default="0.1.3")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    names = [n for n in args.emulate.split(",") if n]
    from serq.core.errors import SerqError

    try:
        with open(args.program, encoding="utf-8") as fh:
            text = fh.read()
        mine = ours(text, args.seed, names, args.horizon)
        theirs = reference(text, args.version, args.seed, args.horizon)
        if mine and not theirs:
            raise RuntimeError(f"pyserq {args.version} printed no iteration (SERQ_TRACE_ITER)")
    except (OSError, ValueError, RuntimeError, SerqError) as e:
        print(f"iteration_trace: {e}", file=sys.stderr)
        return 2
    at = first_difference(mine, theirs)
    if at is None:
        print(f"the same: {len(mine)} iterations")
        return 0
    print(f"{at} iterations agree; then")
    print(f"  serq-simpy:   {mine[at] if at < len(mine) else '(no more)'}")
    print(f"  pyserq {args.version}: {theirs[at] if at < len(theirs) else '(no more)'}")
    return 1


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    raise SystemExit(main())
