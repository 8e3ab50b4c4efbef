"""Part 01 worked examples, end to end (load + run + report).

Every expected number names the spec section it comes from. Counts and
sample values are compared exactly; other floats to a relative 1e-9
(spec README, "Exactness").
"""
from __future__ import annotations

import math

import pytest

from serq.core.errors import LinkError
from serq.report.json_report import to_dict

from e2e_util import assert_close, load, run, values

# ---------------------------------------------------------------- §9 E-1

E1_FLAT = """
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

# §9 E-1: "the same body in fn main form (with set x = 3; moved to init)
# gives identical values in 0.1.5".
E1_MAIN = """
fn main() {
  let a = 2;
  let b = a ^ 3 ^ 2 / 64;
  stage d : delay;
  workload { arrive batch(1); init { set x = 3; } }
  server {
    observe p1 = -x ^ 2;
    observe p2 = 10 - 4 - 3;
    observe p3 = 2 * 3 + 4 * 5;
    observe p4 = x > 2 && x < 4 || 0;
    observe p5 = !x + 1;
    observe p6 = x == 3 ? 10 : x == 4 ? 20 : 30;
    observe p7 = 7 && 0.5;
    observe p8 = b;
    observe p9 = 1 / 0;
    observe p10 = max(0 / 0, 1);
    observe p11 = (0 / 0) ? 1 : 2;
    observe p12 = floor(-2.5) + ceil(-2.5) + abs(-1) + sqrt(16) + ln(exp(2));
    observe p13 = 2e-5 * 1_000_000;
  }
}
"""

E1_EXPECTED = {  # §9 E-1, the comments of the program
    "p1": -9.0, "p2": 3.0, "p3": 26.0, "p4": 1.0, "p5": 1.0, "p6": 10.0, "p7": 1.0,
    "p8": 8.0, "p9": math.inf, "p10": 1.0, "p11": 1.0, "p12": 2.0, "p13": 20.0,
}


@pytest.mark.parametrize("source", [E1_FLAT, E1_MAIN], ids=["flat", "main"])
def test_p01_e1_operators(source):
    rep = run(source, horizon=1)  # §9 E-1: horizon 1
    assert list(rep.observes) == list(E1_EXPECTED)  # §9 E-1: p1 … p13 in program order
    for name, expected in E1_EXPECTED.items():
        # §9 E-1: "Every observation has one sample at t = 0"
        assert values(rep, name) == [expected], name
        assert rep.observes[name].times == [0], name
    assert rep.observes["p9"].values[0] == math.inf  # §9 E-1: p9 = inf


@pytest.mark.parametrize("source", [E1_FLAT, E1_MAIN], ids=["flat", "main"])
def test_p01_e1_json_p9_mean_null(source):
    d = to_dict(run(source, horizon=1))
    # §9 E-1: "In the JSON report p9 has count 1 and mean null"
    assert d["observes"]["p9"]["count"] == 1
    assert d["observes"]["p9"]["mean"] is None
    for name, expected in E1_EXPECTED.items():
        if name != "p9":
            assert d["observes"][name]["count"] == 1  # §9 E-1: one sample each
            assert d["observes"][name]["mean"] == expected  # §9 E-1


# ---------------------------------------------------------------- §9 E-2

E2 = """
let a = 1;
let b = a * 2;
stage d : delay;
workload { arrive batch(1); }
session { turn; observe v = a * 100 + b; }
run { horizon 1; }
"""


@pytest.mark.parametrize("sets, expected", [
    (None, 102.0),             # §9 E-2: a * 100 + b = 102
    ({"a": 5}, 510.0),         # §9 E-2: --set a=5 → 510
    ({"a": "5"}, 510.0),       # §9 E-2: the same, given as expression text
    ({"a": "2*3"}, 612.0),     # §9 E-2: --set a=2*3 → 612
    ({"b": 7}, 107.0),         # §9 E-2: --set b=7 → 107
    ({"a": "inf"}, math.inf),  # §9 E-2: --set a=inf → inf
], ids=["default", "a=5", "a='5'", "a=2*3", "b=7", "a=inf"])
def test_p01_e2_overrides(sets, expected):
    rep = run(E2, sets=sets)
    assert values(rep, "v") == [expected]  # §9 E-2


def test_p01_e2_override_nan_is_link_error():
    with pytest.raises(LinkError) as exc:
        load(E2, sets={"a": "0/0"})
    # §9 E-2: link error "the `let` override `a`: the value is NaN"
    assert "the `let` override `a`" in exc.value.message
    assert "NaN" in exc.value.message


def test_p01_e2_unknown_override_lists_constants():
    with pytest.raises(LinkError) as exc:
        load(E2, sets={"zz": 7})
    # §9 E-2 / §2.4: "unknown `let` override `zz`" with
    # help: an override replaces a declared `let`; available constants: a, b
    text = exc.value.format("model.sq")
    assert "unknown `let` override `zz`" in text
    assert "a, b" in text


# ---------------------------------------------------------------- §9 E-3

E3_FLAT = """
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

# §9 E-3: "0.1.5 (fn main, cost(…) amounts) give the same numbers"
E3_MAIN = """
fn main() {
  stage svc : fifo;
  stage sh : ps(2);
  workload { arrive batch(3); }
  server {
    observe q = queue(svc); observe b = busy(svc); observe w = work(svc);
    run svc (cost(svc, 2));
    observe q2 = queue(svc); observe w2 = work(svc);
    run sh (cost(sh, 1 + serial));
    observe el = est_lambda(svc); observe er = est_rho(svc); observe ew = est_wait(svc);
  }
}
"""

E3_TABLE = {  # §9 E-3 table: per observation, sessions 0, 1, 2
    "q": [0, 1, 2], "b": [0, 1, 1], "w": [0, 2, 4],
    "q2": [2, 1, 0], "w2": [4, 2, 0],
    "el": [0, 0.5, 0.5], "er": [0, 0.99, 0.99], "ew": [0, 0.02, 0.0598],
}
E3_TIMES = {  # §9 E-3 table: q, b, w at t = 0; q2, w2 at 2, 4, 6; el, er, ew at 2.5, 5, 7.5
    "q": [0, 0, 0], "b": [0, 0, 0], "w": [0, 0, 0],
    "q2": [2, 4, 6], "w2": [2, 4, 6],
    "el": [2.5, 5, 7.5], "er": [2.5, 5, 7.5], "ew": [2.5, 5, 7.5],
}


@pytest.mark.parametrize("source", [E3_FLAT, E3_MAIN], ids=["flat", "main"])
def test_p01_e3_stage_observables(source):
    rep = run(source, horizon=20)  # §9 E-3: horizon 20
    assert list(rep.observes) == list(E3_TABLE)
    for name in ("q", "b", "w", "q2", "w2"):
        assert values(rep, name) == [float(x) for x in E3_TABLE[name]], name  # §9 E-3 table
    for name in ("el", "er", "ew"):
        # §9 E-3 table (0.02 = 0.01·2; 0.0598 = 0.99·0.02 + 0.01·4, printed rounded)
        assert_close(values(rep, name), E3_TABLE[name], what=name)
    for name, ts in E3_TIMES.items():
        assert_close(rep.observes[name].times, ts, what=f"{name} times")  # §9 E-3 table
        assert list(rep.observes[name].sessions) == [0, 1, 2], name  # §9 E-3: sessions 0, 1, 2
    assert_close(rep.mean_live, 0.75, what="mean_live")  # §9 E-3: mean_live 0.75
    assert rep.arrivals == 3  # §9 E-3: batch(3)
    assert rep.ended == 3  # §9 E-3: every session finishes by 7.5 < 20


def test_p01_e3_ew_exact_recurrence():
    rep = run(E3_FLAT)
    # §4.3: Ŵ ← 0.99 Ŵ + 0.01 x, first completion sets Ŵ (E-3: waits 0, 2, 4)
    w = 0.0
    w = 0.99 * w + 0.01 * 2
    expected_2 = w
    w = 0.99 * w + 0.01 * 4
    assert values(rep, "ew")[1] == expected_2  # §9 E-3: Ŵ = 0.01·2 = 0.02 at t = 5
    assert values(rep, "ew")[2] == w  # §9 E-3: Ŵ = 0.99·0.02 + 0.01·4 at t = 7.5


# ---------------------------------------------------------------- §4.4 E-4

E4 = """
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

E4_MAIN = """
fn main() {
  let N = 3;
  stage s[3] : fifo;
  workload { arrive batch(4); }
  server {
    choose j in N by (queue(s[j]), -j);
    observe pick = j;
    observe total = sum k in N (queue(s[k]));
    observe longest = max k in N (queue(s[k]));
    run s[j] (cost(s, 1));
  }
}
"""


@pytest.mark.parametrize("source", [E4, E4_MAIN], ids=["flat", "main"])
def test_p01_e4_aggregates_and_choose(source):
    rep = run(source, horizon=10)  # §4.4 E-4: horizon 10
    assert values(rep, "pick") == [2, 1, 0, 2]  # §4.4 E-4
    assert values(rep, "total") == [0, 1, 2, 3]  # §4.4 E-4
    assert values(rep, "longest") == [0, 1, 1, 1]  # §4.4 E-4
    for name in ("pick", "total", "longest"):
        assert rep.observes[name].times == [0, 0, 0, 0]  # §4.4 E-4: all at t = 0
        assert list(rep.observes[name].sessions) == [0, 1, 2, 3]  # §4.4 E-4: sessions 0–3
    assert_close(rep.mean_live, 0.5, what="mean_live")  # §4.4 E-4: mean_live 0.5


# ---------------------------------------------------------------- §2.5 def example

DEF_MAIN = """
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

# §2.5: "checked identical in 0.1.3 with the = spelling" — the flat layout
# (args.number at top level of a flat program is serq-simpy's, §2.6).
DEF_FLAT = """
use "std/args";
def reusable(x, bs) = floor((x - 1) / bs) * bs;
let n = args.number("prompt", 100);
let bs = 16;
def twice(v) = 2 * v;
def serve_once(st, w) { run st (w); set done_at = now; }
stage svc : fifo;
workload { arrive batch(2); session { turn; request; } }
server {
  observe hit = reusable(n, bs);
  observe dbl = twice(n + 1);
  serve_once(svc, twice(1));
  observe t = done_at;
}
"""


@pytest.mark.parametrize("source", [DEF_MAIN, DEF_FLAT], ids=["main", "flat"])
def test_p01_def_example(source):
    rep = run(source, horizon=10)  # §2.5: horizon 10
    assert values(rep, "hit") == [96, 96]  # §2.5: hit = [96, 96]
    assert values(rep, "dbl") == [202, 202]  # §2.5: dbl = [202, 202]
    assert values(rep, "t") == [2, 4]  # §2.5: t = [2, 4]


@pytest.mark.parametrize("source", [DEF_MAIN, DEF_FLAT], ids=["main", "flat"])
def test_p01_def_example_set_prompt_40(source):
    rep = run(source, horizon=10, sets={"prompt": 40})  # §2.5: --set prompt=40
    assert values(rep, "hit") == [32, 32]  # §2.5: hit = [32, 32]
    assert values(rep, "dbl") == [82, 82]  # §2.5: dbl = [82, 82]
    assert values(rep, "t") == [2, 4]  # §2.5: the service does not read n


def test_p01_def_example_set_bs_accepted():
    # §2.5: "In 0.1.5 `--set bs=40` is refused …; serq-simpy accepts it (2.4)"
    rep = run(DEF_MAIN, horizon=10, sets={"bs": 40})
    assert values(rep, "hit") == [80, 80]  # by hand: floor(99/40)*40 = 80


# ---------------------------------------------------------------- §4.5 cost examples

COST = """
fn main() {
  stage svc : fifo;
  workload { arrive batch(1); }
  server {
    set t0 = now;
    run svc (AMOUNT);
    observe d = now - t0;
    observe o = cost(svc, 2);
  }
}
"""


@pytest.mark.parametrize("amount, duration", [
    ("cost(svc, 2) * 2", 4.0),               # §4.5: runs 4 time units
    ("cost(svc, 2) + cost(svc, 1)", 3.0),    # §4.5: runs 3
    ("cost(svc, 2) / 2", 1.0),               # §4.5: runs 1
], ids=["times2", "sum", "half"])
def test_p01_cost_examples(amount, duration):
    rep = run(COST.replace("AMOUNT", amount), horizon=100)
    assert values(rep, "d") == [duration]  # §4.5
    assert values(rep, "o") == [2.0]  # §4.5: observe o = cost(svc, 2) records 2
    assert rep.stage("svc").mean_service == duration  # §4.5: the run's work


def test_p01_cost_examples_flat_stored_attribute():
    # §4.5: annotated values may be stored in attributes (`set c = cost(svc, 2);
    # run svc (c);`) and combined with numbers; plain amounts are accepted.
    rep = run("""
        stage svc : fifo;
        workload { arrive batch(1); }
        session { turn; set c = cost(svc, 2); set t0 = now; run svc (c); observe d = now - t0;
                  set t0 = now; run svc (2); observe d = now - t0; }
        run { horizon 100; }
    """)
    assert values(rep, "d") == [2.0, 2.0]  # §4.5: cost(svc, 2) has the value 2


# ---------------------------------------------------------------- §1.3, §3, §4.1 values

def _observe_all(exprs: dict[str, str], prelude: str = "") -> dict[str, float]:
    body = "\n".join(f"  observe {k} = {v};" for k, v in exprs.items())
    rep = run(f"""
{prelude}
stage d : delay;
workload {{ arrive batch(1); }}
session {{
  turn;
  set x = 3;
{body}
}}
run {{ horizon 1; }}
""")
    return {k: values(rep, k)[0] for k in exprs}


NUMBERS = {  # §1.3
    "n1": ("1_000", 1000.0), "n2": ("1__0", 10.0), "n3": ("1_000_", 1000.0),
    "n4": ("1_0.5_0", 10.5), "n5": ("2.", 2.0), "n6": ("5.e3", 5000.0), "n7": (".5", 0.5),
    "n8": ("2e-5", 2e-5), "n9": ("1E+3", 1000.0), "n10": ("1.5e-3", 1.5e-3),
    "n11": ("00012", 12.0),
}


def test_p01_1_3_number_literals():
    got = _observe_all({k: v[0] for k, v in NUMBERS.items()})
    for k, (text, expected) in NUMBERS.items():
        assert got[k] == expected, text  # §1.3 "Valid examples"


OPERATORS = {  # §3.1–§3.3, §4.1
    "o1": ("!2", 0.0),                        # §3.2
    "o2": ("!(0/0)", 0.0),                    # §3.2
    "o3": ("(0/0) == (0/0)", 0.0),            # §3.3
    "o4": ("(0/0) != (0/0)", 1.0),            # §3.3: != with NaN is 1
    "o5": ("1/0 == 1/0", 1.0),                # §3.3: inf == inf = 1
    "o6": ("-0 == 0", 1.0),                   # §3.3
    "o7": ("0.1 + 0.2 == 0.3", 0.0),          # §3.3: no tolerance
    "o8": ("0 ^ 0", 1.0),                     # §3.3
    "o9": ("2 ^ -1", 0.5),                    # §3.1 level 8
    "o10": ("2 ^ 3 ^ 2", 512.0),              # §3.1: right-associative
    "o11": ("-2 * 3", -6.0),                  # §3.1: (-a) * b
    "o12": ("!0 + 1", 2.0),                   # §3.1: (!a) + b
    "o13": ("1 ? 2 ? 3 : 4 : 5", 3.0),        # §3.1: middle operand is a full expression
    "o14": ("max(1, 0/0)", 1.0),              # §4.1
    "o15": ("abs(-1/0)", math.inf),           # §4.1: abs(-inf) = inf
    "o16": ("floor(1/0)", math.inf),          # §4.1: floor(inf) = inf
    "o17": ("ln(0)", -math.inf),              # §4.1: ln(0) = -inf
    "o18": ("exp(1000)", math.inf),           # §4.1: overflows to inf
    "o19": ("pow(2, 10)", 1024.0),            # §4.1: pow = ^
    "o20": ("12 / 2 / 3", 2.0),               # §3.1: left-associative
    "o21": ("0 && (1/0)", 0.0),               # §3.2
    "o22": ("-x ^ 2", -9.0),                  # §3.1 level 7
}


def test_p01_3_operator_values():
    got = _observe_all({k: v[0] for k, v in OPERATORS.items()})
    for k, (text, expected) in OPERATORS.items():
        assert got[k] == expected, text


def test_p01_3_3_nan_values():
    got = _observe_all({"a": "sqrt(-1)", "b": "(-8) ^ (1/3)", "c": "(1/0) - (1/0)",
                        "d": "max(0/0, 0/0)", "e": "(1/0) * 0"})
    for k, v in got.items():
        assert math.isnan(v), k  # §3.3 / §4.1: NaN


def test_p01_2_5_substitution():
    # §2.5: `def sq(x) { x * x }` makes sq(1 + 2) = 9; `def g(x) { x * 2 }` makes g(-1) = −2
    got = _observe_all({"s": "sq(1 + 2)", "g2": "g(-1)"},
                       prelude="def sq(x) { x * x }\ndef g(x) { x * 2 }")
    assert got == {"s": 9.0, "g2": -2.0}


def test_p01_2_4_rebinding():
    # §2.4 (0.1.3): `let a = 1; let b = a; let a = 2;` gives b = 1 and a = 2 everywhere else
    got = _observe_all({"oa": "a", "ob": "b"}, prelude="let a = 1;\nlet b = a;\nlet a = 2;")
    assert got == {"oa": 2.0, "ob": 1.0}


def test_p01_2_4_override_every_binding():
    # §2.4 (0.1.3): `let a = 1; let b = a * 10; let a = 2;` with --set a=5 gives a = 5, b = 50
    rep = run("""
        let a = 1;
        let b = a * 10;
        let a = 2;
        stage d : delay;
        workload { arrive batch(1); }
        session { turn; observe oa = a; observe ob = b; }
        run { horizon 1; }
    """, sets={"a": 5})
    assert values(rep, "oa") == [5.0]
    assert values(rep, "ob") == [50.0]


def test_p01_2_4_recomputed_constant():
    # §2.4: with `let a = 1; let b = a * 2;`, --set a=5 gives b = 10 (0.1.3)
    rep = run("""
        let a = 1;
        let b = a * 2;
        stage d : delay;
        workload { arrive batch(1); }
        session { turn; observe ob = b; }
        run { horizon 1; }
    """, sets={"a": 5})
    assert values(rep, "ob") == [10.0]


def test_p01_3_2_short_circuit_draws_nothing():
    # §3.2 / Part 07 §6: `0 && ~exp(1)` and `1 || ~exp(1)` draw nothing, so the
    # next draw is the session stream's first U (Part 07 §11.3: session(0) of
    # seed 1 starts 0.1621242647527662)
    rep = run("""
        stage d : delay;
        workload { arrive batch(1); }
        session { turn; observe a = 0 && ~exp(1); observe b = 1 || ~exp(1);
                  observe u = ~uniform(0, 1); }
        run { horizon 1; }
    """, seed=1)
    assert values(rep, "a") == [0.0] and values(rep, "b") == [1.0]
    assert values(rep, "u") == [0.1621242647527662]  # Part 07 §11.3 session(0), 0.1.5


# ---------------------------------------------------------------- §7.4 / §8.2 errors

def test_p01_7_4_constant_negative_amount_is_link_error():
    for amount in ("0 - 1", "-k", "0/0"):
        with pytest.raises(LinkError) as exc:
            load(f"""
                let k = 1;
                stage d : delay;
                workload {{ arrive batch(1); }}
                session {{ turn; run d ({amount}); }}
                run {{ horizon 1; }}
            """)
        # §7.4: "`run d (-1)`: an amount of units, tokens or seconds is a number, and not negative"
        assert "amount" in exc.value.message, amount


def test_p01_7_4_computed_negative_amount_is_runtime_error():
    from serq.core.errors import SimulationError
    with pytest.raises(SimulationError):
        run("""
            stage d : delay;
            workload { arrive batch(1); }
            session { turn; set w = -1; run d (w); }
            run { horizon 1; }
        """)  # §7.4: `set w = -1; run d (w);` is a run-time error


def test_p01_8_2_computed_guard_runtime_error():
    from serq.core.errors import SimulationError
    with pytest.raises(SimulationError) as exc:
        run("""
            stage d : delay;
            workload { arrive batch(1); }
            session { turn; set p = 0.5; branch (p) { run d (1); } }
            run { horizon 1; }
        """)
    text = exc.value.format("model.sq")
    # §8.2: model.sq: run-time error at t=0: `branch (p)`: the guard is 0.5, not 0 or 1;
    # a draw is written `branch with (p)`
    assert text.startswith("model.sq: run-time error at t=0: "), text
    assert "the guard is 0.5, not 0 or 1" in text


def test_p01_8_2_misspelt_stage_suggestion():
    src = ("stage svc : fifo;\n"
           "workload { arrive batch(1); }\n"
           "session {\n"
           "  turn;\n"
           "  run svc (1);\n"
           "  observe q = queue(sv);\n"
           "}\n"
           "run { horizon 1; }\n")
    with pytest.raises(LinkError) as exc:
        load(src)
    lines = exc.value.format("model.sq", src).split("\n")
    # §8.2 "Misspelt stage, with a suggestion"
    assert lines[0] == "model.sq:6:21: link error: unknown stage `sv`" or \
        lines[0].endswith("6:21: link error: unknown stage `sv`"), lines[0]
    assert lines[1] == "6 |   observe q = queue(sv);"
    assert lines[2] == "  |                     ^^"
    assert "help: did you mean stage `svc`?" in lines
    assert "note: `svc` declared at 1:7" in lines


def test_p01_8_2_constant_that_draws():
    src = "let lam = ~exp(1);\nstage d : delay;\nrun { horizon 1; }\n"
    with pytest.raises(LinkError) as exc:
        load(src)
    lines = exc.value.format("model.sq", src).split("\n")
    # §8.2: model.sq:1:12: link error: a constant cannot sample
    assert lines[0].endswith("1:12: link error: a constant cannot sample"), lines[0]
    assert lines[1] == "1 | let lam = ~exp(1);"
    assert lines[2] == "  |            ^^^"
