"""Part 07 §11.4 complete programs V1–V6, end to end.

serq-simpy follows pyserq 0.1.5's stream scheme for every program, in
either layout (Part 07 §9.3), so each program is run twice — in the
`fn main` 0.1.5 spelling given in §11.4 and in the 0.1.3 flat spelling §11.4
describes (items at top level, plain `run S (x)`, a shape-R workload
session) — and both must reproduce the **0.1.5** values to the last bit.
Results are `(serial, turn_no, value)` in recording order (§11.4). A 0.1.3
program whose session has no `turn;` records `turn_no` 0 where 0.1.5
records 1 (§11.4); the values are unaffected.

V7 needs pools (Part 03) and is not here.
"""
from __future__ import annotations

import pytest

from e2e_util import data, run, sessions, times, triples, turns, values

# ---------------------------------------------------------------- V1

V1_MAIN = """
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

V1_FLAT = """
stage svc : delay;
workload {
  arrive poisson(0.8);
  init { set s = ~exp(1.0); }
  session { request; }
}
server {
  observe t = now;
  observe sv = s;
}
"""

# §11.4 V1, every version
V1_T = [0.0, 4.573895368050423, 6.04286635194195, 6.741081602373137,
        6.98243473855657, 7.349646712443106]
# §11.4 V1, `sv` 0.1.5 (serials 0–5)
V1_SV = [1.7634924152731184, 0.8332490875086984, 2.2210009808884323,
         1.5906078033029272, 0.0464231566898566, 0.5731961241086504]


@pytest.mark.parametrize("source, turn", [(V1_MAIN, 1), (V1_FLAT, 0)], ids=["main", "flat"])
def test_p07_v1(source, turn):
    rep = run(source, horizon=10, seed=1)  # §11.4 V1: horizon 10, seed 1
    assert values(rep, "t") == V1_T  # §11.4 V1: t
    assert times(rep, "t") == V1_T
    assert sessions(rep, "t") == [0, 1, 2, 3, 4, 5]  # §11.4 V1: (0,1,…) … (5,1,…)
    assert turns(rep, "t") == [turn] * 6  # §11.4: 0.1.3 form records turn_no 0
    assert values(rep, "sv") == V1_SV  # §11.4 V1: sv, 0.1.5
    assert sessions(rep, "sv") == [0, 1, 2, 3, 4, 5]


# ---------------------------------------------------------------- V2

V2_MAIN = """
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

V2_FLAT = """
stage svc : delay;
workload {
  arrive batch(2);
  init { set a = ~uniform(0, 1); }
  turn { set n = ~exp(10); }
  session { loop { set z = ~bernoulli(0.5); turn; request; branch (turn_no == 3) { end; } } }
}
server {
  set w = ~exp(1.0);
  run svc (w);
  observe oa = a;
  observe on = n;
  observe oz = z;
  observe ow = w;
}
"""

V2 = {  # §11.4 V2, 0.1.5
    "oa": [(1, 1, 0.5653651768661682), (1, 2, 0.5653651768661682), (1, 3, 0.5653651768661682),
           (0, 1, 0.8285549402948466), (0, 2, 0.8285549402948466), (0, 3, 0.8285549402948466)],
    "on": [(1, 1, 18.17419449907279), (1, 2, 3.6253406676515127), (1, 3, 3.580051120577404),
           (0, 1, 2.051559588090774), (0, 2, 7.906281900627668), (0, 3, 5.560167424622)],
    "oz": [(1, 1, 1.0), (1, 2, 1.0), (1, 3, 0.0), (0, 1, 1.0), (0, 2, 0.0), (0, 3, 0.0)],
    "ow": [(1, 1, 0.17426749760778726), (1, 2, 0.139937511929783), (1, 3, 0.637822963651916),
           (0, 1, 2.5724002779949062), (0, 2, 0.3676382008711227), (0, 3, 1.611641279957689)],
}


@pytest.mark.parametrize("source", [V2_MAIN, V2_FLAT], ids=["main", "flat"])
def test_p07_v2(source):
    rep = run(source, horizon=100, seed=1)  # §11.4 V2: horizon 100
    for name, expected in V2.items():
        assert triples(rep, name) == expected, name  # §11.4 V2, 0.1.5


# ---------------------------------------------------------------- V3

V3_MAIN = """
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

V3_FLAT = """
stage svc : delay;
workload {
  arrive renewal(~erlang(2, 0.5));
  init { set s = ~h2(1, 4); }
  session { request; }
}
server {
  observe t = now;
  observe sv = s;
  observe b = ~bernoulli(0.3);
  run svc (1);
}
"""


@pytest.mark.parametrize("source, turn", [(V3_MAIN, 1), (V3_FLAT, 0)], ids=["main", "flat"])
def test_p07_v3(source, turn):
    rep = run(source, horizon=3, seed=1)  # §11.4 V3: horizon 3
    # §11.4 V3, every version: t (serials 0–3; the first arrival is one gap after 0)
    assert values(rep, "t") == [1.2085732703883902, 1.3964869477113142,
                                2.2914690671847153, 2.7226592082746075]
    assert sessions(rep, "t") == [0, 1, 2, 3]
    assert turns(rep, "t") == [turn] * 4
    # §11.4 V3, 0.1.5: sv
    assert values(rep, "sv") == [0.24135721126142745, 0.35991808049009594,
                                 9.122331048626334, 0.5295790945733868]
    assert values(rep, "b") == [1, 1, 0, 1]  # §11.4 V3, 0.1.5: b


# ---------------------------------------------------------------- V4

V4_MAIN = """
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

V4_FLAT = """
stage svc : delay;
workload {
  arrive closed(2);
  session { loop { turn; request; branch with (0.5) { end; } } }
}
server {
  set t0 = now;
  run svc (~exp(1.0));
  observe r = now - t0;
}
"""

# §11.4 V4, 0.1.5
V4_R = [(0, 1, 0.1768854767901723), (1, 1, 0.28073872682763434), (2, 1, 2.1952290551526312),
        (0, 2, 2.3901532784440644), (3, 1, 0.23871734243963783), (3, 2, 0.954836069978902)]


@pytest.mark.parametrize("source", [V4_MAIN, V4_FLAT], ids=["main", "flat"])
def test_p07_v4(source):
    rep = run(source, horizon=4, seed=1)  # §11.4 V4: horizon 4
    assert triples(rep, "r") == V4_R  # §11.4 V4, 0.1.5


# ---------------------------------------------------------------- V5

@pytest.mark.parametrize("name", ["v5_main.sq", "v5_flat.sq"], ids=["main", "flat"])
def test_p07_v5(name):
    rep = run(path=data(name), horizon=5, seed=1)  # §11.4 V5: horizon 5
    # §11.4 V5, every version: first_new for serials 0–7
    assert values(rep, "first_new") == [300, 600, 900, 900, 900, 2000, 300, 900]
    assert sessions(rep, "first_new") == [0, 1, 2, 3, 4, 5, 6, 7]
    assert turns(rep, "first_new") == [1] * 8  # both forms execute one `turn;` first


# ---------------------------------------------------------------- V6

V6_MAIN = """
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

V6_FLAT = """
stage svc : ps(~uniform(1, 2));
workload {
  arrive batch(5);
  init { set w = 1 + serial; }
  session { request; }
}
server {
  set t0 = now;
  run svc (w);
  observe r = now - t0;
}
"""


@pytest.mark.parametrize("source", [V6_MAIN, V6_FLAT], ids=["main", "flat"])
def test_p07_v6(source):
    rep = run(source, horizon=100, seed=1)  # §11.4 V6: horizon 100
    # §11.4 V6, every version: r (serials 0–4)
    assert values(rep, "r") == [4.437243036065048, 6.993671538584519, 8.524003344647745,
                                9.841286098454963, 10.353805910159936]
    assert sessions(rep, "r") == [0, 1, 2, 3, 4]
