"""A prefix a leg caches is its session's entry (spec Part 03 §8: eviction
keys read "the session's attributes" and `waiting`, whether "the entry's
session" is queued). serq-simpy kept the leg as the entry's owner: once the
leg had ended its keys read the leg's attributes and `waiting` was 0
(found by the differential campaign: drawing program 1145747 against pyserq
0.1.5, `evict by (waiting, -age)`). Every number below is pyserq 0.1.3's
at seed 1 (0.1.5 the same, `fn main` forms below).
"""
from __future__ import annotations

import pytest

import serq
from serq.report.json_report import to_dict

from oracle import UNCOMPARED, assert_samples_match, compare_reports, requires, run_reference

# Sessions 0 and 1 each cache 2 units through a leg that sets z to 5 and 1;
# the sessions' own z are 0 and 1. At 2 session 2 needs 4 of the 6 units:
# 2 are evicted, the smallest z first. The keys read the sessions' z, so
# session 0's entry goes: `c` 0 for session 0, 2 for session 1 (before: the
# legs' z, session 1's entry went).
ATTRIBUTES = """\
stage d : delay;
pool p0 { cap 6; evict by (z); }
workload { arrive batch(3); session { request; } }
server {
  set z = serial;
  branch (serial < 2) {
    fork { set z = 5 - 4 * serial; hold p0 (2) { run d (1); } cache (2) }
    join;
    run d (3);
    observe c = cachedin(p0);
  } else {
    run d (2);
    hold p0 (4) { run d (1); }
  }
}
run { horizon 20; }
"""

# Session 0 caches 2 units through a leg, then waits at `g` from 1 (session
# 1 holds it to 9.5, after caching 2 units at 1.5). At 2 session 2 needs 4:
# `evict by (waiting)` takes session 1's entry, session 0's waits (key 1);
# session 0 finds its 2 units at 9.5 (before: the ended leg's entry did not
# wait, and went first by release order: `c` 0).
WAITING = """\
stage d : delay;
pool p0 { cap 6; evict by (waiting); }
pool g { cap 1; }
workload { arrive batch(3); session { request; } }
server {
  branch (serial == 0) {
    fork { hold p0 (2) { run d (1); } cache (2) }
    join;
    hold g (1) { observe c = cachedin(p0); }
  } else {
    branch (serial == 1) {
      hold g (1) { hold p0 (2) { run d (1.5); } cache (2) run d (8); }
    } else {
      run d (2);
      hold p0 (4) { run d (1); }
    }
  }
}
run { horizon 20; }
"""

CASES = {"attributes": (ATTRIBUTES, [(0, 4.0, 0.0), (1, 4.0, 2.0)]),
         "waiting": (WAITING, [(0, 9.5, 2.0)])}

# ATTRIBUTES in 0.1.5's dialect (a server-set attribute: 0.1.5 lets the
# server set no workload attribute)
ATTRIBUTES_015 = """\
fn main() {
  stage d : delay;
  pool p0 { cap 6; evict by (z); }
  workload { arrive batch(3); }
  server {
    set z = serial;
    if (serial < 2) {
      fork { set z = 5 - 4 * serial; hold p0 (cost(p0, 2)) { run d (cost(d, 1)); } cache (cost(p0, 2)); }
      join;
      run d (cost(d, 3));
      observe c = cachedin(p0);
    } else {
      run d (cost(d, 2));
      hold p0 (cost(p0, 4)) { run d (cost(d, 1)); }
    }
  }
}
"""


def _cached(source: str, **kw) -> list:
    x = serq.run(serq.load(source=source), **kw).observes["c"]
    return list(zip(x.sessions, x.times, x.values))


@pytest.mark.parametrize("name", list(CASES))
def test_a_legs_cached_prefix_is_its_sessions_entry(name):
    source, expected = CASES[name]
    assert _cached(source) == expected


def test_in_the_fn_main_dialect():
    assert _cached(ATTRIBUTES_015, horizon=20) == CASES["attributes"][1]


@requires("0.1.3")
@pytest.mark.parametrize("name", list(CASES))
def test_against_0_1_3(name):
    """Every field and every sample (the report alone does not tell which
    session kept its entry)."""
    source = CASES[name][0]
    ref = run_reference(source, "0.1.3", samples=True)
    rep = serq.run(serq.load(source=source))
    assert not compare_reports(to_dict(rep), ref, ignore=UNCOMPARED)
    assert_samples_match(rep, ref["_samples"])


@requires("0.1.5")
def test_against_0_1_5():
    ref = run_reference(ATTRIBUTES_015, "0.1.5", samples=True, horizon=20)
    rep = serq.run(serq.load(source=ATTRIBUTES_015), horizon=20)
    assert not compare_reports(to_dict(rep), ref, ignore=UNCOMPARED)
    assert_samples_match(rep, ref["_samples"])
