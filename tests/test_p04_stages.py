"""Part 04 worked examples for fifo, ps, delay and multi-stage runs
(§3 F-1, §14), plus Part 02 §13.1's ps example, end to end.

Every expected number names the spec section it comes from. The spec prints
some values rounded (0.6667, 1.3333, 4.6667, 0.3333); the tests use the
exact fractions they round (2/3, 4/3, 14/3, 1/3) to a relative 1e-9.
"""
from __future__ import annotations

import pytest

from e2e_util import assert_close, run, sessions, times, values

# ---------------------------------------------------------------- §3 F-1

F1 = """
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

F1_MAIN = """
fn main() {
  stage A : ps(1);
  stage B : ps(2);
  share POLICY;
  workload { arrive batch(3); }
  server {
    if (serial == 0) { run A, B (cost(A, B, 1)); }
    else if (serial == 1) { run A (cost(A, 1)); } else { run B (cost(B, 1)); }
    observe done = now;
  }
}
"""


def _done_by_session(rep):
    return {int(k): v for v, k in zip(values(rep, "done"), sessions(rep, "done"))}


@pytest.mark.parametrize("source", [F1, F1_MAIN], ids=["flat", "main"])
@pytest.mark.parametrize("policy, f3_done, b_service", [
    ("maxmin", 2 / 3, 4 / 3),      # §3 F-1: f3 done 0.6667 (rate 3/2); B mean_service 1.3333
    ("bottleneck", 1.0, 1.5),      # §3 F-1: f3 done 1 (rate 1); B mean_service 1.5
])
def test_p04_f1_share(source, policy, f3_done, b_service):
    rep = run(source.replace("POLICY", policy), horizon=10)  # §3 F-1: horizon 10
    done = _done_by_session(rep)
    assert_close(done[0], 2, what="f1 done")  # §3 F-1: f1 done 2
    assert_close(done[1], 2, what="f2 done")  # §3 F-1: f2 done 2
    assert_close(done[2], f3_done, what="f3 done")  # §3 F-1
    a, b = rep.stage("A"), rep.stage("B")
    assert_close(a.utilization, 0.2, what="A utilization")  # §3 F-1: A util. 0.2
    assert_close(b.utilization, 0.1, what="B utilization")  # §3 F-1: B util. 0.1
    assert_close(b.mean_service, b_service, what="B mean_service")  # §3 F-1
    # §3 "Reporting a shared stage": completed counts every flow once at each
    # stage it held; mean_wait is 0
    assert a.completed == 2 and b.completed == 2
    assert a.mean_wait == 0 and b.mean_wait == 0
    assert_close(a.mean_service, 2, what="A mean_service")  # §3: f1 and f2 both take 2


def test_p04_f1_maxmin():
    test_p04_f1_share(F1, "maxmin", 2 / 3, 4 / 3)


def test_p04_f1_bottleneck():
    test_p04_f1_share(F1, "bottleneck", 1.0, 1.5)


# ---------------------------------------------------------------- §14

FIFO2 = """
stage s : fifo(2);
workload { arrive batch(3); }
session { turn; run s (1 + serial); observe done = now; }
run { horizon 10; }
"""


def test_p04_14_fifo2():
    rep = run(FIFO2)
    assert values(rep, "done") == [1, 2, 4]  # §14: fifo(2), works 1, 2, 3 at 0: done 1, 2, 4
    st = rep.stage("s")
    assert_close(st.mean_wait, 1 / 3, what="mean_wait")  # §14: mean_wait 0.3333
    assert_close(st.mean_service, 2, what="mean_service")  # §14: mean_service 2
    assert_close(st.utilization, 0.4, what="utilization")  # §14: utilization 0.4
    assert_close(st.mean_number, 0.7, what="mean_number")  # §14: mean_number 0.7
    assert st.completed == 3


PS1 = """
stage s : ps(1);
workload { arrive batch(3); }
session { turn; run s (1 + serial); observe done = now; }
run { horizon 10; }
"""


def test_p04_14_ps1():
    rep = run(PS1)
    assert_close(values(rep, "done"), [3, 5, 6], what="done")  # §14: ps(1) done 3, 5, 6
    assert_close(rep.stage("s").mean_service, 14 / 3, what="mean_service")  # §14: 4.6667
    assert rep.stage("s").mean_wait == 0  # Part 04 §12: 0 for ps


PS_PRESENT = """
stage s : ps(min(present, 2));
stage d : delay;
workload { arrive batch(3); }
session {
  turn;
  run d (serial == 0 ? 3 : serial == 1 ? 5 : 6);
  run s (1 + serial);
  observe done = now;
}
run { horizon 20; }
"""


def test_p04_14_ps_present():
    rep = run(PS_PRESENT)
    # §14: ps(min(present, 2)), works 1, 2, 3 arriving at 3, 5, 6: done 4, 7, 9
    assert_close(values(rep, "done"), [4, 7, 9], what="done")
    assert sessions(rep, "done") == [0, 1, 2]


def test_p04_14_ps_present_main():
    rep = run("""
        fn main() {
          stage s : ps(min(present, 2));
          stage d : delay;
          workload { arrive batch(3); }
          server {
            run d (cost(d, serial == 0 ? 3 : serial == 1 ? 5 : 6));
            run s (cost(s, 1 + serial));
            observe done = now;
          }
        }
    """, horizon=20)
    assert_close(values(rep, "done"), [4, 7, 9], what="done")  # §14


# ---------------------------------------------------------------- Part 02 §13.1

def test_p04_p02_13_1_ps_example():
    rep = run("""
        stage p : ps(1);
        stage d : delay;
        workload { arrive batch(2); }
        session {
          turn;
          branch (serial == 0) { run p (2); } else { run d (1); run p (1); }
          observe done = now;
        }
        run { horizon 10; }
    """)
    assert values(rep, "done") == [3, 3]  # Part 02 §13.1: both finish at 3
    assert times(rep, "done") == [3, 3]
    st = rep.stage("p")
    assert st.completed == 2
    assert_close(st.mean_service, 2.5, what="mean_service")  # by hand: (3 + 2) / 2


# ---------------------------------------------------------------- §2 delay and zero work

def test_p04_2_delay_and_zero_work():
    rep = run("""
        stage d : delay;
        stage f : fifo;
        workload { arrive batch(3); }
        session { turn; run d (2); run f (0); observe done = now; }
        run { horizon 10; }
    """)
    assert values(rep, "done") == [2, 2, 2]  # §2: delay, no waiting
    # §2: "A run of work 0 … completes at once … the stage records nothing"
    assert rep.stage("f").completed == 0
    assert rep.stage("d").completed == 3
    assert rep.stage("d").mean_wait == 0
