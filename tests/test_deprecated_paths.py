"""Old import paths of the policy classes (before issue 21's layout) keep
working for one release, with a `DeprecationWarning` naming serq.policies."""
from __future__ import annotations

import importlib

import pytest

import serq.policies as P

OLD = [
    ("serq.runtime.stages", "Fifo", P.Fifo), ("serq.runtime.stages", "Ps", P.Ps),
    ("serq.runtime.stages", "Delay", P.Delay), ("serq.runtime.stages", "Job", P.Job),
    ("serq.runtime.pools", "Pool", P.Pool), ("serq.runtime.pools", "CacheEntry", P.CacheEntry),
    ("serq.runtime.engine", "StepStage", P.StepStage), ("serq.runtime.engine", "Plan", P.Plan),
    ("serq.runtime.engine", "StepJob", P.StepJob), ("serq.runtime.holds", "HoldFrame", P.HoldFrame),
    ("serq.runtime.guards", "PolicyError", P.PolicyError),
    ("serq.runtime.guards", "load_policy", P.load_policy),
]


@pytest.mark.parametrize("module,name,now", OLD, ids=[f"{m}.{n}" for m, n, _ in OLD])
def test_an_old_path_gives_the_class_with_a_deprecation_warning(module, name, now):
    with pytest.warns(DeprecationWarning, match=f"{name} is deprecated: import it from serq.policies"):
        got = getattr(importlib.import_module(module), name)
    assert got is now


def test_an_old_subclass_still_binds(tmp_path):
    import serq
    with pytest.warns(DeprecationWarning):
        from serq.runtime.stages import Fifo

    class Lifo(Fifo):
        def select_next(self):
            return self.waiting.pop()

    program = serq.load(source="stage s : fifo(1);\nworkload { arrive batch(3); }\n"
                               "session { turn; set t0 = now; run s (1); observe r = now - t0; }\n"
                               "run { horizon 10; }\n")
    report = serq.run(program, policies={"s": Lifo})
    assert sorted(report.observe("r").samples) == [1, 2, 3]  # each job 1, one server
