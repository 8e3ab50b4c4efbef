"""Shared pytest hooks: the fuzz tests' counts in the terminal summary."""
from __future__ import annotations

import sys


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
