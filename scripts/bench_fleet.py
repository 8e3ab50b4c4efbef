"""The fleet benchmark of scripts/bench.py (`--fleet`): the cost of an event
as the number of replicas grows, per-replica load constant.

    python scripts/bench.py --fleet                       # R = 4, 16, 64, 256
    python scripts/bench.py --fleet --sizes 4 16 --fleet-horizon 10
    python scripts/bench.py --fleet --only replica --fleet-load 0.25   # a load the replicas serve
    python scripts/bench.py --fleet --instructions --only replica --sizes 4 16 64 \
        --fleet-horizon 10 --fleet-from 5        # instructions per event, horizon 5 to 10

Two programs, each edited to R members (the reference refuses a `--set` of
an array size, so both contenders run the same edited copy, written to a
temporary directory beside a copy of examples/lib):

* replica.sq: `let R` replicas, `Lambda = 0.4·R` sessions per second (the
  measurement of issue 28);
* llmd_nixl_pull.sq: `NP = ND = R/2` prefill and decode pods behind the
  gateway, `Lambda = 0.15·R` (the file's 0.6 at R = 4).

`--fleet-load X` multiplies both rates by X. At issue 28's 0.4 sessions per
second per replica, replica.sq's engines are busy all the time: the queues
and the live sessions grow through the run (the report warns that it does
not settle), so the memory a run touches grows with the horizon as well as
with R. `--fleet-load 0.25` runs it at the file's own 0.1 per replica,
where the engines keep up.

Every contender is a process of its own, as a user runs it (`serq-simpy run
FILE --json`; the reference's `pyserq.run`, as in bench.py). A row gives the
events of the run (the report's count), the whole process's wall time, the
microseconds per event after the process's start-up (its wall time at
horizon 1e-9 taken off: the start-up does not grow with the run, and would
otherwise dominate the smallest fleet), the peak resident memory, and the
reference's figures and the ratio of the two costs per event. For
replica.sq it also runs the SimPy model written by hand
(scripts/handwritten_replica.py with `--replicas R` and the same rate:
the same model, Python's `random` for its draws) and gives its cost per
event -- each calendar entry SimPy handles is one of its events -- and
serq-simpy's ratio to it. Under the table, each contender's cost per event
at the largest size over the smallest: issue 28's measure, and the
hand-written model's shows how much of a fleet's growth a lean SimPy
program pays too.

`--instructions` counts instructions instead of timing (`valgrind
--tool=callgrind`, every process under it, the cache-warming run excepted):
the count of a run hardly moves with the load of the machine, where its
time may double, so two builds or two fleet sizes can be compared on a
shared machine. The cost per event is then the instructions after the
start-up's (the run at horizon 1e-9) per event. Counted, serq-simpy runs
without its watchdog (`UNWATCHED`): the watchdog's thread looks at the run
twenty times a second of wall time, so under callgrind what the process
executes follows the wall time and the machine's load -- two identical
runs of `replica.sq` at R = 4 (issue 28's load) and horizon 5 counted 1.61
and 0.72 billion instructions with it, 0.772 and 0.767 without. Callgrind
runs a process about 50 times slower: choose a short `--fleet-horizon`, and
`--reference-sizes` to leave the reference (and the hand-written model) out
of the largest fleets (at R = 256 the reference takes minutes per simulated
second under callgrind).

This is a benchmark, not a test: it asserts nothing.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
SIZES = (4, 16, 64, 256)
START = 1e-9  # the start-up run's horizon
CALLGRIND = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")
#: serq-simpy's command line without the watchdog (`python -c UNWATCHED run …`),
#: for counting: the simulation's loop as `run` calls it, without the thread
#: that watches it (whose instructions under callgrind follow the wall time)
UNWATCHED = ("import sys\n"
             "from serq.runtime.watch import watchdog\n"
             "watchdog.watched_loop = lambda sim: sim._loop()\n"
             "from serq.cli.commands import main\n"
             "sys.exit(main(sys.argv[1:]))\n")


@dataclass
class Fleet:
    """A program and how to edit it to R members."""

    key: str
    path: str  # under examples/
    edits: Callable[[int, float], dict[str, str]]  # R, load -> {let name: value text}
    #: the SimPy model of the same program written by hand, for R and load:
    #: its script and arguments (it takes --horizon, --warmup, --seed, --json
    #: and prints its `events`), or None
    hand: Optional[Callable[[int, float], list[str]]] = None


def _replica_rate(r: int, load: float) -> float:
    """replica.sq's arrival rate at R replicas (issue 28's 0.4 a replica)."""
    return 0.4 * load * r


FLEETS = (
    Fleet("replica", "multi-turn/replica.sq",
          lambda r, load: {"R": str(r), "Lambda": repr(_replica_rate(r, load))},
          lambda r, load: ["scripts/handwritten_replica.py", "--replicas", str(r),
                           "--lam", repr(_replica_rate(r, load))]),
    Fleet("llmd", "pd-disaggregation/llmd_nixl_pull.sq",
          lambda r, load: {"NP": str(max(r // 2, 1)), "ND": str(max(r // 2, 1)),
                           "Lambda": repr(0.15 * load * r)}),
)


def edited(fleet: Fleet, r: int, tmp: Path, load: float = 1.0) -> Path:
    """The program with its `let`s edited for R members and `load` times the
    fleet's arrival rate, in `tmp` (beside a copy of examples/lib, which `use`
    paths name)."""
    text = (ROOT / "examples" / fleet.path).read_text(encoding="utf-8")
    for name, value in fleet.edits(r, load).items():
        text, n = re.subn(rf"^let {name} = [^;]*;", f"let {name} = {value};", text,
                          count=1, flags=re.M)
        if n != 1:
            raise SystemExit(f"{fleet.path}: no `let {name} = …;` line to edit")
    lib = tmp / "lib"
    if not lib.exists():
        shutil.copytree(ROOT / "examples" / "lib", lib)
    out = tmp / Path(fleet.path).parent / f"{Path(fleet.path).stem}_{r}.sq"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out


@dataclass
class Measured:
    """One process: wall seconds, peak KiB, the report's event count, CPU
    seconds (user + system), instructions (under callgrind, else None)."""

    wall: float
    peak_kib: int
    events: Optional[int]
    error: Optional[str] = None
    cpu: float = 0.0
    instructions: Optional[int] = None

    def time(self, cpu: bool) -> float:
        """CPU or wall seconds."""
        return self.cpu if cpu else self.wall


def run_json(argv: list[str], env: dict[str, str], count: bool = False) -> Measured:
    """Run `argv` (which prints a JSON report); its wall time, peak memory
    (`wait4`) and the report's `events`; `count`: under callgrind, with its
    count of instructions (the peak memory is then callgrind's)."""
    if count:  # (string hashes fixed: the count of one run is the count of the next)
        argv = [*CALLGRIND, *argv]
        env = {**env, "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.PIPE)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if proc.stderr:
            proc.stderr.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        report = _report(out.read().decode())
        # (exit 1 with a report: the run ended with stuck sessions, as an
        # overloaded fleet at a long horizon may; the run itself is whole)
        if proc.returncode != 0 and not (proc.returncode == 1 and report is not None):
            lines = [x for x in err.strip().splitlines() if not x.startswith("==")]
            last = (lines or [f"exit {proc.returncode}"])[-1]
            return Measured(wall, usage.ru_maxrss, None, last[:120])
        events = report.get("events") if report is not None else None
    found = re.search(r"^==\d+== Collected : (\d+)$", err, re.M) if count else None
    if count and found is None:
        return Measured(wall, usage.ru_maxrss, None, "no instruction count from callgrind")
    return Measured(wall, usage.ru_maxrss, events, cpu=usage.ru_utime + usage.ru_stime,
                    instructions=int(found.group(1)) if found else None)


def _report(text: str) -> Optional[dict]:
    """The JSON report a run printed, or None when it printed none."""
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def per_event(run: Measured, start: Measured, cpu: bool = False) -> Optional[float]:
    """Microseconds per event after the start-up run `start` (instructions per
    event when the runs were counted): the difference of the two runs over the
    difference of their events."""
    if run.error or start.error or not run.events:
        return None
    events = run.events - (start.events or 0)
    if events <= 0:
        return None
    if run.instructions is not None and start.instructions is not None:
        return (run.instructions - start.instructions) / events
    return (run.time(cpu) - start.time(cpu)) / events * 1e6


def fastest(runs: list[Measured], cpu: bool = False) -> Measured:
    """The fastest of repeated runs of one process (another tenant of the
    machine only ever adds time, most of all to a fleet whose working set
    is beyond the caches); a failed run when every run failed."""
    whole = [m for m in runs if not m.error]
    return min(whole, key=lambda m: m.time(cpu)) if whole else runs[0]


def bench(sizes: tuple[int, ...], horizon: float, warmup: float, seed: int,
          reference: Callable[[str], tuple[Optional[str], Optional[str]]], serq_exe: str,
          env: dict[str, str], driver: str, log: Callable[[str], None],
          count: bool = False, ref_sizes: Optional[tuple[int, ...]] = None,
          only: Optional[tuple[str, ...]] = None, start: float = START,
          load: float = 1.0, repeat: int = 1, cpu: bool = False) -> list[dict]:
    """Every fleet at every size: serq-simpy, the reference (`reference(path
    under examples/)` -> (version, python), version None: none) and the
    SimPy model written by hand where the fleet has one (these two only at
    `ref_sizes` when given), each at `horizon` and at the start-up horizon;
    `count`: under callgrind (`run_json`); `only`: these fleets' keys; `start`:
    the start-up run's horizon (a longer one, with the same warm-up fraction,
    leaves the first simulated seconds out of the cost per event too); `load`:
    the factor on every fleet's arrival rate; `repeat`: runs of each process,
    the contenders taking turns, the fastest kept (by CPU time with `cpu`)."""
    rows = []
    start_warmup = 0.0 if start == START else start * warmup / horizon
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for fleet in FLEETS:
            if only and fleet.key not in only:
                continue
            version, python = reference(fleet.path)
            for r in sizes:
                path = edited(fleet, r, tmp, load)
                row: dict = {"fleet": fleet.key, "R": r, "version": version}

                def serq(h: float, w: float, c: bool) -> Measured:
                    exe = [sys.executable, "-c", UNWATCHED] if c else [serq_exe]
                    return run_json([*exe, "run", str(path), "--json", "--no-progress",
                                     "--seed", str(seed), "--horizon", repr(h),
                                     "--warmup", repr(w)], env, c)
                contenders = {"serq": serq}
                if version is not None and (ref_sizes is None or r in ref_sizes):
                    def ref(h: float, w: float, c: bool) -> Measured:
                        return run_json([python, "-c", driver, str(path), str(seed), repr(h),
                                         repr(w)], dict(os.environ), c)
                    contenders["ref"] = ref
                if fleet.hand is not None and (ref_sizes is None or r in ref_sizes):
                    script = fleet.hand(r, load)

                    def hand(h: float, w: float, c: bool) -> Measured:
                        return run_json([sys.executable, *script, "--json", "--seed", str(seed),
                                         "--horizon", repr(h), "--warmup", repr(w)], env, c)
                    contenders["hand"] = hand
                serq(START, 0.0, False)  # (warm: bytecode, the grammar and program caches)
                runs: dict[str, list[Measured]] = {}
                for _ in range(max(repeat, 1)):
                    for key, contender in contenders.items():
                        runs.setdefault(key, []).append(contender(horizon, warmup, count))
                        runs.setdefault(key + "0", []).append(
                            contender(start, start_warmup, count))
                row.update((key, fastest(ms, cpu)) for key, ms in runs.items())
                rows.append(row)
                log(f"… {fleet.key} R={r} done: " + _summary(row, count))
    return rows


def table(rows: list[dict], horizon: float, warmup: float, cpu: bool = False,
          count: bool = False, start: float = START, load: float = 1.0,
          repeat: int = 1) -> str:
    """The rows as a Markdown table (`cpu`: CPU seconds, not wall; `count`:
    the runs were counted, instructions instead of time and memory; `load`:
    the factor the arrival rates were run at), then how each contender's
    cost per event grows from a fleet's smallest size to its largest."""
    unit = "Ir" if count else "µs"
    if count:
        head = ["program", "R", "events", "serq-simpy Ir", "Ir/event", "reference",
                "ref events", "ref Ir", "ref Ir/event", "Ir/event ratio"]
    else:
        what = "CPU s" if cpu else "wall s"
        head = ["program", "R", "events", f"serq-simpy {what}", "µs/event", "MiB", "reference",
                "ref events", f"ref {what}", "ref µs/event", "ref MiB", "µs/event ratio"]
    head += ["SimPy events", f"SimPy {unit}/event", "ratio to SimPy"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        s, s0 = row["serq"], row["serq0"]
        us = per_event(s, s0, cpu)
        cells = [row["fleet"], str(row["R"]), _n(s.events)]
        cells += [_n(s.instructions), _n(_round(us))] if count else [_t(s, cpu), _f(us), _mib(s)]
        if "ref" in row:
            r, r0 = row["ref"], row["ref0"]
            ur = per_event(r, r0, cpu)
            cells += ["pyserq " + row["version"], _n(r.events)]
            cells += [_n(r.instructions), _n(_round(ur))] if count else \
                [_t(r, cpu), _f(ur), _mib(r)]
            cells.append(_ratio(us, ur))
        else:
            cells += ["—"] * (5 if count else 6)
        if "hand" in row:
            uh = per_event(row["hand"], row["hand0"], cpu)
            cells += [_n(row["hand"].events), _n(_round(uh)) if count else _f(uh),
                      _ratio(us, uh)]
        else:
            cells += ["—"] * 3
        lines.append("| " + " | ".join(cells) + " |")
    if count:
        notes = [f"horizon {horizon:g}, warm-up {warmup:g}; instructions counted by callgrind; "
                 f"Ir/event after the start-up (the count at horizon {start:g} taken off)"]
    else:
        notes = [f"horizon {horizon:g}, warm-up {warmup:g}; µs/event after the start-up (the "
                 f"process's {what[:-2]} time at horizon {start:g} taken off); "
                 + ("one run each" if repeat <= 1 else f"the fastest of {repeat} runs each")]
    if load != 1.0:
        notes[0] += f"; arrival rates {load:g} times the fleets' (--fleet-load)"
    notes += growth(rows, cpu, unit)
    for row in rows:
        for k in ("serq", "ref", "hand"):
            if k in row and row[k].error:
                notes.append(f"{row['fleet']} R={row['R']}: {k} failed: {row[k].error}")
    return "\n".join(lines) + "\n\n" + "\n".join(notes)


def growth(rows: list[dict], cpu: bool = False, unit: str = "µs") -> list[str]:
    """For each fleet measured at two sizes or more: each contender's cost
    per event at its largest size over that at its smallest (issue 28's
    measure: at most 1.3 from R = 4 to 256 asked of serq-simpy)."""
    out = []
    for fleet in dict.fromkeys(row["fleet"] for row in rows):
        parts = []
        for key, name in (("serq", "serq-simpy"), ("ref", "reference"),
                          ("hand", "SimPy by hand")):
            costs = [(row["R"], per_event(row[key], row[key + "0"], cpu))
                     for row in rows if row["fleet"] == fleet and key in row]
            costs = [(r, c) for r, c in costs if c]
            if len(costs) >= 2:
                (r0, c0), (r1, c1) = min(costs), max(costs)
                parts.append(f"{name} {c1 / c0:.2f}× (R = {r0} → {r1})")
        if parts:
            out.append(f"{fleet}: {unit}/event at the largest R over the smallest: "
                       + ", ".join(parts))
    return out


def _ratio(a: Optional[float], b: Optional[float]) -> str:
    return f"{a / b:.1f}×" if a and b else "—"


def _summary(row: dict, count: bool) -> str:
    """A row's events and cost per event, for the progress log (a run cut
    short keeps the rows it finished)."""
    unit = "Ir" if count else "µs wall"
    parts = []
    for key, name in (("serq", "serq-simpy"), ("ref", "reference"), ("hand", "SimPy")):
        if key in row:
            cost = per_event(row[key], row[key + "0"])
            parts.append(f"{name} {_n(row[key].events)} events, "
                         f"{'—' if cost is None else f'{cost:,.1f}'} {unit}/event")
    return "; ".join(parts)


def _n(x: Optional[int]) -> str:
    return "—" if x is None else f"{x:,}"


def _t(m: Measured, cpu: bool) -> str:
    return "—" if m.error else f"{m.time(cpu):.2f}"


def _round(x: Optional[float]) -> Optional[int]:
    return None if x is None else round(x)


def _f(x: Optional[float]) -> str:
    return "—" if x is None else f"{x:.1f}"


def _mib(m: Measured) -> str:
    return "—" if m.error else f"{m.peak_kib / 1024:.0f}"
