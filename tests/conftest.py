"""Shared pytest hooks: the session's own cache directory, the fuzz tests'
counts in the terminal summary, and the scheduling of tests over the workers
of `pytest -n` (pytest-xdist)."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections import Counter

import pytest


def pytest_configure(config):
    """The grammar and program caches of the session's runs (in process and
    in the commands it starts) go to a folder of the session's own, removed
    at its end, not to the user's cache; a `SERQ_CACHE_DIR` the caller set
    is kept."""
    if "SERQ_CACHE_DIR" not in os.environ:
        folder = tempfile.mkdtemp(prefix="serq-simpy-tests-")
        os.environ["SERQ_CACHE_DIR"] = folder
        config.serq_cache_dir = folder


def pytest_unconfigure(config):
    folder = getattr(config, "serq_cache_dir", None)
    if folder is not None:
        os.environ.pop("SERQ_CACHE_DIR", None)
        shutil.rmtree(folder, ignore_errors=True)


_FUZZ_COUNTS: dict = {}


def pytest_runtest_logreport(report):
    """The fuzz tests' counts, as their reports carry them (in this process or
    from a pytest-xdist worker)."""
    for key, value in getattr(report, "user_properties", ()):
        if key == "fuzz_counts":
            _FUZZ_COUNTS.update({name: Counter(c) for name, c in value.items()})


def pytest_terminal_summary(terminalreporter):
    counts = _FUZZ_COUNTS
    if not counts:
        return
    terminalreporter.section("fuzz counts")
    for name, c in counts.items():
        terminalreporter.write_line(
            f"{name}: tried {c['tried']}, accepted {c['accepted']}, refused {c['refused']}, "
            f"runs reported {c['reported']}, run errors {c['run_error']}, "
            f"stopped at the time bound {c['stopped']}, "
            f"run time {c['seconds']:.1f} s")


_PAGE = re.compile(r"^tests/test_docs\.py::\w+\[(?P<page>[^\]]+\.md):\d+\]$")

#: The longest files of the slow step (`--durations`, 2026-12-07, on a machine
#: as slow as CI's of 2026-12-06: the capacity campaign 1,774 s on a pool of
#: 2 processes, the differential campaign 433 s on 2, the long fuzz profiles
#: 694 s, the repeated M/M/1 studies 280 s), sent to the workers first, in
#: this order. xdist otherwise sends the files with the most tests first and
#: these, of one to three tests each, last: in that run the capacity campaign
#: started after 20 minutes and one worker sat idle for the last 17.
_FIRST = ("tests/test_capacity_slow.py", "tests/test_differential_fuzz.py",
          "tests/test_fuzz.py", "tests/test_study_slow.py")
#: Files whose tests share nothing and run in any order: spread test by test.
_SPREAD = ("tests/test_fleet_programs.py", "tests/test_closed_runs.py")


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown without it
def pytest_xdist_make_scheduler(config, log):
    """Under `pytest -n` (its default `--dist load`, or `loadfile`): each
    file's tests on one worker in order, as loadfile does (test_fuzz's last
    test reads the counts its short profiles left), but the docs test's
    blocks by page, not as one file, so that the pages spread over the
    workers (a page's blocks stay together: a block may use what an earlier
    one made), the tests of `_SPREAD` one by one, and the files of `_FIRST`
    before all others. Another `--dist` is left to xdist."""
    if config.getvalue("dist") not in ("load", "loadfile"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class PageOrFileScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            m = _PAGE.match(nodeid)
            if m:
                return "page:" + m.group("page")
            path = nodeid.split("::", 1)[0]
            return nodeid if path in _SPREAD else path

        def _assign_work_unit(self, node) -> None:
            # the first of _FIRST still queued goes next; else xdist's order
            first = next((f for f in _FIRST if f in self.workqueue), None)
            if first is not None:
                self.workqueue.move_to_end(first, last=False)
            super()._assign_work_unit(node)

    return PageOrFileScheduling(config, log)
