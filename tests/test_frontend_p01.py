"""Part 01: lexical rules, layouts, constants and overrides, definitions,
`std/args`, libraries, expressions (parse + link only)."""
from __future__ import annotations

import math

import pytest

from serq.core import ir
from serq.core.errors import LinkError, ParseError
from serq.frontend import load
from serq.frontend.parse.lexer import lex, number_value

BASE = "stage d : delay;\nworkload { arrive batch(1); }\n"


def observed(text: str, **kw) -> dict[str, ir.Expr]:
    """Values of the observations of a shape-K program (first of each name)."""
    kw.setdefault("horizon", 1)
    p = load(source=text, **kw)
    out: dict[str, ir.Expr] = {}
    for s in p.session or []:
        if isinstance(s, ir.Observe):
            out.setdefault(s.name, s.value)
    return out


def session(body: str, prefix: str = "") -> str:
    return prefix + BASE + "session { turn; " + body + " }\n"


def error(text: str, kind=(ParseError, LinkError), **kw):
    kw.setdefault("horizon", 1)
    with pytest.raises(kind) as info:
        load(source=text, **kw)
    return info.value


# ------------------------------------------------------------------ lexical
@pytest.mark.parametrize("literal, value", [
    ("2", 2), ("2.", 2), ("5.e3", 5000), (".5", 0.5), ("2e-5", 2e-5), ("1E+3", 1000),
    ("1.5e-3", 1.5e-3), ("00012", 12), ("1_000", 1000), ("1__0", 10), ("1_000_", 1000),
    ("1_0.5_0", 10.5)])
def test_p01_numbers(literal, value):
    tokens, _ = lex(literal, "f")
    assert [t.kind for t in tokens] == ["num", "eof"]
    assert number_value(tokens[0].text) == value
    assert observed(session(f"observe x = {literal};"))["x"] == ir.Num(float(value))


def test_p01_1e_lexes_as_number_then_name():
    tokens, _ = lex("1e", "f")
    assert [(t.kind, t.text) for t in tokens[:2]] == [("num", "1"), ("id", "e")]
    err = error(session("observe x = 1e;"))
    assert err.message == "expected `;`, found `e`"


@pytest.mark.parametrize("text, message, col", [
    ("let a = 1.2.3;", "bad number `1.2.3`", 9), ("let a = 1..2;", "bad number `1..2`", 9),
    ("let a = #;", "unexpected character `#`", 9), ("let a = 1 & 2;", "unexpected character `&`", 11),
    ("let a = 'x';", "unexpected character `'`", 9), ("let a = 1 % 2;", "unexpected character `%`", 11),
    ('use "std/args;', "unterminated string", 5), ("let a = 1; /* x", "unterminated block comment", 12)])
def test_p01_lexical_errors(text, message, col):
    err = error(text, ParseError)
    assert err.message == message and (err.pos.line, err.pos.col) == (1, col)


def test_p01_unterminated_comment_help():
    err = error("/* x", ParseError)
    assert err.help == "close this comment with `*/`"


def test_p01_comments_and_unicode_identifiers():
    text = "// line comment\nlet café = 2; /* block\n spanning */ let ß = café;\n" + \
        session("observe x = ß; // done\n")
    assert observed(text)["x"] == ir.Num(2.0)


def test_p01_comments_do_not_nest():
    err = error("/* a /* b */ */ let a = 1;", ParseError)
    assert err.pos.col == 14


def test_p01_strings_may_span_lines(tmp_path):
    (tmp_path / "a\nb.csv").write_text("0,0,1,2,3\n")
    prog = tmp_path / "p.sq"
    prog.write_text('stage d : delay;\nworkload { arrive batch(1); trace "a\nb.csv"; }\n'
                    "session { turn; }\n")
    p = load(str(prog), horizon=1)
    assert p.workload.trace.sessions == [[ir.TraceTurn(1, 2, 3, 0)]]


def test_p01_keywords_are_contextual():
    text = session("set cost = 1; set run = 2; observe batch_size = cost + run;")
    p = load(source=text, horizon=1)
    assert p.attributes == ["cost", "run"]


# -------------------------------------------------------------- expressions
@pytest.mark.parametrize("expr, tree", [
    ("-2 ^ 2", ir.Unary("-", ir.Binary("^", ir.Num(2), ir.Num(2)))),
    ("2 ^ -1", ir.Binary("^", ir.Num(2), ir.Unary("-", ir.Num(1)))),
    ("2 ^ 3 ^ 2", ir.Binary("^", ir.Num(2), ir.Binary("^", ir.Num(3), ir.Num(2)))),
    ("-1 * 2", ir.Binary("*", ir.Unary("-", ir.Num(1)), ir.Num(2))),
    ("!1 + 2", ir.Binary("+", ir.Unary("!", ir.Num(1)), ir.Num(2))),
    ("!1 ^ 2", ir.Unary("!", ir.Binary("^", ir.Num(1), ir.Num(2)))),
    ("8 / 4 / 2", ir.Binary("/", ir.Binary("/", ir.Num(8), ir.Num(4)), ir.Num(2))),
    ("1 || 0 && 0", ir.Binary("||", ir.Num(1), ir.Binary("&&", ir.Num(0), ir.Num(0)))),
    ("1 ? 2 ? 3 : 4 : 5", ir.Cond(ir.Num(1), ir.Cond(ir.Num(2), ir.Num(3), ir.Num(4)),
                                  ir.Num(5))),
    ("1 ? 2 : 0 ? 3 : 4", ir.Cond(ir.Num(1), ir.Num(2), ir.Cond(ir.Num(0), ir.Num(3),
                                                                 ir.Num(4)))),
    ("1 + 2 < 4 == 1", None),
])
def test_p01_precedence(expr, tree):
    if tree is None:
        err = error(session(f"observe x = {expr};"), ParseError)
        assert err.message == "expected `;`, found `==`"
        return
    assert observed(session(f"observe x = {expr};"))["x"] == tree


def test_p01_no_unary_plus():
    err = error(session("observe x = +1;"), ParseError)
    assert err.message == "expected an expression, found `+`"


def test_p01_e1_constants_folded():
    text = "let a = 2;\nlet b = a ^ 3 ^ 2 / 64;\n" + session("observe p8 = b; observe p9 = inf;")
    obs = observed(text)
    assert obs["p8"] == ir.Num(8.0) and obs["p9"] == ir.Num(math.inf)


# ------------------------------------------------------- constants and --set
E2 = "let a = 1; let b = a * 2;\n" + session("observe o = a * 100 + b;")


def e2_value(**kw) -> float:
    from serq.frontend.link.resolve import fold
    return fold(observed(E2, **kw)["o"])


def test_p01_e2_overrides():
    assert e2_value() == 102
    assert e2_value(sets={"a": "5"}) == 510
    assert e2_value(sets={"a": "2*3"}) == 612
    assert e2_value(sets={"b": "7"}) == 107
    assert e2_value(sets={"a": 5}) == 510
    assert e2_value(sets={"a": "inf"}) == math.inf


def test_p01_e2_override_errors():
    err = error(E2, LinkError, sets={"a": "0/0"})
    assert err.message == "the `let` override `a`: the value is NaN"
    err = error(E2, LinkError, sets={"zz": "7"})
    assert err.message == "unknown `let` override `zz`"
    assert err.help.endswith("available constants: a, b")
    err = error(E2, LinkError, sets={"a": "b"})
    assert err.message == "the `let` override `a`: `b` is not a constant"
    err = error(E2, LinkError, sets={"a": "~exp(1)"})
    assert "a constant cannot sample" in err.message
    assert isinstance(error(E2, ParseError, sets={"a": "1 +"}), ParseError)


def test_p01_rebinding_and_every_let_replaced():
    text = "let a = 1; let b = a * 10; let a = 2;\n" + session("observe x = a; observe y = b;")
    assert observed(text) == {"x": ir.Num(2.0), "y": ir.Num(10.0)}
    assert observed(text, sets={"a": "5"}) == {"x": ir.Num(5.0), "y": ir.Num(50.0)}


def test_p01_statement_between_rebindings_reads_last():
    text = "let a = 1;\n" + BASE + "session { turn; observe x = a; }\nlet a = 2;\n"
    assert observed(text)["x"] == ir.Num(2.0)


def test_p01_override_affecting_array_size():
    text = "let k = 2; let m = k + 1;\nstage s[m] : fifo;\n" + session("run s[0] (1);")
    err = error(text, LinkError, sets={"k": "4"})
    assert err.message == "the `let` override `k` affects an array size resolved during parsing"
    assert "affects an array size" in error(text, LinkError, sets={"m": 3}).message
    assert load(source=text, horizon=1).stages[0].size == 3


def test_p01_let_errors():
    assert error("let lam = ~exp(1);", LinkError).message == "a constant cannot sample"
    assert error("let a = now;", LinkError).message == "`now` is not a constant"
    err = error("let a = 0/0;", LinkError)
    assert err.message == "`let a` is NaN" and "inf - inf" in err.help
    p = load(source="let a = 1/0; let b = -a;\n" + session("observe x = b;"), horizon=1)
    assert p.session[1].value == ir.Num(-math.inf)
    err = error("let now = 1;", LinkError)
    assert "a name the language supplies" in err.message


# ------------------------------------------------------------------ std/args
ARGS = 'use "std/args";\nfn main() {\n  let n = args.number("prompt", 100);\n' \
       '  stage d : delay;\n  workload { arrive batch(1); }\n  server { observe x = n; }\n}\n'


def test_p01_args_default_and_override():
    p = load(source=ARGS, horizon=1)
    obs = [s for s in p.session if isinstance(s, ir.Observe)]
    assert obs[0].value == ir.Num(100.0)
    p = load(source=ARGS, horizon=1, sets={"prompt": "40"})
    assert [s for s in p.session if isinstance(s, ir.Observe)][0].value == ir.Num(40.0)
    p = load(source=ARGS, horizon=1, sets={"prompt": "inf"})
    assert [s for s in p.session if isinstance(s, ir.Observe)][0].value == ir.Num(math.inf)


def test_p01_args_in_flat_layout():
    text = 'use "std/args";\nlet n = args.number("n", 3);\n' + session("observe x = n;")
    assert observed(text, sets={"n": 7})["x"] == ir.Num(7.0)


@pytest.mark.parametrize("text, message", [
    ('fn main() { let a = args.number("a", 1); }', "`args.number` needs `use"),
    ('use "std/args";\nlet a = args.number("a", 1);\nfn main() { }', "`args.number` needs `use"),
    ('use "std/args";\nfn main() { let a = args.number("al pha", 1); }',
     "invalid argument name `al pha`; expected an identifier"),
    ('use "std/args";\nfn main() { let a = args.number("x", 1); let b = args.number("x", 1); }',
     "argument `x` is declared twice"),
    ('use "std/args";\nfn main() { let a = args.number("a", 1) + 1; }', "expected `;`, found `+`"),
])
def test_p01_args_rules(text, message):
    err = error(text, ParseError)
    assert message in err.message


def test_p01_args_default_is_constant():
    err = error('use "std/args";\nfn main() { let a = args.number("a", ~exp(1)); }', LinkError)
    assert err.message == "a constant cannot sample"


# ---------------------------------------------------------------- layouts
def test_p01_layouts_mean_the_same():
    flat = load(source="let k = 2;\n" + session("observe x = k;"), horizon=1)
    main = load(source="let k = 2;\nfn main() {\n" + session("observe x = k;") + "}\n",
                horizon=1)
    assert flat.session == main.session or \
        [type(s) for s in flat.session] == [type(s) for s in main.session]


def test_p01_empty_programs():
    for text in ("", "fn main() { }", "// nothing\n"):
        p = load(source=text, horizon=1)
        assert p.session is None and p.stages == [] and p.workload.arrival == "none"


@pytest.mark.parametrize("text, message", [
    ("fn main() { };", "is not followed by `;`"),
    ("fn main() { fn main() { } }", "a program has exactly one `fn main()`"),
    ("fn main(x) { }", "expected `)`, found `x`"),
    ("fn main() { run { horizon 1; } run { horizon 2; } }", "duplicate `run { … }` settings block"),
    ("server { } server { }", "duplicate `server` block"),
])
def test_p01_layout_errors(text, message):
    assert message in error(text, ParseError).message


# ------------------------------------------------------------ definitions
def test_p01_def_substitution():
    text = "def sq(x) { x * x }\ndef g(x) = x * 2;\n" + \
        session("observe a = sq(1 + 2); observe b = g(-1); observe c = g(now);")
    obs = observed(text)
    three = ir.Binary("+", ir.Num(1), ir.Num(2))
    assert obs["a"] == ir.Binary("*", three, three)
    assert obs["b"] == ir.Binary("*", ir.Unary("-", ir.Num(1)), ir.Num(2))
    assert obs["c"] == ir.Binary("*", ir.Now(), ir.Num(2))


def test_p01_def_reference_arguments():
    text = "stage s[2] : fifo;\ndef q(st) { queue(st) }\ndef r(st, w) { run st (w); }\n" \
           "workload { arrive batch(1); }\nsession { turn; observe x = q(s[1]); r(s[0], 2); }\n"
    p = load(source=text, horizon=1)
    assert p.session[1].value.target.index == ir.Num(1.0)
    assert p.session[2].stages[0].index == ir.Num(0.0)


def test_p01_def_names_resolve_at_use_site():
    text = "def f() { k + 1 }\nlet k = 5;\n" + session("observe x = f();")
    assert observed(text)["x"] == ir.Binary("+", ir.Num(5), ir.Num(1))


@pytest.mark.parametrize("text, message", [
    ("def f(x) = g(x);\ndef g(x) = x;", "`f` uses `g`, which is defined after it"),
    ("def f(x) = x;\ndef f(y) = y;", "`f` is defined twice"),
    ("def work(x) = x;", "`work` is a word of the language"),
    ("def f(run) = run;", "`run` is a word of the language"),
    ("def f(x, x) = x;", "`x` is a parameter twice"),
    ("def f(p) { set p = 1; }", "`p` is a parameter, and the body names with it"),
    ("let d = 1;\ndef d(x) = x;", "`d` is defined, and is also a constant"),
    ("def f() { set x = 1; x }", "a definition contains either one expression"),
    ("def g(x) = x;\n" + session("g(1);"), "`g` is an expression (`def g(…) = …;`), not statements"),
    ("def g(x) { set y = x; }\n" + session("observe z = g(1);"), "`g` is statements"),
    ("def g(k) { set m = 1; run d (k); }\n" + session("g(m + 1);"),
     "the argument for `k` reads `m`, which `g` assigns"),
    ("def g(k) { run d (k); }\n" + session("g(queue(d));"), "an argument of `g` reads `queue(…)`"),
    (session("g(1);"), "unknown statement `g`"),
])
def test_p01_def_rules(text, message):
    assert message in error(text, ParseError).message


def test_p01_def_use_before_definition_is_unknown():
    err = error(session("observe x = g(1);") + "def g(x) = x;", LinkError)
    assert err.message == "unknown function `g`"


def test_p01_def_override():
    text = "def twice(v) { 2 * v }\n" + session("observe x = twice(3);")
    assert observed(text, defs={"twice": "3 * v"})["x"] == ir.Binary("*", ir.Num(3), ir.Num(3))
    err = error(text, LinkError, defs={"nope": "1"})
    assert err.message == "unknown `def` override `nope`" and err.help.endswith("twice")
    err = error("def s(v) { set q = v; }\n" + session("s(1);"), LinkError, defs={"s": "1"})
    assert "statements" in err.message


def test_p01_expansion_bound():
    text = "def a(x) { x + x }\n" + "".join(
        f"def a{i}(x) {{ {'a' if i == 0 else f'a{i - 1}'}({'a' if i == 0 else f'a{i - 1}'}(x)) }}\n"
        for i in range(12)) + session("observe x = a11(1);")
    assert "more than 100000 tokens" in error(text, ParseError).message


# ---------------------------------------------------------------- libraries
def test_p01_libraries(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.sq").write_text('use "b.sq";\ndef twice(x) { 2 * x }\n')
    (tmp_path / "lib" / "b.sq").write_text('use "a.sq";\ndef one() { 1 }\n')
    prog = tmp_path / "p.sq"
    prog.write_text('use "lib/a.sq";\nuse "lib/a.sq";\n' + session("observe x = twice(one());"))
    p = load(str(prog), horizon=1)
    assert p.session[1].value == ir.Binary("*", ir.Num(2), ir.Num(1))


def test_p01_library_errors(tmp_path):
    (tmp_path / "bad.sq").write_text("def f() { 1 }\nlet k = 1;\n")
    prog = tmp_path / "p.sq"
    prog.write_text('use "bad.sq";\n')
    err = error_file(str(prog))
    assert err.message == "a library holds definitions: found `let` where `def` or `use` goes"
    assert err.pos.file.endswith("bad.sq") and err.pos.line == 2
    prog.write_text('use "missing.sq";\n')
    assert error_file(str(prog)).message.startswith("cannot read `missing.sq`")
    err = error('use "lib.sq";', ParseError)
    assert "this program was given as text" in err.message


def error_file(path: str, **kw):
    with pytest.raises((ParseError, LinkError)) as info:
        load(path, horizon=1, **kw)
    return info.value


def test_p01_notes_name_the_definition_expansions():
    text = "def f(x) { x + t1 }\ndef g(y) { set z = f(y); }\n" + session("g(1);")
    err = error(text, LinkError)
    assert (err.pos.line, err.pos.col) == (1, 16)
    assert err.notes == ["in `f`, used at 2:20", "in `g`, used at 5:17"]
    err = error("def f(x) { x + 1 }\n" + session("observe z = f(t2);"), LinkError)
    assert err.notes == [] and err.pos.line == 4


@pytest.mark.parametrize("text, message", [
    ("run { horizonn 1; }", "unknown run option `horizonn`"),
    (session("branch (1) run d (1);"), "expected `{`, found `run`"),
    (session("set x == 1;"), "expected `=`, found `==`"),
    (session("choose j in 3 (j);"), "expected `by`, found `(`"),
    (session("run d 1;"), "expected `(`, found `1`"),
    ("stage : fifo;", "expected a name, found `:`"),
    (session("observe x = sum j in -1 (j);"),
     "`sum j in` takes a number, a constant's name or `( expr )`, found `-`"),
    (session("else { }"), "unknown statement `else`"),
    (session("1;"), "expected a statement, found `1`"),
    ("stage d : delay", "expected `;`, found end of input"),
    ("session { turn; } }", "unexpected `}` at top level"),
])
def test_p01_syntax_error_messages(text, message):
    assert error(text, ParseError).message == message
