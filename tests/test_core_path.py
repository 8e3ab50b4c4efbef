"""The fast paths of the plain event loop give the reports of the general one.

`Simulation` runs a program without pools, engines, gauges or `arrivals N`
in `_simple_loop`, with sessions that end without a calendar entry, and an
open arrival there starts its session at once instead of through a start
entry (serq/runtime/kernel/process.py). Each shortcut is turned off here in turn
and the reports must be byte-identical.
"""
from __future__ import annotations

import os

import pytest

import serq
from serq.report.json_report import to_json
from serq.runtime.sim import simulation as simmod
from serq.runtime.kernel.process import AnnouncedSessionProcess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# plain-loop programs: fifo, ps (end-of-instant entries), several stages and
# routing, closed replacement, zero-work runs (requeue) and a warm-up
ZERO_WORK = """
let lam = 2;
stage a : fifo(2);
stage b : ps(1);
workload { arrive poisson(lam); }
session {
  turn;
  set t0 = now;
  run a (~exp(0.4));
  run b (0);
  if (~uniform(0, 1) < 0.5) { run b (~exp(0.3)); }
  observe response = now - t0;
  observe q = queue(a);
}
run { horizon 300; warmup 30; }
"""

CASES = [
    ("mg1", os.path.join(ROOT, "examples", "single-turn", "mg1.sq"), None, 3000.0),
    ("ps", os.path.join(ROOT, "examples", "single-turn", "ps.sq"), None, 3000.0),
    ("routing", os.path.join(ROOT, "examples", "multi-turn", "routing.sq"), None, 1500.0),
    ("closed", os.path.join(ROOT, "examples", "multi-turn", "closed.sq"), None, 1500.0),
    ("zero-work", None, ZERO_WORK, None),
]


def _report(path, source, horizon, *, plain=True, start_now=True) -> str:
    program = serq.load(path, source=source)
    program.settings.horizon = horizon or program.settings.horizon
    if program.settings.warmup >= program.settings.horizon:
        program.settings.warmup = 0.0
    sim = simmod.Simulation(program)
    if not plain:
        sim.simple = False
        sim.process_class = AnnouncedSessionProcess
    if not start_now:
        create = sim.create_session
        sim.create_session = lambda start_now=False: create(False)
    rep = sim.run()
    rep.name_series()
    return to_json(rep)


@pytest.mark.parametrize("name,path,source,horizon", CASES, ids=[c[0] for c in CASES])
def test_shortcuts_change_nothing(name, path, source, horizon):
    fast = _report(path, source, horizon)
    assert _report(path, source, horizon, start_now=False) == fast
    assert _report(path, source, horizon, plain=False, start_now=False) == fast


def test_plain_loop_is_taken():
    sim = simmod.Simulation(serq.load(os.path.join(ROOT, "examples", "single-turn", "mg1.sq")))
    assert sim.simple
    pooled = serq.load(os.path.join(ROOT, "examples", "multi-turn", "prefix_cache.sq"))
    assert not simmod.Simulation(pooled).simple


def test_session_error_is_raised():
    # a negative amount stops the run with the statement's message (Part 01 §8)
    src = ("stage s : fifo;\nworkload { arrive poisson(1); }\n"
           "session { turn; run s (~uniform(-2, -1)); }\nrun { horizon 10; }\n")
    with pytest.raises(serq.core.errors.SimulationError, match="run s"):
        serq.run(serq.load(source=src))
