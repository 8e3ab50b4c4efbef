"""The policy seam (issue 6): binding user subclasses to declared stages and
pools, the decisions they override, and the rules checked after them.

Expected numbers are worked out by hand in each test from the program it
runs (deterministic work, batch arrivals). The CLI tests run
`python -m serq.cli` from the repository root, so they test this checkout.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import serq
from serq.policies import (Delay, Fifo, Pool, PolicyBindingError, PolicyError, Ps,
                           StepStage)
from serq.runtime.policy.guards import POLICY_METHODS, guarded

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(source: str, **kw):
    return serq.load(None, source=textwrap.dedent(source), **kw)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "serq.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300, stdin=subprocess.DEVNULL)


# Every kind of resource: fifo, ps, delay, a step engine with two pools (one
# admitted via the engine, one with a prefix cache and preemption).
ALL_KINDS = """
let max_seqs = 3;
pool reqs { cap max_seqs; admit via engine; }
pool kv { cap 4000; block 16; evict lru; preempt lifo; }
stage engine : step { budget 512; chunk 256; cost 0.001 + tokens * 0.0001; memory kv; }
stage f : fifo(1);
stage p : ps(1);
stage d : delay;
workload {
  arrive poisson(8);
  hidden o;
  turn { set n = floor(~uniform(100, 1500)); set o = 1 + floor(~exp(30)); }
  session { turn; request; end; }
}
server {
  set t0 = now;
  run f (~exp(0.1));
  run p (~exp(0.1));
  run d (0.05);
  hold reqs (1), kv (n) {
    run engine prefill (n) growing kv;
    observe ttft = now - t0;
    run engine decode (o - 1) growing kv;
  } cache (n + o);
  observe response = now - t0;
}
run { horizon 60; warmup 10; }
"""

BASES = {"engine": StepStage, "f": Fifo, "p": Ps, "d": Delay, "reqs": Pool, "kv": Pool}


def _json(policies=None, seed: int = 3) -> str:
    return serq.run(load(ALL_KINDS), seed=seed, policies=policies).json()


# ---------------------------------------------------------------- identity

def test_subclasses_that_override_nothing_give_the_builtin_report():
    empty = {name: type(f"Plain{base.__name__}", (base,), {}) for name, base in BASES.items()}
    builtin = _json()
    kv = serq.run(load(ALL_KINDS), seed=3).pool("kv")
    assert kv.preemptions > 0 and kv.evicted_entries > 0  # every decision is exercised
    assert _json(empty) == builtin  # byte for byte


def _passthrough(base: type) -> type:
    """A subclass overriding every decision of `base` with a call to super()."""
    ns = {}
    for m in POLICY_METHODS[base]:
        ns[m] = (lambda name: lambda self, *a: getattr(super(cls_ref[0], self), name)(*a))(m)
    cls_ref: list = []
    cls = type(f"Pass{base.__name__}", (base,), ns)
    cls_ref.append(cls)
    return cls


def test_overridden_decisions_that_decide_as_the_builtin_give_its_report():
    # every method is overridden (so each is wrapped by its check) but decides
    # as the built-in does: the checks pass and change nothing
    classes = {name: _passthrough(base) for name, base in BASES.items()}
    for name, cls in classes.items():
        assert guarded(cls, BASES[name]) is not cls or not POLICY_METHODS[BASES[name]]
    assert _json(classes) == _json()


def test_a_subclass_without_overrides_is_bound_unwrapped():
    plain = type("PlainPool", (Pool,), {})
    assert guarded(plain, Pool) is plain
    picky = type("Picky", (Pool,), {"has_room": lambda self, units, frame=None: False})
    g = guarded(picky, Pool)
    assert g is not picky and issubclass(g, picky) and g.__name__ == "Picky"
    assert g.select_candidate is Pool.select_candidate  # only the override is wrapped


# ---------------------------------------------------------------- binding errors

@pytest.mark.parametrize("policies, words", [
    ({"nope": Pool}, ["`nope`", "declares no stage or pool", "`engine`", "`kv`"]),
    ({"kv": Fifo}, ["`kv` is a pool", "serq.policies.Pool"]),
    ({"f": Ps}, ["`f` is a `fifo` stage", "serq.policies.Fifo"]),
    ({"engine": Pool}, ["`engine` is a `step` stage", "serq.policies.StepStage"]),
    ({"p": StepStage}, ["`p` is a `ps` stage", "serq.policies.Ps"]),
    ({"kv": "not.a.module:Thing"}, ["cannot import `not.a.module`"]),
    ({"kv": 42}, ["42 is not a class", "`kv` is a pool"]),
])
def test_binding_errors_are_clear(policies, words):
    with pytest.raises(PolicyBindingError) as info:
        serq.run(load(ALL_KINDS), policies=policies)
    for w in words:
        assert w in str(info.value)


def test_a_shared_stage_takes_no_policy():
    prog = load("""
    stage a : ps(1);
    stage b : ps(2);
    share maxmin;
    workload { arrive batch(1); }
    session { turn; run a, b (1); }
    run { horizon 5; }
    """)
    with pytest.raises(PolicyBindingError, match="shared"):
        serq.run(prog, policies={"a": Ps})


def test_cli_binding_errors_exit_2_with_one_paragraph():
    path = "examples/policies/step_engine.sq"
    for spec, words in [("kv=serq.policies:Pool", "declares no stage or pool `kv`"),
                        ("engine=serq.policies:Pool", "does not subclass serq.policies.StepStage"),
                        ("engine=serq.policies:Nope", "has no `Nope`"),
                        ("engine", "expected NAME=package.module:Class")]:
        res = cli("run", path, "--horizon", "5", "--warmup", "0", "--policy", spec)
        assert res.returncode == 2, (spec, res.stderr)
        assert words in res.stderr and "Traceback" not in res.stderr, res.stderr
        assert res.stdout == ""


@pytest.mark.parametrize("target, words", [
    ("serq.policies:Nope", "`serq.policies` has no `Nope`"),
    ("no_such_module_x:Cls", "cannot import `no_such_module_x` (ModuleNotFoundError"),
    ("examples/policies/none.py:Cls", "cannot import `examples/policies/none.py`"),
    ("serq.policies", "a policy is named package.module:Class"),
])
def test_load_policy_errors(target, words):
    from serq.policies import load_policy
    with pytest.raises(PolicyBindingError) as info:
        load_policy(target)
    assert words in str(info.value)


def test_load_policy_from_a_file():
    from serq.policies import load_policy
    cls = load_policy(os.path.join(ROOT, "examples/policies/priority_eviction.py")
                      + ":PremiumLastEviction")
    assert issubclass(cls, Pool) and cls.__name__ == "PremiumLastEviction"


def test_policy_given_as_a_string():
    rep = serq.run(load(ALL_KINDS), seed=3, policies={"f": "serq.policies:Fifo"})
    assert rep.json() == _json()


# ---------------------------------------------------------------- decisions take effect

BATCH3 = """
stage f : fifo(1);
workload { arrive batch(3); }
session { run f (1 + serial); observe done = now; observe who = serial; }
run { horizon 100; }
"""


def test_fifo_select_next_lifo():
    # work 1, 2, 3 arrive at 0. FIFO: done at 1, 3, 6 (sessions 0, 1, 2).
    # LIFO: session 0 starts at once (done 1); then the newest waiting, session 2
    # (done 1 + 3 = 4); then session 1 (done 4 + 2 = 6).
    class Lifo(Fifo):
        def select_next(self):
            return self.waiting.pop()

    fifo = serq.run(load(BATCH3))
    lifo = serq.run(load(BATCH3), policies={"f": Lifo})
    assert fifo.observe("done").samples == [1, 3, 6]
    assert lifo.observe("done").samples == [1, 4, 6]
    assert lifo.observe("who").samples == [0, 2, 1]


def test_ps_finish_order_breaks_ties():
    # two jobs of work 1 join ps(1) at 0: equal finish tags, both done at 2;
    # the built-in finishes them in start order, the reversed key the other way
    src = """
    stage p : ps(1);
    workload { arrive batch(2); }
    session { run p (1); observe who = serial; }
    run { horizon 100; }
    """

    class Reversed(Ps):
        def finish_order(self, job):
            return -self.seq

    assert serq.run(load(src)).observe("who").samples == [0, 1]
    rev = serq.run(load(src), policies={"p": Reversed})
    assert rev.observe("who").samples == [1, 0]
    assert rev.observe("who").times == [2, 2]


POOLED = """
pool slots { cap 1; }
stage d : delay;
workload { arrive batch(3); init { set sz = 3 - serial; } }
session { hold slots (1) { run d (sz); } observe who = serial; observe done = now; }
run { horizon 100; }
"""


def test_pool_select_candidate_takes_effect():
    # sizes 3, 2, 1 for sessions 0, 1, 2, one slot; the three holds wait in the
    # queue when the first pool pass of t = 0 runs. FIFO: sessions 0, 1, 2 done
    # at 3, 5, 6. Smallest size first: session 2 (done 1), 1 (done 3), 0 (done 6).
    class Smallest(Pool):
        def select_candidate(self):
            return min(self.queue, key=lambda fr: fr.session.attribute("sz"))

    assert serq.run(load(POOLED)).observe("who").samples == [0, 1, 2]
    rep = serq.run(load(POOLED), policies={"slots": Smallest})
    assert rep.observe("who").samples == [2, 1, 0]
    assert rep.observe("done").samples == [1, 3, 6]


def test_pool_has_room_stricter_than_the_cap():
    # cap 2, sizes 3, 2, 1. Built-in: sessions 0 and 1 hold at once (done 3 and
    # 2); session 2 takes the slot session 1 frees at 2 (done 3).
    # A fit rule that admits only into an empty pool: one holder at a time,
    # sessions 0, 1, 2 done at 3, 5, 6.
    src = POOLED.replace("cap 1", "cap 2")

    class OneAtATime(Pool):
        def has_room(self, units, frame=None):
            return self.used == 0 and super().has_room(units, frame)

    builtin = serq.run(load(src))
    assert builtin.observe("who").samples == [1, 0, 2]
    assert builtin.observe("done").samples == [2, 3, 3]
    rep = serq.run(load(src), policies={"slots": OneAtATime})
    assert rep.observe("who").samples == [0, 1, 2]
    assert rep.observe("done").samples == [3, 5, 6]


def test_engine_admission_pool_none_admits_nobody():
    class Closed(StepStage):
        def admission_pool(self, plan):
            return None

    rep = serq.run(load(ALL_KINDS), seed=3, policies={"engine": Closed})
    assert rep.pool("reqs").admissions == 0
    assert rep.stage("engine").iterations == 0
    assert rep.observe("ttft").count == 0


def test_engine_in_batch_false_serves_nobody():
    class Nobody(StepStage):
        def in_batch(self, job, plan, only):
            return False

    rep = serq.run(load(ALL_KINDS), seed=3, policies={"engine": Nobody})
    assert rep.observe("ttft").count == 0
    assert rep.stage("engine").idle_with_work is True


# ---------------------------------------------------------------- broken rules

def _broken(cls_name: str, base: type, method: str, body) -> type:
    return type(cls_name, (base,), {method: body})


class _Fake:
    def __repr__(self) -> str:
        return "<fake>"


BROKEN = [
    ("f", _broken("Peek", Fifo, "select_next", lambda self: self.waiting[0]),
     "select_next", "did not remove exactly the job it returned"),
    ("f", _broken("Ghost", Fifo, "select_next", lambda self: (self.waiting.popleft(), _Fake())[1]),
     "select_next", "not a job waiting at the stage"),
    ("p", _broken("Same", Ps, "finish_order", lambda self, job: 0),
     "finish_order", "the key of a job present"),
    ("reqs", _broken("Nothing", Pool, "select_candidate", lambda self: None),
     "select_candidate", "not a hold waiting in its queue"),
    ("kv", _broken("Always", Pool, "has_room", lambda self, units, frame=None: True),
     "has_room", "admits more than fits"),
    ("kv", _broken("Maybe", Pool, "has_room", lambda self, units, frame=None: 1),
     "has_room", "not True or False"),
    ("kv", _broken("Holder", Pool, "evict_victim",
                   lambda self, entries: self.frames[0] if self.frames else _Fake()),
     "evict_victim", "evicts a unit that is not cached"),
    ("kv", _broken("Outsider", Pool, "preempt_victim", lambda self, c: _Fake()),
     "preempt_victim", "not one of the"),
    ("engine", _broken("Extra", StepStage, "serving_order",
                       lambda self, keys: list(self.residents) + [_Fake()]),
     "serving_order", "a resident that does not exist"),
    ("engine", _broken("Twice", StepStage, "serving_order",
                       lambda self, keys: list(self.residents) * 2),
     "serving_order", "twice"),
    ("engine", _broken("Partial", StepStage, "serving_order",
                       lambda self, keys: list(self.residents)[1:]),
     "serving_order", "left out"),
    ("engine", _broken("Truthy", StepStage, "in_batch", lambda self, job, plan, only: 1),
     "in_batch", "not True or False"),
    ("engine", _broken("Elsewhere", StepStage, "admission_pool",
                       lambda self, plan: self.sim.pool_list[1]),
     "admission_pool", "not a pool this stage admits from"),
    ("engine", _broken("Empty", StepStage, "admission_pool",
                       lambda self, plan: self.served_pools[0]),
     "admission_pool", "whose queue is empty"),
    ("f", _broken("Crash", Fifo, "select_next", lambda self: 1 / 0),
     "select_next", "raised ZeroDivisionError"),
]


@pytest.mark.parametrize("name, cls, method, words", BROKEN,
                         ids=[b[1].__name__ for b in BROKEN])
def test_a_broken_rule_stops_the_run_naming_policy_method_and_rule(name, cls, method, words):
    with pytest.raises(PolicyError) as info:
        serq.run(load(ALL_KINDS), seed=3, policies={name: cls})
    err = info.value
    assert err.policy == cls.__name__ and err.method == method
    text = str(err)
    assert f"policy {cls.__name__}.{method} of " in text and f"`{name}`" in text
    assert words in text and "the rule: " in text, text


def test_cli_broken_rule_exits_1_with_the_message(tmp_path):
    mod = tmp_path / "bad_policy.py"
    mod.write_text("from serq.policies import Pool\n"
                   "class Greedy(Pool):\n"
                   "    def has_room(self, units, frame=None):\n"
                   "        return True\n")
    res = cli("run", "examples/policies/vllm_prompt_mix.sq", "--horizon", "20",
              "--warmup", "0", "--set", "blocks=300", "--policy", f"kv={mod}:Greedy")
    assert res.returncode == 1, res.stderr
    assert "policy Greedy.has_room of pool `kv`" in res.stderr
    assert "admits more than fits" in res.stderr and "help: the rule:" in res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
