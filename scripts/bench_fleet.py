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

`--fleet-paired` measures the growth alone, for a machine whose speed
changes from minute to minute: the largest size runs once while the
smallest runs again and again beside it on the other core, so that both go
through the same speeds (`paired`). A growth taken from two runs one after
the other is then the machine's as much as the program's.

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
import threading
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


#: The contenders' keys and their names in the tables.
NAMES = {"serq": "serq-simpy", "ref": "reference", "hand": "SimPy by hand"}
#: A contender: (horizon, warm-up, counted) -> the measured process.
Contender = Callable[[float, float, bool], Measured]


def _contenders(fleet: Fleet, r: int, path: Path, load: float, seed: int, serq_exe: str,
                env: dict[str, str], ref: tuple[Optional[str], Optional[str]], driver: str,
                hand: bool) -> dict[str, Contender]:
    """The processes that run `fleet` at `r` members (edited to `path`):
    serq-simpy, the reference when `ref` = (version, python) names one, and
    the hand-written SimPy model when the fleet has one and `hand`."""
    def serq(h: float, w: float, c: bool) -> Measured:
        exe = [sys.executable, "-c", UNWATCHED] if c else [serq_exe]
        return run_json([*exe, "run", str(path), "--json", "--no-progress",
                         "--seed", str(seed), "--horizon", repr(h), "--warmup", repr(w)], env, c)
    out: dict[str, Contender] = {"serq": serq}
    version, python = ref
    if version is not None and python is not None:
        def reference(h: float, w: float, c: bool) -> Measured:
            return run_json([python, "-c", driver, str(path), str(seed), repr(h), repr(w)],
                            dict(os.environ), c)
        out["ref"] = reference
    if fleet.hand is not None and hand:
        script = fleet.hand(r, load)

        def by_hand(h: float, w: float, c: bool) -> Measured:
            return run_json([sys.executable, *script, "--json", "--seed", str(seed),
                             "--horizon", repr(h), "--warmup", repr(w)], env, c)
        out["hand"] = by_hand
    return out


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
                others = ref_sizes is None or r in ref_sizes
                contenders = _contenders(fleet, r, path, load, seed, serq_exe, env,
                                         (version, python) if others else (None, None),
                                         driver, others)
                contenders["serq"](START, 0.0, False)  # (warm: bytecode, the caches)
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


def paired(sizes: tuple[int, ...], horizon: float, warmup: float, seed: int,
           reference: Callable[[str], tuple[Optional[str], Optional[str]]], serq_exe: str,
           env: dict[str, str], driver: str, log: Callable[[str], None],
           only: Optional[tuple[str, ...]] = None, load: float = 1.0) -> list[dict]:
    """`--fleet-paired`: costs per event compared side by side, on two cores
    (`_side_by_side`), so that both figures go through the same changes of
    the machine's speed (on a shared machine those can move a run's time by
    half or more within minutes, and a ratio of two runs taken one after
    the other measures the machine as much as the program):

    * with two sizes or more, each contender's growth: its largest fleet
      runs once, its smallest again and again beside it;
    * with one size, serq-simpy's cost against each other contender's:
      serq-simpy runs once, the other again and again beside it.

    The two share the processor's last-level cache (and, on a virtual
    machine, perhaps more), so each may slow the other a little; the
    figures carry that, in whichever direction it goes. A row per fleet and
    pair: `small`, `small0` the short runs and their start-up runs, `large`
    the long run and `large0` its start-up run (run alone, before)."""
    r0, r1 = min(sizes), max(sizes)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for fleet in FLEETS:
            if only and fleet.key not in only:
                continue
            ref = reference(fleet.path)
            small = _contenders(fleet, r0, edited(fleet, r0, tmp, load), load, seed, serq_exe,
                                env, ref, driver, True)
            large = small if r1 == r0 else _contenders(
                fleet, r1, edited(fleet, r1, tmp, load), load, seed, serq_exe, env, ref, driver,
                True)
            small["serq"](START, 0.0, False)  # (warm: bytecode, the caches)
            pairs = [(key, key) for key in small] if r1 > r0 else \
                [(key, "serq") for key in small if key != "serq"]
            for key, once in pairs:
                row: dict = {"fleet": fleet.key, "key": key, "once": once, "version": ref[0],
                             "R0": r0, "R1": r1, "large0": large[once](START, 0.0, False)}
                row["large"], row["small"], row["small0"] = _side_by_side(
                    large[once], small[key], horizon, warmup)
                rows.append(row)
                log(f"… {fleet.key}: {len(row['small'])} runs of {key} at R={r0} beside "
                    f"{once} at R={r1}")
    return rows


def _side_by_side(long: Contender, short: Contender, horizon: float,
                  warmup: float) -> tuple[Measured, list[Measured], list[Measured]]:
    """`long` runs once to `horizon` while `short` runs again and again beside
    it, each of its runs after a start-up run, until `long` ends (at least
    once): the long run, the short runs and their start-up runs."""
    done: dict[str, Measured] = {}
    thread = threading.Thread(target=lambda: done.update(m=long(horizon, warmup, False)))
    thread.start()
    runs: list[Measured] = []
    starts: list[Measured] = []
    while thread.is_alive() or not runs:
        starts.append(short(START, 0.0, False))
        runs.append(short(horizon, warmup, False))
    thread.join()
    return done["m"], runs, starts


def paired_cost(runs: list[Measured], starts: list[Measured]) -> Optional[float]:
    """CPU µs per event over several runs of one process, their start-up runs
    taken off: all their time over all their events (a slower run weighs in
    as long as it lasted, as the long run beside it lived through it);
    None when a run failed."""
    if any(m.error or not m.events for m in runs) or any(m.error for m in starts):
        return None
    events = sum(m.events for m in runs) - sum(m.events or 0 for m in starts)
    seconds = sum(m.cpu for m in runs) - sum(m.cpu for m in starts)
    return seconds / events * 1e6 if events > 0 else None


def paired_table(rows: list[dict], horizon: float, warmup: float, load: float = 1.0) -> str:
    """`paired`'s rows as a Markdown table: per pair, the short runs' CPU µs
    per event (over all of them, and their fastest and slowest run), the
    long run's, and the long one's over the short ones' (a growth, or
    serq-simpy's cost over another contender's)."""
    head = ["program", "runs again and again", "R", "runs", "µs/event", "fastest–slowest run",
            "runs once, beside", "R", "events", "µs/event", "ratio"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        small = paired_cost(row["small"], row["small0"])
        each = [paired_cost([m], [m0]) for m, m0 in zip(row["small"], row["small0"])]
        each = [c for c in each if c is not None]
        large = paired_cost([row["large"]], [row["large0"]])
        spread = f"{min(each):.1f}–{max(each):.1f}" if each else "—"
        lines.append("| " + " | ".join([
            row["fleet"], _name(row["key"], row["version"]), str(row["R0"]),
            str(len(row["small"])), _f(small), spread, _name(row["once"], row["version"]),
            str(row["R1"]), _n(row["large"].events), _f(large),
            f"{large / small:.2f}×" if small and large else "—"]) + " |")
    note = (f"horizon {horizon:g}, warm-up {warmup:g}; CPU µs/event after the start-up (the "
            f"CPU time at horizon {START:g} taken off); one run beside the other's repeated "
            "runs, on two cores")
    if load != 1.0:
        note += f"; arrival rates {load:g} times the fleets' (--fleet-load)"
    notes = [note]
    if not rows:
        notes.append("nothing to compare: with one size, serq-simpy is compared with the "
                     "reference and the hand-written model, and neither ran")
    for row in rows:
        for m in [row["large"], row["large0"], *row["small"], *row["small0"]]:
            if m.error:
                notes.append(f"{row['fleet']} {row['key']}: a run failed: {m.error}")
                break
    return "\n".join(lines) + "\n\n" + "\n".join(notes)


def _name(key: str, version: Optional[str]) -> str:
    """A contender's name in the tables."""
    return NAMES[key] + (f" {version}" if key == "ref" and version else "")


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
        for key, name in NAMES.items():
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
