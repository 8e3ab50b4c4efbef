"""The iteration trace (tests/iteration_trace.py): serq-simpy's lines are
pyserq's, and the first line where two runs part is found."""
from __future__ import annotations

from fleet_programs import FAMILIES, deterministic
from iteration_trace import first_difference, number, ours, reference
from oracle import requires

TWO_ENGINES = """\
pool kv { cap 600; }
stage E : step { budget 64; cost 0.002 + 1e-4 * tokens; memory kv; }
stage F : step { budget 32; cost 0.003 + 1e-4 * tokens; }
workload { arrive batch(2); }
session { turn; hold kv (100) { run E prefill (70) growing kv; run E decode (3) growing kv; }
          run F prefill (40); run F decode (2); }
run { horizon 5; }
"""

#: pyserq 0.1.3's `SERQ_TRACE_ITER=1` output for TWO_ENGINES (seed 1): the
#: chunks a budget of 64 and 32 gives two sessions, a pool without blocks
#: in units, and 0 for the engine without memory
TWO_ENGINES_013 = [
    "ITER 0.0000 0:1:p64 | used 200 cached 0",
    "ITER 0.0084 0:1:p6 1:1:p58 | used 200 cached 0",
    "ITER 0.0168 0:1:d1 1:1:p12 | used 200 cached 0",
    "ITER 0.0201 0:1:d1 1:1:d1 | used 200 cached 0",
    "ITER 0.0223 0:1:d1 1:1:d1 | used 200 cached 0",
    "ITER 0.0245 1:1:d1 | used 100 cached 0",
    "ITER 0.0245 0:1:p32 | used 0 cached 0",
    "ITER 0.0307 0:1:p8 1:1:p24 | used 0 cached 0",
    "ITER 0.0369 0:1:d1 1:1:p16 | used 0 cached 0",
    "ITER 0.0416 0:1:d1 1:1:d1 | used 0 cached 0",
    "ITER 0.0448 1:1:d1 | used 0 cached 0",
]

#: the runner's emulations under which mixed fleet program 6629 gives
#: pyserq 0.1.3's report (docs/departures.md)
EMULATIONS_6629 = ["holders_listed", "end_without_pass", "retried_growth_advances",
                   "stalled_prefills_hold_decodes", "replacement_at_next_event"]


def test_our_lines_are_pyserqs():
    assert ours(TWO_ENGINES) == TWO_ENGINES_013


def test_numbers_are_written_as_pyserq_writes_them():
    assert [number(x) for x in (64.0, 2.5, 0.0, 743.0)] == ["64", "2.5", "0", "743"]


def test_the_first_difference():
    assert first_difference(["a", "b", "c"], ["a", "x", "c"]) == 1
    assert first_difference(["a", "b"], ["a", "b", "c"]) == 2
    assert first_difference(["a", "b"], ["a", "b"]) is None


@requires("0.1.3")
def test_against_0_1_3():
    assert reference(TWO_ENGINES) == TWO_ENGINES_013


@requires("0.1.3")
def test_mixed_program_6629_parts_only_without_the_emulations():
    """Under the emulations the two runs launch the same iterations to the
    horizon; without the listing of holders they part (the tool names the
    first iteration that differs, the way program 6629's cause was found)."""
    text = deterministic(FAMILIES["mixed"](6629))
    theirs = reference(text)
    assert first_difference(ours(text, emulate=EMULATIONS_6629), theirs) is None
    at = first_difference(ours(text, emulate=EMULATIONS_6629[1:]), theirs)
    assert at is not None and at < len(theirs)
