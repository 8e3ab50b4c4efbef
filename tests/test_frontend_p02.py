"""Part 02 (and Part 04 §3–4, Part 06 §2/§7): shapes, workload, trace,
control statements, settings, gauges (parse + link only)."""
from __future__ import annotations

import math

import pytest

from serq.core import ir
from serq.core.errors import LinkError, ParseError
from serq.frontend import load, summary
from serq.frontend.link.trace import read_trace


def prog(text: str, **kw) -> ir.Program:
    kw.setdefault("horizon", 10)
    return load(source=text, **kw)


def error(text: str, kind=(ParseError, LinkError), **kw):
    kw.setdefault("horizon", 10)
    with pytest.raises(kind) as info:
        load(source=text, **kw)
    return info.value


WL = "stage d : delay;\nworkload { arrive batch(1); }\n"


# ------------------------------------------------------------------ shapes
def test_p02_shape_n():
    p = prog(WL)
    assert p.session is None and p.has_requests is False


def test_p02_shape_t_omitted_session():
    p = prog(WL + "server { run d (1); }")
    assert [type(s).__name__ for s in p.session] == ["Turn", "RequestBegin", "Run",
                                                     "RequestEnd"]
    assert p.has_requests


def test_p02_shape_r_requests_anywhere():
    p = prog("stage d : delay;\nworkload { arrive batch(1); session { request; turn; "
             "branch (serial == 0) { request; } } }\nserver { run d (1); }")
    assert [type(s).__name__ for s in p.session][:4] == ["RequestBegin", "Run",
                                                         "RequestEnd", "Turn"]
    inner = p.session[4].then
    assert [type(s).__name__ for s in inner] == ["RequestBegin", "Run", "RequestEnd"]


def test_p02_shape_r_request_through_def():
    p = prog("def ask() { request; }\nstage d : delay;\n"
             "workload { arrive batch(1); session { turn; ask(); } }\nserver { run d (1); }")
    assert [type(s).__name__ for s in p.session] == ["Turn", "RequestBegin", "Run",
                                                     "RequestEnd"]


@pytest.mark.parametrize("text, message", [
    ("stage d : delay;\nworkload { session { turn; } }\nsession { turn; }",
     "a program has one session"),
    ("stage d : delay;\nsession { turn; }\nserver { }", "`server` needs a `session` inside"),
    ("workload { session { request; } }", "`request;` needs a `server` block"),
    ("session { request; }", "`request;` needs a `server` block"),
    ("workload { session { turn; } }", "is written against a `server` block"),
    ("workload { session { end; } }\nserver { }", "the workload's session has no `turn;`"),
    ("workload { session { request gw; } }", "no queue `gw` is declared"),
    ("server { turn; }", "`turn` is the session's"),
    ("server (x) reply (y) { }", "request signatures"),
    ("server { end; }", "`end` is the session's"),
    ("workload { session { turn; request; } }\nserver { request; }",
     "a server does not request itself"),
    ("def t() { turn; }\nserver { t(); }", "`turn` is the session's"),
    ("workload { init { turn; } }", "init: workload blocks may only `set` and `observe`"),
    ("workload { turn { branch (1) { } } }", "turn: workload blocks may only"),
    ("workload { arrive batch(1); trace \"a\"; trace \"b\"; }", "duplicate `trace` in workload"),
    ("workload { init { } init { } }", "duplicate `init` in workload"),
])
def test_p02_shape_and_placement_errors(text, message):
    assert message in error(text, ParseError).message


# ---------------------------------------------------------------- arrivals
@pytest.mark.parametrize("arrive, message", [
    ("poisson(0)", "the rate is 0; a rate must be positive and finite"),
    ("poisson(inf)", "the rate is inf"),
    ("poisson(now)", "`now` is not a constant"),
    ("poisson(~exp(1))", "a constant cannot sample"),
    ("renewal(0)", "an interarrival time must be positive"),
    ("renewal(-1)", "an interarrival time must be positive"),
    ("renewal(1/0)", "an interarrival time must be positive"),
    ("renewal(now)", "renewal arrival may use only constants and sampled distributions"),
    ("renewal(queue(d))", "renewal arrival may use only constants"),
    ("closed(0)", "the closed population is 0: a count is a whole number from 1 to 1000000"),
    ("batch(1000001)", "the batch size is 1000001"),
    ("batch(1.5)", "the batch size is 1.5"),
])
def test_p02_arrival_errors(arrive, message):
    err = error(f"stage d : delay;\nworkload {{ arrive {arrive}; }}", LinkError)
    assert message in err.message


def test_p02_arrivals():
    assert prog("workload { arrive none; }").workload.arrival == "none"
    p = prog("let r = 2;\nworkload { arrive poisson(r / 4); }")
    assert p.workload.rate == 0.5
    p = prog("workload { arrive renewal(~uniform(1, 2) + 1); }")
    assert p.workload.gap == ir.Binary("+", ir.Draw("uniform", [ir.Num(1), ir.Num(2)]),
                                       ir.Num(1))


# ----------------------------------------------------------------- settings
@pytest.mark.parametrize("block, kw, message", [
    ("", {"horizon": None}, "no horizon (run { horizon T; })"),
    ("run { horizon 5; warmup 5; }", {"horizon": None}, "the horizon is 5"),
    ("run { horizon inf; }", {"horizon": None}, "the horizon is inf"),
    ("run { horizon 5; warmup -1; }", {"horizon": None}, "the warm-up is -1"),
    ("run { horizon 5; seed 3.7; }", {"horizon": None},
     "the seed is 3.7: a count is a whole number from 0 to 9007199254740992"),
    ("run { horizon 5; arrivals 0; }", {"horizon": None}, "arrivals is 0"),
    ("run { horizon 5; arrivals 2; }", {"horizon": None},
     "arrivals applies only to poisson or renewal workloads"),
    ("run { horizon now; }", {"horizon": None}, "`now` is not a constant"),
])
def test_p02_settings_errors(block, kw, message):
    err = error("stage d : delay;\nworkload { arrive batch(1); }\n" + block, LinkError, **kw)
    assert message in err.message


def test_p02_settings_overrides():
    text = "let h = 20;\nworkload { arrive renewal(1); }\nrun { horizon h; warmup 5; seed 7; " \
           "arrivals 3; }"
    s = prog(text, horizon=None).settings
    assert (s.horizon, s.warmup, s.seed, s.arrivals) == (20, 5, 7, 3)
    s = prog(text, horizon=30, warmup="2 * 3", seed=9, arrivals=4).settings
    assert (s.horizon, s.warmup, s.seed, s.arrivals) == (30, 6, 9, 4)
    p = load(source="stage d : delay;", need_horizon=False)
    assert p.settings.horizon is None and p.settings.seed == 1


# --------------------------------------------------------------- statements
def test_p02_if_else_if_chain():
    p = prog(WL + "session { turn; if (serial == 0) { end; } else if (serial == 1) "
             "{ run d (1); } else { run d (2); } }")
    top = p.session[1]
    assert top.keyword == "if" and top.text == "serial == 0"
    inner = top.other[0]
    assert isinstance(inner, ir.If) and inner.keyword == "if" and inner.text == "serial == 1"
    assert isinstance(inner.other[0], ir.Run)


def test_p02_branch_with_is_a_bernoulli_draw():
    p = prog(WL + "session { turn; branch with (0.3) { end; } }")
    assert p.session[1].guard == ir.Draw("bernoulli", [ir.Num(0.3)])
    assert p.session[1].keyword == "branch"


@pytest.mark.parametrize("stmt, message", [
    ("branch (2) { }", "`branch (2)` is not a test: a guard is 0 or 1"),
    ("if (0.5) { }", "`if (0.5)` is not a test: a guard is 0 or 1; a constant strictly "
                     "between them is a probability. Write `branch with (0.5)`"),
    ("while (0/0) { run d (1); }", "`while (NaN)`: the guard is not 0 or 1"),
    ("choose j in -1 by (j);", "`choose j in (-1)`: the count is -1, not a whole number"),
    ("run d (-k);", "`run d (-2)`: an amount of units, tokens or seconds is a number, "
                    "and not negative"),
    ("run d (0/0);", "`run d (NaN)`: the amount is NaN"),
    ("loop { set w = w + 1; }", "a `loop` must let time pass"),
    ("loop { run d (0); }", "a `loop` must let time pass"),
    ("loop { while (serial < 1) { run d (1); } }", "a `loop` must let time pass"),
    ("while (serial < 1) { branch (serial > 0) { run d (1); } }", "a `while` must let time pass"),
    ("set serial = 1;", "`serial` is the session's number"),
    ("choose turn_no in 2 by (1);", "`turn_no` counts the session's turns"),
    ("set now = 1;", "`now` is a name the language supplies"),
    ("set k = 1;", "`k` is both a `let` constant and a session attribute"),
    ("set x = present;", "`present` is read in a session statement"),
    ("set x = running;", "`running` is an engine list"),
    ("observe x = queue(d[1]);", "index 1 is out of range for `d`: a member is 0 … 0"),
    ("observe x = queue(d[serial]);", "`d` is a single stage: its only member is `d[0]`"),
    ("observe x = d;", "unknown name `d`"),
    ("observe x = used(d);", "unknown pool `d`"),
    ("run e (1);", "unknown stage `e`"),
    ("run d (cost(d, 1)) growing d;", "unknown pool `d`"),
])
def test_p02_statement_link_errors(stmt, message):
    err = error("let k = 2;\n" + WL + "session { turn; " + stmt + " }", LinkError)
    assert message in err.message


def test_p02_progress_rule_passes():
    p = prog(WL + "session { turn; loop { branch (serial > 1) { run d (1); } else { end; } } "
             "loop { loop { run d (1); } } }")
    assert isinstance(p.session[1], ir.Loop)
    p = prog("stage d : delay;\nworkload { arrive batch(1); session { turn; loop { turn; } } }\n"
             "server { run d (1); }")
    assert isinstance(p.session[-1], ir.Loop)


def test_p02_single_stage_member_zero():
    p = prog(WL + "session { turn; run d[0] (1); }")
    assert p.session[1].stages[0].index is None


def test_p02_choose_lowering():
    p = prog("stage s[3] : fifo;\nworkload { arrive batch(1); }\n"
             "session { turn; choose j in 3 by (queue(s[j]), -j); run s[j] (1); }")
    ch = p.session[1]
    assert ch.name == "j" and ch.count == ir.Num(3) and len(ch.keys) == 2
    assert ch.keys[0].target.index == ir.Attr("j")
    assert ch.text == "choose j in 3 by (queue(s[j]), -j)"
    assert p.attributes == ["j"]


def test_p02_run_text_and_cost():
    p = prog(WL + "session { turn; set w = 1; run d (cost(d, w) * 2); }")
    run = p.session[-1]
    assert run.text == "run d (cost(d, w) * 2)" and run.work == ir.Binary(
        "*", ir.Attr("w"), ir.Num(2))
    err = error("stage e : delay;\n" + WL + "session { turn; run d (cost(e, 1)); }", LinkError)
    assert err.message.startswith("resource use requires its cost type")


# ----------------------------------------------------------- observations
def test_p02_observation_order_and_tests():
    p = prog("stage d : delay;\nworkload { arrive batch(1); init { observe a = 1; } "
             "turn { observe b = 1; } session { observe c = 1; turn; request; observe e = 1; } }"
             "\nserver { observe s = now > 1; observe a = !1; }")
    assert p.observations == ["a", "b", "c", "s", "e"]
    server_obs = [s for s in p.session if isinstance(s, ir.Observe) and s.name in ("s", "a")]
    assert all(s.is_test for s in server_obs)


def test_p02_hidden():
    p = prog("stage d : delay;\nworkload { arrive batch(1); init { set o = 1; } hidden o; "
             "hidden o2; session { turn; set o2 = o; } }\nserver { run d (o); }")
    assert p.workload.hidden == ["o", "o2"]
    assert "hidden `o` twice" in error(
        "workload { init { set o = 1; } hidden o; hidden o; }", LinkError).message
    assert "no `set` or `choose`" in error("workload { hidden new; }", LinkError).message


# ------------------------------------------------------------------ stages
def test_p02_stage_declarations():
    p = prog("let n = 2;\nstage a[n + 1] : fifo(n);\nstage b : ps(min(present, n));\n"
             "stage c : delay;")
    a, b, c = p.stages
    assert (a.kind, a.size, a.servers) == ("fifo", 3, 2)
    assert b.capacity == ir.Call("min", [ir.Ctx("present"), ir.Num(2)])
    assert (c.kind, c.size, c.capacity) == ("delay", None, None)


@pytest.mark.parametrize("decl, message", [
    ("stage a[0] : fifo;", "the array size of `a` is 0"),
    ("stage a : fifo(1.5);", "`fifo(1.5)`: the number of servers"),
    ("stage a : ps(-1);", "`ps(-1)`: a constant capacity must be positive"),
    ("stage a : ps(tokens);", "`tokens` is read in a ps stage's capacity"),
    ("stage now : delay;", "`now` is a name the language supplies"),
    ("stage a : step { }", "a step stage needs `cost`"),
])
def test_p02_stage_errors(decl, message):
    assert message in error(decl).message


def test_p04_share_rules():
    base = "stage A : ps(1);\nstage B : ps(2);\nstage C : ps(present);\n" \
           "workload { arrive batch(1); }\n"
    assert "`share` without" in error(base + "share maxmin;", LinkError).message
    assert "needs the program's `share" in error(
        base + "session { turn; run A, B (1); }", LinkError).message
    assert "`C` is not one" in error(
        base + "share maxmin;\nsession { turn; run A, C (1); }", LinkError).message
    assert "declares one `share`" in error(
        base + "share maxmin;\nshare bottleneck;\nsession { turn; run A, B (1); }",
        LinkError).message
    p = prog(base + "share bottleneck;\nsession { turn; run A, B (1); run C (1); }")
    assert [s.shared for s in p.stages] == [True, True, False]


def test_p04_multi_stage_array_twice():
    text = "stage S[2] : ps(1);\nshare maxmin;\nworkload { arrive batch(1); }\n" \
           "session { turn; run S[0], S[1] (1); }"
    assert "`S` appears twice" in error(text, LinkError).message


# ------------------------------------------------------------------ gauges
def test_p06_gauges():
    p = prog("let N = 2;\nstage s[2] : fifo;\ngauge g = max k in N (queue(s[k]));\n"
             "gauge h = busy(s[1]) + 1;")
    assert [g.name for g in p.gauges] == ["g", "h"]
    assert p.gauges[0].value == ir.Call("max", [
        ir.Observable("queue", ir.Ref("stage", "s", ir.Num(0.0), p.gauges[0].value.args[0]
                                      .target.pos)),
        ir.Observable("queue", ir.Ref("stage", "s", ir.Num(1.0), p.gauges[0].value.args[1]
                                      .target.pos))])


@pytest.mark.parametrize("gauge, message", [
    ("gauge g = now;", "`now` is not available in a gauge"),
    ("gauge g = work(s);", "a gauge cannot read `work(…)`"),
    ("gauge g = ~exp(1);", "a gauge cannot sample"),
    ("gauge g = present;", "`present` is read in a gauge"),
    ("gauge g = 1; gauge g = 2;", "duplicate gauge `g`"),
    ("gauge now = 1;", "`now` is a name the language supplies"),
])
def test_p06_gauge_errors(gauge, message):
    assert message in error("stage s : fifo;\n" + gauge, LinkError).message


# ------------------------------------------------------------------- trace
def test_p02_trace_rules(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("  # comment\n\nsession,turn,new\n7,a,1,2,3\n3,b,4,5,6,1\n7,c,7,8,9\n"
                 "7.9,d,1,1,1\n")
    tr = read_trace(str(f), "t.csv", ordered=False)
    assert [len(s) for s in tr.sessions] == [1, 1, 2]
    assert tr.sessions[1][0] == ir.TraceTurn(4, 5, 6, 1)
    f.write_text("0 , 0,1,2,3\n")
    with pytest.raises(LinkError) as info:
        read_trace(str(f), "t.csv", ordered=True)
    assert info.value.message == "trace t.csv: line 1: column 1 (session): invalid number `0 `"
    f.write_text("0,0,1,2\n")
    with pytest.raises(LinkError) as info:
        read_trace(str(f), "t.csv", ordered=True)
    assert info.value.message == "trace t.csv: line 1: expected 5 or 6 fields, got 4"
    assert info.value.help == "use session,turn,new,out,think[,forced]"


def test_p02_trace_relative_to_program(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.csv").write_text("0,0,1,2,3\n")
    (tmp_path / "p.sq").write_text('workload { arrive batch(1); trace "sub/c.csv" ordered; }')
    p = load(str(tmp_path / "p.sq"), horizon=1)
    assert p.workload.trace.ordered and p.workload.trace.sessions[0][0].new == 1


# ----------------------------------------------------------- workload file
def test_p01_workload_file(tmp_path):
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "t.csv").write_text("0,0,5,2,3\n")
    wl = tmp_path / "w" / "wl.sq"
    wl.write_text('let n = 2;\nworkload { arrive batch(n); trace "t.csv"; '
                  "init { set k = 1; } }\n")
    prog_ = tmp_path / "p.sq"
    prog_.write_text("stage d : delay;\nserver { run d (k * n); }\n")
    p = load(str(prog_), workload=str(wl), horizon=1)
    assert p.workload.count == 2 and p.workload.trace.sessions[0][0].new == 5
    prog_.write_text("let n = 3;\nstage d : delay;\nserver { run d (1); }\n")
    with pytest.raises(LinkError) as info:
        load(str(prog_), workload=str(wl), horizon=1)
    assert "declared in the program and in the workload file" in info.value.message
    prog_.write_text("stage d : delay;\nworkload { arrive batch(1); }\n")
    with pytest.raises(LinkError):
        load(str(prog_), workload=str(wl), horizon=1)
    wl.write_text("stage d : delay;\nserver { }\n")
    prog_.write_text("")
    with pytest.raises(ParseError) as info:
        load(str(prog_), workload=str(wl), horizon=1)
    assert "found `server`" in info.value.message


def test_p06_summary():
    p = prog("stage a : fifo;\nstage b[2] : delay;\nworkload { arrive batch(1); init { set x = 1; } "
             "}\nsession { turn; set y = 2; branch (x == 1) { run a (1); } else { end; } "
             "loop { run b[0] (1); } }")
    assert summary(p) == "OK: 0 pool(s), 2 stage(s), 2 attribute(s), 5 block(s)"
    assert math.isfinite(p.settings.horizon)
