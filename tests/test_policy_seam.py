"""The policy seam (issue 21): a policy class has its decisions and nothing
else; the state it may read is listed (`serq.policies.READABLE`) and is
there on a running resource; the fast paths are joined to a step engine only
when no decision is overridden; the generated page lists every member.
"""
from __future__ import annotations

import os
import sys

import serq
import serq.policies as P
from serq.runtime.fast.burst import Burst
from serq.runtime.policy.classes import runtime_class
from serq.runtime.resources.decision import overridden
from serq.runtime.sim.simulation import Simulation

from test_policies import ALL_KINDS, load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLASSES = (P.Fifo, P.Ps, P.Delay, P.Pool, P.StepStage)


def _members(cls: type) -> list[str]:
    return sorted(n for n in dir(cls) if n not in dir(object)
                  and not (n.startswith("__") and n.endswith("__")))


def test_a_policy_class_has_its_decisions_and_nothing_else():
    # before issue 21 a StepStage subclass inherited 56 members, 27 private
    # (the burst and closed-run machinery among them); now: the decisions,
    # and StepStage's one read-only helper
    for cls in CLASSES:
        extra = {"serve_context"} if cls is P.StepStage else set()
        assert _members(cls) == sorted(set(P.POLICY_METHODS[cls]) | extra), cls
        assert not any(m.startswith("_") for m in _members(cls))


def test_the_fast_paths_are_not_in_a_policy_subclass_inheritance():
    class Mine(P.StepStage):
        def serving_order(self, keys):
            return list(reversed(self.residents))

    assert not issubclass(Mine, Burst)
    assert not any(hasattr(Mine, m) for m in ("_burst", "_closed", "allow_burst", "_quiet"))


def _stages(policies=None) -> dict:
    sim = Simulation(load(ALL_KINDS), policies=policies)
    found = {s.name: s for s in sim.stage_list}
    found.update({p.name: p for p in sim.pool_list})
    return found


def test_fast_paths_only_for_the_built_in_decisions():
    class Plain(P.StepStage):
        pass

    class Reversed(P.StepStage):
        def serving_order(self, keys):
            return list(reversed(self.residents))

    assert isinstance(_stages()["engine"], Burst)
    assert isinstance(_stages({"engine": Plain})["engine"], Burst)
    engine = _stages({"engine": Reversed})["engine"]
    assert not isinstance(engine, Burst) and isinstance(engine, Reversed)


def test_the_readable_state_is_there_on_a_running_resource():
    sim = Simulation(load(ALL_KINDS))
    sim.run()
    kinds = {"engine": P.StepStage, "f": P.Fifo, "p": P.Ps, "d": P.Delay,
             "reqs": P.Pool, "kv": P.Pool}
    found = {s.name: s for s in sim.stage_list}
    found.update({p.name: p for p in sim.pool_list})
    for name, cls in kinds.items():
        state = P.readable_state(cls)
        assert state, cls
        missing = [a for a in state if not hasattr(found[name], a)]
        assert missing == [], (name, missing)


def test_one_helper_says_whether_a_decision_is_overridden():
    class Picky(P.Pool):
        def has_room(self, units, frame=None):
            return False

    bound = runtime_class(Picky)
    assert overridden(bound, "has_room") and not overridden(bound, "select_candidate")
    assert not overridden(runtime_class(P.Pool), "has_room")
    assert issubclass(bound, Picky) and bound.__name__ == "Picky"


def test_a_subclass_of_a_policy_class_runs_as_before():
    # the report of a bound policy that overrides nothing is the built-in's
    # (test_policies checks every kind; here the engine, whose fast paths
    # are then joined to it)
    class Plain(P.StepStage):
        pass

    a = serq.run(load(ALL_KINDS), seed=3).json()
    b = serq.run(load(ALL_KINDS), seed=3, policies={"engine": Plain}).json()
    assert a == b


def test_the_generated_page_lists_every_member_and_the_readable_state():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import docs_hooks
    finally:
        sys.path.pop(0)
    text = docs_hooks.render_policy_classes()
    for cls in CLASSES:
        assert f"## `{cls.__name__}`" in text
        for m in _members(cls):
            assert f"### `{cls.__name__}.{m}(" in text, (cls, m)
        for attr in P.readable_state(cls):
            assert f"| `{attr}` |" in text
