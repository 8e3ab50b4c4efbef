#!/usr/bin/env python3
"""Benchmark serq-simpy against a hand-written SimPy model and the reference.

    python scripts/bench.py                 # every benchmark, default sizes
    python scripts/bench.py --horizon 50000 # a quicker run
    python scripts/bench.py --repeat 3      # best of three

Each benchmark is timed in this one process run (wall time of compile +
simulate), so the ratios compare like with like on one machine at one
moment. The reference (pyserq 0.1.3, found as tests/oracle.py finds it)
runs in its own interpreter; its time is measured around `compile`+`run`
inside that interpreter, not including the interpreter's start-up.

This is a benchmark, not a test: it asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "scripts"))

REF_DRIVER = r"""
import json, sys, time, pyserq
path, horizon, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
t = time.perf_counter()
report = json.loads(pyserq.run(pyserq.compile(path, seed=seed, horizon=horizon)).json())
print(json.dumps({"seconds": time.perf_counter() - t, "report": report}))
"""


def time_serq(path: Path, horizon: float, seed: int) -> tuple[float, dict]:
    """Wall time of serq-simpy's load + run of `path`."""
    import serq
    from serq.report.json_report import to_dict
    t = time.perf_counter()
    report = serq.run(serq.load(str(path)), horizon=horizon, seed=seed)
    return time.perf_counter() - t, to_dict(report)


def time_reference(path: Path, horizon: float, seed: int, version: str = "0.1.3"):
    """Wall time of the reference on `path`, or None when it is not installed."""
    try:
        import oracle
    except ImportError:
        return None
    python = oracle.interpreter(version) if hasattr(oracle, "interpreter") else None
    if python is None:
        return None
    out = subprocess.run([str(python), "-c", REF_DRIVER, str(path), str(horizon), str(seed)],
                         capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    return data["seconds"], data["report"]


def bench_mm1(horizon: float, seed: int, repeat: int) -> None:
    """M/M/1 (examples/single-turn/mg1.sq, ρ = 0.8)."""
    import handwritten_mm1
    path = ROOT / "examples" / "single-turn" / "mg1.sq"
    serq_t = min(time_serq(path, horizon, seed)[0] for _ in range(repeat))
    hand = min(handwritten_mm1.run(lam=0.8, horizon=horizon, seed=seed)["seconds"]
               for _ in range(repeat))
    ref = time_reference(path, horizon, seed)
    print(f"M/M/1 mg1.sq, horizon {horizon:g}")
    print(f"  serq-simpy          {serq_t:8.3f} s")
    print(f"  hand-written SimPy  {hand:8.3f} s   serq-simpy / SimPy = {serq_t / hand:.2f}")
    if ref is not None:
        print(f"  reference 0.1.3     {ref[0]:8.3f} s   serq-simpy / reference = "
              f"{serq_t / ref[0]:.1f}")
    else:
        print("  reference           not installed (scripts/install_oracles.sh)")


def bench_program(title: str, path: Path, horizon: float, seed: int, repeat: int) -> None:
    """A program timed in serq-simpy and in the reference."""
    serq_t = min(time_serq(path, horizon, seed)[0] for _ in range(repeat))
    ref = time_reference(path, horizon, seed)
    print(f"{title} ({path.relative_to(ROOT)}), horizon {horizon:g}")
    print(f"  serq-simpy          {serq_t:8.3f} s")
    if ref is not None:
        print(f"  reference 0.1.3     {ref[0]:8.3f} s   serq-simpy / reference = "
              f"{serq_t / ref[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=float, default=250000.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", choices=["mm1", "pooled", "vllm"], help="run one benchmark")
    args = ap.parse_args()
    if args.only in (None, "mm1"):
        bench_mm1(args.horizon, args.seed, args.repeat)
    if args.only in (None, "pooled"):
        bench_program("pooled multi-turn sessions with a prefix cache",
                      ROOT / "examples" / "multi-turn" / "prefix_cache.sq",
                      100_000.0, args.seed, args.repeat)
    if args.only in (None, "vllm"):
        bench_program("vLLM v1, multi-turn sessions (the seeds' program)",
                      ROOT / "examples" / "multi-turn" / "vllm.sq",
                      3000.0, args.seed, args.repeat)


if __name__ == "__main__":
    main()
