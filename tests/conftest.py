"""Shared pytest hooks: the session's own cache directory, and the fuzz
tests' counts in the terminal summary."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile


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


def pytest_terminal_summary(terminalreporter):
    fuzz = sys.modules.get("test_fuzz") or sys.modules.get("tests.test_fuzz")
    counts = getattr(fuzz, "COUNTS", None)
    if not counts:
        return
    terminalreporter.section("fuzz counts")
    for name, c in counts.items():
        terminalreporter.write_line(
            f"{name}: tried {c['tried']}, accepted {c['accepted']}, refused {c['refused']}, "
            f"runs reported {c['reported']}, run errors {c['run_error']}, "
            f"stopped at the time bound {c['stopped']}, "
            f"run time {c['seconds']:.1f} s")
