"""Part 02 worked examples (§14 W-1 … W-9, §3.1, §7.8, §13.1), end to end.

Every expected number names the spec section it comes from. Counts and
sample values are compared exactly; other floats (times, time averages) to
a relative 1e-9 (spec README, "Exactness"). `events` is an implementation's
own number and is not compared (README; Part 02 §13.1).
"""
from __future__ import annotations

import math

import pytest

from serq.core.errors import LinkError, SimulationError
from serq.report.json_report import to_dict

from e2e_util import (assert_close, data, load, per_session, run, sessions,
                      times, turns, values)

# ---------------------------------------------------------------- W-1

W1_K = """
stage svc : fifo;
workload { arrive batch(2); }
session { turn; set t0 = now; run svc (2); observe response = now - t0; }
run { horizon 10; }
"""

W1_T = """
fn main() {
  stage svc : fifo;
  workload { arrive batch(2); }
  server { set t0 = now; run svc (cost(svc, 2)); observe response = now - t0; }
}
"""


@pytest.mark.parametrize("source", [W1_K, W1_T], ids=["K", "T"])
def test_p02_w1(source):
    rep = run(source, horizon=10)  # §14 W-1: horizon 10
    assert rep.arrivals == 2  # §14 W-1
    assert rep.ended == 2  # §14 W-1
    assert rep.turns == 2  # §14 W-1
    assert_close(rep.mean_live, 0.6, what="mean_live")  # §14 W-1
    assert values(rep, "response") == [2, 4]  # §14 W-1: samples 2 and 4
    assert times(rep, "response") == [2, 4]  # §14 W-1: at t = 2 and t = 4
    s = rep.observes["response"].summary()
    assert s.count == 2  # §14 W-1
    assert s.mean == 3  # §14 W-1
    assert_close(s.cv2, 2 / 9, what="cv2")  # §14 W-1: cv2 0.2222…
    assert s.p99 == 4  # §14 W-1
    assert to_dict(rep)["observes"]["response"]["ci"] is None  # §14 W-1: ci null
    st = rep.stage("svc")
    assert_close(st.mean_number, 0.6, what="mean_number")  # §14 W-1
    assert_close(st.utilization, 0.4, what="utilization")  # §14 W-1
    assert st.completed == 2  # §14 W-1
    assert_close(st.throughput, 0.2, what="throughput")  # §14 W-1
    assert_close(st.mean_wait, 1, what="mean_wait")  # §14 W-1
    assert_close(st.mean_service, 2, what="mean_service")  # §14 W-1


# ---------------------------------------------------------------- W-2

W2_K = """
stage svc : fifo;
workload { arrive renewal(1); }
session { turn; run svc (0.5); observe done = now; }
run { horizon 20; warmup 5; }
"""

W2_T = """
fn main() {
  stage svc : fifo;
  workload { arrive renewal(1); }
  server { run svc (cost(svc, 0.5)); observe done = now; }
}
"""

# §14 W-2 table: warmup → (arrivals, ended, turns, mean_live); events aside.
W2_TABLE = [
    (0, 20, 19, 20, 0.475),            # §14 W-2 row "0"
    (0.5, 20, 19, 20, 9.5 / 19.5),     # §14 W-2 row "0.5": 0.487179… (9.5 / 19.5)
    (5, 20, 15, 16, 0.5),              # §14 W-2 row "5"
    (5.2, 20, 15, 15, 7.3 / 14.8),     # §14 W-2 row "5.2": 0.493243… (by hand 7.3 / 14.8)
    (10, 20, 10, 11, 0.5),             # §14 W-2 row "10"
]


@pytest.mark.parametrize("source", [W2_K, W2_T], ids=["K", "T"])
@pytest.mark.parametrize("warmup, arrivals, ended, turns_, mean_live", W2_TABLE,
                         ids=[str(r[0]) for r in W2_TABLE])
def test_p02_w2_warmup_table(source, warmup, arrivals, ended, turns_, mean_live):
    rep = run(source, horizon=20, warmup=warmup)  # §14 W-2: horizon 20
    assert rep.arrivals == arrivals  # §14 W-2 table
    assert rep.ended == ended  # §14 W-2 table
    assert rep.turns == turns_  # §14 W-2 table
    assert_close(rep.mean_live, mean_live, what="mean_live")  # §14 W-2 table
    if warmup == 5.2:
        assert abs(rep.mean_live - 0.493243) < 1e-6  # §14 W-2: 0.493243…
    if warmup == 0.5:
        assert abs(rep.mean_live - 0.487179) < 1e-6  # §14 W-2: 0.487179…
    # §14 W-2: completions at 1.5, …, 19.5; kept at t ≥ warmup
    expected_done = [k + 0.5 for k in range(1, 20) if k + 0.5 >= warmup]
    assert values(rep, "done") == expected_done


@pytest.mark.parametrize("source", [W2_K, W2_T], ids=["K", "T"])
def test_p02_w2_horizon6_warmup_at_sample(source):
    rep = run(source, horizon=6, warmup=1.5)  # §14 W-2: horizon 6; warmup 1.5
    # §14 W-2: "the sample done = 1.5 (at exactly the warm-up) is kept and ended is 5"
    assert values(rep, "done")[0] == 1.5
    assert values(rep, "done") == [1.5, 2.5, 3.5, 4.5, 5.5]
    assert rep.ended == 5


# ---------------------------------------------------------------- W-3 and §3.1

W3 = """
stage svc : delay;
workload { arrive ARRIVAL; }
session { turn; observe at = now; }
run { horizon 10; }
"""

# Part 07 §11.2: first three U of the arrival stream, seed 1.
ARRIVAL_U = [0.9742447372584028, 0.6912356107023264, 0.4279747815328704]


def _arrival_times(gap, first_at_zero):
    """Arrival times ≤ 10 from the Part 07 arrival stream (§4.1: t + gap)."""
    t = 0.0
    out = [0.0] if first_at_zero else []
    for u in ARRIVAL_U:
        t = t + gap(u)
        if t > 10:
            break
        out.append(t)
    return out


def test_p02_w3_poisson_first_arrivals():
    rep = run(W3.replace("ARRIVAL", "poisson(0.5)"), seed=1)
    at = values(rep, "at")
    # §3.1 / §14 W-3: poisson(0.5) arrives at 0, 7.318233, 9.668586
    assert len(at) == 3
    assert at[0] == 0
    assert abs(at[1] - 7.318233) < 1e-6 and abs(at[2] - 9.668586) < 1e-6
    assert rep.arrivals == 3  # §14 W-3: arrivals 3
    # Part 07 §4.1: gap = −ln(1 − U)/λ, a division by λ; exact for 0.1.5's streams
    assert at == _arrival_times(lambda u: -math.log(1 - u) / 0.5, True)


def test_p02_w3_renewal_exp_first_arrivals():
    rep = run(W3.replace("ARRIVAL", "renewal(~exp(2))"), seed=1)
    at = values(rep, "at")
    # §3.1 / §14 W-3: renewal(~exp(2)) at 7.318233, 9.668586
    assert len(at) == 2
    assert abs(at[0] - 7.318233) < 1e-6 and abs(at[1] - 9.668586) < 1e-6
    assert rep.arrivals == 2  # §14 W-3 (events 2)
    # Part 07 §5: ~exp(m) = −m · ln(1 − U); the same U's as poisson(0.5) (§3.1)
    assert at == _arrival_times(lambda u: -2 * math.log(1 - u), False)


def test_p02_w3_poisson_and_renewal_same_gaps():
    p = values(run(W3.replace("ARRIVAL", "poisson(0.5)"), seed=1), "at")
    r = values(run(W3.replace("ARRIVAL", "renewal(~exp(2))"), seed=1), "at")
    assert p[1:] == r  # §3.1: same gaps, poisson has the extra arrival at 0


def test_p02_w3_renewal_constant():
    rep = run(W3.replace("ARRIVAL", "renewal(2)"))
    assert values(rep, "at") == [2, 4, 6, 8, 10]  # §14 W-3: renewal(2) → 2, 4, 6, 8, 10
    assert rep.arrivals == 5  # §14 W-3 (events 5)


# ---------------------------------------------------------------- W-4

W4_K = """
stage svc : fifo;
stage tool : delay;
workload {
  arrive batch(2);
  init { set k = 0; }
  turn { set k = k + 1; set w = k; }
}
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

W4_R = """
stage svc : fifo;
stage tool : delay;
workload {
  arrive batch(2);
  init { set k = 0; }
  turn { set k = k + 1; set w = k; }
  session { turn; loop { request;
            branch (k < 3) { run tool (1); turn; } else { end; } } }
}
server { set t0 = now; run svc (w); observe response = now - t0; }
run { horizon 20; }
"""

W4_T = """
fn main() {
  stage svc : fifo;
  stage tool : delay;
  workload {
    arrive batch(2);
    init { set k = 0; }
    turn { set k = k + 1; set w = k; }
    session { turn; while (k < 3) { run tool (cost(tool, 1)); turn; } }
  }
  server { set t0 = now; run svc (cost(svc, w)); observe response = now - t0; }
}
"""


@pytest.mark.parametrize("source", [W4_K, W4_R, W4_T], ids=["K", "R", "T"])
def test_p02_w4_shape(source):
    rep = run(source, horizon=20)  # §14 W-4: horizon 20
    assert rep.arrivals == 2  # §14 W-4
    assert rep.ended == 2  # §14 W-4
    assert rep.turns == 6  # §14 W-4
    assert_close(rep.mean_live, 1.05, what="mean_live")  # §14 W-4: live on [0, 9] and [0, 12]
    assert values(rep, "response") == [1, 2, 2, 3, 4, 5]  # §14 W-4
    assert times(rep, "response") == [1, 2, 4, 6, 9, 12]  # §14 W-4
    assert sessions(rep, "response") == [0, 1, 0, 1, 0, 1]  # §14 W-4
    assert turns(rep, "response") == [1, 1, 2, 2, 3, 3]  # §14 W-4
    assert rep.stage("svc").completed == 6  # §14 W-4: 6 svc completions
    assert rep.stage("tool").completed == 4  # §14 W-4: 4 tool completions


@pytest.mark.parametrize("source", [W4_K, W4_R, W4_T], ids=["K", "R", "T"])
def test_p02_w4_shape_warmup4(source):
    rep = run(source, horizon=20, warmup=4)  # §14 W-4: warmup 4
    assert rep.arrivals == 2  # §14 W-4
    assert rep.ended == 2  # §14 W-4
    assert rep.turns == 2  # §14 W-4: the turns at 5 and 7
    assert_close(rep.mean_live, 0.8125, what="mean_live")  # §14 W-4: 13 / 16
    assert values(rep, "response") == [2, 3, 4, 5]  # §14 W-4
    assert times(rep, "response") == [4, 6, 9, 12]  # §14 W-4


def test_p02_w4_shape_k():
    test_p02_w4_shape(W4_K)


def test_p02_w4_shape_r():
    test_p02_w4_shape(W4_R)


def test_p02_w4_shape_t():
    test_p02_w4_shape(W4_T)


# ---------------------------------------------------------------- W-5

W5 = """
stage svc : fifo;
workload { arrive closed(2); }
session { turn; run svc (1); observe done = now; observe id = serial; }
run { horizon 3.5; }
"""


def test_p02_w5_closed():
    rep = run(W5)
    assert rep.arrivals == 5  # §14 W-5
    assert rep.ended == 3  # §14 W-5
    assert rep.turns == 5  # §14 W-5
    assert_close(rep.mean_live, 2, what="mean_live")  # §14 W-5
    assert values(rep, "done") == [1, 2, 3]  # §14 W-5
    assert values(rep, "id") == [0, 1, 2]  # §14 W-5


# ---------------------------------------------------------------- W-6

W6 = """
stage svc : fifo;
workload { arrive renewal(1); }
session { turn; set t0 = now; run svc (2); observe response = now - t0; }
run { horizon 100; arrivals 3; }
"""


@pytest.mark.parametrize("horizon", [100, 7])
def test_p02_w6_finite_run(horizon):
    rep = run(W6, horizon=horizon)  # §14 W-6 ("With horizon 7 the same")
    assert rep.horizon == horizon  # §14 W-6: horizon 100
    assert rep.end == 7  # §14 W-6: end 7
    assert rep.arrivals == 3  # §14 W-6
    assert rep.ended == 3  # §14 W-6
    assert rep.turns == 3  # §14 W-6
    assert_close(rep.mean_live, 9 / 7, what="mean_live")  # §14 W-6: 9/7 = 1.285714…
    assert values(rep, "response") == [2, 3, 4]  # §14 W-6
    st = rep.stage("svc")
    assert_close(st.utilization, 6 / 7, what="utilization")  # §14 W-6
    assert_close(st.throughput, 3 / 7, what="throughput")  # §14 W-6


def test_p02_w6_horizon_6_9_not_drained():
    with pytest.raises(SimulationError) as exc:
        run(W6, horizon=6.9)
    # §14 W-6 / §12.2: "failed to drain 1 active sessions within horizon 6.9"
    assert "failed to drain 1 active sessions within horizon 6.9" in exc.value.format("w6.sq")


def test_p02_w6_horizon_2_5_too_few_arrivals():
    with pytest.raises(SimulationError) as exc:
        run(W6, horizon=2.5)
    # §14 W-6 / §12.2: "horizon 2.5 reached before requested arrivals: got 2, requested 3"
    assert "horizon 2.5 reached before requested arrivals: got 2, requested 3" in \
        exc.value.format("w6.sq")


def test_p02_w6_warmup_7_drained_before_warmup():
    with pytest.raises(SimulationError) as exc:
        run(W6, warmup=7)
    # §14 W-6 / §12.2: "arrivals drained at 7 before or at warmup 7"
    assert "arrivals drained at 7 before or at warmup 7" in exc.value.format("w6.sq")


def test_p02_w6_warmup_6_5():
    rep = run(W6, warmup=6.5)  # §14 W-6: with warmup 6.5
    assert rep.ended == 1  # §14 W-6
    assert rep.turns == 0  # §14 W-6
    assert_close(rep.mean_live, 1, what="mean_live")  # §14 W-6
    assert rep.end == 7  # §14 W-6: the drain time
    assert rep.arrivals == 3  # §12.3: arrivals counted from time 0


@pytest.mark.parametrize("arrival", ["batch(3)", "closed(3)"])
def test_p02_w6_arrivals_needs_open_workload(arrival):
    with pytest.raises(LinkError) as exc:
        run(W6.replace("renewal(1)", arrival))
    # §14 W-6: "arrivals applies only to poisson or renewal workloads"
    assert "arrivals applies only to poisson or renewal workloads" in exc.value.message


# ---------------------------------------------------------------- W-7

def test_p02_w7_ordered_trace():
    rep = run(path=data("w7.sq"))
    assert rep.arrivals == 3  # §14 W-7
    assert rep.ended == 3  # §14 W-7
    assert rep.turns == 5  # §14 W-7
    assert_close(rep.mean_live, 0.199, what="mean_live")  # §14 W-7
    assert values(rep, "tokens_in") == [100, 50, 100, 30, 30]  # §14 W-7
    assert_close(times(rep, "tokens_in"), [1.2, 1.75, 2.95, 3.35, 4.85],
                 what="times")  # §14 W-7
    assert sessions(rep, "tokens_in") == [0, 1, 2, 0, 2]  # §14 W-7
    assert values(rep, "again") == [1, 0, 1, 0, 0]  # §14 W-7 (`last` there)


def test_p02_w7_trace_override_option():
    # §4.1: `--trace FILE` (API trace=) replaces the program's corpus path
    rep = run(path=data("w7.sq"), trace=data("chat.csv"))
    assert values(rep, "tokens_in") == [100, 50, 100, 30, 30]  # §14 W-7


# ---------------------------------------------------------------- W-8

W8 = """
stage d : delay;
workload { arrive batch(2); init { observe x = 100 + serial; } }
session { turn; observe x = serial; run d (1); observe x = now; }
run { horizon 10; }
"""


def test_p02_w8_order_of_init_and_session():
    rep = run(W8)
    # §14 W-8: x = 100 (t 0, s0, turn 0), 101 (t 0, s1, turn 0), 0 (t 0, s0, turn 1),
    # 1 (t 0, s1, turn 1), 1 (t 1, s0), 1 (t 1, s1)
    assert values(rep, "x") == [100, 101, 0, 1, 1, 1]
    assert times(rep, "x") == [0, 0, 0, 0, 1, 1]
    assert sessions(rep, "x") == [0, 1, 0, 1, 0, 1]
    assert turns(rep, "x")[:4] == [0, 0, 1, 1]
    assert turns(rep, "x")[4:] == [1, 1]  # §7.3: turn_no stays 1 after one `turn;`


# ---------------------------------------------------------------- W-9

def test_p02_w9_turn_blocks_with_trace():
    rep = run(path=data("w9.sq"))
    # §14 W-9: sessions 0, 1, 2 replay A, B, A
    assert per_session(rep, "n", 0) == [5, 1100, 1020, 2020]  # §14 W-9 session 0
    assert per_session(rep, "n", 1) == [5, 1300, 2300, 3300]  # §14 W-9 session 1
    assert per_session(rep, "n", 2) == [5, 1100, 1020, 2020]  # §14 W-9 session 2
    s = rep.observes["n"]
    for k in (0, 1, 2):
        ts = [t for t, ss in zip(s.times, s.sessions) if ss == k]
        tn = [t for t, ss in zip(s.turns, s.sessions) if ss == k]
        assert ts == [0, 0, 1, 1]  # §14 W-9: t 0, 0, 1, 1
        assert tn == [0, 1, 2, 3]  # §14 W-9: turns 0, 1, 2, 3
    assert values(rep, "m") == [0, 0, 0]  # §14 W-9
    assert rep.turns == 9  # §14 W-9
    assert_close(rep.mean_live, 0.3, what="mean_live")  # §14 W-9


# ---------------------------------------------------------------- §7.8 choose

CHOOSE = """
stage d : delay;
workload { arrive batch(1); }
session {
  turn;
  choose a in 3 by (-a);                                 observe ca = a;
  choose z in 3 by (0);                                  observe cz = z;
  choose h in 4 by (h == 1 || h == 3 ? 0 : 1, -h);       observe ch = h;
  choose e in 3 by (e == 0 ? 0/0 : 5 - e);               observe ce = e;
  choose f in 3 by (f == 2 ? 0/0 : 5 - f);               observe cf = f;
  choose g in 0 by (g);                                  observe cg = g;
}
run { horizon 1; }
"""


def test_p02_choose_examples():
    rep = run(CHOOSE)
    assert values(rep, "ca") == [2]  # §7.8: choose a in 3 by (-a) → 2
    assert values(rep, "cz") == [0]  # §7.8: by (0) → 0
    assert values(rep, "ch") == [3]  # §7.8: by (h == 1 || h == 3 ? 0 : 1, -h) → 3
    assert values(rep, "ce") == [0]  # §7.8: by (e == 0 ? 0/0 : 5 - e) over 3 → 0
    assert values(rep, "cf") == [1]  # §7.8: by (f == 2 ? 0/0 : 5 - f) → 1
    assert values(rep, "cg") == [0]  # §7.8 step 4: with n = 0 it is set to 0


CHOOSE_ARRAYS = """
let N = 3;
pool q[4] { cap 10; }
pool u[3] { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  turn;
  hold q[1] (2) { hold q[2] (2) { hold u[0] (5) { hold u[2] (1) {
    choose a in N by (used(q[a]), -used(u[a]));          observe ca = a;
    choose b in N by (used(q[b]) + used(u[b]) - b);       observe cb = b;
    choose c in 4 by (-used(q[c]), c == 2 ? 1 : 0);       observe cc = c;
    choose e in N by (used(u[e]) == 0 ? 0/0 : used(u[e])); observe ce = e;
    choose g in 0 by (used(q[g]));                        observe cg = g;
  } } } }
}
run { horizon 1; }
"""


def test_p02_choose_over_arrays():
    """`choose` whose keys read arrays at the chosen index (a router's form):
    the generated loop walks the members beside the index (`_Choose`), and
    picks what §7.8's rule picks. Used: q = [0, 2, 2, 0], u = [5, 0, 1]."""
    rep = run(CHOOSE_ARRAYS)
    assert values(rep, "ca") == [0]  # keys (0,-5) (2,0) (2,-1): member 0
    assert values(rep, "cb") == [1]  # keys 5, 1, 1: the first of the least (reads b itself)
    assert values(rep, "cc") == [1]  # keys (0,0) (-2,0) (-2,1) (0,0): 1 (1 < 2 at the second key)
    assert values(rep, "ce") == [2]  # keys 5, NaN, 1: a NaN is never smaller, 1 < 5 is
    assert values(rep, "cg") == [0]  # §7.8 step 4: n = 0 gives 0


def test_p02_choose_count_beyond_the_array():
    """A count above an array's size reads a member that does not exist: the
    index error names the array, as with any computed index (Part 01 §4.3)."""
    with pytest.raises(SimulationError, match=r"`u\[…\]`: the index is 3, not a whole number "
                       r"from 0 to 2"):
        run(CHOOSE_ARRAYS.replace("choose a in N by", "choose a in 4 by"))


def test_p02_choose_examples_main_if():
    rep = run("""
        fn main() {
          stage d : delay;
          workload { arrive batch(1); }
          server {
            choose a in 3 by (-a); observe ca = a;
            choose h in 4 by (h == 1 || h == 3 ? 0 : 1, -h); observe ch = h;
            choose f in 3 by (f == 2 ? 0/0 : 5 - f); observe cf = f;
          }
        }
    """, horizon=1)
    assert values(rep, "ca") == [2]  # §7.8
    assert values(rep, "ch") == [3]  # §7.8
    assert values(rep, "cf") == [1]  # §7.8


# ---------------------------------------------------------------- §13.1 ps example

PS_EVENTS = """
stage p : ps(1);
stage d : delay;
workload { arrive batch(2); }
session {
  turn;
  branch (serial == 0) { run p (2); } else { run d (1); run p (1); }
  observe done = now;
}
run { horizon 10; }
"""


def test_p02_13_1_ps_both_finish_at_3():
    rep = run(PS_EVENTS)
    # §13.1: a ps(1) job of work 2 from t = 0, joined at t = 1 by a job of work 1:
    # "both finish at 3"; §10.4: jobs finishing together finish in start order
    assert values(rep, "done") == [3, 3]
    assert sessions(rep, "done") == [0, 1]
    assert rep.stage("p").completed == 2


# ---------------------------------------------------------------- further §3, §7, §10, §12 rules

def test_p02_3_2_constant_gap_not_positive_is_link_error():
    for gap in ("0", "-1", "1/0"):
        with pytest.raises(LinkError) as exc:
            load(W3.replace("ARRIVAL", f"renewal({gap})"))
        # §3.2: "an interarrival time must be positive"
        assert "interarrival time must be positive" in exc.value.message, gap


def test_p02_3_2_drawn_gap_not_positive_is_runtime_error():
    with pytest.raises(SimulationError) as exc:
        run(W3.replace("ARRIVAL", "renewal(~uniform(-1, -0.5))"))
    # §3.2: "`arrive renewal(…)`: the interarrival time is -0.144…, not a positive time"
    assert "not a positive time" in exc.value.format("m.sq")


@pytest.mark.parametrize("arrival, phrase", [
    ("poisson(0)", "the rate is 0"),       # §3.1
    ("closed(0)", "closed population"),    # §3.3
    ("batch(0)", "batch size is 0"),       # §3.4
    ("batch(1.5)", "batch size"),          # §3.4: a whole number
])
def test_p02_3_counts_and_rates_are_link_errors(arrival, phrase):
    with pytest.raises(LinkError) as exc:
        load(W3.replace("ARRIVAL", arrival))
    assert phrase in exc.value.message


def test_p02_3_5_none_still_runs_to_horizon():
    rep = run(W3.replace("ARRIVAL", "none"))
    assert rep.arrivals == 0 and rep.end == 10  # §3.5: the run still advances to the horizon
    assert rep.observes["at"].values == []
    assert to_dict(rep)["observes"]["at"] == {"count": 0, "mean": None, "ci": None, "cv2": None,
                                              "p99": None,  # Part 06 §2: series still reported
                                              "p50": None, "p90": None, "p95": None}  # issue 25


@pytest.mark.parametrize("body", [
    "loop { set w = w + 1; }",
    "loop { branch (w > 1) { run d (1); } }",
    "loop { run d (0); }",
    "loop { turn; }",
])
def test_p02_7_7_progress_rule(body):
    with pytest.raises(LinkError) as exc:
        load(f"""
            stage d : delay;
            workload {{ arrive batch(1); }}
            session {{ turn; set w = 0; {body} }}
            run {{ horizon 1; }}
        """)
    # §7.7: "a `loop` must let time pass on every pass through its body …"
    assert "must let time pass" in exc.value.message


def test_p02_10_5_instant_does_not_settle():
    with pytest.raises(SimulationError) as exc:
        run("""
            stage d : delay;
            workload { arrive batch(1); }
            session { turn; set w = 0; loop { run d (w); } }
            run { horizon 1; }
        """)
    # §10.5: "the instant t = 0 does not settle: session 0 became ready 1001 times …"
    assert "does not settle" in exc.value.format("m.sq")


def test_p02_3_3_closed_without_time_does_not_settle():
    with pytest.raises(SimulationError) as exc:
        run("""
            stage d : delay;
            workload { arrive closed(2); }
            session { turn; observe x = 1; }
            run { horizon 1; }
        """)
    assert "does not settle" in exc.value.format("m.sq")  # §3.3 / §10.5


@pytest.mark.parametrize("source", [
    "stage d : delay;\nworkload { arrive closed(2); }\nrun { horizon 1; }\n",
    "fn main() {\n  stage d : delay;\n  workload { arrive closed(2); }\n}\n",
], ids=["seed_dialect", "fn_main"])
def test_p02_3_3_closed_without_code_does_not_settle(source):
    """A closed population whose sessions have no code at all: each ends as
    it starts and is replaced inside that end. The run stops at once with
    the reason (pyserq 0.1.3 runs for ever; 0.1.5 refuses the program, "a
    workload needs a `server` block"). Before, the replacements nested until
    Python's recursion limit: a `RecursionError` and its traceback."""
    with pytest.raises(SimulationError) as exc:
        run(source, horizon=1)
    assert exc.value.time == 0.0
    assert "the sessions of the closed population have no code" in exc.value.message


def test_p02_7_6_branch_with_uses_session_stream():
    # §7.6: `branch with (p)` draws one U from the session stream: session(0) of
    # seed 1 starts 0.1621242647527662 (Part 07 §11.3) < 0.5 → A; session(1)
    # starts 0.2447743700986078 < 0.2? no → B
    rep = run("""
        stage d : delay;
        workload { arrive batch(2); }
        session { turn; set p = serial == 0 ? 0.5 : 0.2;
                  branch with (p) { observe arm = 1; } else { observe arm = 0; } }
        run { horizon 1; }
    """, seed=1)
    assert values(rep, "arm") == [1, 0]


def test_p02_7_6_if_else_if_chain():
    rep = run("""
        fn main() {
          stage d : delay;
          workload { arrive batch(3); }
          server {
            if (serial == 0) { observe arm = 10; } else if (serial == 1) { observe arm = 11; }
            else { observe arm = 12; }
          }
        }
    """, horizon=1)
    assert values(rep, "arm") == [10, 11, 12]  # §7.6: `if … else if … else` chains


def test_p02_7_5_end_stops_session():
    rep = run("""
        stage d : delay;
        workload { arrive batch(1); }
        session { turn; observe a = 1; end; observe a = 2; }
        run { horizon 1; }
    """)
    assert values(rep, "a") == [1]  # §7.5: statements after `end;` never run
    assert rep.ended == 1


def test_p02_12_1_events_at_horizon_are_handled():
    rep = run("""
        stage svc : fifo;
        workload { arrive renewal(5); }
        session { turn; run svc (5); observe done = now; }
        run { horizon 10; }
    """)
    # §12.1: an arrival at H creates a session; a job completing at H completes
    assert values(rep, "done") == [10]
    assert rep.arrivals == 2 and rep.ended == 1 and rep.end == 10


def test_p02_4_1_trace_errors():
    import tempfile, os
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad.csv")
        with open(bad, "w") as fh:
            fh.write("0,0,1,2,3,4,5\n")
        src = W3.replace("ARRIVAL", "batch(1)").replace(
            "workload { arrive batch(1); }", f'workload {{ arrive batch(1); trace "{bad}" ordered; }}')
        with pytest.raises(Exception) as exc:
            run(src)
        # §4.1: "line 1: expected 5 or 6 fields, got 7"
        assert "expected 5 or 6 fields, got 7" in str(exc.value.format("m.sq")
                                                      if hasattr(exc.value, "format") else exc.value)
