"""Hypothesis strategies for the fuzz tests (tests/test_fuzz.py).

`programs()` draws well-formed serQ programs from a small grammar over
stages (fifo, fifo(c), ps, delay, arrays), pools (cap, block, preempt),
a step engine, workloads (poisson, closed, batch), sessions (run, set,
observe, if, branch with, while, hold/grow, end) and expressions (numbers,
`now`, attributes, draws, arithmetic, comparisons, `?:`, min/max). The
numbers are kept small enough that a run to the horizon is short.

`mutants(texts)` draws a text from `texts` and damages it: a token deleted,
duplicated or swapped, the text truncated, a number made extreme, an
expression nested deeply, a name made long, random Unicode inserted.
"""
from __future__ import annotations

import re

from hypothesis import strategies as st

NUMS = st.sampled_from(["0", "0.5", "1", "2", "3", "10", "0.25", "1e-3", "7"])
SMALL = st.sampled_from(["1", "2", "3", "4"])


@st.composite
def expressions(draw, attrs: tuple[str, ...], depth: int = 3) -> str:
    """A numeric expression reading `attrs` (attributes set before)."""
    leaves = [NUMS, st.just("now")]
    if attrs:
        leaves.append(st.sampled_from(attrs))
    leaf = st.one_of(*leaves)
    if depth <= 0:
        return draw(leaf)
    kind = draw(st.integers(0, 9))
    sub = expressions(attrs, depth - 1)
    if kind <= 2:
        return draw(leaf)
    if kind == 3:
        return f"~exp({draw(st.sampled_from(['0.5', '1', '2']))})"
    if kind == 4:
        return f"~uniform(0, {draw(SMALL)})"
    if kind == 5:
        op = draw(st.sampled_from(["+", "-", "*", "/"]))
        return f"({draw(sub)} {op} {draw(sub)})"
    if kind == 6:
        op = draw(st.sampled_from(["<", "<=", ">", "==", "!="]))
        return f"({draw(sub)} {op} {draw(sub)} ? {draw(sub)} : {draw(sub)})"
    if kind == 7:
        return f"{draw(st.sampled_from(['min', 'max']))}({draw(sub)}, {draw(sub)})"
    if kind == 8:
        return f"abs({draw(sub)})"
    return f"-{draw(leaf)}"


class _Decls:
    def __init__(self, stages: list[str], pools: list[str], engine: bool):
        self.stages = stages
        self.pools = pools
        self.engine = engine


@st.composite
def statements(draw, decls: _Decls, attrs: tuple[str, ...], depth: int,
               held: tuple[str, ...] = ()) -> str:
    """A statement list; `attrs` grows as `set`s are drawn."""
    out: list[str] = []
    attrs = tuple(attrs)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 10 if depth > 0 else 4))
        e = expressions(attrs, 2)
        if kind <= 1:
            stage = draw(st.sampled_from(decls.stages))
            out.append(f"run {stage} ({draw(e)});")
        elif kind == 2:
            name = draw(st.sampled_from(["a", "b", "c"]))
            out.append(f"set {name} = {draw(e)};")
            if name not in attrs:
                attrs = attrs + (name,)
        elif kind == 3:
            out.append(f"observe {draw(st.sampled_from(['o1', 'o2']))} = {draw(e)};")
        elif kind == 4 and decls.engine:
            mode = draw(st.sampled_from(["prefill", "decode"]))
            out.append(f"run eng {mode} ({draw(st.sampled_from(['1', '8', '100']))});")
        elif kind == 5:
            cmp = draw(st.sampled_from(["<", ">=", "=="]))
            out.append(f"if ({draw(e)} {cmp} {draw(e)}) {{ {draw(statements(decls, attrs, depth - 1, held))} }}"
                       f" else {{ {draw(statements(decls, attrs, depth - 1, held))} }}")
        elif kind == 6:
            p = draw(st.sampled_from(["0.2", "0.5", "0.9"]))
            out.append(f"branch with ({p}) {{ {draw(statements(decls, attrs, depth - 1, held))}"
                       " }")
        elif kind == 7:
            stage = draw(st.sampled_from(decls.stages))
            out.append(f"set k = 0; while (k < 3) {{ set k = k + 1; run {stage} (0.5); "
                       f"{draw(statements(decls, attrs + ('k',), depth - 1, held))} }}")
            attrs = attrs + ("k",) if "k" not in attrs else attrs
        elif kind == 8 and decls.pools:
            pool = draw(st.sampled_from(decls.pools))
            body = draw(statements(decls, attrs, depth - 1, held + (pool,)))
            grow = f"grow {pool} ({draw(SMALL)}); " if draw(st.booleans()) else ""
            out.append(f"hold {pool} ({draw(st.sampled_from(['1', '2']))}) {{ {grow}{body} }}")
        elif kind == 9:
            out.append("end;")
        else:
            stage = draw(st.sampled_from(decls.stages))
            out.append(f"run {stage} ({draw(NUMS)});")
    return " ".join(out)


@st.composite
def programs(draw) -> str:
    """A whole well-formed program."""
    lines: list[str] = []
    stages: list[str] = []
    for i in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["fifo", "fifo(2)", "ps(1)", "ps(2)", "delay", "array"]))
        if kind == "array":
            lines.append(f"stage s{i}[2] : fifo;")
            stages.append(f"s{i}[{draw(st.sampled_from(['0', '1']))}]")
        else:
            lines.append(f"stage s{i} : {kind};")
            stages.append(f"s{i}")
    pools: list[str] = []
    for i in range(draw(st.integers(0, 2))):
        opts = f"cap {draw(st.sampled_from(['4', '10']))};"
        if draw(st.booleans()):
            opts += " preempt lifo;"
        lines.append(f"pool p{i} {{ {opts} }}")
        pools.append(f"p{i}")
    engine = draw(st.booleans())
    if engine:
        lines.append("stage eng : step { budget 64; chunk 32; cost max(0.01, tokens * 1e-4); }")
    arrive = draw(st.sampled_from(["poisson(0.5)", "poisson(2)", "closed(3)", "batch(5)"]))
    lines.append(f"workload {{ arrive {arrive}; }}")
    decls = _Decls(stages, pools, engine)
    lines.append(f"session {{ turn; {draw(statements(decls, (), 3))} }}")
    horizon = draw(st.sampled_from(["5", "20", "50"]))
    warm = draw(st.sampled_from(["", " warmup 1;"]))
    lines.append(f"run {{ horizon {horizon};{warm} }}")
    return "\n".join(lines) + "\n"


TOKEN = re.compile(r"\d[\w.]*|\w+|\"[^\"]*\"|//[^\n]*|\S")
MAX_MUTANT = 200_000  # characters of a mutant
UNICODE = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)


@st.composite
def mutants(draw, texts: list[str]) -> str:
    """One of `texts`, damaged once or a few times."""
    text = draw(st.sampled_from(texts))
    for _ in range(draw(st.integers(1, 3))):
        damaged = draw(_mutation(text))
        if len(damaged) <= MAX_MUTANT:  # a long name made long again would grow without end
            text = damaged
    return text


@st.composite
def _mutation(draw, text: str) -> str:
    spans = [m.span() for m in TOKEN.finditer(text)]
    if not spans:
        return text + draw(UNICODE)
    i = draw(st.integers(0, len(spans) - 1))
    a, b = spans[i]
    kind = draw(st.sampled_from(["delete", "duplicate", "swap", "truncate", "number",
                                 "nest", "long", "unicode"]))
    if kind == "delete":
        return text[:a] + text[b:]
    if kind == "duplicate":
        return text[:b] + " " + text[a:b] + text[b:]
    if kind == "swap":
        j = draw(st.integers(0, len(spans) - 1))
        c, d = spans[j]
        if (a, b) > (c, d):
            (a, b), (c, d) = (c, d), (a, b)
        if b > c:
            return text
        return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    if kind == "truncate":
        return text[:a]
    if kind == "number":
        nums = [s for s in spans if text[s[0]].isdigit()]
        if not nums:
            return text
        a, b = draw(st.sampled_from(nums))
        big = draw(st.sampled_from(["1e308", "0", "1e-300", "4294967297", "9" * 40,
                                    "0.000000001", "100000000"]))
        return text[:a] + big + text[b:]
    if kind == "nest":
        n = draw(st.sampled_from([50, 300, 600, 1200]))
        return text[:a] + "(" * n + text[a:b] + ")" * n + text[b:]
    if kind == "long":
        names = [s for s in spans if text[s[0]].isalpha()]
        if not names:
            return text
        a, b = draw(st.sampled_from(names))
        reps = draw(st.sampled_from([50, 2000]))
        if (b - a) * reps > 100_000:  # a name made long twice or three times: 800 MB of text
            return text
        return text[:a] + text[a:b] * reps + text[b:]
    return text[:a] + draw(UNICODE) + text[a:]
