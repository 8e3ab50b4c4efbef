"""scripts/bench.py runs (a smoke test with tiny horizons; the benchmark itself asserts nothing)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _bench(*args: str) -> list[str]:
    """Run scripts/bench.py with `args`; its table's lines."""
    out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench.py"), *args],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "failed" not in out.stdout
    return out.stdout.splitlines()


@pytest.mark.skipif(shutil.which("serq-simpy") is None, reason="serq-simpy not on PATH")
def test_bench_prints_its_table():
    lines = _bench("--scale", "0.002", "--repeat", "1", "--only", "startup", "mm1",
                   "--no-reference")
    assert lines[0].startswith("program") and "serq/SimPy" in lines[0]
    rows = {line.split("|")[0].strip(): line for line in lines[2:5]}
    assert set(rows) == {"start-up: serq-simpy --help", "start-up: check mg1.sq", "M/M/1 (mg1.sq)"}


@pytest.mark.skipif(shutil.which("serq-simpy") is None, reason="serq-simpy not on PATH")
def test_bench_times_the_hand_written_prefix_model_and_the_floor():
    """The prefix row has a hand-written SimPy contender, and --floor adds
    `python -c pass`, `import simpy`, `import simpy, numpy` and serq-simpy's
    own start-up (horizon 1e-9): all five columns carry a time."""
    lines = _bench("--scale", "0.01", "--repeat", "1", "--only", "prefix", "--no-reference",
                   "--floor")
    head = [c.strip() for c in lines[0].split("|")]
    row = dict(zip(head, (c.strip() for c in lines[2].split("|"))))
    assert row["program"] == "prefix_cache.sq" and row["horizon"] == "200"
    for col in ("SimPy wall s", "python -c pass wall s", "import simpy wall s",
                "import simpy, numpy wall s", "serq-simpy at horizon 1e-9 wall s"):
        assert float(row[col]) > 0, col


@pytest.mark.skipif(shutil.which("serq-simpy") is None, reason="serq-simpy not on PATH")
def test_bench_times_the_hand_written_replica_model():
    """The replica row has a hand-written SimPy contender
    (scripts/handwritten_replica.py), given the scaled horizon and warm-up."""
    lines = _bench("--scale", "0.05", "--repeat", "1", "--only", "replica", "--no-reference")
    head = [c.strip() for c in lines[0].split("|")]
    row = dict(zip(head, (c.strip() for c in lines[2].split("|"))))
    assert row["program"] == "replica.sq" and row["horizon"] == "20"
    assert float(row["SimPy wall s"]) > 0 and row["serq/SimPy"].endswith("×")


@pytest.mark.skipif(shutil.which("serq-simpy") is None, reason="serq-simpy not on PATH")
def test_bench_fleet_prints_events_and_cost_per_event():
    """--fleet: replica.sq and llmd_nixl_pull.sq edited to R members; each
    row has the run's event count, a time and a cost per event."""
    lines = _bench("--fleet", "--sizes", "2", "--fleet-horizon", "2", "--no-reference",
                   "--cpu")
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    assert head[:6] == ["program", "R", "events", "serq-simpy CPU s", "µs/event", "MiB"]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:4]]
    assert [r[:2] for r in rows] == [["replica", "2"], ["llmd", "2"]]
    for r in rows:
        assert int(r[2].replace(",", "")) > 0 and float(r[3]) > 0 and float(r[5]) > 0
    # the hand-written SimPy model runs beside replica.sq (llmd has none)
    assert head[-3:] == ["SimPy events", "SimPy µs/event", "ratio to SimPy"]
    assert int(rows[0][-3].replace(",", "")) > 0 and rows[0][-1].endswith("×")
    assert rows[1][-3:] == ["—"] * 3


def _fleet_module():
    """scripts/bench_fleet.py as a module (registered: its dataclasses look it up)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "bench_fleet", os.path.join(ROOT, "scripts", "bench_fleet.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_fleet", mod)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("status, events, error", [
    (0, 7, None),
    (1, 7, None),       # sessions ended stuck: the report is whole (issue 28's fleets at 400)
    (2, None, "boom"),  # a usage error, even with output, is a failure
])
def test_fleet_measures_a_run_by_its_report(status, events, error):
    """bench_fleet.run_json: a run that printed its report and exited 0 or
    1 (`serq-simpy run` exits 1 when sessions ended stuck) is measured with
    the report's event count; any other exit is a failure named by the last
    line of its standard error."""
    fleet = _fleet_module()
    code = ("import json, sys; print(json.dumps({'events': 7})); "
            f"sys.stderr.write('boom\\n'); sys.exit({status})")
    got = fleet.run_json([sys.executable, "-c", code], dict(os.environ))
    assert (got.events, got.error) == (events, error)


def test_fleet_counts_a_run_without_a_report_as_failed():
    """Exit 1 without a JSON report (an error message only) is a failure."""
    fleet = _fleet_module()
    code = "import sys; sys.stderr.write('x.sq:1:1: error: bad\\n'); sys.exit(1)"
    got = fleet.run_json([sys.executable, "-c", code], dict(os.environ))
    assert (got.events, got.error) == (None, "x.sq:1:1: error: bad")


def _measured(fleet, seconds, events):
    """A process's measurement: `seconds` of CPU time, `events` events."""
    return fleet.Measured(seconds, 0, events, cpu=seconds)


def test_fleet_growth_is_the_largest_fleets_cost_over_the_smallests():
    """Under the fleet table, each contender's cost per event at its largest R
    over its smallest (issue 28's measure), from the runs less their
    start-up: serq-simpy (3.0 - 1.0) s / 1e5 events = 20 µs at R = 4 and
    (31 - 1) s / 1e6 = 30 µs at R = 256: 1.50×; the hand-written model
    (0.3 - 0.1) s / 1e5 = 2 µs and (2.7 - 0.1) s / 1e6 = 2.6 µs: 1.30×;
    the reference ran at one size only: no ratio."""
    fleet = _fleet_module()
    rows = []
    for r, serq, hand in ((4, (3.0, 100_000), (0.3, 110_000)),
                          (256, (31.0, 1_000_000), (2.7, 1_010_000))):
        row = {"fleet": "replica", "R": r, "version": "0.1.3", "serq": _measured(fleet, *serq),
               "serq0": _measured(fleet, 1.0, 0), "hand": _measured(fleet, *hand),
               "hand0": _measured(fleet, 0.1, 10_000)}
        if r == 4:
            row["ref"], row["ref0"] = _measured(fleet, 1.0, 10), _measured(fleet, 0.5, 0)
        rows.append(row)
    assert fleet.growth(rows, cpu=True) == [
        "replica: µs/event at the largest R over the smallest: "
        "serq-simpy 1.50× (R = 4 → 256), SimPy by hand 1.30× (R = 4 → 256)"]
    assert "ratio to SimPy" in fleet.table(rows, 400, 100, cpu=True)


def test_fleet_repeat_keeps_the_fastest_whole_run():
    """--fleet-repeat: of a process's runs the one with the least time (CPU
    with --cpu, wall without), a failed run only when all failed; the table
    says how many runs each figure is the best of."""
    fleet = _fleet_module()
    slow, fast = fleet.Measured(9.0, 0, 5, cpu=2.0), fleet.Measured(3.0, 0, 5, cpu=4.0)
    failed = fleet.Measured(1.0, 0, None, "exit 2", cpu=1.0)
    assert fleet.fastest([slow, failed, fast], cpu=True) is slow
    assert fleet.fastest([slow, failed, fast], cpu=False) is fast
    assert fleet.fastest([failed]) is failed
    row = {"fleet": "replica", "R": 4, "version": "0.1.3", "serq": _measured(fleet, 2.0, 10),
           "serq0": _measured(fleet, 1.0, 0)}
    assert "the fastest of 3 runs each" in fleet.table([row], 400, 100, cpu=True, repeat=3)
    assert "one run each" in fleet.table([row], 400, 100, cpu=True)


def test_fleet_paired_cost_weighs_each_run_by_its_length():
    """--fleet-paired: the small fleet's cost per event is all its runs' CPU
    time over all their events, start-up runs taken off: runs of (2.0 s,
    100 000 events) and (5.0 s, 100 000), start-ups of 0.5 s and 10 events
    each, give (7.0 - 1.0) s / 199 980 events = 30.003 µs (the mean of the
    two runs' own costs, 15.0 and 45.0 µs, only when the runs are alike);
    the large fleet's (61.0 - 1.0) s / 1 000 000 = 60 µs: growth 2.00×; a
    failed run gives no figure."""
    fleet = _fleet_module()
    runs = [_measured(fleet, 2.0, 100_000), _measured(fleet, 5.0, 100_000)]
    starts = [_measured(fleet, 0.5, 10), _measured(fleet, 0.5, 10)]
    assert fleet.paired_cost(runs, starts) == pytest.approx(6.0 / 199_980 * 1e6)
    failed = fleet.Measured(1.0, 0, None, "exit 2", cpu=1.0)
    assert fleet.paired_cost([runs[0], failed], starts) is None
    row = {"fleet": "replica", "key": "hand", "once": "hand", "version": "0.1.3", "R0": 4,
           "R1": 256,
           "small": runs, "small0": starts, "large": _measured(fleet, 61.0, 1_000_000),
           "large0": _measured(fleet, 1.0, 0)}
    text = fleet.paired_table([row], 400, 100)
    cells = [c.strip() for c in text.splitlines()[2].strip("|").split("|")]
    assert cells == ["replica", "SimPy by hand", "4", "2", "30.0", "15.0–45.0",
                     "SimPy by hand", "256", "1,000,000", "60.0", "2.00×"]
    row["large"] = failed
    assert "replica hand: a run failed: exit 2" in fleet.paired_table([row], 400, 100)
    assert "nothing to compare" in fleet.paired_table([], 400, 100)


@pytest.mark.skipif(shutil.which("serq-simpy") is None, reason="serq-simpy not on PATH")
def test_bench_fleet_paired_runs_the_small_fleet_beside_the_large():
    """--fleet-paired: with two sizes, one row per contender, the small fleet
    run at least once beside the large one, a cost per event at both and a
    growth; with one size, a row per contender other than serq-simpy, run
    beside serq-simpy (figures of runs this short are noise: only their
    presence is checked)."""
    lines = _bench("--fleet", "--fleet-paired", "--sizes", "2", "4", "--fleet-horizon", "20",
                   "--no-reference", "--only", "replica")
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:4]]
    assert [r[:3] + r[6:8] for r in rows] == [
        ["replica", "serq-simpy", "2", "serq-simpy", "4"],
        ["replica", "SimPy by hand", "2", "SimPy by hand", "4"]]
    for r in rows:
        assert int(r[3]) >= 1 and int(r[8].replace(",", "")) > 0
        float(r[4]), float(r[9])  # (a figure, not "—")
        assert r[10].endswith("×")
    # one size: serq-simpy once, each other contender beside it
    lines = _bench("--fleet", "--fleet-paired", "--sizes", "2", "--fleet-horizon", "20",
                   "--no-reference", "--only", "replica")
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]
            if line.startswith("| replica")]
    assert [r[:3] + r[6:8] for r in rows] == [["replica", "SimPy by hand", "2", "serq-simpy",
                                               "2"]]
    # options that would do nothing here are refused
    out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench.py"), "--fleet",
                          "--fleet-paired", "--fleet-repeat", "3", "--fleet-from", "5"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 1 and \
        "--fleet-paired does not take --fleet-from, --fleet-repeat" in out.stderr


def _replica(fleet):
    """The fleet benchmark's replica.sq entry."""
    return next(f for f in fleet.FLEETS if f.key == "replica")


@pytest.mark.parametrize("load, lam", [(1.0, 6.4), (0.25, 1.6)])
def test_fleet_load_scales_the_arrival_rate(tmp_path, load, lam):
    """--fleet-load X: replica.sq edited to R = 16 gets `Lambda = 0.4·X·R`
    (issue 28's 0.4 sessions per second per replica at X = 1; the file's own
    0.1 per replica at X = 0.25), and the edited program links."""
    fleet = _fleet_module()
    path = fleet.edited(_replica(fleet), 16, tmp_path, load)
    text = path.read_text(encoding="utf-8")
    assert "\nlet R = 16;" in text
    assert f"\nlet Lambda = {lam!r};" in text
    import serq
    assert serq.load(str(path)) is not None


def test_unwatched_runs_the_same_report_without_the_watchdog(tmp_path):
    """The command line the fleet benchmark counts (`UNWATCHED`) prints the
    report `serq-simpy run` prints, and starts no watchdog (whose thread's
    instructions would follow the wall time under callgrind)."""
    fleet = _fleet_module()
    path = fleet.edited(_replica(fleet), 2, tmp_path)
    args = ["run", str(path), "--json", "--no-progress", "--horizon", "3", "--warmup", "1"]
    env = {**os.environ, "PYTHONPATH": ROOT}
    refuse = ("from serq.runtime.watch import watchdog\n"
              "def refuse(*a, **k): raise SystemExit('a watchdog was made')\n"
              "watchdog.Watchdog.__init__ = refuse\n")
    counted = subprocess.run([sys.executable, "-c", refuse + fleet.UNWATCHED, *args],
                             capture_output=True, text=True, timeout=120, env=env)
    plain = subprocess.run([sys.executable, "-m", "serq", *args], capture_output=True,
                           text=True, timeout=120, env=env)
    assert counted.returncode == 0, counted.stderr
    assert plain.returncode == 0, plain.stderr
    assert '"events"' in counted.stdout and counted.stdout == plain.stdout
