"""Runs over several stages (`share`) recompute their rates after every
settle, as a `ps` stage does (Part 02 §10.3, Part 04 §3).

Part 02 §10.4 handles the events of one instant in the order they were
scheduled. A `ps` stage schedules its next completion after the settle in
which its population changed (pyserq 0.1.3, issue 22), not once the
instant is over; the flows of runs over several stages do the same in
pyserq 0.1.3 and 0.1.4. serq-simpy recomputed the flows only at the end of
the instant, after every stage, so a flow's completion came after a
completion that tied with it but was scheduled by a later event of the
instant (found by the differential runner: generator seed 84985, where a
session saw `est_lambda` after a `ps` completion that pyserq counts after
it). Every number below is pyserq 0.1.3's and 0.1.4's at seed 1.

Of the flows, the one whose completion comes first on the clock completes
first, and of flows whose completions fall on one time, the one that
started first -- although their remaining work may differ in the last bits
(generator seed 132724).
"""
from __future__ import annotations

import pytest

import serq
from serq.report.json_report import to_dict

from oracle import UNCOMPARED, assert_reports_match, assert_samples_match, requires, \
    run_reference

def _flow_beside(decl: str, name: str) -> str:
    """Session 0 leaves `d0` at 1 and starts a flow over m0 and m1 (rate 1:
    done at 2), then observes `busy(name)`; session 1 leaves `d0` at 1 too
    (its entry was made second) and runs 1 on stage `name` (declared
    first, as `decl`), then observes `busy(m0)`."""
    return f"""\
{decl}
stage m0 : ps(1);
stage m1 : ps(2);
stage d0 : delay;
share bottleneck;
workload {{ arrive batch(2); session {{ request; }} }}
server {{
  branch (serial == 0) {{ run d0 (1); run m0, m1 (1); observe fo = busy({name}); }}
  else {{ run d0 (1); run {name} (1); observe of = busy(m0); }}
}}
run {{ horizon 10; }}
"""


# The flow's completion is scheduled after the first settle at 1, before
# the job of `a` (rate 1: done at 2) is: at 2 session 0 sees `a` still busy
# (`fo` 1) and session 1 sees the flow gone (`of` 0). Before: `a`, a stage,
# was recomputed first at the instant's end (`fo` 0, `of` 1).
FLOW_AND_PS = _flow_beside("stage a : ps(1);", "a")

# The same with a delay stage: a program whose only `ps` stages are shared,
# which must take the per-settle path too. The delay's end at 2 is
# scheduled when session 1 joins it, after the flow's completion (`fo` 1,
# `of` 0). Before: the flow's entry was made at the instant's end, after the
# delay's (`fo` 0, `of` 1).
FLOW_AND_DELAY = _flow_beside("stage d : delay;", "d")

# FLOW_AND_PS in pyserq 0.1.4's `fn main` dialect (0.1.5 has no `share`
# statement: it is a relation's, std/share)
FLOW_AND_PS_FN_MAIN = """\
fn main() {
  stage a : ps(1);
  stage m0 : ps(1);
  stage m1 : ps(2);
  stage d0 : delay;
  share bottleneck;
  workload { arrive batch(2); session { turn; } }
  server {
    branch (serial == 0) { run d0 (cost(d0, 1)); run m0, m1 (cost(m0, m1, 1)); observe fo = busy(a); }
    else { run d0 (cost(d0, 1)); run a (cost(a, 1)); observe of = busy(m0); }
  }
}
"""


def _samples(source: str, **kw) -> dict[str, list[tuple[float, float]]]:
    rep = serq.run(serq.load(source=source), **kw)
    return {name: list(zip(s.times, s.values)) for name, s in rep.observes.items()}


@pytest.mark.parametrize("source, horizon", [(FLOW_AND_PS, None), (FLOW_AND_PS_FN_MAIN, 10.0)],
                         ids=["seed_dialect", "fn_main"])
def test_a_flow_started_first_in_an_instant_completes_first(source, horizon):
    assert _samples(source, horizon=horizon) == {"fo": [(2.0, 1.0)], "of": [(2.0, 0.0)]}


def test_flows_alone_recompute_after_every_settle():
    assert _samples(FLOW_AND_DELAY) == {"fo": [(2.0, 1.0)], "of": [(2.0, 0.0)]}


# Session 0's run on s0 (a flow of one stage) starts at 2.7; at 10.7, after
# five changes of its rate, it has 0.5000000000000002 left, and session 3's
# flow over s1 and s0 starts with 0.5, both at rate 0.2: 2.500000000000001
# and 2.5 from now, both 13.2 on the clock. pyserq completes session 0's
# run first (it started first), so session 3 observes `est_lambda(s0)`
# after both completions: 0.9798214407436665. Before, the flow's smaller
# time from now made it first, and session 3 observed 0.9707841824612781,
# before session 0's run ended (at 13.200000000000001). (Generator seed
# 132724, shrunk.)
ONE_TIME = """\
stage s0 : ps(1);
stage s1 : ps(1);
pool reqs { cap 20; block 4; }
share maxmin;
workload { arrive renewal(0.7); session { turn; turn; request; end; } }
server {
  hold reqs (10) { run s0 (1); }
  run s1, s0 (0.5);
  observe lam = est_lambda(s0);
  run s0 (3);
}
run { horizon 15; }
"""

ONE_TIME_FN_MAIN = """\
fn main() {
  stage s0 : ps(1);
  stage s1 : ps(1);
  pool reqs { cap 20; block 4; }
  share maxmin;
  workload { arrive renewal(0.7); }
  server {
    hold reqs (cost(reqs, 10)) { run s0 (cost(s0, 1)); }
    run s1, s0 (cost(s1, s0, 0.5));
    observe lam = est_lambda(s0);
    run s0 (cost(s0, 3));
  }
}
"""


@pytest.mark.parametrize("source, horizon", [(ONE_TIME, None), (ONE_TIME_FN_MAIN, 15.0)],
                         ids=["seed_dialect", "fn_main"])
def test_flows_that_complete_at_one_time_complete_in_start_order(source, horizon):
    assert _samples(source, horizon=horizon)["lam"] == [
        (2.7, 1.0), (5.2, 0.9999000099990001), (8.7, 0.9899049395276478),
        (13.2, 0.9798214407436665)]



@requires("0.1.3")
@pytest.mark.parametrize("source", [FLOW_AND_PS, FLOW_AND_DELAY, ONE_TIME],
                         ids=["ps", "delay", "one_time"])
def test_against_0_1_3(source):
    """Every field of the report and every sample, as pyserq 0.1.3 gives them."""
    ref = run_reference(source, "0.1.3", samples=True)
    rep = serq.run(serq.load(source=source))
    assert_reports_match(to_dict(rep), ref, ignore=UNCOMPARED)
    assert_samples_match(rep, ref["_samples"])


@requires("0.1.4")
@pytest.mark.parametrize("source, horizon", [(FLOW_AND_PS_FN_MAIN, 10.0), (ONE_TIME_FN_MAIN, 15.0)],
                         ids=["ps", "one_time"])
def test_against_0_1_4(source, horizon):
    ref = run_reference(source, "0.1.4", samples=True, horizon=horizon)
    rep = serq.run(serq.load(source=source), horizon=horizon)
    assert_reports_match(to_dict(rep), ref, ignore=UNCOMPARED)
    assert_samples_match(rep, ref["_samples"])
