"""Differential tests: serq-simpy against the pyserq reference wheels.

Uses tests/oracle.py (`requires`, `run_reference`, `assert_reports_match`):
each test is skipped when its reference version is not installed.

* Deterministic programs (no draws) covering each construct of the kernel
  language, in the 0.1.3 flat layout, compared field by field with pyserq
  **0.1.3**: counts exactly, every other number to a relative 1e-9 (spec
  README, "Exactness"); `events` and `serq_version` are not compared. The
  samples of every observation and every gauge's change points are compared
  as well (`run_reference(samples=True)`).
* The spec's own worked examples (flat layout) against 0.1.3 the same way.
* Stochastic programs in the `fn main` layout (which 0.1.5 accepts),
  compared exactly with pyserq **0.1.5**: serq-simpy follows 0.1.5's random
  streams (Part 07 §9.3), so every field but `events`/`serq_version` must
  match to 1e-9, and every sample too.
* Cross-layout: the same stochastic models written in the 0.1.3 flat
  layout (shape R, `branch with`) must still give the 0.1.5 reference's
  numbers, because the stream scheme does not depend on the syntax (Part 07
  §9.3).
"""
from __future__ import annotations

import math
import textwrap

import pytest

import serq
from serq.report.json_report import to_dict

from e2e_util import data
from oracle import assert_samples_match, assert_reports_match, requires, run_reference

import test_p01_examples as p01
import test_p02_examples as p02
import test_p04_stages as p04
import test_p06_reports as p06
import test_p07_programs as p07


def _prepare(source, kw):
    """Dedent; a `trace` keyword names a file under tests/data/e2e/ and is
    passed to both implementations as an absolute override."""
    source = textwrap.dedent(source)
    kw = dict(kw)
    if "trace" in kw:
        kw["trace"] = data(kw["trace"])
    return source, kw


def _mine(source, kw):
    rep = serq.run(serq.load(None, source=source, **kw))
    return rep, to_dict(rep)


def _close(a, b):
    if b is None:
        return a is None or (isinstance(a, float) and not math.isfinite(a))
    if isinstance(b, float) and math.isnan(b):
        return isinstance(a, float) and math.isnan(a)
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)




def check(source, version, kw, *, ref_source=None):
    """Run `source` in serq-simpy and `ref_source` (default: the same text) in
    pyserq `version`; the reports and the samples must match."""
    source, kw = _prepare(source, kw)
    ref_text = textwrap.dedent(ref_source) if ref_source is not None else source
    ref = run_reference(ref_text, version, samples=True, **kw)
    rep, mine = _mine(source, kw)
    assert_reports_match(mine, ref)
    # Part 06 §2 / §9.1: series in first-appearance order, gauges in declaration
    # order, stages in declaration order; top-level keys in upstream's order
    assert list(mine["observes"]) == list(ref["observes"])
    assert list(mine["gauges"]) == list(ref["gauges"])
    assert [(s["name"], s["index"]) for s in mine["stages"]] == \
        [(s["name"], s["index"]) for s in ref["stages"]]
    ref_keys = [k for k in ref if not k.startswith("_")]
    assert [k for k in mine if k in ref_keys] == ref_keys
    assert_samples_match(rep, ref["_samples"])
    return rep, ref


DETERMINISTIC = {
    "fifo_c": (r"""
stage svc : fifo(3);
workload { arrive batch(7); init { set w = 1 + serial / 2; } session { turn; request; } }
server { set t0 = now; observe q = queue(svc); run svc (w); observe response = now - t0; observe b = busy(svc); }
run { horizon 20; }
""", {}),
    "ps_present": (r"""
stage svc : ps(min(present, 2) * 0.75);
workload { arrive renewal(0.6); }
session { turn; set t0 = now; run svc (1 + serial / 10); observe response = now - t0; observe n = queue(svc); }
run { horizon 30; }
""", {}),
    "delay": (r"""
stage d : delay;
stage f : fifo;
workload { arrive renewal(0.5); }
session { turn; run d (3 - serial / 10); observe t = now; run f (0.25); observe w = work(d); }
run { horizon 10; }
""", {}),
    "arrays_choose": (r"""
let K = 3;
stage s[K] : fifo;
gauge longest = max k in K (queue(s[k]));
gauge total = sum k in K (queue(s[k]));
workload { arrive renewal(0.3); }
session {
  turn;
  choose j in K by (queue(s[j]), work(s[j]), -j);
  set t0 = now;
  run s[j] (1 + serial / 7);
  observe pick = j;
  observe response = now - t0;
}
run { horizon 25; }
""", {}),
    "multi_maxmin": (r"""
stage A : ps(1);
stage B : ps(2);
stage C : ps(1.5);
share maxmin;
workload { arrive renewal(0.4); init { set kind = serial - 3 * floor(serial / 3); } }
session {
  turn;
  set t0 = now;
  branch (kind == 0) { run A, B (1); }
  else { branch (kind == 1) { run B, C (1.5); } else { run A, C (0.5); run B (0.5); } }
  observe response = now - t0;
}
run { horizon 12; }
""", {}),
    "multi_bottleneck": (r"""
stage A : ps(1);
stage B : ps(2);
stage C : ps(1.5);
share bottleneck;
workload { arrive renewal(0.4); init { set kind = serial - 3 * floor(serial / 3); } }
session {
  turn;
  set t0 = now;
  branch (kind == 0) { run A, B (1); }
  else { branch (kind == 1) { run B, C (1.5); } else { run A, C (0.5); run B (0.5); } }
  observe response = now - t0;
}
run { horizon 12; }
""", {}),
    "renewal_const": (r"""
stage svc : fifo;
workload { arrive renewal(0.9); }
session { turn; set t0 = now; run svc (1); observe response = now - t0; }
run { horizon 40; }
""", {}),
    "batch_multiturn": (r"""
stage svc : fifo;
stage tool : delay;
workload {
  arrive batch(3);
  init { set k = 0; }
  turn { set k = k + 1; set w = k + serial / 2; }
}
session {
  turn;
  loop {
    set t0 = now;
    run svc (w);
    observe response = now - t0;
    branch (k < 4) { run tool (1 + serial); turn; } else { end; }
  }
}
run { horizon 60; }
""", {}),
    "closed": (r"""
stage svc : fifo(2);
stage think : delay;
workload {
  arrive closed(3);
  init { set k = 0; }
  turn { set k = k + 1; }
  session {
    turn;
    loop {
      set t0 = now;
      request;
      observe response = now - t0;
      branch (k < 2 + floor(serial / 4)) { run think (0.5 + serial / 3); turn; } else { end; }
    }
  }
}
server { run svc (1 + k / 3); }
run { horizon 30; }
""", {}),
    "trace_ordered": (r"""
stage engine : fifo(2);
stage tool : delay;
workload { arrive renewal(0.5); trace "chat.csv" ordered; }
session {
  turn;
  loop {
    set t0 = now;
    run engine ((new + out) / 100);
    observe response = now - t0;
    observe tokens_in = new;
    observe forced_ = forced;
    branch (more) { run tool (think); turn; } else { end; }
  }
}
run { horizon 12; }
""", {'trace': 'chat.csv'}),
    "warmup": (r"""
stage svc : fifo;
stage s[2] : delay;
gauge q = queue(svc);
gauge d = sum k in 2 (busy(s[k]));
workload { arrive renewal(1); }
session { turn; run svc (0.5); observe done = now; run s[serial - 2 * floor(serial / 2)] (1.5); observe done2 = now; }
run { horizon 20; warmup 5.2; }
""", {}),
    "arrivals_n": (r"""
stage svc : fifo;
workload { arrive renewal(0.7); }
session { turn; set t0 = now; run svc (1); observe response = now - t0; }
run { horizon 1000; arrivals 12; }
""", {}),
    "gauges": (r"""
stage svc : fifo(2);
stage sh : ps(2);
gauge q = queue(svc);
gauge b = busy(svc);
gauge m = max(queue(svc), queue(sh));
gauge c = queue(sh) > 1;
workload { arrive batch(9); init { set w = 1 + serial / 3; } }
session { turn; run svc (w); run sh (w); observe done = now; }
run { horizon 30; }
""", {}),
    "estimates": (r"""
stage svc : fifo;
stage sh : ps(2);
workload { arrive renewal(0.8); }
session {
  turn;
  observe q = queue(svc); observe w = work(svc);
  run svc (1 + serial / 10);
  run sh (1 + serial / 5);
  observe el = est_lambda(svc); observe er = est_rho(svc); observe ew = est_wait(svc);
  observe pr = price(svc, 1, 0.5);
}
run { horizon 15; }
""", {}),
    "request_shape_r": (r"""
stage a : fifo;
stage b : ps(1);
workload {
  arrive batch(4);
  init { set x = serial; }
  session { turn; request; set x = x + 1; request; turn; request; }
}
server { set t0 = now; run a (0.5 + x / 4); run b (1); observe response = now - t0; observe xs = x; }
run { horizon 40; }
""", {}),
    "gauges_warmup_arrivals_n": (r"""
stage svc : fifo(2);
stage sh : ps(1.5);
gauge q = queue(svc);
gauge s = queue(sh) + busy(svc);
workload { arrive renewal(0.45); }
session { turn; run svc (1 + serial / 8); run sh (0.5); observe done = now; }
run { horizon 500; warmup 3.3; arrivals 20; }
""", {}),
    "closed_warmup": (r"""
stage svc : fifo;
stage t : delay;
gauge q = queue(svc);
workload { arrive closed(4); init { observe i = serial; } turn { observe tb = turn_no; } }
session { observe pre = 1; turn; run svc (0.7); run t (1.3 + serial / 5); observe done = now;
  branch (serial < 6) { turn; run svc (0.2); } else { end; } observe post = now; }
run { horizon 25; warmup 7.25; }
""", {}),
    "observe_order": (r"""
stage svc : fifo;
workload { arrive batch(2); init { observe a_init = 1; } turn { observe b_turn = 2; }
  session { observe c_pre = 3; turn; request; observe e_post = 5; } }
server { observe d_server = 4; run svc (1); }
run { horizon 10; }
""", {}),
}

STOCHASTIC = {
    "mm1_poisson": (r"""
fn main() {
  stage svc : fifo;
  gauge q = queue(svc);
  workload { arrive poisson(0.8); init { set s = ~exp(1.0); } }
  server { set t0 = now; run svc (cost(svc, s)); observe response = now - t0; observe wait_q = queue(svc); }
}
""", {'horizon': 3000}),
    "h2_service": (r"""
fn main() {
  stage svc : fifo(2);
  workload { arrive poisson(1.5); }
  server { set t0 = now; run svc (cost(svc, ~h2(1, 4))); observe response = now - t0; }
}
""", {'horizon': 1500}),
    "renewal_erlang": (r"""
fn main() {
  stage svc : fifo;
  workload { arrive renewal(~erlang(3, 1.25)); init { set s = ~uniform(0.5, 1.5); } }
  server { set t0 = now; run svc (cost(svc, s)); observe response = now - t0; observe gap = s; }
}
""", {'horizon': 1500}),
    "closed_branch_with": (r"""
fn main() {
  stage svc : fifo;
  stage pause : delay;
  workload {
    arrive closed(3);
    turn { set z = ~exp(2); }
    session { loop { turn; run pause (cost(pause, z)); if (~bernoulli(0.3)) { end; } } }
  }
  server { set t0 = now; run svc (cost(svc, ~exp(0.5))); observe response = now - t0; }
}
""", {'horizon': 800}),
    "trace_unordered": (r"""
fn main() {
  stage engine : fifo(2);
  stage tool : delay;
  workload {
    arrive renewal(~exp(1.5));
    trace "trace_short.csv";
    turn { set jitter = ~uniform(0.9, 1.1); }
    session { turn; while (more) { run tool (cost(tool, think)); turn; } }
  }
  server {
    set t0 = now;
    run engine (cost(engine, jitter * (new + out) / 1000));
    observe response = now - t0;
    observe tokens_in = new;
  }
}
""", {'horizon': 600, 'trace': 'trace_short.csv'}),
    "ps_drawn_capacity": (r"""
fn main() {
  stage svc : ps(~uniform(1, 3));
  workload { arrive poisson(1.2); }
  server { set t0 = now; run svc (cost(svc, ~exp(1))); observe response = now - t0; }
}
""", {'horizon': 1000}),
    "choose_drawn_keys": (r"""
fn main() {
  let K = 3;
  stage s[K] : fifo;
  gauge total = sum k in K (queue(s[k]));
  workload { arrive poisson(2); }
  server {
    choose j in K by (queue(s[j]) + ~uniform(0, 0.5), -j);
    set t0 = now;
    run s[j] (cost(s[j], ~erlang(2, 1.2)));
    observe response = now - t0;
    observe pick = j;
  }
}
""", {'horizon': 800}),
    "warmup_gauge": (r"""
fn main() {
  stage svc : fifo;
  gauge q = queue(svc);
  gauge busy_ = busy(svc);
  workload { arrive poisson(0.7); }
  server { set t0 = now; run svc (cost(svc, ~exp(1.2))); observe response = now - t0; }
}
""", {'horizon': 2000, 'warmup': 300}),
    "arrivals_n_poisson": (r"""
fn main() {
  stage svc : fifo;
  workload { arrive poisson(0.9); }
  server { set t0 = now; run svc (cost(svc, ~exp(1))); observe response = now - t0; }
}
""", {'horizon': 100000, 'arrivals': 500}),
    "multiturn_draws": (r"""
fn main() {
  stage svc : ps(2);
  stage tool : delay;
  workload {
    arrive poisson(0.6);
    init { set turns_left = 1 + floor(~uniform(0, 4)); }
    turn { set w = ~erlang(2, 0.8); }
    session { turn; while (turn_no < turns_left) { run tool (cost(tool, ~exp(1.5))); turn; } }
  }
  server { set t0 = now; run svc (cost(svc, w)); observe response = now - t0; }
}
""", {'horizon': 1000}),
    "draw_order": (r"""
def noisy(x) { x * ~uniform(0.5, 1.5) }
fn main() {
  stage svc : fifo;
  workload {
    arrive poisson(0.5);
    init { set a = ~erlang(2.7, 1); set b = ~h2(1, 0.5); set c = ~uniform(3, 1); set dd = ~erlang(0, 1); }
  }
  server {
    set s = max(~exp(1), ~uniform(0, 1));
    set e = ~exp(~uniform(1, 2));
    set agg = sum j in 3 (~bernoulli(0.5));
    set cond = (~uniform(0, 1) < 0.5) ? ~exp(1) : ~det(2);
    set zero = 0 * ~exp(1);
    set sc = 0 && ~exp(1);
    run svc (cost(svc, noisy(s)));
    observe oa = a; observe ob = b; observe oc = c; observe od = dd;
    observe os = s; observe oe = e; observe oagg = agg; observe ocond = cond;
    observe after = ~uniform(0, 1);
  }
}
""", {'horizon': 400}),
    "warmup_session_draws": (r"""
fn main() {
  stage svc : ps(1);
  stage tool : delay;
  gauge n = queue(svc);
  workload {
    arrive renewal(~exp(2));
    turn { set k = ~bernoulli(0.7); }
    session { turn; while (k == 1) { run tool (cost(tool, ~uniform(0.1, 0.3))); turn; } }
  }
  server { set t0 = now; run svc (cost(svc, ~h2(0.8, 3))); set r = now - t0; observe response = r; observe big = r > 2; }
}
""", {'horizon': 1500, 'warmup': 250.5}),
    "ps_present_drawn": (r"""
fn main() {
  stage svc : ps(min(present, ~uniform(1, 4)));
  workload { arrive poisson(1.5); }
  server { set t0 = now; run svc (cost(svc, ~exp(1))); observe response = now - t0; observe q = queue(svc); }
}
""", {'horizon': 600}),
    "delay_renewal_uniform": (r"""
fn main() {
  stage d : delay;
  stage f : fifo(2);
  workload { arrive renewal(~uniform(0.2, 1.8)); init { set w = ~exp(1.5); } }
  server { run d (cost(d, ~exp(3))); set t0 = now; run f (cost(f, w)); observe response = now - t0; observe busy_f = busy(f); }
}
""", {'horizon': 800}),
}


# ---------------------------------------------------------------- deterministic, 0.1.3

@requires("0.1.3")
@pytest.mark.parametrize("name", list(DETERMINISTIC))
def test_differential_013_deterministic(name):
    source, kw = DETERMINISTIC[name]
    check(source, "0.1.3", kw)


# ---------------------------------------------------------------- spec examples, 0.1.3

SPEC_EXAMPLES_013 = {
    "p01_e1": (p01.E1_FLAT, {"horizon": 1}),
    "p01_e2": (p01.E2, {}),
    "p01_e2_set_a": (p01.E2, {"sets": {"a": "2*3"}}),
    "p01_e3": (p01.E3_FLAT, {}),
    "p01_e4": (p01.E4, {}),
    "p02_w1": (p02.W1_K, {}),
    "p02_w2": (p02.W2_K, {}),
    "p02_w2_warmup_5_2": (p02.W2_K, {"warmup": 5.2}),
    "p02_w2_warmup_0_5": (p02.W2_K, {"warmup": 0.5}),
    "p02_w3_renewal2": (p02.W3.replace("ARRIVAL", "renewal(2)"), {}),
    "p02_w4_k": (p02.W4_K, {}),
    "p02_w4_r": (p02.W4_R, {}),
    "p02_w4_k_warmup4": (p02.W4_K, {"warmup": 4}),
    "p02_w5": (p02.W5, {}),
    "p02_w6": (p02.W6, {}),
    "p02_w6_warmup_6_5": (p02.W6, {"warmup": 6.5}),
    "p02_w7": (open(data("w7.sq"), encoding="utf-8").read(), {"trace": "chat.csv"}),
    "p02_w8": (p02.W8, {}),
    "p02_w9": (open(data("w9.sq"), encoding="utf-8").read(), {"trace": "w9.csv"}),
    "p02_choose": (p02.CHOOSE, {}),
    "p02_13_1_ps": (p02.PS_EVENTS, {}),
    "p04_f1_maxmin": (p04.F1.replace("POLICY", "maxmin"), {}),
    "p04_f1_bottleneck": (p04.F1.replace("POLICY", "bottleneck"), {}),
    "p04_14_fifo2": (p04.FIFO2, {}),
    "p04_14_ps1": (p04.PS1, {}),
    "p04_14_ps_present": (p04.PS_PRESENT, {}),
    "p06_3_3_w1_45": (p06.W1_45.replace("N", "45"), {}),
    "p06_3_3_w1_39": (p06.W1_45.replace("N", "39"), {}),
}


@requires("0.1.3")
@pytest.mark.parametrize("name", list(SPEC_EXAMPLES_013))
def test_differential_013_spec_examples(name):
    source, kw = SPEC_EXAMPLES_013[name]
    check(source, "0.1.3", kw)


# ---------------------------------------------------------------- stochastic, 0.1.5

@requires("0.1.5")
@pytest.mark.parametrize("name", list(STOCHASTIC))
def test_differential_015_stochastic(name):
    source, kw = STOCHASTIC[name]
    check(source, "0.1.5", kw)


@requires("0.1.5")
@pytest.mark.parametrize("seed", [2, 7, 20240601])
def test_differential_015_mm1_other_seeds(seed):
    source, kw = STOCHASTIC["mm1_poisson"]
    check(source, "0.1.5", dict(kw, horizon=500, seed=seed))


@requires("0.1.5")
@pytest.mark.parametrize("seed", [3, 11])
def test_differential_015_closed_other_seeds(seed):
    source, kw = STOCHASTIC["closed_branch_with"]
    check(source, "0.1.5", dict(kw, horizon=300, seed=seed))


# Part 07 §11.4 V1–V6 in the 0.1.5 spelling, whole reports.
V_PROGRAMS = {
    "v1": (p07.V1_MAIN, {"horizon": 10}),
    "v2": (p07.V2_MAIN, {"horizon": 100}),
    "v3": (p07.V3_MAIN, {"horizon": 3}),
    "v4": (p07.V4_MAIN, {"horizon": 4}),
    "v5": (open(data("v5_main.sq"), encoding="utf-8").read(),
           {"horizon": 5, "trace": "trace_short.csv"}),
    "v6": (p07.V6_MAIN, {"horizon": 100}),
}


@requires("0.1.5")
@pytest.mark.parametrize("name", list(V_PROGRAMS))
def test_differential_015_p07_v_programs(name):
    source, kw = V_PROGRAMS[name]
    check(source, "0.1.5", kw)


# ---------------------------------------------------------------- cross-layout, 0.1.5

# The same models as STOCHASTIC, written in the 0.1.3 flat layout (shape R,
# plain amounts, `branch with`): serq-simpy runs them on 0.1.5's streams
# (Part 07 §9.3), so they must reproduce the 0.1.5 reference's report of the
# fn-main text.
CROSS_LAYOUT = {
    "mm1_poisson": ("""
        stage svc : fifo;
        gauge q = queue(svc);
        workload { arrive poisson(0.8); init { set s = ~exp(1.0); } session { turn; request; } }
        server { set t0 = now; run svc (s); observe response = now - t0; observe wait_q = queue(svc); }
    """, {"horizon": 3000}),
    "closed_branch_with": ("""
        stage svc : fifo;
        stage pause : delay;
        workload {
          arrive closed(3);
          turn { set z = ~exp(2); }
          session { loop { turn; request; run pause (z); branch with (0.3) { end; } } }
        }
        server { set t0 = now; run svc (~exp(0.5)); observe response = now - t0; }
    """, {"horizon": 800}),
    "ps_drawn_capacity": ("""
        stage svc : ps(~uniform(1, 3));
        workload { arrive poisson(1.2); session { turn; request; } }
        server { set t0 = now; run svc (~exp(1)); observe response = now - t0; }
    """, {"horizon": 1000}),
    "choose_drawn_keys": ("""
        let K = 3;
        stage s[K] : fifo;
        gauge total = sum k in K (queue(s[k]));
        workload { arrive poisson(2); session { turn; request; } }
        server {
          choose j in K by (queue(s[j]) + ~uniform(0, 0.5), -j);
          set t0 = now;
          run s[j] (~erlang(2, 1.2));
          observe response = now - t0;
          observe pick = j;
        }
    """, {"horizon": 800}),
}


@requires("0.1.5")
@pytest.mark.parametrize("name", list(CROSS_LAYOUT))
def test_differential_015_flat_layout_uses_015_streams(name):
    flat, kw = CROSS_LAYOUT[name]
    main_text, main_kw = STOCHASTIC[name]
    assert kw == main_kw
    check(flat, "0.1.5", kw, ref_source=main_text)


# ---------------------------------------------------------------- 0.1.4 (fn main, branch, while)

@requires("0.1.4")
def test_differential_014_while_branch_deterministic():
    check("""
        fn main() {
          stage svc : fifo(2);
          stage tool : delay;
          workload { arrive batch(4); init { set k = 0; } turn { set k = k + 1; }
            session { turn; while (k < 3) { run tool (cost(tool, 0.5 + serial / 4)); turn; } } }
          server { set t0 = now;
                   branch (k == 2) { run svc (cost(svc, 2)); } else { run svc (cost(svc, 1)); }
                   observe r = now - t0; }
        }
    """, "0.1.4", {"horizon": 30})


@requires("0.1.4")
def test_differential_014_w4_shape_t():
    check(p02.W4_T, "0.1.4", {"horizon": 20})  # Part 02 §14 W-4 shape T (0.1.4 and 0.1.5)


@requires("0.1.5")
@pytest.mark.parametrize("warmup", [0, 4])
def test_differential_015_w4_shape_t(warmup):
    check(p02.W4_T, "0.1.5", {"horizon": 20, "warmup": warmup})  # Part 02 §14 W-4


@requires("0.1.5")
@pytest.mark.parametrize("name, source, kw", [
    ("p01_e1", p01.E1_MAIN, {"horizon": 1}),
    ("p01_e3", p01.E3_MAIN, {"horizon": 20}),
    ("p01_e4", p01.E4_MAIN, {"horizon": 10}),
    ("p01_def", p01.DEF_MAIN, {"horizon": 10}),
    ("p01_def_prompt_40", p01.DEF_MAIN, {"horizon": 10, "sets": {"prompt": 40}}),
    ("p02_w1", p02.W1_T, {"horizon": 10}),
    ("p02_w2", p02.W2_T, {"horizon": 20, "warmup": 5}),
    ("p06_w1_45", p06.W1_45_MAIN.replace("N", "45"), {"horizon": 100}),
], ids=lambda x: x if isinstance(x, str) and len(x) < 30 else "")
def test_differential_015_spec_examples_main(name, source, kw):
    check(source, "0.1.5", kw)
