"""Property tests of issue 14 with Hypothesis (strategies in fuzz_programs.py).

(a) generated well-formed programs load or are refused with a SerqError;
    when they load, a short run ends with a report or a SerqError within
    `BOUND` seconds of wall time;
(b) mutated example programs never raise anything but a SerqError (and the
    ones that still load run like (a));
(c) the same program and seed give a byte-identical report in two processes
    with different hash seeds.

The default suite runs a short profile (seconds); the tests marked slow run
the long one (20 000 programs). Hypothesis runs derandomized and without
its example database, so a CI run is repeatable; a failure it finds is kept
below as an `@example`. The counts of each run are printed at the end of
the test session (tests/conftest.py).
"""
from __future__ import annotations

import glob
import hashlib
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, example, given, settings

import serq
from serq.core.errors import SerqError
from serq.runtime.watch.watchdog import RunStopped, interrupt_all

from fuzz_programs import mutants, programs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOUND = 5.0  # seconds of CPU time for a short run (CPU, not wall: CI machines are shared)
MAX_MEMORY = 2 * 2 ** 30  # bytes: a run past it stops (the CI machine is shared)
COUNTS: dict[str, Counter] = {}


@pytest.fixture(autouse=True)
def _report_counts(request):
    """After each test, this process's counts go with its report (a user
    property), so that conftest's summary shows them under `pytest -n` too."""
    yield
    request.node.user_properties.append(
        ("fuzz_counts", {name: dict(c) for name, c in COUNTS.items()}))


def _inline_uses(path: str) -> str:
    """The program's text with `use "lib";` replaced by the library's items."""
    text = open(path, encoding="utf-8").read()

    def repl(m: re.Match) -> str:
        lib = os.path.join(os.path.dirname(path), m.group(1))
        return open(lib, encoding="utf-8").read() if os.path.exists(lib) else m.group(0)
    return re.sub(r'use\s+"([^"]+)"\s*;', repl, text)


def _seed_texts() -> list[str]:
    paths = sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.sq"), recursive=True))
    paths += sorted(glob.glob(os.path.join(ROOT, "tests", "data", "**", "*.sq"), recursive=True))
    # the bad-program corpus: small texts, each near a rule of the front end
    paths += sorted(glob.glob(os.path.join(ROOT, "tests", "bad_programs", "*.sq")))
    return [_inline_uses(p) for p in paths if os.sep + "lib" + os.sep not in p]


SEEDS = _seed_texts()


def _profile(n: int):
    return settings(max_examples=n, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))


def _try(text: str, counts: Counter, horizon: float | None = None,
         must_end: bool = True) -> None:
    """Load and (if it loads) run `text` briefly; only SerqError may come out.

    A run still going after `BOUND` seconds of CPU time is stopped (as Ctrl-C
    would); that fails the test when `must_end`, else it is counted: a
    mutant with an extreme number may be a legitimate run of hours (an
    M/M/1 at rate 5e8 to horizon 5), which only has to stop when asked."""
    counts["tried"] += 1
    try:
        program = serq.load(source=text)
    except SerqError:
        counts["refused"] += 1
        return
    counts["accepted"] += 1
    done = threading.Event()
    cpu0 = time.process_time()

    def deadline() -> None:
        while not done.wait(0.1):
            if time.process_time() - cpu0 > BOUND:
                interrupt_all()
                return
    timer = threading.Thread(target=deadline, daemon=True)
    timer.start()
    start = time.monotonic()
    try:
        kw = {} if horizon is None else {"horizon": horizon, "warmup": 0.0}
        serq.run(program, max_live=5000, max_memory=MAX_MEMORY, **kw)
        counts["reported"] += 1
    except RunStopped as stop:
        if stop.kind != "interrupt":
            counts["run_error"] += 1
        elif must_end:
            pytest.fail(f"the run did not end within {BOUND} s of CPU time:\n{text}")
        else:
            counts["stopped"] += 1
    except SerqError:
        counts["run_error"] += 1
    finally:
        done.set()
        counts["seconds"] += time.monotonic() - start


def _counts(name: str) -> Counter:
    return COUNTS.setdefault(name, Counter())


# -- (a) generated programs ----------------------------------------------------------
@_profile(40)
@given(programs())
@example("stage s0 : fifo;\npool p0 { cap 2; preempt lifo; }\nworkload { arrive poisson(2); }\n"
         "session { turn; hold p0 (1) { grow p0 (4); run s0 (1); } }\nrun { horizon 5; }\n")
def test_generated_programs_short(text):
    _try(text, _counts("generated (short)"))


@pytest.mark.slow
@_profile(4000)
@given(programs())
def test_generated_programs_long(text):
    _try(text, _counts("generated (long)"))


# -- (b) mutated examples -----------------------------------------------------------------
# found by the long profile: a service time of 1e-300 (an M/M/1 at rate 5e299)
# moves the clock by less than its resolution; the run must stop at once
_TINY_MEAN = open(os.path.join(ROOT, "examples", "single-turn", "arguments.sq"),
                  encoding="utf-8").read().replace('args.number("mean", 2)',
                                                   'args.number("mean", 1e-300)')


@_profile(150)
@given(mutants(SEEDS))
@example(_TINY_MEAN)
def test_mutated_examples_short(text):
    _try(text, _counts("mutants (short)"), horizon=5.0, must_end=False)


@pytest.mark.slow
@_profile(16000)
@given(mutants(SEEDS))
def test_mutated_examples_long(text):
    _try(text, _counts("mutants (long)"), horizon=5.0, must_end=False)


def test_the_short_profiles_ran_programs():
    """The fuzz tests above pass vacuously if every program is refused: the short
    profiles (run before this test, in file order) must load and run some."""
    for name in ("generated (short)", "mutants (short)"):
        counts = COUNTS.get(name)
        if counts is None:  # that test was deselected (-k): nothing to check
            continue
        assert counts["accepted"] > 0 and counts["reported"] > 0, (name, counts)


# -- (c) reports independent of the hash seed ---------------------------------------------
_REPORTS = r"""
import hashlib, sys
import serq
from serq.core.errors import SerqError
from serq.report.json_report import to_json
for path in sys.argv[2:]:
    try:
        rep = serq.run(serq.load(path), horizon=float(sys.argv[1]), warmup=0.0, seed=7)
        print(path, hashlib.sha256(to_json(rep).encode()).hexdigest())
    except SerqError as e:
        print(path, "error", type(e).__name__)
"""


def _digests(hashseed: str, horizon: str, paths: list[str]) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONHASHSEED=hashseed)
    r = subprocess.run([sys.executable, "-c", _REPORTS, horizon, *paths], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _example_paths() -> list[str]:
    paths = sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.sq"), recursive=True))
    return [p for p in paths if os.sep + "lib" + os.sep not in p]


def test_reports_do_not_depend_on_the_hash_seed():
    paths = _example_paths()[::4]
    a = _digests("1", "20", paths)
    b = _digests("4242", "20", paths)
    assert a == b
    assert a.count("\n") == len(paths)


@pytest.mark.slow
def test_reports_do_not_depend_on_the_hash_seed_all_examples():
    paths = _example_paths()
    assert _digests("0", "200", paths) == _digests("31337", "200", paths)
