"""Issue 14 point 5: a long run keeps memory flat apart from the samples it
must keep, and --max-memory bounds even those (slow; the 10-million-event
measurement of examples/multi-turn/vllm.sq is in docs/guide/limits.md)."""
from __future__ import annotations

import os
import threading
import time

import pytest

import serq
from serq.api import settings_for
from serq.runtime.sim.simulation import Simulation
from serq.runtime.watch.watchdog import RunStopped, rss_bytes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VLLM = os.path.join(ROOT, "examples", "multi-turn", "vllm.sq")
PER_SAMPLE = 2048  # bytes a kept sample may cost, with its token records (measured ~700)


def _kept(sim: Simulation) -> int:
    return sum(len(s.values) for s in sim.series.values()) + len(sim.response.values)


@pytest.mark.slow
def test_vllm_memory_grows_only_with_the_samples():
    program = serq.load(VLLM)
    program.settings = settings_for(program, horizon=4000)
    sim = Simulation(program)
    marks = []
    stop = threading.Event()

    def watch():
        while not stop.wait(0.5):
            if sim.env.now > 1000 and not marks:
                marks.append((rss_bytes(), _kept(sim)))
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    sim.run()
    stop.set()
    end = (rss_bytes(), _kept(sim))
    assert marks, "the run ended before t = 1000"
    grew = end[0] - marks[0][0]
    samples = end[1] - marks[0][1]
    assert samples > 10_000
    assert grew < 20 * 2 ** 20 + PER_SAMPLE * samples, (grew, samples)


@pytest.mark.slow
def test_max_memory_bounds_a_long_run():
    program = serq.load(VLLM)
    limit = rss_bytes() + 40 * 2 ** 20
    start = time.monotonic()
    with pytest.raises(RunStopped) as info:
        serq.run(program, horizon=1e7, max_memory=limit)
    assert info.value.kind == "memory"
    rep = info.value.report
    assert rep is not None and rep.end == info.value.time and rep.events > 0
    assert rss_bytes() < limit + 60 * 2 ** 20  # stopped soon after the limit
    assert time.monotonic() - start < 900
