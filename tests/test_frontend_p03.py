"""Part 03 front end: pools and holds (parse + link + lowering only).

Every worked example P-1 … P-12 of §12 loads in the flat 0.1.3 form (the
spec's text) and in the `fn main` form (checked with pyserq 0.1.5, which
needs `cost(…)` on amounts and `if` for `branch`); both lower to the same
pools and holds. Then the IR shapes of each example, and the link and parse
errors of §2.2, §2.3, §4.1–§4.9 and §13."""
from __future__ import annotations

import dataclasses

import pytest

from serq import ir
from serq.errors import LinkError, ParseError
from serq.frontend import load, summary
from serq.frontend.lower import ir_stmts

# ---------------------------------------------------------------- examples
P1 = """
pool mem { cap 10; }
stage svc : delay;
workload { arrive batch(3);
  init { set u = serial == 0 ? 6 : serial == 1 ? 5 : 2; set d = serial == 0 ? 5 : 1; }
  session { request; } }
server { hold mem (u) { observe admitted = now; run svc (d); } observe done = now; }
"""

P1_MAIN = """
fn main() {
  pool mem { cap 10; }
  stage svc : delay;
  workload { arrive batch(3);
    init { set u = serial == 0 ? 6 : serial == 1 ? 5 : 2; set d = serial == 0 ? 5 : 1; } }
  server {
    hold mem (cost(mem, u)) { observe adm = now; run svc (cost(svc, d)); }
    observe done = now;
  }
}
"""

P2 = """
pool mem { cap 10; block 4; }
stage svc : delay;
workload { arrive batch(3);
  init { set u = serial == 0 ? 5 : 1; set r = serial == 1 ? 6 : 0; }
  session { request; } }
server {
  hold mem (u) reserve (r) { observe admitted = now; observe usedin = used(mem);
                             run svc (serial == 0 ? 4 : 1); }
  observe done = now;
}
"""

P2_MAIN = """
fn main() {
  pool mem { cap 10; block 4; }
  stage svc : delay;
  workload { arrive batch(3);
    init { set u = serial == 0 ? 5 : 1; set r = serial == 1 ? 6 : 0; } }
  server {
    hold mem (cost(mem, u)) reserve (cost(mem, r)) {
      observe adm = now; observe usedin = used(mem);
      run svc (cost(svc, serial == 0 ? 4 : 1));
    }
    observe done = now;
  }
}
"""

P3 = """
pool mem { cap 10; }
stage svc : delay;
workload { arrive batch(2); session { request; } }
server { hold mem (4 + queued(mem) * 100) { run svc (1); } }
"""

P3_MAIN = """
fn main() {
  pool mem { cap 10; }
  stage svc : delay;
  workload { arrive batch(2); }
  server { hold mem (cost(mem, 4 + queued(mem) * 100)) { run svc (cost(svc, 1)); } }
}
"""

P4 = """
pool kv { cap 100; block 4; }
stage svc : delay;
workload { arrive batch(1); session { request; } }
server {
  hold kv (10) { run svc (1); } cache (7);                                    // keeps rd(min(7,12)) = 4
  observe c_after1 = cachedin(kv);
  hold kv (20) { observe c2 = cached; run svc (1); } cache (18);             // consumes 4, keeps 16
  observe c_after2 = cachedin(kv);
  hold kv (20) reuse (9) { observe c3 = cached; run svc (1); } cache (0);     // consumes 8, 8 dead
  observe c_after3 = cachedin(kv);
  hold kv (5) { observe c4 = cached; run svc (1); } cache (30);               // keeps min(30, 8) = 8
  observe c_after4 = cachedin(kv);
  hold kv (5) { run svc (1); }                                                // no clause: entry untouched
  observe c_after5 = cachedin(kv);
  drop kv;
  observe c_after6 = cachedin(kv);
}
"""

P4_MAIN = """
fn main() {
  pool kv { cap 100; block 4; }
  stage svc : delay;
  workload { arrive batch(1); }
  server {
    hold kv (cost(kv, 10)) { run svc (cost(svc, 1)); } cache (cost(kv, 7));
    observe c_after1 = cachedin(kv);
    hold kv (cost(kv, 20)) { observe c2 = cached; run svc (cost(svc, 1)); } cache (cost(kv, 18));
    observe c_after2 = cachedin(kv);
    hold kv (cost(kv, 20)) reuse (cost(kv, 9)) { observe c3 = cached; run svc (cost(svc, 1)); } cache (cost(kv, 0));
    observe c_after3 = cachedin(kv);
    hold kv (cost(kv, 5)) { observe c4 = cached; run svc (cost(svc, 1)); } cache (cost(kv, 30));
    observe c_after4 = cachedin(kv);
    hold kv (cost(kv, 5)) { run svc (cost(svc, 1)); }
    observe c_after5 = cachedin(kv);
    drop kv;
    observe c_after6 = cachedin(kv);
  }
}
"""

P5 = """
pool kv { cap 20; block 2; evict lru; }
stage svc : delay;
workload { arrive batch(4); session { request; } }
server {
  branch (serial < 3) {
    run svc (serial);
    hold kv (6) { run svc (1); } cache (6);      // A, B, C release at 1, 2, 3
    run svc (10 - serial);
    hold kv (6) { observe found = cached; run svc (1); } cache (6);
  } else {
    run svc (4);
    hold kv (10) { observe used_at_d = used(kv); run svc (1); }
  }
}
"""

P5_MAIN = """
fn main() {
  pool kv { cap 20; block 2; evict lru; }
  stage svc : delay;
  workload { arrive batch(4); }
  server {
    if (serial < 3) {
      run svc (cost(svc, serial));
      hold kv (cost(kv, 6)) { run svc (cost(svc, 1)); } cache (cost(kv, 6));
      run svc (cost(svc, 10 - serial));
      hold kv (cost(kv, 6)) { observe found = cached; run svc (cost(svc, 1)); } cache (cost(kv, 6));
    } else {
      run svc (cost(svc, 4));
      hold kv (cost(kv, 10)) { observe used_at_d = used(kv); run svc (cost(svc, 1)); }
    }
  }
}
"""

P6 = """
pool kv { cap 20; evict by (waiting, size); }
pool gate { cap 1; }
stage svc : delay;
workload { arrive batch(4); session { request; } }
server {
  run svc (serial);
  branch (serial < 3) {
    hold kv (serial == 0 ? 4 : serial == 1 ? 6 : 8) { run svc (1); } cache (20);
    branch (serial == 0) { hold gate (1) { run svc (10); } }
    else { run svc (serial == 1 ? 2 : 10); hold gate (1) { run svc (1); } }
    observe kept = cachedin(kv);
  } else {
    run svc (2);
    hold kv (10) { run svc (1); }
  }
}
"""

P6_MAIN = """
fn main() {
  pool kv { cap 20; evict by (waiting, size); }
  pool gate { cap 1; }
  stage svc : delay;
  workload { arrive batch(4); }
  server {
    run svc (cost(svc, serial));
    if (serial < 3) {
      hold kv (cost(kv, serial == 0 ? 4 : serial == 1 ? 6 : 8)) { run svc (cost(svc, 1)); } cache (cost(kv, 20));
      if (serial == 0) { hold gate (cost(gate, 1)) { run svc (cost(svc, 10)); } }
      else { run svc (cost(svc, serial == 1 ? 2 : 10)); hold gate (cost(gate, 1)) { run svc (cost(svc, 1)); } }
      observe kept = cachedin(kv);
    } else {
      run svc (cost(svc, 2));
      hold kv (cost(kv, 10)) { run svc (cost(svc, 1)); }
    }
  }
}
"""

P7 = """
pool kv { cap 10; block 2; evict lru; spill host via link (size * 0.5) when (size >= 2); }
pool host { cap 100; }
stage link : fifo(1);
stage svc : delay;
workload { arrive batch(2); session { request; } }
server {
  branch (serial == 0) {
    hold kv (6) { run svc (1); } cache (6);
    run svc (5);
    observe in_kv = cachedin(kv);
    observe in_host = cachedin(host);
  } else {
    run svc (2);
    hold kv (9) { run svc (1); }
  }
}
"""

P7_MAIN = """
fn main() {
  pool kv { cap 10; block 2; evict lru; spill host via link (size * 0.5) when (size >= 2); }
  pool host { cap 100; }
  stage link : fifo(1);
  stage svc : delay;
  workload { arrive batch(2); }
  server {
    if (serial == 0) {
      hold kv (cost(kv, 6)) { run svc (cost(svc, 1)); } cache (cost(kv, 6));
      run svc (cost(svc, 5));
      observe in_kv = cachedin(kv);
      observe in_host = cachedin(host);
    } else {
      run svc (cost(svc, 2));
      hold kv (cost(kv, 9)) { run svc (cost(svc, 1)); }
    }
  }
}
"""

P8 = """
pool mem { cap 10; preempt lifo; }
stage svc : delay;
workload { arrive batch(2); session { request; } }
server {
  hold mem (serial == 0 ? 6 : 3) {
    observe adm = now; observe comp = computed;
    run svc (1);
    grow mem (serial == 0 ? 3 : 0);
    observe grown_at = now;
    run svc (serial == 0 ? 4 : 2);
  } cache (10);
  observe done = now;
}
"""

P8_MAIN = """
fn main() {
  pool mem { cap 10; preempt lifo; }
  stage svc : delay;
  workload { arrive batch(2); }
  server {
    hold mem (cost(mem, serial == 0 ? 6 : 3)) {
      observe adm = now; observe comp = computed;
      run svc (cost(svc, 1));
      grow mem (cost(mem, serial == 0 ? 3 : 0));
      observe grown_at = now;
      run svc (cost(svc, serial == 0 ? 4 : 2));
    } cache (cost(mem, 10));
    observe done = now;
  }
}
"""

P9 = """
pool P { cap 100; }
pool Q { cap 100; block 4; }
stage svc : delay;
workload { arrive batch(2); session { request; } }
server {
  hold P (10) { run svc (1); } cache (10) lease P (serial == 0 ? 5 : inf);
  observe used_after = used(P);  observe cached_after = cachedin(P);
  run svc (2);
  branch (serial == 1) {
    hold Q (12) { run svc (1); load Q (7); release P;
                  observe p_used = used(P); observe p_cached = cachedin(P); } cache (20);
    observe q_cached = cachedin(Q);
  } else {
    run svc (5);
    observe p0_used = used(P); observe p0_cached = cachedin(P);
  }
}
"""

P9_MAIN = """
fn main() {
  pool P { cap 100; }
  pool Q { cap 100; block 4; }
  stage svc : delay;
  workload { arrive batch(2); }
  server {
    hold P (cost(P, 10)) { run svc (cost(svc, 1)); } cache (cost(P, 10)) lease P (serial == 0 ? 5 : inf);
    observe used_after = used(P);  observe cached_after = cachedin(P);
    run svc (cost(svc, 2));
    if (serial == 1) {
      hold Q (cost(Q, 12)) { run svc (cost(svc, 1)); load Q (cost(Q, 7)); release P;
                    observe p_used = used(P); observe p_cached = cachedin(P); } cache (cost(Q, 20));
      observe q_cached = cachedin(Q);
    } else {
      run svc (cost(svc, 5));
      observe p0_used = used(P); observe p0_cached = cachedin(P);
    }
  }
}
"""

P10 = """
pool slot { cap 1; queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3, serial); }
stage gate : delay;
stage svc : fifo(1);
workload { arrive batch(6);
  init { set arrive = serial == 0 ? 0 : serial == 1 ? 0 : serial == 2 ? 1 : serial == 3 ? 2 : 3;
         set prompt = serial == 1 || serial == 5 ? 500 : 100;
         set immediate = serial == 4; }
  session { request; } }
server { run gate (arrive); hold slot (1) { observe admitted = now; run svc (serial == 0 ? 4 : 1); } }
"""

P10_MAIN = """
fn main() {
  pool slot { cap 1; queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3, serial); }
  stage gate : delay;
  stage svc : fifo(1);
  workload { arrive batch(6);
    init { set arrive = serial == 0 ? 0 : serial == 1 ? 0 : serial == 2 ? 1 : serial == 3 ? 2 : 3;
           set prompt = serial == 1 || serial == 5 ? 500 : 100;
           set immediate = serial == 4; } }
  server {
    run gate (cost(gate, arrive));
    hold slot (cost(slot, 1)) { observe adm = now; run svc (cost(svc, serial == 0 ? 4 : 1)); }
  }
}
"""

P11 = """
pool mem { cap 10; reserve held; }
stage svc : delay;
workload { arrive batch(3); session { request; } }
server {
  run svc (serial);
  branch (serial == 0) {
    hold mem (2) reserve (6) { observe adm = now; run svc (3); grow mem (4);
                               observe grown = now; run svc (3); }
  } else {
    hold mem (serial == 1 ? 3 : 2) { observe adm = now; run svc (5); }
  }
  observe done = now;
}
"""

P11_MAIN = """
fn main() {
  pool mem { cap 10; reserve held; }
  stage svc : delay;
  workload { arrive batch(3); }
  server {
    run svc (cost(svc, serial));
    if (serial == 0) {
      hold mem (cost(mem, 2)) reserve (cost(mem, 6)) {
        observe adm = now; run svc (cost(svc, 3)); grow mem (cost(mem, 4));
        observe grown = now; run svc (cost(svc, 3));
      }
    } else {
      hold mem (cost(mem, serial == 1 ? 3 : 2)) { observe adm = now; run svc (cost(svc, 5)); }
    }
    observe done = now;
  }
}
"""

P12 = """
pool P { cap 10; }
stage s : delay;
workload { arrive batch(2); session { request; } }
server { hold P (6) { run s (2); } cache (6) lease P (1); run s (1); }
"""

P12_MAIN = """
fn main() {
  pool P { cap 10; }
  stage s : delay;
  workload { arrive batch(2); }
  server { hold P (cost(P, 6)) { run s (cost(s, 2)); } cache (cost(P, 6)) lease P (1); run s (cost(s, 1)); }
}
"""

EXAMPLES = {f"P{i}": (globals()[f"P{i}"], globals()[f"P{i}_MAIN"]) for i in range(1, 13)}
POOLS = {"P1": 1, "P2": 1, "P3": 1, "P4": 1, "P5": 1, "P6": 2, "P7": 2, "P8": 1, "P9": 2,
         "P10": 1, "P11": 1, "P12": 1}


def prog(text: str, **kw) -> ir.Program:
    kw.setdefault("horizon", 20)
    return load(source=text, **kw)


def error(text: str, kind=(ParseError, LinkError), **kw):
    kw.setdefault("horizon", 20)
    with pytest.raises(kind) as info:
        load(source=text, **kw)
    return info.value


def holds(p: ir.Program) -> list[ir.Hold]:
    """Every hold of the session code, outer before inner, in text order."""
    return [s for s in ir_stmts(p.session or []) if isinstance(s, ir.Hold)]


def stmts_of(p: ir.Program, kind) -> list:
    return [s for s in ir_stmts(p.session or []) if isinstance(s, kind)]


def plain(node, rename: dict | None = None):
    """IR as plain data: no positions, texts, keywords or request marks;
    observation names mapped through `rename`."""
    rename = rename or {}
    if isinstance(node, list):
        return [plain(n, rename) for n in node
                if not isinstance(n, (ir.RequestBegin, ir.RequestEnd, ir.Turn))]
    if dataclasses.is_dataclass(node):
        fields = []
        for f in dataclasses.fields(node):
            if f.name in ("pos", "text", "keyword"):
                continue
            value = getattr(node, f.name)
            if isinstance(node, ir.Observe) and f.name == "name":
                value = rename.get(value, value)
            fields.append(plain(value, rename))
        return (type(node).__name__, *fields)
    return node


def pool(p: ir.Program, name: str) -> ir.Pool:
    return next(x for x in p.pools if x.name == name)


def pref(name: str, index=None) -> ir.Ref:
    return ir.Ref("pool", name, index)


def same_ref(ref: ir.Ref, name: str, index=None) -> bool:
    return (ref.kind, ref.name, ref.index) == ("pool", name, index)


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_p03_examples_load_in_both_forms(name):
    flat, main = (prog(t) for t in EXAMPLES[name])
    n = POOLS[name]
    assert summary(flat).startswith(f"OK: {n} pool(s)")
    assert summary(main).startswith(f"OK: {n} pool(s)")
    rename = {"admitted": "adm"}
    assert plain(flat.pools) == plain(main.pools)
    assert plain(holds(flat), rename) == plain(holds(main), rename)
    assert [x.name for x in flat.pools] == [x.name for x in main.pools]


# ----------------------------------------------------------- IR of examples
def test_p03_p1_hold_and_queue_by():
    p = prog(P1)
    (h,) = holds(p)
    assert p.pools == [ir.Pool("mem", cap=10.0, pos=p.pools[0].pos)]
    (hp,) = h.pools
    assert same_ref(hp.ref, "mem") and hp.units == ir.Attr("u")
    assert hp.reserve is None and hp.static
    assert [type(s).__name__ for s in h.body] == ["Observe", "Run"]
    assert (h.reuse, h.cache, h.lease) == (None, None, None)
    assert h.text == "`hold mem (u)`"
    assert (h.pos.line, h.pos.col) == (7, 10)
    # with `queue by (u);` the keys are read at the Select moment
    q = prog(P1.replace("cap 10;", "cap 10; queue by (u);"))
    assert q.pools[0].queue == [ir.Attr("u")]


def test_p03_p2_reserve_and_block():
    p = prog(P2)
    mem = pool(p, "mem")
    assert (mem.cap, mem.block, mem.reserve_held) == (10.0, 4.0, False)
    (hp,) = holds(p)[0].pools
    assert (hp.units, hp.reserve, hp.static) == (ir.Attr("u"), ir.Attr("r"), True)
    assert holds(p)[0].text == "`hold mem (u) reserve (r)`"
    used = stmts_of(p, ir.Observe)[1].value
    assert plain(used) == plain(ir.Observable("used", pref("mem")))


def test_p03_p3_static_demand_and_state_dependent_demand():
    # attribute units (9, 11, 2): static, so judged at the join, not at link time
    p = prog(P2.replace("hold mem (u) reserve (r)", "hold mem (u)"))
    assert holds(p)[0].pools[0].static
    # a demand reading pool state is not static and waits (`over_cap`)
    (hp,) = holds(prog(P3)).pop().pools
    assert not hp.static
    assert plain(hp.units) == plain(ir.Binary("+", ir.Num(4.0), ir.Binary(
        "*", ir.Observable("queued", pref("mem")), ir.Num(100.0))))
    # "A constant `hold mem (11)` on that pool does not link"
    text = P3.replace("pool mem { cap 10; }", "pool mem { cap 10; block 4; }")
    for units, need in (("11", "11 units (12 in blocks of 4)"), ("9", "9 units (12 in blocks of 4)")):
        err = error(text.replace("4 + queued(mem) * 100", units), LinkError)
        assert err.message == f"a hold on pool `mem` waits for {need}, more than its cap 10"
        assert (err.pos.line, err.pos.col) == (5, 15)
    assert prog(text.replace("4 + queued(mem) * 100", "8"))


@pytest.mark.parametrize("units", ["now > 5 ? 100 : 1", "used(mem)", "free(mem) > 0",
                                   "holders(mem)", "cachedin(mem)", "est_wait(svc)"])
def test_p03_state_dependent_demand_is_not_static(units):
    (hp,) = holds(prog(P3.replace("4 + queued(mem) * 100", units)))[0].pools
    assert not hp.static


@pytest.mark.parametrize("units", ["serial + computed", "cached * 2", "blocksize(kv)",
                                   "max(serial, 3)"])
def test_p03_attribute_demand_is_static(units):
    text = P3.replace("pool mem { cap 10; }", "pool mem { cap 10; }\npool kv { block 2; }")
    text = text.replace("hold mem (4 + queued(mem) * 100) { run svc (1); }",
                        f"hold mem ({units}) {{ run svc (1); }} cache (1);")
    (hp,) = holds(prog(text))[0].pools
    assert hp.static


def test_p03_p4_prefix_cache():
    p = prog(P4)
    hs = holds(p)
    assert len(hs) == 5
    assert [h.cache for h in hs] == [ir.Num(7.0), ir.Num(18.0), ir.Num(0.0), ir.Num(30.0),
                                     None]
    assert [h.reuse for h in hs] == [None, None, ir.Num(9.0), None, None]
    assert [h.pools[0].units for h in hs] == [ir.Num(x) for x in (10.0, 20.0, 20.0, 5.0, 5.0)]
    assert plain(hs[1].body[0]) == plain(ir.Observe("c2", ir.Attr("cached")))
    (drop,) = stmts_of(p, ir.Drop)
    assert same_ref(drop.ref, "kv")
    after = [s.value for s in stmts_of(p, ir.Observe) if s.name.startswith("c_after")]
    assert plain(after) == plain([ir.Observable("cachedin", pref("kv"))] * 6)
    # a hold on two pools
    two = prog(P4.replace("pool kv { cap 100; block 4; }",
                          "pool kv { cap 100; block 4; }\npool kv2 { cap 100; }")
               .replace("hold kv (10) { run svc (1); } cache (7);",
                        "hold kv (10), kv2 (3) { run svc (1); } cache (12);"))
    first = holds(two)[0]
    assert [h.ref.name for h in first.pools] == ["kv", "kv2"]
    assert first.text == "`hold kv (10), kv2 (3)`"


def test_p03_p5_eviction_orders():
    p = prog(P5)
    assert pool(p, "kv").evict is None and pool(p, "kv").block == 2.0
    assert [h.cache for h in holds(p)] == [ir.Num(6.0), ir.Num(6.0), None]
    newest = prog(P5.replace("evict lru;", "evict by (-last);"))
    assert pool(newest, "kv").evict == [ir.Unary("-", ir.Ctx("last"))]
    by_serial = prog(P5.replace("evict lru;", "evict by (serial == 1 ? 0 : 1);"))
    assert pool(by_serial, "kv").evict == [ir.Cond(
        ir.Binary("==", ir.Attr("serial"), ir.Num(1.0)), ir.Num(0.0), ir.Num(1.0))]


def test_p03_p6_waiting_as_eviction_key():
    p = prog(P6)
    assert [x.name for x in p.pools] == ["kv", "gate"]
    assert pool(p, "kv").evict == [ir.Ctx("waiting"), ir.Ctx("size")]
    assert [h.pools[0].ref.name for h in holds(p)] == ["kv", "gate", "gate", "kv"]


def test_p03_p7_spill():
    p = prog(P7)
    spill = pool(p, "kv").spill
    assert same_ref(spill.tier, "host")
    assert (spill.link.kind, spill.link.name) == ("stage", "link")
    assert spill.work == ir.Binary("*", ir.Ctx("size"), ir.Num(0.5))
    assert spill.when == ir.Binary(">=", ir.Ctx("size"), ir.Num(2.0))
    assert pool(p, "host").spill is None and pool(p, "host").cap == 100.0


def test_p03_p8_lifo_lowering_and_grow():
    p = prog(P8)
    mem = pool(p, "mem")
    assert (mem.preempt, mem.requeue) == ("by", "head")
    assert mem.preempt_keys == [ir.Unary("-", ir.Ctx("admission"))]
    (h,) = holds(p)
    assert h.cache == ir.Num(10.0)
    (grow,) = stmts_of(p, ir.Grow)
    assert same_ref(grow.ref, "mem")
    assert grow.amount == ir.Cond(ir.Binary("==", ir.Attr("serial"), ir.Num(0.0)),
                                  ir.Num(3.0), ir.Num(0.0))
    assert grow.text == "`grow mem (serial == 0 ? 3 : 0)`"
    assert h.body[1].value == ir.Attr("computed")
    # the variant: `cap 10; block 2; preempt none;`
    none = pool(prog(P8.replace("cap 10; preempt lifo;", "cap 10; block 2; preempt none;")),
                "mem")
    assert (none.preempt, none.preempt_keys, none.block) == ("none", [], 2.0)


def test_p03_p9_lease_load_release():
    p = prog(P9)
    outer, inner = holds(p)
    assert same_ref(outer.lease.ref, "P")
    assert outer.lease.duration == ir.Cond(ir.Binary("==", ir.Attr("serial"), ir.Num(0.0)),
                                           ir.Num(5.0), ir.Num(float("inf")))
    assert outer.cache == ir.Num(10.0)
    assert [type(s).__name__ for s in inner.body] == ["Run", "Load", "Release", "Observe",
                                                      "Observe"]
    load_, release = inner.body[1], inner.body[2]
    assert same_ref(load_.ref, "Q") and load_.amount == ir.Num(7.0)
    assert load_.text == "`load Q (7)`"
    assert same_ref(release.ref, "P")   # ends the lease: no hold of P encloses it
    assert pool(p, "Q").block == 4.0


def test_p03_p10_queue_keys_read_waited():
    p = prog(P10)
    keys = pool(p, "slot").queue
    assert len(keys) == 2 and keys[1] == ir.Attr("serial")
    aging = keys[0].other.cond   # prompt > 128 && waited >= 3
    assert aging == ir.Binary("&&", ir.Binary(">", ir.Attr("prompt"), ir.Num(128.0)),
                              ir.Binary(">=", ir.Ctx("waited"), ir.Num(3.0)))
    assert keys[0].cond == ir.Attr("immediate")
    assert p.attributes == ["arrive", "prompt", "immediate"]


def test_p03_p11_reserve_held():
    p = prog(P11)
    assert pool(p, "mem").reserve_held
    first = holds(p)[0]
    assert (first.pools[0].units, first.pools[0].reserve) == (ir.Num(2.0), ir.Num(6.0))
    assert stmts_of(p, ir.Grow)[0].amount == ir.Num(4.0)
    assert not prog(P11.replace(" reserve held;", "")).pools[0].reserve_held


def test_p03_p12_lease_statistics_program():
    p = prog(P12)
    (h,) = holds(p)
    assert h.cache == ir.Num(6.0)
    assert plain(h.lease) == plain(ir.Lease(pref("P"), ir.Num(1.0)))
    assert summary(p) == "OK: 1 pool(s), 1 stage(s), 0 attribute(s), 2 block(s)"
