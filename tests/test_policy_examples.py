"""The three worked examples of docs/policies.md (examples/policies/).

Each runs its program twice with the same seed (common random numbers):
under the built-in policy and under the example's subclass, and checks the
direction of the effect and that the two 95 % batch-means intervals do not
overlap (`Row` below; the examples' own `compare.py` runs `serq.compare`'s
paired replications, checked by the slow test at the end). The expected numbers are those of the runs themselves (seed 1, the
programs' own horizons), quoted in docs/policies.md; the assertions check
only direction and separation where that holds for every seed tried
(seeds 1-8, listed in the notes of issue 6), not only for seed 1.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

import serq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "policies")


@pytest.fixture(scope="module")
def examples():
    """The example modules, imported as the README runs them (their directory on the path)."""
    sys.path.insert(0, EXAMPLES)
    try:
        mods = {}
        for name in ("compare", "shortest_prompt_first", "priority_eviction",
                     "shortest_prefill_first"):
            spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES,
                                                                             f"{name}.py"))
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
            mods[name] = mod
        yield mods
    finally:
        sys.path.remove(EXAMPLES)
        for name in ("compare", "shortest_prompt_first", "priority_eviction",
                     "shortest_prefill_first"):
            sys.modules.pop(name, None)


@dataclass
class Row:
    """One metric under both policies, seed 1: mean and 95 % batch-means half-width."""

    metric: str
    builtin_mean: float
    builtin_ci: float
    policy_mean: float
    policy_ci: float

    @property
    def separated(self) -> bool:
        """Whether the two 95 % intervals do not overlap."""
        return (self.policy_mean + self.policy_ci < self.builtin_mean - self.builtin_ci
                or self.builtin_mean + self.builtin_ci < self.policy_mean - self.policy_ci)


def _rows(examples, program, policies, metrics):
    prog = serq.load(examples["compare"].program_path(program))
    base = serq.run(prog, seed=1)
    user = serq.run(prog, seed=1, policies=policies)
    return {name: Row(name, base.observe(name).mean, base.observe(name).ci,
                      user.observe(name).mean, user.observe(name).ci) for name in metrics}


def test_shortest_prompt_first_admission_lowers_ttft(examples):
    # docs/policies.md: ttft_short 0.1456 ± 0.0432 (FCFS) → 0.0656 ± 0.0097,
    # ttft 0.1799 ± 0.0454 → 0.1140 ± 0.0178
    # (the overall ttft's intervals are disjoint for seed 1 but overlap for some
    # other seeds at this horizon: only its direction is asserted)
    cls = examples["shortest_prompt_first"].ShortestPromptFirst
    rows = _rows(examples, "vllm_prompt_mix.sq", {"reqs": cls}, ["ttft_short", "ttft"])
    assert rows["ttft_short"].policy_mean < rows["ttft_short"].builtin_mean
    assert rows["ttft_short"].separated, rows["ttft_short"]
    assert rows["ttft"].policy_mean < rows["ttft"].builtin_mean


def test_priority_eviction_raises_premium_hits(examples):
    # docs/policies.md: premium_hit 0.7597 ± 0.0533 (LRU) → 0.9341 ± 0.0385,
    # hit 0.5578 ± 0.0229 → 0.6381 ± 0.0199
    cls = examples["priority_eviction"].PremiumLastEviction
    rows = _rows(examples, "prefix_cache_tiers.sq", {"kv": cls}, ["premium_hit", "hit"])
    for name in ("premium_hit", "hit"):
        r = rows[name]
        assert r.policy_mean > r.builtin_mean, name
        assert r.separated, (name, r)


def test_shortest_prefill_first_lowers_ttft(examples):
    # docs/policies.md: ttft_short 0.5623 ± 0.2608 (admission order) → 0.0955 ± 0.0124,
    # ttft 0.7897 ± 0.2731 → 0.4051 ± 0.0840
    # (the overall ttft's intervals are disjoint for seeds 1-7 but overlap for
    # seed 8: only its direction is asserted)
    cls = examples["shortest_prefill_first"].ShortestPrefillFirst
    rows = _rows(examples, "step_engine.sq", {"engine": cls}, ["ttft_short", "ttft"])
    assert rows["ttft_short"].policy_mean < rows["ttft_short"].builtin_mean
    assert rows["ttft_short"].separated, rows["ttft_short"]
    assert rows["ttft"].policy_mean < rows["ttft"].builtin_mean


def test_python_serve_order_equals_the_language_serve_by(examples):
    # the Python order is `serve by (decoding ? 0 : 1, decoding ? 0 : remaining)`:
    # both give the same report, to the byte
    cls = examples["shortest_prefill_first"].ShortestPrefillFirst
    path = os.path.join(EXAMPLES, "step_engine.sq")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    order = "  serve by (decoding ? 0 : 1, decoding ? 0 : remaining);\n"
    assert text.count("  chunk chunk_cap;\n") == 1
    keyed = serq.load(None, source=text.replace("  chunk chunk_cap;\n",
                                                "  chunk chunk_cap;\n" + order))
    python = serq.load(path)
    a = serq.run(keyed, seed=2, horizon=120, warmup=10).json()
    b = serq.run(python, seed=2, horizon=120, warmup=10, policies={"engine": cls}).json()
    builtin = serq.run(python, seed=2, horizon=120, warmup=10).json()
    assert a == b
    assert a != builtin  # the order matters in this run


def test_examples_run_from_the_command_line(examples):
    # the README's command: the CLI with --policy gives the API's report
    cmd = [sys.executable, "-m", "serq.cli", "run", "examples/policies/prefix_cache_tiers.sq",
           "--json", "--horizon", "3000",
           "--policy", "kv=examples/policies/priority_eviction.py:PremiumLastEviction"]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300,
                         stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr
    cls = examples["priority_eviction"].PremiumLastEviction
    api = serq.run(serq.load(os.path.join(EXAMPLES, "prefix_cache_tiers.sq")), horizon=3000,
                   policies={"kv": cls})
    assert json.loads(res.stdout) == json.loads(api.json())
    builtin = serq.run(serq.load(os.path.join(EXAMPLES, "prefix_cache_tiers.sq")), horizon=3000)
    assert json.loads(res.stdout) != json.loads(builtin.json())


#: The example scripts, run as README.md and docs/policies.md show them
#: (`python examples/policies/<script>`); tests/test_docs.py leaves those
#: commands to the test below, which checks their output too.
SCRIPTS = ("shortest_prompt_first.py", "priority_eviction.py", "shortest_prefill_first.py")


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.slow
def test_example_scripts_print_their_comparison(script):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, os.path.join(EXAMPLES, script)], capture_output=True,
                         text=True, cwd=ROOT, timeout=600, env=env)
    assert res.returncode == 0, res.stderr
    assert "B − A" in res.stdout and " *" in res.stdout  # a significant difference
