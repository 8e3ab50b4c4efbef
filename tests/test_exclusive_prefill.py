"""`serve exclusive prefill` when the prefill that displaces the decode batch
gets no tokens (Part 04 §8.4 step 4).

A newcomer admitted as a prefill displaces the engine's tentative decode
batch and takes the full budget. When its own growth preempts it (here
`preempt by (-admission)` or `by (u)` picks it), it gets nothing; the spec
does not say what becomes of the batch it would have displaced. pyserq
0.1.3 (whose reading of exclusive prefill is what Part 04 specifies, §14)
keeps the batch: the decodes get their tokens in that iteration. serq-simpy
used to serve nobody; the newcomer, requeued at the head, was admitted
again at the next attempt and preempted itself again, so the decoders never
got a token (found by the differential runner: generator seed 80540 against
0.1.3). Likewise, an attempt whose selected prefill stalls serves no
decode batch but still admits (generator seed 109117). Every number below
is pyserq 0.1.3's at seed 1.
"""
from __future__ import annotations

import pytest

import serq
from serq.report.json_report import to_dict

from oracle import UNCOMPARED, assert_reports_match, assert_samples_match, requires, \
    run_reference

# Session 0 prefills 6 tokens at [0, 1) (its hold grows to 6 of kv's 10);
# session 1 reaches kv at 1.5. At 2 session 0's decode is tentative (7
# units), session 1 is admitted (2 units: 9) and its prefill would grow the
# hold to 6: 13 > 10. By (-admission) the latest admission, session 1
# itself, is the victim.
SELF_PREEMPTED = """\
stage E : step { budget 8; cost 1; memory kv; serve exclusive prefill; }
stage D : delay;
pool kv { cap 10; preempt by (-admission) requeue head; admit via E; }
workload { arrive batch(2); session { request; } }
server {
  branch (serial == 0) { hold kv (2) { run E prefill (6) growing kv; observe p0 = now; run E decode (3) growing kv; observe d0 = now; } }
  else { run D (1.5); hold kv (2) { observe a1 = now; run E prefill (6) growing kv; observe p1 = now; run E decode (1) growing kv; observe d1 = now; } }
}
run { horizon 20; }
"""

# Three sessions at 0: 0 and 2 decode (holds of 3 and 4 units of kv's 11),
# 1 reaches kv at 1.5 with a prefill of 8. Victims by `u` (the serial):
# session 0 first, then session 1. At 2 session 1's growth to 8 preempts
# session 0 (a tentative decoder: its token goes back), is still short and
# preempts session 1 itself; session 2's decode keeps its token.
VICTIM_THEN_SELF = """\
stage E : step { budget 8; cost 1; memory kv; serve exclusive prefill; }
stage D : delay;
pool kv { cap 11; preempt by (u) requeue head; admit via E; }
workload { arrive batch(3); init { set u = serial; } session { request; } }
server {
  branch (serial == 0) { hold kv (3) { observe a0 = now; run E decode (6) growing kv; observe d0 = now; } }
  else { branch (serial == 1) { run D (1.5); hold kv (2) { observe a1 = now; run E prefill (8) growing kv; observe p1 = now; run E decode (1) growing kv; observe d1 = now; } }
  else { hold kv (4) { observe a2 = now; run E decode (6) growing kv; observe d2 = now; } } }
}
run { horizon 30; }
"""


# Session 1 leaves `D` at 1 and waits at `reqs`, which the engine admits;
# then session 0 leaves `D`, its hold of `kv` is admitted and its prefill
# (9 tokens: 12 of kv's 8 units) joins the engine and stalls in the
# attempt that selected it. No decode batch is served then, but the engine
# still admits (Part 04 §8.4 step 4): session 1 at 1.
STALLED_THEN_ADMITS = """\
stage E : step { cost 1; serve exclusive prefill; }
stage D : delay;
pool kv { cap 8; block 4; }
pool reqs { cap 2; admit via E; }
workload { arrive batch(2); session { request; } }
server {
  branch (serial == 0) { hold reqs (1) { run D (1); hold kv (4) { observe c0 = now; run E prefill (9) growing kv; } } }
  else { run D (1); hold reqs (1) { observe b1 = now; } }
}
run { horizon 10; }
"""


def _times(rep, name: str) -> list[tuple[int, float]]:
    s = rep.observes[name]
    return [(int(k), t) for t, k in zip(s.times, s.sessions)]


def test_a_prefill_that_preempts_itself_leaves_the_decode_batch():
    """Session 0 decodes at [1, 2), [2, 3) -- the iteration in which session
    1 preempted itself -- and [3, 4): `d0` 4. Session 1 waits at the head
    until session 0's hold ends (at 3 its 2 units do not fit beside 0's
    9), is admitted at 4, prefills at [4, 5) and decodes at [5, 6): six
    iterations, one preemption. Before: `d0` never, 19 preemptions by the
    horizon, session 1 admitted at every iteration."""
    rep = serq.run(serq.load(source=SELF_PREEMPTED))
    assert _times(rep, "p0") == [(0, 1.0)]
    assert _times(rep, "d0") == [(0, 4.0)]
    assert _times(rep, "a1") == [(1, 2.0), (1, 4.0)]
    assert (_times(rep, "p1"), _times(rep, "d1")) == ([(1, 5.0)], [(1, 6.0)])
    d = to_dict(rep)
    assert d["pools"][0]["preemptions"] == 1 and d["stages"][0]["iterations"] == 6
    assert d["ended"] == 2


def test_a_victim_of_the_displacing_growth_leaves_the_batch_and_the_rest_stays():
    """At 2 session 0 is preempted (its tentative token dropped) and session
    1 preempts itself; session 2 decodes at [2, 3). Session 1 is admitted
    again at 3, 4, 5 and preempts itself each time (session 2's decode goes
    on: `d2` 6), then at 6 fits and prefills at [6, 7): `p1` 7, `d1` 8.
    Session 0, requeued behind it, is admitted at 8 and ends at 14 (six
    tokens); 5 preemptions, 14 iterations. Before: sessions 0 and 2 never
    ended."""
    rep = serq.run(serq.load(source=VICTIM_THEN_SELF))
    assert _times(rep, "a0") == [(0, 0.0), (0, 8.0)]
    assert _times(rep, "d0") == [(0, 14.0)]
    assert _times(rep, "a1") == [(1, t) for t in (2.0, 3.0, 4.0, 5.0, 6.0)]
    assert (_times(rep, "p1"), _times(rep, "d1")) == ([(1, 7.0)], [(1, 8.0)])
    assert (_times(rep, "a2"), _times(rep, "d2")) == ([(2, 0.0)], [(2, 6.0)])
    d = to_dict(rep)
    assert d["pools"][0]["preemptions"] == 5 and d["stages"][0]["iterations"] == 14
    assert d["ended"] == 3


def test_an_attempt_whose_prefill_stalls_still_admits():
    """`c0` 1, `b1` 1: session 1 is admitted in the attempt in which session
    0's prefill stalls; no iteration ever runs (the prefill stays stalled),
    `reqs` admits 2, one session ends. Before: session 1 waited for an
    attempt that never came (no later event): `b1` had no sample and no
    session ended (generator seed 109117 showed it as a later admission)."""
    rep = serq.run(serq.load(source=STALLED_THEN_ADMITS))
    assert (_times(rep, "c0"), _times(rep, "b1")) == ([(0, 1.0)], [(1, 1.0)])
    d = to_dict(rep)
    assert d["stages"][0]["iterations"] == 0 and d["pools"][1]["admissions"] == 2
    assert d["ended"] == 1


@requires("0.1.3")
@pytest.mark.parametrize("source", [SELF_PREEMPTED, VICTIM_THEN_SELF, STALLED_THEN_ADMITS],
                         ids=["self_preempted", "victim_then_self", "stalled_then_admits"])
def test_against_0_1_3(source):
    """Every field of the report and every sample, as pyserq 0.1.3 gives them."""
    ref = run_reference(source, "0.1.3", samples=True)
    rep = serq.run(serq.load(source=source))
    assert_reports_match(to_dict(rep), ref, ignore=UNCOMPARED)
    assert_samples_match(rep, ref["_samples"])
