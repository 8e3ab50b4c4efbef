"""`cost(…)` naming a queue's own resources inside an entry (issue 10 item 1;
spec Part 01 §4.5, Part 05 §2.4).

`cost(R, e)` is the identity on `e` that names the resource `e` is an amount
of. Inside an entry of queue `Q` its resource arguments resolve as a hold's,
a run's or a `transfer`'s names do: the own pools and stage (`kv`, `Q`), the
`from` name, `Q[i].p`, and a queue's generated families (`P.nic`, `D.kv`),
which `cost` may name without an index. So every program written with
`cost(…)` around its amounts gives the report of the plain program.

* The PD examples of examples/pd-disaggregation, written with `cost(…)`
  everywhere in tests/data/cost/*_cost.sq: each is the example with its
  amounts wrapped (checked on the text) and gives the identical report.
* Programs in pyserq 0.1.4's `fn main` dialect (tests/data/cost/*_fn_main.sq),
  which requires `cost(…)` on every amount: deterministic, so they equal
  0.1.4's report field for field, and equal their plain form here.
* Misuse is in tests/bad_programs/queue_cost_*.sq.
"""
from __future__ import annotations

import os
import re

import pytest

import serq
from serq.frontend import load
from serq.core.errors import SerqError
from serq.report.json_report import to_dict

HERE = os.path.dirname(os.path.abspath(__file__))
PD = os.path.join(HERE, "..", "examples", "pd-disaggregation")
DATA = os.path.join(HERE, "data", "cost")


def strip_cost(text: str) -> str:
    """Program text (without comments) with every `cost(R…, e)` written as
    its quantity `e` (the programs here use `cost(…)` only as a whole
    amount, so no parentheses are needed around `e`)."""
    out, i = [], 0
    for m in re.finditer(r"(?<![\w.])cost\(", text):
        if m.start() < i:
            continue  # inside a cost(…) already rewritten
        depth, comma, j = 0, None, m.end() - 1
        while True:
            c = text[j]
            depth += (c == "(") - (c == ")")
            if c == "," and depth == 1:
                comma = j
            if depth == 0:
                break
            j += 1
        out += [text[i:m.start()], strip_cost(text[comma + 1:j]).strip()]
        i = j + 1
    return "".join(out) + text[i:]


def uncommented(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def code(text: str) -> str:
    """The program without comments, whitespace collapsed."""
    return " ".join(uncommented(text).split())


def report(path: str | None = None, source: str | None = None, **kw) -> dict:
    return to_dict(serq.run(load(path, source=source, **kw)))


def test_strip_cost():
    assert strip_cost("hold kv (cost(kv, min(a, b))) reserve (cost(kv, reqs, p + 1));") == \
        "hold kv (min(a, b)) reserve (p + 1);"
    assert strip_cost("set c = cost(P.nic, D.nic, x); set cost = 2;") == \
        "set c = x; set cost = 2;"


# ------------------------------------------------------------ the PD examples

PD_CASES = [
    # (example, settings, an observation that must have samples)
    ("llmd_nixl_pull", dict(horizon=80, warmup=10), "lease"),
    ("vllm_nixl_push", dict(horizon=200, warmup=20), "parked"),
    ("vllm_nixl_push_transfer", dict(horizon=200, warmup=20), "parked"),
    ("pd_tandem", dict(horizon=200, warmup=20), "latency"),
    ("pd_open", dict(horizon=200, warmup=20, sets={"Lambda": 0.5}), "latency"),
]


@pytest.mark.parametrize("name, kw, obs", PD_CASES, ids=[c[0] for c in PD_CASES])
def test_pd_example_with_cost_everywhere(name, kw, obs):
    """The `_cost` twin of each PD example is the example with every amount
    (hold units, `reserve`, `reuse`, `cache`, runs and serving forms,
    `transfer` work and load) wrapped in `cost(…)` naming the queue's own
    pools and stages; it gives the example's report, field for field."""
    plain_path = os.path.join(PD, f"{name}.sq")
    cost_path = os.path.join(DATA, f"{name}_cost.sq")
    with open(plain_path, encoding="utf-8") as f:
        plain = f.read()
    with open(cost_path, encoding="utf-8") as f:
        costed = f.read()
    assert code(strip_cost(uncommented(costed))) == code(plain), \
        f"{cost_path} is no longer {plain_path} with its amounts wrapped"
    assert len(re.findall(r"\bcost\(", code(costed))) >= 4
    mine = report(cost_path, **kw)
    assert mine["observes"][obs]["count"] > 5
    assert mine == report(plain_path, **kw)


# ------------------------------------------------------ pyserq 0.1.4 programs

# (file, horizon, what the run must show so the comparison means something)
FN_MAIN = [
    ("w1_fn_main", 100, "lease"),
    ("llmd_prefill_entry_fn_main", 60, "lease"),
    ("grow_load_fn_main", 20, "u"),
    ("links_fn_main", 30, "response"),
]


def test_w1_fn_main_numbers():
    """§2.12's samples (pyserq 0.1.3, spec table) with every amount costed."""
    rep = serq.run(load(os.path.join(DATA, "w1_fn_main.sq"), horizon=100))
    assert list(rep.observes["ttft"].values) == [8, 9]
    assert list(rep.observes["lease"].values) == [3.0, 3.25]
    assert list(rep.observes["response"].values) == [10, 11]


@pytest.mark.parametrize("name, horizon, obs", FN_MAIN, ids=[c[0] for c in FN_MAIN])
def test_fn_main_program_equals_its_plain_form(name, horizon, obs):
    path = os.path.join(DATA, f"{name}.sq")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    mine = report(source=text, horizon=horizon)
    assert mine["observes"][obs]["count"] >= 2
    assert mine == report(source=strip_cost(uncommented(text)), horizon=horizon)


# every `transfer` amount of links_fn_main.sq, written with cost(…) as
# serq-simpy also accepts it (0.1.4 refuses a cost(…) there as nested)
LINK_TRANSFERS = [
    ("nic[self].transfer (n - 1) from src to kv (n - 1);",
     "nic[self].transfer (n - 1) from src to kv (cost(kv, n - 1));"),
    ("transfer on egress[src], ingress[1] (n) from src to kv (n - 1);",
     "transfer on egress[src], ingress[1] (cost(egress, ingress, n))\n"
     "          from src to kv (cost(kv, n - 1));"),
]


def test_transfer_amounts_with_cost():
    """A called link's `to` amount and a `transfer on`'s work and load,
    written with cost(…) naming the links and the entry's own pool."""
    with open(os.path.join(DATA, "links_fn_main.sq"), encoding="utf-8") as f:
        text = f.read()
    costed = text
    for plain, wrapped in LINK_TRANSFERS:
        assert plain in costed
        costed = costed.replace(plain, wrapped)
    assert report(source=costed, horizon=30) == report(source=text, horizon=30)


def test_pull_read_amount_names_the_nics():
    """A pull read's work is a run over the source's NIC and the reader's:
    `cost` names either family, unindexed, from inside the entry."""
    with open(os.path.join(DATA, "w1_fn_main.sq"), encoding="utf-8") as f:
        text = f.read()
    plain = "transfer (n) from src to kv (n - 1);"
    want = report(source=text, horizon=100)
    for names in ("D.nic", "P.nic", "P.nic, D.nic"):
        costed = text.replace(plain, f"transfer (cost({names}, n)) from src to kv "
                                     "(cost(kv, n - 1));")
        assert report(source=costed, horizon=100) == want, names


@pytest.mark.oracle
@pytest.mark.parametrize("name, horizon, obs", FN_MAIN, ids=[c[0] for c in FN_MAIN])
def test_fn_main_program_against_reference(name, horizon, obs):
    """Deterministic `fn main` programs with cost(…) naming the queues' own
    resources: every field of pyserq 0.1.4's report (seed 1)."""
    from oracle import UNCOMPARED, assert_reports_match, available, run_reference
    if not available("0.1.4"):
        pytest.skip("pyserq 0.1.4 is not available")
    path = os.path.join(DATA, f"{name}.sq")
    ref = run_reference(None, "0.1.4", path=path, horizon=horizon)
    mine = report(path, horizon=horizon)
    assert mine["observes"][obs]["count"] >= 2
    assert_reports_match(mine, ref, ignore=UNCOMPARED)


def test_cost_names_the_relation_latency_stage_of_its_waiter():
    """A relation's latency stage is its waiter's: the reader's for `D pull P`,
    the poster's for `P push D` (`P.nic.latency`); `cost` names it without an
    index. (The push case was refused before: the reader's name was taken.)"""
    push = open(os.path.join(PD, "vllm_nixl_push.sq"), encoding="utf-8").read()
    line = "      observe p_cached = c;"
    assert push.count(line) == 1
    load(source=push.replace(line, line + "\n      observe zz = cost(P.nic.latency, 1);"))
    with pytest.raises(SerqError, match="D.nic.latency"):
        load(source=push.replace(line, line + "\n      observe zz = cost(D.nic.latency, 1);"))
