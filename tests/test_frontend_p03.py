"""Part 03 front end: pools and holds (parse + link + lowering only).

Every worked example P-1 … P-12 of §12 loads in the flat 0.1.3 form (the
spec's text) and in the `fn main` form (checked with pyserq 0.1.5, which
needs `cost(…)` on amounts and `if` for `branch`); both lower to the same
pools and holds (the texts are in p03_programs.py). Then the IR shapes of
each example, and the link and parse errors of §2.2, §2.3, §4.1–§4.9 and
§13."""
from __future__ import annotations

import dataclasses

import pytest

from serq.core import ir
from serq.core.errors import LinkError, ParseError
from serq.frontend import load, summary
from serq.frontend.link.lower import ir_stmts

from p03_programs import EXAMPLES, P1, P10, P11, P12, P2, P3, P4, P5, P6, P7, P8, P9, POOLS


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
    assert plain(flat.pools) == plain(main.pools)
    assert plain(holds(flat)) == plain(holds(main))
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


# -------------------------------------------------------------- §4.7 bindings
BASE = "stage d : delay;\npool kv { cap 100; block 4; }\npool P { cap 10; }\n" \
       "workload { arrive batch(1); init { set n = 3; set prompt = 5; } }\n"


def session(body: str, prefix: str = "") -> str:
    return prefix + BASE + "session { turn; " + body + " }\n"


def test_p03_bindings_are_substituted_into_the_header_cache_and_lease():
    p = prog(session("hold kv (m) reserve (k) reuse (k) at admission (k = n + 1, m = k * 2) "
                     "{ run d (1); } cache (k + m) lease kv (m);"))
    (h,) = holds(p)
    k = ir.Binary("+", ir.Attr("n"), ir.Num(1.0))
    m = ir.Binary("*", k, ir.Num(2.0))
    assert (h.pools[0].units, h.pools[0].reserve, h.reuse) == (m, k, k)
    assert h.cache == ir.Binary("+", k, m) and h.lease.duration == m
    assert [type(s).__name__ for s in h.body] == ["Run"]   # the body reads no binding
    assert "k" not in p.attributes and "m" not in p.attributes
    assert h.text == "`hold kv (m) reserve (k)`"


def test_p03_binding_read_in_body_becomes_a_set():
    # the vLLM library's idiom (§7.4): resume from `computed`
    p = prog(session("hold kv (known) at admission (known = computed < prompt ? prompt : "
                     "computed + 1) { run d (known - cached); } cache (known);"))
    (h,) = holds(p)
    value = ir.Cond(ir.Binary("<", ir.Attr("computed"), ir.Attr("prompt")), ir.Attr("prompt"),
                    ir.Binary("+", ir.Attr("computed"), ir.Num(1.0)))
    assert plain(h.body[0]) == plain(ir.Set("known", value))
    assert h.pools[0].units == value and h.cache == value
    assert h.body[1].work == ir.Binary("-", ir.Attr("known"), ir.Attr("cached"))
    assert "known" in p.attributes


def test_p03_nested_binding_reading_an_outer_binding():
    p = prog(session("hold kv (k) at admission (k = n) { hold P (j) at admission (j = k + 1) "
                     "{ run d (1); } }"))
    outer, inner = holds(p)
    assert plain(outer.body[0]) == plain(ir.Set("k", ir.Attr("n")))
    assert inner.pools[0].units == ir.Binary("+", ir.Attr("k"), ir.Num(1.0))


@pytest.mark.parametrize("binding, word", [
    ("k = used(kv)", "used(…)"), ("k = cached", "cached"), ("k = now", "now"),
    ("k = cachedin(kv) + 1", "cachedin(…)"), ("k = queue(d)", "queue(…)")])
def test_p03_binding_read_in_body_must_read_attributes_only(binding, word):
    err = error(session(f"hold kv (k) at admission ({binding}) {{ run d (k); }} cache (1);"),
                ParseError)
    assert err.message == (f"the body reads `k`, and `k` reads `{word}`: the body sees a "
                           "binding that reads only attributes and constants")
    # not read in the body: fine, it is only substituted
    prog(session(f"hold kv (k) at admission ({binding}) {{ run d (1); }} cache (1);"))


@pytest.mark.parametrize("binding, message", [
    ("k = ~exp(1)", "`k` draws a sample: an `at admission` binding is substituted"),
    ("serial = 1", "`serial` is a built-in session attribute"),
    ("cached = 1", "`cached` is a built-in session attribute"),
    ("waited = 1", "`waited` is a name the language supplies"),
    ("kv = 1", "`at admission (kv = …)`: `kv` is a pool"),
    ("d = 1", "`at admission (d = …)`: `d` is a stage"),
    ("c = 1", "`at admission (c = …)`: `c` is a `let` constant"),
    ("k = 1, k = 2", "`k` is bound twice in one `at admission`"),
    ("k = size", "`size` is read in a hold's header, read at admission"),
    ("k = zz", "unknown name `zz`"),
])
def test_p03_binding_errors(binding, message):
    err = error(session(f"hold kv (1) at admission ({binding}) {{ run d (1); }}",
                        "let c = 1;\n"))
    assert message in err.message


def test_p03_stale_state_set_used_in_a_header():
    for body in ("set u = used(kv); hold kv (u) { run d (1); }",
                 "set u = queue(d); hold kv (1) reserve (u) { run d (1); }",
                 "set u = used(kv); hold kv (k) at admission (k = u + 1) { run d (1); }"):
        err = error(session(body), LinkError)
        assert "when the session reaches the `set`, and is used in the header of a hold " \
               "on `kv`" in err.message
        assert err.help.startswith("write `at admission (u = …)`")
    for body in ("set u = now; hold kv (u) { run d (1); }",              # not pool/stage state
                 "set u = blocksize(kv); hold kv (u) { run d (1); }",    # a constant
                 "hold kv (u) { run d (1); } set u = used(kv);",         # after the hold
                 "set u = used(kv); hold kv (1) { run d (u); }"):        # not in the header
        prog(session(body))


# ---------------------------------------------------------------- §4.8–§4.9
def test_p03_cached_is_checked_against_the_innermost_hold():
    ok = ["hold kv (1) { observe c = cached; } cache (1);",
          "hold kv (1) { run d (1); } observe c = cached;",
          "hold kv (1) { hold P (1) { observe c = cached; } cache (1); }",
          "hold kv (cached) { run d (1); } cache (1);"]
    for body in ok:
        prog(session(body))
    bad = ["hold kv (1) { observe c = cached; }",
           "hold kv (1) { hold P (1) { observe c = cached; } } cache (2);",
           "hold kv (1) { hold P (cached) { } cache (1); }",
           "hold kv (1) { branch (cached > 0) { run d (1); } }"]
    for body in bad:
        err = error(session(body), LinkError)
        assert "`cached` is read in a hold on" in err.message
        assert "that has no `cache` clause" in err.message


def test_p03_grow_load_growing_release_stand_in_a_hold_of_the_pool():
    ok = ["hold kv (1) { grow kv (1); load kv (2); release kv; }",
          "hold kv (1) { hold P (1) { grow kv (1); } }",
          "hold kv (1) { run d (1); } lease kv (1); release kv;",
          "release kv; hold kv (1) { run d (1); } lease kv (1);",
          "drop kv; drop P;"]
    for body in ok:
        prog(session(body))
    for body, message in [
            ("grow kv (1);", "`grow kv` outside a hold of `kv`"),
            ("hold P (1) { load kv (1); }", "`load kv` outside a hold of `kv`"),
            ("run d (1) growing kv;", "`growing kv` outside a hold of `kv`"),
            ("hold kv (1) { run d (1) growing kv; }", "`growing` belongs to a run on a step "
                                                       "stage; `d` is a delay stage"),
            ("release P;", "`release P` outside a hold of `P`, and no hold leases `P`"),
            ("hold P (1) { } lease P (1); release kv;", "`release kv` outside a hold")]:
        assert message in error(session(body), LinkError).message


def test_p03_pool_arrays_and_indices():
    text = ("stage d : delay;\nlet N = 2;\npool kv[N] { cap 4; }\n"
            "workload { arrive batch(1); }\n"
            "session { turn; hold kv[serial] (1) { grow kv[serial] (1); } "
            "hold kv[1] (1) { observe u = used(kv[0]) + blocksize(q[1]); } }\n"
            "pool q[3] { block 8; }\n")
    p = prog(text)
    assert (p.pools[0].size, p.pools[1].size) == (2, 3)
    first, second = holds(p)
    assert first.pools[0].ref.index == ir.Attr("serial")
    assert second.pools[0].ref.index == ir.Num(1.0)
    assert second.body[0].value == ir.Binary("+", second.body[0].value.left, ir.Num(8.0))
    for body, message in [("hold kv (1) { }", "`kv` is an array of 2 pools"),
                          ("hold kv[2] (1) { }", "index 2 is out of range for `kv`"),
                          ("hold kv[0] (1) { grow kv[1] (1); }",
                           "`grow kv[1]` outside a hold of `kv[1]`: write the pool as the "
                           "hold does, index included"),
                          ("hold kv[0] (1) { } lease kv[1] (1);", "`lease kv[1]`: the hold "
                                                                  "does not take that pool")]:
        err = error(text.replace("hold kv[serial] (1) { grow kv[serial] (1); }", body),
                    LinkError)
        assert message in err.message


def test_p03_progress_rule_counts_holds():
    p = prog(session("loop { hold kv (1) { run d (1); } }"))
    assert isinstance(p.session[1], ir.Loop)
    prog(session("while (serial < 1) { hold kv (1) { hold P (1) { end; } } }"))
    for body in ("loop { hold kv (1) { } }", "loop { hold kv (1) { observe x = 1; } }",
                 "loop { hold kv (1) { grow kv (1); } }"):
        assert "a `loop` must let time pass" in error(session(body), LinkError).message


# ------------------------------------------------------------ §2 declarations
def test_p03_pool_options_lower():
    p = prog(session("", "stage link : fifo;\npool host { }\n"
                         "pool m { block 2; evict by (age, ~uniform(0, 1)); "
                         "preempt by (decoding, position, -admission, used(m)) requeue tail; "
                         "queue by (waited, now, free(m), queue(d), cached); reserve held; "
                         "spill host via link (~exp(size)) when (waiting == 0); cap inf; }\n"))
    m = pool(p, "m")
    assert (m.cap, m.block, m.reserve_held) == (float("inf"), 2.0, True)
    assert m.evict == [ir.Ctx("age"), ir.Draw("uniform", [ir.Num(0.0), ir.Num(1.0)])]
    assert (m.preempt, m.requeue) == ("by", "tail")
    assert m.preempt_keys[:3] == [ir.Ctx("decoding"), ir.Ctx("position"),
                                  ir.Unary("-", ir.Ctx("admission"))]
    assert m.queue[:2] == [ir.Ctx("waited"), ir.Now()] and m.queue[4] == ir.Attr("cached")
    assert m.spill.work == ir.Draw("exp", [ir.Ctx("size")])
    assert [x.name for x in p.pools] == ["host", "m", "kv", "P"]   # declaration order
    defaults = pool(p, "host")
    assert (defaults.cap, defaults.block, defaults.evict, defaults.preempt, defaults.queue,
            defaults.admit_via, defaults.spill) == (float("inf"), None, None, "none", None,
                                                     None, None)


@pytest.mark.parametrize("decl, message", [
    ("pool m { cap 4; cap 5; }", "pool `m`: `cap` is written twice"),
    ("pool m { evict lru; evict by (size); }", "pool `m`: `evict` is written twice"),
    ("pool m { reserve held; reserve held; }", "pool `m`: `reserve held` is written twice"),
    ("pool m { cap serial; }", "`serial` is not a constant"),
    ("pool m { cap used(kv); }", "`used(…)` reads the state of the program"),
    ("pool m { block blocksize(kv); }", "`blocksize(…)` reads the state of the program"),
    ("pool m { cap 0/0; }", "pool `m`: `cap` is NaN"),
    ("pool m { cap -1; }", "pool `m`: `cap -1`: a capacity is a number ≥ 0 or `inf`"),
    ("pool m { block 0; }", "pool `m`: `block 0`: a block must be positive"),
    ("pool m { block -2; }", "pool `m`: `block -2`: a block must be positive"),
    ("pool m[0] { }", "the array size of `m` is 0"),
    ("pool m[1.5] { }", "the array size of `m` is 1.5"),
    ("pool kv { }", "duplicate pool `kv`"),
    ("pool now { }", "`now` is a name the language supplies"),
    ("pool m { admit via d; }", "`admit via d`: `d` is not a step stage"),
    ("pool m { admit via e; }", "unknown stage `e`"),
    ("pool m { queue by (~exp(1)); }", "pool `m`: a queue key may not draw"),
    ("pool m { queue by (size); }", "`size` is read in a pool's `queue by` keys"),
    ("pool m { queue by (h); }", "`h` is hidden from the scheduler, but is read in a pool's "
                                 "`queue by` keys"),
    ("pool m { evict by (h); }", "`h` is hidden from the scheduler, but is read in an "
                                 "eviction key or a spill clause"),
    ("pool m { evict by (waited); }", "`waited` is read in an eviction key"),
    ("pool m { spill P via d (h) when (1); }", "`h` is hidden from the scheduler"),
    ("pool m { spill P via d (1) when (h > 0); }", "`h` is hidden from the scheduler"),
    ("pool m { spill Q via d (1) when (1); }", "unknown pool `Q`"),
    ("pool m { spill P via q (1) when (1); }", "unknown stage `q`"),
    ("pool m { spill P via d (-1) when (1); }", "the spill work is -1"),
    ("pool m { preempt by (h); }", "`h` is hidden from the scheduler, but is read in a "
                                   "pool's `preempt by` keys"),
    ("pool m { preempt by (~exp(1)); }", "pool `m`: a preempt key may not draw"),
    ("pool m { preempt by (computed); }", "pool `m`: a preempt key reads `computed`"),
    ("pool m { preempt by (budget_left(d)); }", "may not read `budget_left(…)`"),
    ("pool m { preempt by (waited); }", "`waited` is read in a pool's `preempt by` keys"),
    ("pool m { preempt lifo requeue tail; }", "expected `;`, found `requeue`"),
])
def test_p03_pool_declaration_errors(decl, message):
    text = BASE.replace("init { set n = 3;", "hidden h; init { set h = 1; set n = 3;")
    err = error(text + "session { turn; }\n" + decl)
    assert message in err.message


def test_p03_observables_of_pools():
    p = prog(session("observe a = used(kv) + free(kv) + cachedin(kv) + holders(P) + "
                     "queued(P) + blocksize(kv) + cost(kv, 1) + cost(P, d, 2);"))
    assert p.observations == ["a"]
    for body, message in [("observe b = blocksize(P);", "`blocksize(P)`: pool `P` has no "
                                                         "`block`"),
                          ("observe b = used(d);", "unknown pool `d`"),
                          ("observe b = used(k);", "unknown pool `k`"),
                          ("observe b = queue(kv);", "unknown stage `kv`"),
                          ("observe b = kv;", "unknown name `kv`"),
                          ("observe b = kv[0];", "`kv[…]` names a pool")]:
        assert message in error(session(body), LinkError).message
    assert "a gauge cannot read `cachedin(…)`" in error(
        BASE + "gauge g = cachedin(kv);", LinkError).message
    assert prog(BASE + "gauge g = used(kv) + holders(P);").gauges[0].name == "g"


# ---------------------------------------------------------------- §4.1–§4.2
@pytest.mark.parametrize("body, message", [
    ("hold kv (~exp(1)) { }", "a hold's units may not draw"),
    ("hold kv (1) reserve (~exp(1)) { }", "a hold's `reserve` may not draw"),
    ("hold kv (1) reuse (~exp(1)) { } cache (1);", "a hold's `reuse` may not draw"),
    ("hold kv (waited) { }", "`waited` is read in a hold's header, read at admission"),
    ("hold kv (1) reuse (2) { }", "`reuse` on a hold on `kv` that has no `cache` clause"),
    ("hold P (11) { }", "a hold on pool `P` waits for 11 units, more than its cap 10"),
    ("hold P (1) reserve (10.5) { }", "a hold on pool `P` waits for 10.5 units"),
    ("hold kv (101) { }", "waits for 101 units (104 in blocks of 4), more than its cap 100"),
    ("hold P (-1) { }", "`hold P (-1)`: an amount of units, tokens or seconds is a number, "
                        "and not negative"),
    ("hold P (0/0) { }", "`hold P (NaN)`: the amount is NaN"),
    ("hold P (1) reserve (-1) { }", "`hold P (…) reserve (-1)`: an amount"),
    ("hold P (1) reuse (-1) { } cache (0);", "`hold P (…) reuse (-1)`: an amount"),
    ("hold P (1) { grow P (-1); }", "`grow P (-1)`: an amount"),
    ("hold P (1) { load P (0/0); }", "`load P (NaN)`: the amount is NaN"),
    ("hold kv (1), kv (2) { }", "a hold takes `kv` twice"),
    ("hold kv (1) { } lease P (1);", "`lease P`: the hold does not take that pool"),
    ("hold kv (cost(P, 1)) { }", "resource use requires its cost type"),
    ("hold kv (1) reserve (cost(d, 1)) { }", "resource use requires its cost type"),
    ("hold kv (1) { grow kv (cost(P, 1)); }", "resource use requires its cost type"),
    ("hold kv (1) { } cache (1) lease kv (1) ;", None),
    ("hold kv (1) { } lease kv (1) cache (1);", "unknown statement `cache`"),
    ("hold zz (1) { }", "unknown pool `zz`"),
])
def test_p03_hold_errors(body, message):
    text = session(body)
    if message is None:
        prog(text)
        return
    assert message in error(text).message


def test_p03_hold_accepts_cost_and_constant_demand_within_cap():
    p = prog(session("hold kv (cost(kv, 1)), P (cost(P, 1)) reserve (cost(P, 10)) "
                     "{ grow kv (cost(kv, 1)); load P (cost(P, 1)); } cache (cost(kv, 2));"))
    (h,) = holds(p)
    assert [hp.units for hp in h.pools] == [ir.Num(1.0), ir.Num(1.0)]
    assert h.pools[1].reserve == ir.Num(10.0)
    prog(session("hold kv (97) { }"))          # ru(97) = 100 = cap
    prog(session("hold P (n) reserve (11) { }"))  # not wholly constant: judged at the join


# ------------------------------------------------------- other front end parts
def test_p03_holds_through_definitions_and_shapes():
    text = ("def take(p, n) { hold p (n) { run svc (1); grow p (1); } cache (n); }\n"
            "def key(x) = x * 2;\nstage svc : delay;\n"
            "pool kv { cap 100; queue by (key(serial)); }\npool mem[2] { cap 10; }\n"
            "workload { arrive batch(2); session { hold mem[serial] (1) { request; } } }\n"
            "server { take(kv, 3); }\n")
    p = prog(text)
    outer, inner = holds(p)
    assert outer.pools[0].ref.name == "mem"
    assert [type(s).__name__ for s in outer.body] == ["RequestBegin", "Hold", "RequestEnd"]
    assert inner.text == "`hold kv (3)`" and inner.cache == ir.Num(3.0)
    assert pool(p, "kv").queue == [ir.Binary("*", ir.Attr("serial"), ir.Num(2.0))]
    err = error("pool kv { }\ndef kv() = 1;")
    assert "`kv` is defined, and is also a pool" in err.message


def test_p03_summary_counts_pools_and_hold_bodies():
    p = prog(P9)
    assert summary(p) == "OK: 2 pool(s), 1 stage(s), 0 attribute(s), 5 block(s)"
    p = prog("pool a[3] { }\npool b { }\nstage d : delay;\n", need_horizon=False)
    assert summary(p) == "OK: 2 pool(s), 1 stage(s), 0 attribute(s), 0 block(s)"


def test_p03_workload_file_may_declare_pools(tmp_path):
    wl = tmp_path / "w.sq"
    wl.write_text("pool kv { cap 4; }\nworkload { arrive batch(1); }\n")
    p = prog("stage d : delay;\nserver { hold kv (1) { run d (1); } }", workload=str(wl))
    assert [x.name for x in p.pools] == ["kv"]


def test_p03_pool_queue_option_is_not_a_queue_declaration():
    prog(session("", "pool q { queue fifo; }\npool r { queue by (serial); }\n"))
    err = error("queue q[2] : prefill { }", ParseError)
    assert "has no `prefill` entry" in err.message


@pytest.mark.parametrize("text, message", [
    ("pool kv { capp 4; }", "unknown pool option `capp`"),
    ("pool kv { cap 4 }", "expected `;`, found `}`"),
    ("pool kv { evict fifo; }", "expected `lru` or `by`, found `fifo`"),
    ("pool kv { spill host via link (1); }", "expected `when`, found `;`"),
    ("pool kv { cap 4; };", "unexpected `;` at top level"),
    ("stage d : delay;\nworkload { arrive batch(1); }\nsession { turn; hold kv 1 { } }",
     "expected `(`, found `1`"),
    ("stage d : delay;\nworkload { arrive batch(1); }\nsession { turn; release kv }",
     "expected `;`, found `}`"),
])
def test_p03_syntax_errors(text, message):
    assert error(text, ParseError).message == message


def test_p03_pool_on_a_device():
    # pools on devices are implemented with engines (issue 4, Part 04 §11)
    p = prog("device gpu { kv cap 8; }\npool kv on gpu { }", need_horizon=False)
    assert [(x.name, x.cap) for x in p.pools] == [("kv", 8)]
    err = error("pool kv on gpu { evict lru; }", LinkError)
    assert "which is no device or engine" in err.message


def test_p03_workload_file_pool_clashes(tmp_path):
    wl = tmp_path / "w.sq"
    wl.write_text("pool kv { cap 4; }\nworkload { arrive batch(1); }\n")
    err = error("pool kv { cap 8; }\nstage d : delay;", LinkError, workload=str(wl))
    assert "`kv` is declared in the program and in the workload file" in err.message
    # a stage and a pool may share a name (Part 01 §6.1)
    p = prog("stage kv : delay;\nserver { hold kv (1) { run kv (1); } }", workload=str(wl))
    assert (p.pools[0].name, p.stages[0].name) == ("kv", "kv")
