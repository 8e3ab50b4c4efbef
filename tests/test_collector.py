"""The cyclic garbage collector's thresholds during a run
(`serq.runtime.kernel.collector`): raised for the run, put back after."""
from __future__ import annotations

import gc
import threading

import pytest

import serq
from serq.runtime.kernel.collector import YOUNG, fewer_collections


@pytest.fixture
def thresholds():
    """CPython's defaults for the test, the process's own put back after."""
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_a_run_raises_the_first_threshold_and_puts_it_back(thresholds, monkeypatch):
    from serq.runtime.resources.stages import Delay
    seen = []
    plain = Delay.request

    def request(self, *args):  # (a session's run: inside the run's loop)
        seen.append(gc.get_threshold())
        return plain(self, *args)

    monkeypatch.setattr(Delay, "request", request)
    serq.run(serq.load(source="""
        stage d : delay;
        workload { arrive batch(1); }
        session { turn; run d (1); }
        run { horizon 5; }
    """))
    assert seen and all(t == (YOUNG, 10, 10) for t in seen)
    assert gc.get_threshold() == (700, 10, 10)


def test_nested_and_concurrent_runs_share_one_raise(thresholds):
    inside = threading.Event()
    leave = threading.Event()

    def other() -> None:
        with fewer_collections():
            inside.set()
            leave.wait(10)

    t = threading.Thread(target=other)
    with fewer_collections():
        t.start()
        inside.wait(10)
        with fewer_collections():
            assert gc.get_threshold()[0] == YOUNG
        assert gc.get_threshold()[0] == YOUNG  # (the nested run left it raised)
    assert gc.get_threshold()[0] == YOUNG  # (the other thread's run goes on)
    leave.set()
    t.join(10)
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.parametrize("own", [(0, 10, 10), (100_000, 5, 5)],
                         ids=["automatic collection off", "a higher threshold"])
def test_a_callers_own_thresholds_stand(thresholds, own):
    gc.set_threshold(*own)
    with fewer_collections():
        assert gc.get_threshold() == own
    assert gc.get_threshold() == own


def test_thresholds_changed_during_a_run_are_kept(thresholds):
    with fewer_collections():
        gc.set_threshold(2_000, 10, 10)
    assert gc.get_threshold() == (2_000, 10, 10)
