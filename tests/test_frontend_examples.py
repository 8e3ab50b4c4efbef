"""Every worked example program of the spec loads into the kernel IR
(parse + link only; the runtime's tests check the numbers)."""
from __future__ import annotations

import os

import pytest

from serq.core import ir
from serq.core.errors import LinkError
from serq.frontend import load, summary

DATA = os.path.join(os.path.dirname(__file__), "data")

P01_E1 = """
let a = 2;
let b = a ^ 3 ^ 2 / 64;          // 2^(3^2)/64 = 8
stage d : delay;
workload { arrive batch(1); }
session {
  turn;
  set x = 3;
  observe p1 = -x ^ 2;                         // -9
  observe p2 = 10 - 4 - 3;                     // 3
  observe p3 = 2 * 3 + 4 * 5;                  // 26
  observe p4 = x > 2 && x < 4 || 0;            // 1
  observe p5 = !x + 1;                         // 1
  observe p6 = x == 3 ? 10 : x == 4 ? 20 : 30; // 10
  observe p7 = 7 && 0.5;                       // 1
  observe p8 = b;                              // 8
  observe p9 = 1 / 0;                          // inf
  observe p10 = max(0 / 0, 1);                 // 1
  observe p11 = (0 / 0) ? 1 : 2;               // 1
  observe p12 = floor(-2.5) + ceil(-2.5) + abs(-1) + sqrt(16) + ln(exp(2));  // 2
  observe p13 = 2e-5 * 1_000_000;              // 20
}
"""

P01_E1_MAIN = """
fn main() {
  let a = 2;
  let b = a ^ 3 ^ 2 / 64;
  stage d : delay;
  workload { arrive batch(1); init { set x = 3; } }
  server {
    observe p1 = -x ^ 2;
    observe p8 = b;
    observe p13 = 2e-5 * 1_000_000;
  }
}
"""

P01_E3 = """
stage svc : fifo;
stage sh : ps(2);
workload { arrive batch(3); }
session {
  turn;
  observe q = queue(svc); observe b = busy(svc); observe w = work(svc);
  run svc (2);
  observe q2 = queue(svc); observe w2 = work(svc);
  run sh (1 + serial);
  observe el = est_lambda(svc); observe er = est_rho(svc); observe ew = est_wait(svc);
}
run { horizon 20; }
"""

P01_E4 = """
let N = 3;
stage s[3] : fifo;
workload { arrive batch(4); }
session {
  turn;
  choose j in N by (queue(s[j]), -j);
  observe pick = j;
  observe total = sum k in N (queue(s[k]));
  observe longest = max k in N (queue(s[k]));
  run s[j] (1);
}
run { horizon 10; }
"""

P01_DEF = """
use "std/args";
def reusable(x, bs) { floor((x - 1) / bs) * bs }
fn main() {
  let n = args.number("prompt", 100);
  let bs = 16;
  def twice(v) { 2 * v }
  def serve_once(st, w) { run st (cost(st, w)); set done_at = now; }
  stage svc : fifo;
  workload { arrive batch(2); }
  server {
    observe hit = reusable(n, bs);      // floor(99/16)*16 = 96
    observe dbl = twice(n + 1);         // 2 * (n + 1) = 202
    serve_once(svc, twice(1));
    observe t = done_at;
  }
}
"""

P02_W1 = """
stage svc : fifo;
workload { arrive batch(2); }
session { turn; set t0 = now; run svc (2); observe response = now - t0; }
run { horizon 10; }
"""

P02_W2 = """
stage svc : fifo;
workload { arrive renewal(1); }
session { turn; run svc (0.5); observe done = now; }
run { horizon 20; warmup 5; }
"""

P02_W3 = """
stage svc : delay;
workload { arrive ARRIVAL; }
session { turn; observe at = now; }
run { horizon 10; }
"""

W4_WORKLOAD = """
  arrive batch(2);
  init { set k = 0; }
  turn { set k = k + 1; set w = k; }
"""

P02_W4_K = """
stage svc : fifo;
stage tool : delay;
workload {""" + W4_WORKLOAD + """}
session {
  turn;
  loop {
    set t0 = now;
    run svc (w);
    observe response = now - t0;
    branch (k < 3) { run tool (1); turn; } else { end; }
  }
}
run { horizon 20; }
"""

P02_W4_R = """
stage svc : fifo;
stage tool : delay;
workload {""" + W4_WORKLOAD + """
  session { turn; loop { request;
            branch (k < 3) { run tool (1); turn; } else { end; } } }
}
server { set t0 = now; run svc (w); observe response = now - t0; }
run { horizon 20; }
"""

P02_W4_T = """
fn main() {
  stage svc : fifo;
  stage tool : delay;
  workload {""" + W4_WORKLOAD + """
    session { turn; while (k < 3) { run tool (cost(tool, 1)); turn; } }
  }
  server { set t0 = now; run svc (cost(svc, w)); observe response = now - t0; }
}
"""

P02_W5 = """
stage svc : fifo;
workload { arrive closed(2); }
session { turn; run svc (1); observe done = now; observe id = serial; }
run { horizon 3.5; }
"""

P02_W6 = """
stage svc : fifo;
workload { arrive renewal(1); }
session { turn; set t0 = now; run svc (2); observe response = now - t0; }
run { horizon 100; arrivals 3; }
"""

# W-7 observes `again` where the spec observes `last`: a supplied name is
# refused as an observation name (Part 01 §6.2; pyserq 0.1.5 refuses it too).
P02_W7 = """
stage engine : fifo;
stage tool : delay;
workload { arrive batch(3); trace "chat.csv" ordered; }
session {
  turn;
  loop {
    run engine ((new + out) / 100);
    observe tokens_in = new;
    observe again = more;
    branch (more) { run tool (think); turn; } else { end; }
  }
}
run { horizon 50; }
"""

P02_W8 = """
stage d : delay;
workload { arrive batch(2); init { observe x = 100 + serial; } }
session { turn; observe x = serial; run d (1); observe x = now; }
run { horizon 10; }
"""

P02_W9 = """
stage d : delay;
workload { arrive batch(3); trace "w9.csv" ordered;
           init { set new = 5; } turn { set new = new + 1000; } }
session { observe n = new; turn; observe n = new; run d (1);
          turn; observe n = new; turn; observe n = new; observe m = more; }
run { horizon 10; }
"""

P04_F1 = """
stage A : ps(1);
stage B : ps(2);
share POLICY;
workload { arrive batch(3); }
session {
  turn;
  branch (serial == 0) { run A, B (1); }
  else { branch (serial == 1) { run A (1); } else { run B (1); } }
  observe done = now;
}
run { horizon 10; }
"""

P04_S14 = """
stage f : fifo(2);
stage p : ps(1);
stage q : ps(min(present, 2));
workload { arrive batch(3); }
session { turn; run f (1 + serial); run p (1 + serial); run q (1 + serial); }
run { horizon 10; }
"""

P06_W1 = """
stage svc : fifo;
workload { arrive batch(45); session { request; end; } }
server { set t0 = now; run svc (1); observe response = now - t0; }
gauge jobs = queue(svc);
run { horizon 100; }
"""

P06_W3_NO_POOL = """
stage svc : fifo(2);
stage shared : ps(1);
gauge busy_svc = busy(svc);
gauge q_svc = queue(svc);
workload { arrive batch(4); init { set t0 = now; set s = 1 + serial; } session { request; end; } }
server {
  run svc (s);
  run shared (1);
  observe response = now - t0;
}
run { horizon 20; }
"""

V1 = """
fn main() {
  stage svc : delay;
  workload {
    arrive poisson(0.8);
    init { set s = ~exp(1.0); }
  }
  server {
    observe t = now;
    observe sv = s;
  }
}
"""

V2 = """
fn main() {
  stage svc : delay;
  workload {
    arrive batch(2);
    init { set a = ~uniform(0, 1); }
    turn { set n = ~exp(10); }
    session { loop { set z = ~bernoulli(0.5); turn; if (turn_no == 3) { end; } } }
  }
  server {
    set w = ~exp(1.0);
    run svc (cost(svc, w));
    observe oa = a;
    observe on = n;
    observe oz = z;
    observe ow = w;
  }
}
"""

V3 = """
fn main() {
  stage svc : delay;
  workload {
    arrive renewal(~erlang(2, 0.5));
    init { set s = ~h2(1, 4); }
  }
  server {
    observe t = now;
    observe sv = s;
    observe b = ~bernoulli(0.3);
    run svc (cost(svc, 1));
  }
}
"""

V4 = """
fn main() {
  stage svc : delay;
  workload {
    arrive closed(2);
    session { loop { turn; if (~bernoulli(0.5)) { end; } } }
  }
  server {
    set t0 = now;
    run svc (cost(svc, ~exp(1.0)));
    observe r = now - t0;
  }
}
"""

V5 = """
fn main() {
  stage svc : delay;
  workload {
    arrive batch(8);
    trace "trace_short.csv";
  }
  server {
    observe first_new = new;
    run svc (cost(svc, 1));
  }
}
"""

V6 = """
fn main() {
  stage svc : ps(~uniform(1, 2));
  workload {
    arrive batch(5);
    init { set w = 1 + serial; }
  }
  server {
    set t0 = now;
    run svc (cost(svc, w));
    observe r = now - t0;
  }
}
"""


def flat_013(text: str, session: str) -> str:
    """The 0.1.3 text of a V program: flat items, plain amounts, shape R."""
    body = text.strip()
    body = body[len("fn main() {"):body.rindex("}")]
    body = body.replace("cost(svc, w)", "w").replace("cost(svc, 1)", "1")
    body = body.replace("cost(svc, ~exp(1.0))", "~exp(1.0)")
    if "session {" in body:
        start = body.index("session {")
        end = body.index("\n", start)
        body = body[:start] + session + body[end:]
    else:
        at = body.index("workload {") + len("workload {")
        body = body[:at] + "\n    " + session + body[at:]
    return body


def load_text(text: str, **kw) -> ir.Program:
    kw.setdefault("horizon", 10)
    return load(source=text, file_label="example.sq", **kw)


def load_in_data(text: str, name: str, **kw) -> ir.Program:
    path = os.path.join(DATA, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    try:
        kw.setdefault("horizon", 10)
        return load(path, **kw)
    finally:
        os.remove(path)


def kinds(stmts) -> list[str]:
    """Statement class names, nested blocks in brackets (shape comparisons)."""
    out: list[str] = []
    for s in stmts:
        out.append(type(s).__name__)
        for attr in ("then", "other", "body"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                out.append(kinds(inner))
    return out


@pytest.mark.parametrize("name, text", [
    ("P01_E1", P01_E1), ("P01_E1_MAIN", P01_E1_MAIN), ("P01_E3", P01_E3),
    ("P01_E4", P01_E4), ("P01_DEF", P01_DEF), ("P02_W1", P02_W1), ("P02_W2", P02_W2),
    ("P02_W4_K", P02_W4_K), ("P02_W4_R", P02_W4_R), ("P02_W4_T", P02_W4_T),
    ("P02_W5", P02_W5), ("P02_W6", P02_W6), ("P02_W8", P02_W8),
    ("P04_S14", P04_S14), ("P06_W1", P06_W1), ("P06_W3", P06_W3_NO_POOL),
    ("V1", V1), ("V2", V2), ("V3", V3), ("V4", V4), ("V6", V6),
])
def test_examples_load(name, text):
    p = load_text(text)
    assert isinstance(p, ir.Program)
    assert summary(p).startswith("OK: 0 pool(s)")


def test_p01_e1_lowering():
    p = load_text(P01_E1, horizon=1)
    assert p.attributes == ["x"]
    assert p.observations == [f"p{i}" for i in range(1, 14)]
    obs = {s.name: s for s in p.session if isinstance(s, ir.Observe)}
    assert obs["p8"].value == ir.Num(8.0)
    assert obs["p1"].value == ir.Unary("-", ir.Binary("^", ir.Attr("x"), ir.Num(2.0)))
    assert obs["p4"].is_test and obs["p7"].is_test and not obs["p5"].is_test
    assert obs["p13"].value == ir.Binary("*", ir.Num(2e-5), ir.Num(1e6))
    assert p.settings.horizon == 1 and p.has_requests is False
    assert isinstance(p.session[0], ir.Turn)


def test_p01_e3_observables():
    p = load_text(P01_E3)
    assert p.settings.horizon == 10  # the argument wins over the block's 20
    obs = {s.name: s.value for s in p.session if isinstance(s, ir.Observe)}
    assert obs["q"] == ir.Observable("queue", ir.Ref("stage", "svc", None, obs["q"].target.pos))
    assert [st.kind for st in p.stages] == ["fifo", "ps"]
    assert p.stages[1].capacity == ir.Num(2.0)
    assert load_text(P01_E3, horizon=None).settings.horizon == 20


def test_p01_e4_aggregates():
    p = load_text(P01_E4)
    obs = {s.name: s.value for s in p.session if isinstance(s, ir.Observe)}

    def q(k):
        return ir.Observable("queue", ir.Ref("stage", "s", ir.Num(float(k))))

    def strip(e):  # drop positions of refs for comparison
        if isinstance(e, ir.Observable):
            return ir.Observable(e.fn, ir.Ref(e.target.kind, e.target.name, e.target.index))
        if isinstance(e, ir.Binary):
            return ir.Binary(e.op, strip(e.left), strip(e.right))
        if isinstance(e, ir.Call):
            return ir.Call(e.fn, [strip(a) for a in e.args])
        return e

    assert strip(obs["total"]) == ir.Binary("+", ir.Binary("+", q(0), q(1)), q(2))
    assert strip(obs["longest"]) == ir.Call("max", [ir.Call("max", [q(0), q(1)]), q(2)])
    choose = next(s for s in p.session if isinstance(s, ir.Choose))
    assert choose.name == "j" and choose.count == ir.Num(3.0)
    run = p.session[-1]
    assert run.stages[0].index == ir.Attr("j")
    assert p.stages[0].size == 3 and p.attributes == ["j"]


def test_p01_def_example():
    p = load_text(P01_DEF)
    obs = {s.name: s for s in p.session if isinstance(s, ir.Observe)}
    hit = obs["hit"].value
    assert hit == ir.Binary("*", ir.Call("floor", [ir.Binary("/", ir.Binary(
        "-", ir.Num(100.0), ir.Num(1.0)), ir.Num(16.0))]), ir.Num(16.0))
    assert obs["dbl"].value == ir.Binary("*", ir.Num(2.0), ir.Binary("+", ir.Num(100.0),
                                                                      ir.Num(1.0)))
    run = next(s for s in p.session if isinstance(s, ir.Run))
    assert run.work == ir.Binary("*", ir.Num(2.0), ir.Num(1.0))
    assert p.attributes == ["done_at"]
    p40 = load_text(P01_DEF, sets={"prompt": "40"})
    obs40 = {s.name: s for s in p40.session if isinstance(s, ir.Observe)}
    assert obs40["dbl"].value.right.left == ir.Num(40.0)
    pbs = load_text(P01_DEF, sets={"bs": 40})
    hit40 = next(s for s in pbs.session if isinstance(s, ir.Observe)).value
    assert hit40.right == ir.Num(40.0)


def test_p02_w1_shapes_k_and_t_agree():
    k = load_text(P02_W1)
    t = load_text("""fn main() { stage svc : fifo; workload { arrive batch(2); }
        server { set t0 = now; run svc (cost(svc, 2)); observe response = now - t0; } }""")
    assert k.has_requests is False and t.has_requests is True
    assert kinds(t.session) == ["Turn", "RequestBegin", "Set", "Run", "Observe",
                                "RequestEnd"]
    assert [type(s).__name__ for s in k.session] == ["Turn", "Set", "Run", "Observe"]
    assert k.workload.arrival == "batch" and k.workload.count == 2


def test_p02_w2_renewal_and_warmup():
    p = load_text(P02_W2, horizon=None)
    assert p.workload.arrival == "renewal" and p.workload.gap == ir.Num(1.0)
    assert p.settings.horizon == 20 and p.settings.warmup == 5
    assert load_text(P02_W2, horizon=None, warmup=10).settings.warmup == 10


@pytest.mark.parametrize("arrival, kind", [("poisson(0.5)", "poisson"),
                                           ("renewal(~exp(2))", "renewal"),
                                           ("renewal(2)", "renewal")])
def test_p02_w3_arrivals(arrival, kind):
    p = load_text(P02_W3.replace("ARRIVAL", arrival))
    assert p.workload.arrival == kind
    if kind == "poisson":
        assert p.workload.rate == 0.5
    elif "exp" in arrival:
        assert p.workload.gap == ir.Draw("exp", [ir.Num(2.0)])


def test_p02_w4_three_shapes_same_statements():
    k = load_text(P02_W4_K)
    r = load_text(P02_W4_R)
    t = load_text(P02_W4_T)
    assert k.observations == r.observations == t.observations == ["response"]
    assert k.attributes == r.attributes == t.attributes == ["k", "w", "t0"]
    assert kinds(r.session) == ["Turn", "Loop", ["RequestBegin", "Set", "Run", "Observe",
                                                 "RequestEnd", "If", ["Run", "Turn"],
                                                 ["End"]]]
    strip = [x for x in kinds(r.session)]
    assert kinds(k.session) == ["Turn", "Loop", ["Set", "Run", "Observe", "If",
                                                 ["Run", "Turn"], ["End"]]]
    assert strip != kinds(k.session)  # only the request marks differ
    assert kinds(t.session) == ["Turn", "RequestBegin", "Set", "Run", "Observe",
                                "RequestEnd", "While",
                                ["Run", "Turn", "RequestBegin", "Set", "Run", "Observe",
                                 "RequestEnd"]]
    assert r.has_requests and t.has_requests and not k.has_requests
    w = t.workload
    assert [s.name for s in w.init] == ["k"] and [s.name for s in w.turn] == ["k", "w"]
    loop = t.session[-1]
    assert isinstance(loop, ir.While) and loop.text == "k < 3"
    assert loop.guard == ir.Binary("<", ir.Attr("k"), ir.Num(3.0))
    branch = r.session[1].body[-1]
    assert branch.text == "k < 3" and branch.keyword == "branch"


def test_p02_w5_closed():
    p = load_text(P02_W5)
    assert p.workload.arrival == "closed" and p.workload.count == 2
    assert p.observations == ["done", "id"]


def test_p02_w6_arrivals_setting():
    p = load_text(P02_W6, horizon=None)
    assert p.settings.arrivals == 3 and p.settings.horizon == 100


def test_p02_w7_trace_read():
    p = load_in_data(P02_W7, "w7.sq", horizon=None)
    tr = p.workload.trace
    assert tr.ordered is True
    assert tr.sessions == [
        [ir.TraceTurn(100, 20, 1.5, 0), ir.TraceTurn(30, 10, 0, 1)],
        [ir.TraceTurn(50, 5, 2, 0)]]
    assert p.observations == ["tokens_in", "again"]


def test_p02_w8_observation_order():
    p = load_text(P02_W8)
    assert p.observations == ["x"]
    assert [s.name for s in p.workload.init] == ["x"]


def test_p02_w9_trace_and_turn_blocks():
    p = load_in_data(P02_W9, "w9.sq")
    tr = p.workload.trace
    assert [len(s) for s in tr.sessions] == [2, 1]
    assert tr.sessions[1][0] == ir.TraceTurn(300, 30, 2, 0)
    assert p.workload.turn[0] == ir.Set("new", ir.Binary("+", ir.Attr("new"),
                                                         ir.Num(1000.0)),
                                        p.workload.turn[0].pos)
    assert p.observations == ["n", "m"] and p.attributes == []


def test_p02_trace_override(tmp_path, monkeypatch):
    (tmp_path / "other.csv").write_text("5,0,7,8,9\n")
    monkeypatch.chdir(tmp_path)
    p = load_in_data(P02_W9, "w9b.sq", trace="other.csv")
    assert p.workload.trace.sessions == [[ir.TraceTurn(7, 8, 9, 0)]]
    with pytest.raises(LinkError):
        load_text(P02_W1, trace="other.csv")


@pytest.mark.parametrize("policy", ["maxmin", "bottleneck"])
def test_p04_f1_shared_stages(policy):
    p = load_text(P04_F1.replace("POLICY", policy))
    assert p.share == policy
    assert [s.shared for s in p.stages] == [True, True]
    multi = p.session[1].then[0]
    assert [r.name for r in multi.stages] == ["A", "B"] and multi.text == "run A, B (1)"


def test_p04_s14_stage_kinds():
    p = load_text(P04_S14)
    f, ps1, q = p.stages
    assert (f.kind, f.servers) == ("fifo", 2)
    assert q.capacity == ir.Call("min", [ir.Ctx("present"), ir.Num(2.0)])
    assert not any(s.shared for s in p.stages) and p.share is None


def test_p06_w1_gauge_and_shape_r():
    p = load_text(P06_W1)
    assert p.gauges[0].name == "jobs"
    assert p.gauges[0].value.fn == "queue"
    assert kinds(p.session) == ["RequestBegin", "Set", "Run", "Observe", "RequestEnd",
                                "End"]


def test_p06_w3_gauges():
    p = load_text(P06_W3_NO_POOL)
    assert [g.name for g in p.gauges] == ["busy_svc", "q_svc"]
    assert p.attributes == ["t0", "s"]


def test_p07_v1_to_v6_main_form():
    v1 = load_text(V1)
    assert v1.workload.arrival == "poisson" and v1.workload.rate == 0.8
    assert v1.workload.init[0].value == ir.Draw("exp", [ir.Num(1.0)])
    v2 = load_text(V2)
    assert kinds(v2.session) == ["Loop", ["Set", "Turn", "RequestBegin", "Set", "Run",
                                          "Observe", "Observe", "Observe", "Observe",
                                          "RequestEnd", "If", ["End"], []]]
    v3 = load_text(V3)
    assert v3.workload.gap == ir.Draw("erlang", [ir.Num(2.0), ir.Num(0.5)])
    v4 = load_text(V4)
    guard = v4.session[0].body[-1]
    assert guard.guard == ir.Draw("bernoulli", [ir.Num(0.5)]) and guard.keyword == "if"
    v5 = load_in_data(V5, "v5.sq")
    assert v5.workload.trace.ordered is False and len(v5.workload.trace.sessions) == 6
    v6 = load_text(V6)
    assert v6.stages[0].capacity == ir.Draw("uniform", [ir.Num(1.0), ir.Num(2.0)])


@pytest.mark.parametrize("name, text, session", [
    ("V1", V1, "session { request; }"), ("V3", V3, "session { request; }"),
    ("V6", V6, "session { request; }"), ("V5", V5, "session { turn; request; }"),
    ("V2", V2, "session { loop { set z = ~bernoulli(0.5); turn; request; "
               "branch (turn_no == 3) { end; } } }"),
    ("V4", V4, "session { loop { turn; request; branch with (0.5) { end; } } }"),
])
def test_p07_flat_013_form(name, text, session):
    flat = flat_013(text, session)
    p = load_in_data(flat, f"{name}.sq") if name == "V5" else load_text(flat)
    main = load_in_data(text, f"{name}m.sq") if name == "V5" else load_text(text)
    assert p.observations == main.observations
    assert p.has_requests
    if name == "V4":
        branch = p.session[0].body[-1]
        assert branch.guard == ir.Draw("bernoulli", [ir.Num(0.5)])


def plain(node):
    """An IR node as plain data without positions, texts and request marks."""
    import dataclasses
    if isinstance(node, list):
        return [plain(n) for n in node
                if not isinstance(n, (ir.RequestBegin, ir.RequestEnd))]
    if dataclasses.is_dataclass(node):
        return (type(node).__name__,) + tuple(
            plain(getattr(node, f.name)) for f in dataclasses.fields(node)
            if f.name not in ("pos", "text"))
    return node


def test_p02_w4_k_and_r_expand_to_the_same_statements():
    k, r, t = load_text(P02_W4_K), load_text(P02_W4_R), load_text(P02_W4_T)
    assert plain(k.session) == plain(r.session)
    assert plain(k.workload) == plain(r.workload) == plain(t.workload)
    server = plain(k.session[1].body[:3])          # set t0; run svc (w); observe
    segments = [t.session[2:5], t.session[-1].body[3:6]]
    assert all(plain(seg) == server for seg in segments)
