"""The step-engine examples: the vLLM library (examples/lib/vllm.sq) and the
programs that use it.

* examples/single-turn/vllm_single_turn.sq, examples/multi-turn/vllm.sq
  (the seeds' program), examples/multi-turn/replica.sq and the batching
  policies of examples/papers/ (docs/scheduling.md) each run at a short
  horizon and give sensible numbers: the counts add up, the latencies
  respect bounds the model implies (a prefill cannot be faster than its
  compute, a decode step not faster than reading the weights), and the
  comparisons the headers describe hold (the prefix cache follows a
  routed session; Sarathi's chunks bound the token gaps; FasterTransformer
  has the smallest tpot and by far the largest ttft).
* Against pyserq 0.1.3 (tests/oracle.py), which runs every one of these
  flat programs: serq-simpy's own streams are pyserq 0.1.5's (Part 07), so
  its default run of vllm.sq is compared with 0.1.3's statistically, within
  the confidence intervals; with `scheme="0.1.3"` (the per-session stream
  derivation of 0.1.3, `serq.run`'s keyword) the reports must be equal, as
  for a deterministic program.
"""
from __future__ import annotations

import math
import os
import re
import shutil

import pytest

import serq
from serq.report.json_report import to_dict

from oracle import compare_reports, requires, run_reference

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EX = os.path.join(ROOT, "examples")

LIBS = ["lib/vllm.sq", "lib/scheduling.sq"]
SINGLE = "single-turn/vllm_single_turn.sq"
MULTI = "multi-turn/vllm.sq"
REPLICA = "multi-turn/replica.sq"
PAPERS = ["papers/fastertransformer.sq", "papers/vllm_exclusive.sq",
          "papers/orca.sq", "papers/sarathi.sq"]


def path(rel: str) -> str:
    return os.path.join(EX, rel)


_CACHE: dict = {}


def report(rel: str, *, scheme: str = "0.1.5", sets: dict | None = None, **kw) -> dict:
    """The JSON report of an example (memoised: several tests read one run)."""
    key = (rel, scheme, tuple(sorted((sets or {}).items())), tuple(sorted(kw.items())))
    if key not in _CACHE:
        prog = serq.load(path(rel), sets=sets, **kw)
        _CACHE[key] = to_dict(serq.run(prog, scheme=scheme))
    return _CACHE[key]


def obs(rep: dict, name: str) -> dict:
    return rep["observes"][name]


def stage(rep: dict, name: str, index=None) -> dict:
    return next(s for s in rep["stages"] if s["name"] == name and s["index"] == index)


def pool(rep: dict, name: str, index=None) -> dict:
    return next(p for p in rep["pools"] if p["name"] == name and p["index"] == index)


def assert_latencies(rep: dict, *, first_prefill: float, step: float) -> None:
    """Every request observed ttft, tpot and response; means ordered and
    above what the model allows (`first_prefill`: the least compute time of
    a first-turn prompt; `step`: the least duration of a decode step)."""
    ttft, tpot, resp = obs(rep, "ttft"), obs(rep, "tpot"), obs(rep, "response")
    assert ttft["count"] > 50 and resp["count"] > 50
    assert abs(ttft["count"] - resp["count"]) <= 20          # in flight at the ends of the window
    assert tpot["count"] <= ttft["count"] + 20 and tpot["count"] >= 0.9 * ttft["count"]
    assert ttft["mean"] > 0 and resp["mean"] > ttft["mean"]
    assert tpot["mean"] >= step * (1 - 1e-9)
    if first_prefill:
        assert ttft["p99"] >= first_prefill
    for o in (ttft, tpot, resp):
        assert o["ci"] is not None and 0 < o["ci"] < o["mean"]


def no_trouble(rep: dict) -> None:
    """No preemption livelock, no rejection, no engine left idle with work."""
    for p in rep["pools"]:
        assert p["stuck"] == 0 and p["rejected"] == 0, p
    for s in rep["stages"]:
        assert not s["idle_with_work"], s


# ----------------------------------------------------------------------- libraries

def _items(text: str) -> list[str]:
    """First word of every top-level item of a source text."""
    text = re.sub(r"//[^\n]*", "", text)
    words, depth, start = [], 0, True
    for tok in re.finditer(r"[A-Za-z_][A-Za-z_0-9]*|[{}();]|\S", text):
        t = tok.group()
        if depth == 0 and start:
            words.append(t)
            start = False
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                start = True
        elif t == ";" and depth == 0:
            start = True
    return words


@pytest.mark.parametrize("lib", LIBS)
def test_libraries_hold_only_definitions(lib):
    with open(path(lib), encoding="utf-8") as fh:
        words = _items(fh.read())
    assert words and set(words) <= {"def", "use"}, words


def test_library_defines_the_request_path():
    with open(path("lib/vllm.sq"), encoding="utf-8") as fh:
        text = fh.read()
    for name in ("vllm_request", "prefix_reuse", "long_prefill"):
        assert re.search(rf"^def {name}\(", text, re.M), name


# ----------------------------------------------------------------------- single turn

def test_vllm_single_turn():
    rep = report(SINGLE, horizon=40, warmup=5)
    # prompts of at least 1000 tokens at a = 2e-5 s per token: 20 ms of compute
    assert_latencies(rep, first_prefill=1000 * 2e-5, step=2e-4)
    assert obs(rep, "hit")["mean"] == 0                     # no context crosses sessions
    assert 0.03 < obs(rep, "ttft")["mean"] < 0.2
    assert 0.08 < obs(rep, "response")["mean"] < 0.4
    eng = stage(rep, "engine")
    assert 0.4 < eng["utilization"] < 0.9
    assert eng["iterations"] > 10_000
    # one prefill run and one decode run per request
    assert abs(eng["completed"] - 2 * obs(rep, "response")["count"]) <= 20
    reqs, kv = pool(rep, "reqs"), pool(rep, "kv")
    assert reqs["admissions"] == kv["admissions"]            # one hold over both pools
    assert kv["preemptions"] == 0 and reqs["mean_wait"] < 0.05
    assert kv["mean_used"] + kv["mean_cached"] <= 10000 * 16 * (1 + 1e-9)
    no_trouble(rep)


# ----------------------------------------------------------------------- the seeds' program

def test_vllm_multi_turn():
    rep = report(MULTI, horizon=300, warmup=50)
    assert_latencies(rep, first_prefill=1000 * 2e-5, step=2e-4)
    # sessions take about 1 / (1 - p) = 10 turns
    assert 5 < rep["turns"] / rep["arrivals"] < 15
    # later turns find their conversation in the prefix cache
    assert 0.6 < obs(rep, "hit")["mean"] < 0.95
    assert 0.005 < obs(rep, "ttft")["mean"] < 0.05
    assert 0.03 < obs(rep, "response")["mean"] < 0.12
    assert 2e-4 < obs(rep, "tpot")["mean"] < 5e-4
    eng = stage(rep, "engine")
    assert 0.08 < eng["utilization"] < 0.35
    assert eng["mean_decode_step"] >= 2e-4
    tool = stage(rep, "tool")
    assert 2.5 < tool["mean_service"] < 3.5                # ~exp(Z), Z = 3
    assert pool(rep, "kv")["preemptions"] == 0
    no_trouble(rep)


@requires("0.1.3")
def test_vllm_multi_turn_matches_013_with_its_streams():
    """With 0.1.3's per-session streams the run is 0.1.3's, number for number."""
    kw = dict(horizon=300, warmup=50)
    mine = report(MULTI, scheme="0.1.3", **kw)
    ref = run_reference(None, "0.1.3", path=path(MULTI), **kw)
    diffs = compare_reports(mine, ref)
    assert not diffs, "\n".join(diffs[:20])


def _agree(a: dict, b: dict, k: float = 4.0) -> bool:
    """Means within k combined 95 % half-widths (batch means)."""
    return abs(a["mean"] - b["mean"]) <= k * math.hypot(a["ci"], b["ci"])


@requires("0.1.3")
def test_vllm_multi_turn_agrees_with_013():
    """serq-simpy's own streams (0.1.5's) against 0.1.3's: statistically."""
    kw = dict(horizon=600, warmup=100)
    mine = report(MULTI, **kw)
    ref = run_reference(None, "0.1.3", path=path(MULTI), **kw)
    for name in ("hit", "ttft", "tpot", "response"):
        a, b = mine["observes"][name], ref["observes"][name]
        assert _agree(a, b), (name, a, b)
        assert abs(a["count"] - b["count"]) <= 6 * math.sqrt(b["count"]) + 50, (name, a, b)
    for field in ("utilization", "mean_number", "mean_decode_batch"):
        a = stage(mine, "engine")[field]
        b = next(s for s in ref["stages"] if s["name"] == "engine")[field]
        assert math.isclose(a, b, rel_tol=0.2), (field, a, b)
    a, b = stage(mine, "engine")["iterations"], ref["stages"][0]["iterations"]
    assert math.isclose(a, b, rel_tol=0.2), (a, b)
    assert abs(mine["arrivals"] - ref["arrivals"]) <= 6 * math.sqrt(ref["arrivals"])


# ----------------------------------------------------------------------- replicas

def test_replica_sticky_router():
    rep = report(REPLICA, horizon=200, warmup=50)
    assert_latencies(rep, first_prefill=0, step=8e-3)
    live = [pool(rep, "live", i) for i in range(4)]
    engines = [stage(rep, "engine", i) for i in range(4)]
    # the router spreads the sessions: every replica gets a share
    adm = [p["admissions"] for p in live]
    assert min(adm) > 0 and max(adm) <= 2.5 * min(adm), adm
    assert all(e["iterations"] > 0 and e["completed"] > 0 for e in engines)
    held = [p["mean_holders"] for p in live]
    assert max(held) - min(held) < 2.5, held
    # the sessions routed to a replica are its sessions: slots and KV go with them
    for i in range(4):
        assert pool(rep, "reqs", i)["admissions"] == pool(rep, "kv", i)["admissions"]
    assert obs(rep, "hit")["mean"] > 0.6
    no_trouble(rep)


def test_replica_per_turn_routing_loses_the_cache():
    sticky = report(REPLICA, horizon=200, warmup=50)
    spread = report(REPLICA, horizon=200, warmup=50, sets={"sticky": 0})
    assert obs(spread, "hit")["mean"] < obs(sticky, "hit")["mean"] - 0.2
    assert obs(spread, "ttft")["mean"] > 2 * obs(sticky, "ttft")["mean"]
    ev = lambda r: sum(pool(r, "kv", i)["evicted_units"] for i in range(4))
    assert ev(spread) > 2 * ev(sticky)
    no_trouble(spread)


# ----------------------------------------------------------------------- batching policies

_POLICY_LINES = re.compile(r"^stage engine : step \{\n(.*?)^\}\n", re.M | re.S)


def _strip(text: str) -> tuple[str, str]:
    """(program without comments and without the engine's clauses, the clauses)."""
    lines = (re.sub(r"\s*//.*$", "", ln) for ln in text.splitlines())
    text = "\n".join(ln for ln in lines if ln.strip()) + "\n"
    m = _POLICY_LINES.search(text)
    assert m, "no `stage engine : step { … }` block"
    return text[:m.start(1)] + text[m.end(1):], m.group(1)


def test_papers_differ_only_in_the_policy():
    bodies, clauses = [], []
    for rel in PAPERS:
        with open(path(rel), encoding="utf-8") as fh:
            body, cl = _strip(fh.read())
        bodies.append(body)
        clauses.append(cl)
    assert all(b == bodies[0] for b in bodies), "the programs differ outside the engine"
    assert len(set(clauses)) == 4
    for cl in clauses:
        assert "cost roofline(omega, beta, a);" in cl and "memory kv;" in cl


def test_papers_policies():
    kw = dict(horizon=100, warmup=10)
    ft, vx, orca, sar = (report(rel, **kw) for rel in PAPERS)
    for rep in (vx, orca, sar):
        # a first token costs at least a 1000-token prefill (a = 5e-5 s/token)
        assert_latencies(rep, first_prefill=1000 * 5e-5, step=8e-3)
        assert 0.05 < obs(rep, "ttft")["mean"] < 0.5
        assert 1.5 < obs(rep, "response")["mean"] < 4.5
        no_trouble(rep)
    m = lambda rep, name: obs(rep, name)["mean"]
    itl99 = lambda rep: stage(rep, "engine")["itl_p99"]
    # FasterTransformer: decodes never share a step -> smallest tpot; prefills
    # wait for the whole batch -> unstable at this load (ttft of many seconds)
    assert m(ft, "tpot") < min(m(r, "tpot") for r in (vx, orca, sar))
    assert m(ft, "ttft") > 10 * max(m(r, "ttft") for r in (vx, orca, sar))
    assert stage(ft, "engine")["mixed"] == 0
    assert stage(vx, "engine")["mixed"] == 0                 # exclusive prefill never mixes
    assert stage(orca, "engine")["mixed"] > 0 and stage(sar, "engine")["mixed"] > 0
    # Sarathi's 512-token steps bound the gaps; whole prefills do not
    assert itl99(sar) < 0.04 < min(itl99(vx), itl99(orca))
    assert m(sar, "tpot") < min(m(vx, "tpot"), m(orca, "tpot"))


def test_papers_light_load_all_stable():
    kw = dict(horizon=200, warmup=20, sets={"Lambda": 0.5})
    reps = [report(rel, **kw) for rel in PAPERS]
    for rep in reps:
        assert_latencies(rep, first_prefill=1000 * 5e-5, step=8e-3)
        no_trouble(rep)
    ft = reps[0]
    assert 0.5 < obs(ft, "ttft")["mean"] < 5
    for rep in reps[1:]:
        assert 0.05 < obs(rep, "ttft")["mean"] < 0.2


def test_sarathi_admission_order_is_decode_first(tmp_path):
    """sarathi.sq's `serve admission` forms the batches `serve decode first`
    forms (no chunk cap below the budget): identical reports."""
    shutil.copytree(os.path.join(EX, "lib"), tmp_path / "lib")
    (tmp_path / "papers").mkdir()
    with open(path("papers/sarathi.sq"), encoding="utf-8") as fh:
        text = fh.read()
    variant = re.sub(r"^(\s*)serve admission;", r"\1serve decode first;", text, flags=re.M)
    assert variant != text
    target = tmp_path / "papers" / "sarathi_decode_first.sq"
    target.write_text(variant, encoding="utf-8")
    kw = dict(horizon=40, warmup=5)
    a = report("papers/sarathi.sq", **kw)
    b = to_dict(serq.run(serq.load(str(target), **kw)))
    diffs = compare_reports(b, a)
    assert not diffs, "\n".join(diffs[:20])


# ----------------------------------------------------------------------- against 0.1.3

FLAT_013 = [
    (SINGLE, dict(horizon=40, warmup=5)),
    (REPLICA, dict(horizon=150, warmup=30)),
    (REPLICA, dict(horizon=150, warmup=30, sets={"sticky": 0})),
] + [(rel, dict(horizon=60, warmup=6)) for rel in PAPERS]


@requires("0.1.3")
@pytest.mark.parametrize("rel,kw", FLAT_013,
                         ids=[f"{r.split('/')[-1]}-{i}" for i, (r, _) in enumerate(FLAT_013)])
def test_examples_match_013_with_its_streams(rel, kw):
    kw = dict(kw)
    sets = kw.pop("sets", None)
    mine = report(rel, scheme="0.1.3", sets=sets, **kw)
    ref = run_reference(None, "0.1.3", path=path(rel), sets=sets, **kw)
    diffs = compare_reports(mine, ref)
    assert not diffs, "\n".join(diffs[:20])
