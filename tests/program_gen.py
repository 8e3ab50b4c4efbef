"""A grammar-driven generator of valid serQ programs for differential testing.

`generate(seed, draws=False)` writes one small program over the whole
language (issue 22): fifo/ps/delay stages, arrays and `share`; sessions with
turns, think times, `init`/`turn` blocks, `hidden`; `set`, `observe`,
`if`/`branch`, `loop`/`while`, `choose`, `end`; pools with every option
(cap, block, evict lru/by, preempt none/lifo/by … requeue, queue fifo/by,
reserve held, admit via, spill) and holds with every clause (reserve,
several pools, reuse, at admission, cache, lease), nested holds, `grow`,
`load`, `release`, `drop`; step engines (budget, chunk, cost over the
context variables, every serve form, granule, state/iteration, memory,
growing runs) and the serving forms; queues (gateway routes, prefill and
decode entries, links, nics, the pull and push relations, transfer);
`fork`/`join` legs; gauges; claims; trace replay; `let`, `def`, program
inputs. The same program is rendered in three dialects (language reference
Part 01 §10): `flat()` for pyserq 0.1.3 (plain amounts, `branch`, `run { }`),
`main()` for 0.1.4 (`fn main`, `cost(…)` on every amount, `branch`) and
`main(if_=True)` for 0.1.5 (`if`). Deterministic programs (`draws=False`)
use batch or closed arrivals and no draw; drawing programs (for 0.1.5's
bit-exact streams) add Poisson/renewal arrivals and draws, and leave out the
constructs 0.1.5 does not read (`step` stages, `branch`).

Amounts are written `cost(R, e)` while the program is built; `flat()`
strips them. Sizes are small (a few sessions, horizons of tens of seconds)
so that a run takes milliseconds. `kinds(text)` names the constructs a
program text contains (the coverage table of tests/differential_fuzz.py).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

TRACE_NAME = "gen_trace.csv"  # the trace the programs name (tests/data/, passed as `trace=`)


@dataclass
class Program:
    """One generated program, before it is rendered in a dialect."""

    seed: int
    draws: bool
    lets: list[str] = field(default_factory=list)
    defs: list[str] = field(default_factory=list)
    decls: list[str] = field(default_factory=list)
    arrive: str = "batch(2)"
    trace: bool = False
    init: list[str] = field(default_factory=list)
    turn_block: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    thinks: list[str] = field(default_factory=list)  # think time before each later turn
    gateway: str | None = None  # `request gw;` instead of the server
    server: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)  # gauges and claims
    horizon: float = 30.0
    warmup: float = 0.0
    engines: bool = False  # has `step` stages (0.1.5 refuses them)
    uses_args: bool = False
    # `while` loops by placeholder `@iK@`: (the loop, its unrolled body for 0.1.3)
    loops: dict[str, tuple[str, str]] = field(default_factory=dict)
    loop_turns: bool = False  # the turns as `loop { … }` / `while` over the attribute k

    # -- rendering ---------------------------------------------------------------
    def _workload(self, request: str, flat: bool = False) -> str:
        parts = [f"arrive {self.arrive};"]
        if self.trace:
            parts.append(f'trace "{TRACE_NAME}" ordered;')
        if self.init:
            parts.append("init { " + " ".join(self.init) + " }")
        if self.turn_block:
            parts.append("turn { " + " ".join(self.turn_block) + " }")
        if self.hidden:
            parts.append("hidden " + ", ".join(self.hidden) + ";")
        sess = ["turn;", request]
        if self.loop_turns:  # k counts the turns (the `turn` block)
            n, think = len(self.thinks) + 1, self.thinks[0]
            again = f"run thk (cost(thk, {think})); turn; {request}".strip()
            if flat:
                sess.append(f"loop {{ if (k < {n}) {{ {again} }} else {{ end; }} }}")
            else:
                sess.append(f"while (k < {n}) {{ {again} }}")
        else:
            for think in self.thinks:
                sess += [f"run thk (cost(thk, {think}));", "turn;", request]
        sess.append("end;")
        parts.append("session { " + " ".join(s for s in sess if s) + " }")
        return "workload { " + " ".join(parts) + " }"

    def _items(self, request: str, flat: bool = False) -> list[str]:
        items = list(self.decls)
        items.append(self._workload(request, flat))
        if self.gateway is None:
            items.append("server {\n  " + "\n  ".join(self.server) + "\n}")
        items += self.tail
        return items

    def _loops(self, text: str, unroll: bool) -> str:
        """Put the `while` loops in place (unrolled for 0.1.3)."""
        while "@i" in text:
            text = re.sub(r"@(i\d+)@", lambda m: self.loops[m.group(1)][unroll], text)
        return text

    def flat(self) -> str:
        """pyserq 0.1.3's dialect: flat, plain amounts, `request;`, `run { }`."""
        req = f"request {self.gateway};" if self.gateway else "request;"
        defs = [re.sub(r"\{ (.*) \}$", r"= \1;", d) for d in self.defs]  # 0.1.3: `def f(x) = e;`
        lets = [re.sub(r'args\.number\("\w+", (.*)\)', r"\1", ln) for ln in self.lets]
        lines = lets + defs + self._items(req, flat=True)
        warm = f" warmup {self.warmup:g};" if self.warmup else ""
        lines.append(f"run {{ horizon {self.horizon:g};{warm} }}")
        return to_branch(strip_cost(self._loops("\n".join(lines), True))) + "\n"

    def main(self, if_: bool = False) -> str:
        """0.1.4's dialect (`fn main`, `cost(…)`, `branch`), or with `if_`
        0.1.5's (`if`); the horizon is passed outside."""
        req = f"request {self.gateway};" if self.gateway else ""
        inputs = [ln for ln in self.lets if "args.number" in ln]  # (inside `fn main`)
        pre = [ln for ln in self.lets if ln not in inputs] + self.defs
        items = (['use "std/args";'] + inputs if inputs else []) + self._items(req)
        body = "\n".join("  " + ln for ln in "\n".join(items).split("\n"))
        text = self._loops("\n".join(pre + ["fn main() {", body, "}"]), False)
        return (text if if_ else to_branch(text)) + "\n"


def _close_paren(text: str, i: int) -> int:
    """Index of the `)` matching the `(` at `i`."""
    depth = 0
    for k in range(i, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    raise ValueError("unbalanced parentheses")


def strip_cost(text: str) -> str:
    """`cost(R, …, e)` -> `(e)` (the amount without its resource mark)."""
    out = []
    i = 0
    for m in re.finditer(r"\bcost\(", text):
        if m.start() < i:
            continue
        open_ = m.end() - 1
        close = _close_paren(text, open_)
        inner = text[open_ + 1:close]
        depth = 0
        cut = None
        for k, ch in enumerate(inner):  # the expression follows the last top-level comma
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif ch == "," and depth == 0:
                cut = k
        out.append(text[i:m.start()])
        out.append("(" + inner[cut + 1:].strip() + ")")
        i = close + 1
    out.append(text[i:])
    return "".join(out)


def to_branch(text: str) -> str:
    """`if (` -> `branch (` (0.1.3 and 0.1.4 read `branch`)."""
    return re.sub(r"\bif \(", "branch (", text)


# --------------------------------------------------------------------------- generation

class _Gen:
    """The state of one program being written."""

    def __init__(self, seed: int, draws: bool):
        self.rng = random.Random(seed)
        self.p = Program(seed, draws)
        self.draws = draws
        self.attrs: list[str] = []          # session attributes set so far
        self.simple: list[str] = []         # fifo/ps/delay stages (refs)
        self.ps: list[str] = []             # ps stages (multi-stage runs)
        self.arrays: list[tuple[str, int]] = []
        self.pools: list[str] = []
        self.blocksize: dict[str, float] = {}
        self.cap: dict[str, float] = {}
        self.via: dict[str, str] = {}       # pool -> the engine that admits it
        self.engines: list[str] = []
        self.memory: dict[str, str] = {}    # engine -> its memory pool
        self.obs = 0
        self.loops = 0
        self.forks = 0
        self.observed: list[str] = []
        self.pure: list[str] = []           # attributes that read no deployment state
        self.share = False
        self.consts: list[str] = []         # constants the amounts may read

    # -- small pieces ------------------------------------------------------------
    def pick(self, seq):
        return self.rng.choice(seq)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def num(self, lo: float = 0.5, hi: float = 3.0) -> str:
        return self.pick([f"{x:g}" for x in (lo, (lo + hi) / 2, hi, 1, 2)])

    def work(self) -> str:
        """A positive amount of work (seconds), maybe reading an attribute or drawing."""
        r = self.rng.random()
        if self.draws and r < 0.35:
            return self.pick(["~exp(1)", "~uniform(0.5, 1.5)", "~erlang(2, 1)", "~h2(1, 4)",
                              "~det(0.75)"])
        if self.attrs and r < 0.6:
            return f"{self.pick(self.attrs)} / 4 + {self.num(0.25, 1)}"
        if self.consts and r < 0.7:
            return f"{self.pick(self.consts)} / 2"
        return self.num()

    def cond(self) -> str:
        r = self.rng.random()
        if self.draws and r < 0.25:
            return f"~bernoulli({self.pick(['0.3', '0.5', '0.8'])})"
        if r < 0.5:
            return f"serial {self.pick(['==', '<', '>='])} {self.pick(['0', '1', '2'])}"
        if self.attrs and r < 0.75:
            return f"{self.pick(self.attrs)} {self.pick(['<', '>'])} {self.num(1, 4)}"
        if self.pools and r < 0.9:
            return f"used({self.pick(self.pools)}) > {self.num(1, 4)}"
        return f"now {self.pick(['<', '>='])} {self.num(1, 6)}"

    def observable(self) -> str:
        opts = ["now", "serial", "turn_no"] + self.attrs
        if self.simple:
            s = self.pick(self.simple)
            opts += [f"queue({s})", f"busy({s})", f"work({s})", f"est_lambda({s})"]
        if self.pools:
            q = self.pick(self.pools)
            opts += [f"used({q})", f"free({q})", f"holders({q})", f"queued({q})",
                     f"cachedin({q})"]
        if self.engines:
            opts += [f"budget_left({self.pick(self.engines)})"]
        e = self.pick(opts)
        if self.chance(0.3):
            e = f"{self.pick(['max', 'min'])}({e}, {self.num(0, 2)})"
        elif self.chance(0.2):
            e = f"{e} {self.pick(['+', '-', '*'])} {self.num(1, 3)}"
        elif self.chance(0.1):
            e = f"({e} > 1 ? {self.num()} : {self.num()})"
        return e

    def new_obs(self) -> str:
        self.obs += 1
        name = f"o{self.obs}"
        self.observed.append(name)
        return name

    # -- declarations ------------------------------------------------------------
    def stages(self) -> None:
        p = self.p
        for i in range(self.rng.randint(1, 3)):
            kind = self.pick(["fifo", "fifo(2)", "ps(1)", "ps(2)", "delay", "ps(min(present, 2))"])
            p.decls.append(f"stage s{i} : {kind};")
            self.simple.append(f"s{i}")
            if kind in ("ps(1)", "ps(2)"):  # a run over several stages needs constant capacities
                self.ps.append(f"s{i}")
        if self.chance(0.25):
            n = self.pick(["2", "K"])
            if n == "K":
                p.lets.append("let K = 2;")
            p.decls.append(f"stage a[{n}] : {self.pick(['fifo', 'ps(1)', 'delay'])};")
            self.arrays.append(("a", 2))
        if not self.draws and (len(self.ps) >= 2 or self.chance(0.2)):
            if len(self.ps) < 2:
                for k in range(2 - len(self.ps)):
                    p.decls.append(f"stage m{k} : ps({k + 1});")
                    self.ps.append(f"m{k}")
            self.share = True
        else:
            self.ps = []  # (0.1.5 spells `share` differently: no runs over several stages)

    def pool_decl(self, name: str, engine: str | None = None, extra: list[str] | None = None) -> None:
        cap = self.pick([4, 6, 10, 20])
        opts = [f"cap {cap};"]
        block = None
        if self.chance(0.4):
            block = self.pick([2, 4])
            opts.append(f"block {block};")
        if self.chance(0.3):
            opts.append(self.pick(["evict lru;", "evict by (waiting, -age);", "evict by (size);"]))
        if self.chance(0.4):
            opts.append(self.pick([
                "preempt lifo;", "preempt none;", "preempt by (admission);",
                "preempt by (-admission) requeue head;", "preempt by (admission) requeue tail;",
                "preempt by (position, decoding) requeue tail;"]))
        if self.chance(0.25):
            opts.append(self.pick(["queue fifo;", "queue by (waited > 2 ? 0 : 1);",
                                   "queue by (serial);"]))
        if self.chance(0.15):
            opts.append("reserve held;")
        if engine is not None:
            opts.append(f"admit via {engine};")
        opts += extra or []
        self.p.decls.append(f"pool {name} {{ {' '.join(opts)} }}")
        self.pools.append(name)
        self.cap[name] = cap
        self.blocksize[name] = block or 1
        if engine is not None:
            self.via[name] = engine

    def pools_decl(self) -> None:
        n = self.rng.randint(0, 2)
        for i in range(n):
            extra = []
            if i == 0 and n == 2 and self.ps and self.chance(0.3):
                extra = [f"spill p1 via {self.pick(self.ps)} (size / 10) when (size > 0);"]
            self.pool_decl(f"p{i}", extra=extra)

    def engine_decl(self) -> None:
        p = self.p
        p.engines = True
        name = "E"
        self.engines.append(name)
        clauses = [f"budget {self.pick(['8', '16', 'residents > 2 ? 8 : 16'])};"]
        if self.chance(0.4):
            clauses.append(f"chunk {self.pick(['4', '0', 'decoders > 0 ? 4 : 8'])};")
        terms = ["1"]
        for var, coef in (("tokens", "0.01"), ("prefilled", "0.02"), ("attention", "0.001"),
                          ("kv_decode", "0.01"), ("decoders", "0.05"), ("residents", "0.02"),
                          ("kv_prefill", "0.005")):
            if self.chance(0.3):
                terms.append(f"{coef} * {var}")
        clauses.append(f"cost {' + '.join(terms)};")
        if self.chance(0.6):
            mem = "kv"
            self.pool_decl(mem, engine=name if self.chance(0.4) else None)
            clauses.append(f"memory {mem};")
            self.memory[name] = mem
        r = self.rng.random()
        if r < 0.5:
            clauses.append("serve " + self.pick([
                "admission", "decode first", "by (remaining)", "by (decoding, -admission)",
                "exclusive prefill", "only (decoders > 0 ? decoding : 1 - decoding)",
                "only (remaining < 8) by (remaining)"]) + ";")
        elif r < 0.6:
            clauses.append("granule 4;")
        elif r < 0.7:
            clauses += ["state just = 0;",
                        "iteration { serve; branch (just == 0 || residents == 0) { admit; } "
                        "set just = admitted > 0; }"]
        if self.chance(0.5):
            self.pool_decl("reqs", engine=name)
        # first: a stage declared before the engine that admits a session
        # sees the session's run only at the next event in pyserq (a
        # departure, docs/departures.md), so the programs keep it out
        p.decls.insert(0, f"stage {name} : step {{ {' '.join(clauses)} }}")

    # -- statements --------------------------------------------------------------
    def block(self, depth: int, held: tuple[str, ...], leg: bool) -> list[str]:
        out: list[str] = []
        for _ in range(self.rng.randint(1, 3)):
            out += self.statement(depth, held, leg)
        if not any(s.startswith(("run ", "hold ", "prefill", "decode", "tool", "transfer"))
                   or ".decode" in s or ".prefill" in s for s in out):
            out.append(self.run_simple())
        return out

    def run_simple(self) -> str:
        if self.arrays and self.chance(0.2):
            j = self.pick(["0", "1"])
            return f"run a[{j}] (cost(a[{j}], {self.work()}));"
        s = self.pick(self.simple)
        return f"run {s} (cost({s}, {self.work()}));"

    def statement(self, depth: int, held: tuple[str, ...], leg: bool) -> list[str]:
        r = self.rng.random()
        if r < 0.22:
            return [self.run_simple()]
        if r < 0.30:
            name = self.pick(["x", "y", "w"])
            state = self.chance(0.5)
            line = f"set {name} = {self.observable() if state else self.work()};"
            if name not in self.attrs:
                self.attrs.append(name)
            if not state and name not in self.pure and not self.draws:
                self.pure.append(name)
            return [line]
        if r < 0.40:
            return [f"observe {self.new_obs()} = {self.observable()};"]
        if r < 0.47 and depth > 0:
            body = self.block(depth - 1, held, leg)
            alt = self.block(depth - 1, held, leg) if self.chance(0.5) else None
            s = f"if ({self.cond()}) {{ {' '.join(body)} }}"
            if alt:
                s += f" else {{ {' '.join(alt)} }}"
            return [s]
        if r < 0.51 and depth > 0:
            self.loops += 1
            i = f"i{self.loops}"
            body = self.block(depth - 1, held, leg)
            s = self.run_simple()
            n = self.rng.randint(2, 3)
            inner = f"set {i} = {i} + 1; {s} {' '.join(body)}"
            self.p.loops[i] = (f"while ({i} < {n}) {{ {inner} }}", " ".join([inner] * n))
            return [f"set {i} = 0;", f"@{i}@"]
        if r < 0.55 and self.arrays:
            k = f"j{self.loops}"
            self.loops += 1
            return [f"choose {k} in 2 by (queue(a[{k}]), -{k});",
                    f"run a[{k}] (cost(a[{k}], {self.work()}));", f"observe {self.new_obs()} = {k};"]
        if r < 0.58 and len(self.ps) >= 2:
            a, b = self.rng.sample(self.ps, 2)
            return [f"run {a}, {b} (cost({a}, {b}, {self.work()}));"]
        if r < 0.72 and self.pools and depth > 0:
            return self.hold(depth, held, leg)
        if r < 0.82 and self.engines:
            return self.engine_runs(held)
        if r < 0.87 and depth > 0 and not leg and not held:
            self.forks += 1
            body = self.block(depth - 1, held, True)
            out = [f"fork {{ {' '.join(body)} }}"]
            if self.chance(0.5):
                out += self.block(0, held, leg)
            return out + ["join;"]
        if r < 0.90 and not leg and not held and self.chance(0.3):
            return [f"if ({self.cond()}) {{ observe {self.new_obs()} = now; }}"]
        return [self.run_simple()]

    def hold(self, depth: int, held: tuple[str, ...], leg: bool) -> list[str]:
        free = [q for q in self.pools if q not in held or self.chance(0.3)]
        if not free:
            return [self.run_simple()]
        pools = [self.pick(free)]
        if len(self.pools) > 1 and self.chance(0.25):
            other = [q for q in self.pools if q not in pools]
            pools.append(self.pick(other))
        heads = []
        for q in pools:
            units = self.pick(["1", "2", "3", f"{self.cap[q] // 2}"])
            if self.pure and self.chance(0.2):  # (a hold's header reads no deployment state)
                units = f"min({self.pick(self.pure)}, 2) + 1"
            h = f"{q} (cost({q}, {units}))"
            if self.chance(0.15):
                h += f" reserve (cost({q}, {self.pick(['1', '2'])}))"
            heads.append(h)
        head = "hold " + ", ".join(heads)
        cached = self.chance(0.3)
        if cached and self.chance(0.5):
            head += f" reuse (cost({pools[0]}, 2))"
        if self.chance(0.1):
            head += " at admission (known = computed + 1)"
        body = self.block(depth - 1, held + tuple(pools), leg)
        q0 = pools[0]
        if self.chance(0.3):
            body.insert(self.rng.randint(0, len(body)), f"grow {q0} (cost({q0}, {self.pick(['1', '2'])}));")
        if self.chance(0.15):
            body.append(f"load {q0} (cost({q0}, 1));")
        if held and self.chance(0.15):
            body.append(f"release {held[-1]};")
        elif self.chance(0.08):
            body.append(f"drop {q0};")
        s = f"{head} {{ {' '.join(body)} }}"
        if cached:
            s += f" cache (cost({q0}, {self.pick(['2', '3'])}))"
        if self.chance(0.15):
            s += f" lease {q0} ({self.pick(['1', '2', 'inf'])})"
        return [s + ";" if self.chance(0.1) else s]

    def engine_runs(self, held: tuple[str, ...]) -> list[str]:
        e = self.pick(self.engines)
        mem = self.memory.get(e)
        grow = f" growing {mem}" if mem in held else ""
        n_p = self.pick(["2", "4", "6", "9"])
        n_d = self.pick(["1", "2", "3"])
        if self.chance(0.2) and not grow:
            return [f"prefill ({n_p});", f"decode ({n_d});"]  # (serving forms: plain amounts)
        if mem and mem not in held and self.chance(0.5):
            units = self.pick(["2", "4"])
            return [f"hold {mem} (cost({mem}, {units})) {{ run {e} prefill (cost({e}, {n_p})) growing {mem}; "
                    f"run {e} decode (cost({e}, {n_d})) growing {mem}; }}"]
        out = []
        if self.chance(0.8):
            out.append(f"run {e} prefill (cost({e}, {n_p})){grow};")
        if self.chance(0.8) or not out:
            out.append(f"run {e} decode (cost({e}, {n_d})){grow};")
        if self.chance(0.2):
            out.append(f"run {e} prefill (cost({e}, {n_p})){grow};")
        return out

    # -- queues ------------------------------------------------------------------
    def queue_template(self) -> None:
        """One of the queue forms: a gateway, P/D with pull or push, a link."""
        p = self.p
        kind = self.pick(["gateway", "pd_pull", "pd_push", "link", "tool"])
        lat = self.pick(["0.001", "0.25"])
        if kind == "gateway":
            s = self.pick(self.simple)
            p.decls.append(f"queue gw : gateway {{ route {{ set t0 = now; run {s} (cost({s}, {self.work()})); "
                           f"observe {self.new_obs()} = now - t0; }} }}")
            p.gateway = "gw"
        elif kind in ("pd_pull", "pd_push"):
            p.lets += ["let BwP = 100;", "let BwD = 100;"]
            rel = "D pull P" if kind == "pd_pull" else "P push D"
            p.decls += [
                "queue P : prefill { pool kv { cap 1000; } serve ps(1); nic ps(BwP); "
                "prefill (n) { hold kv (cost(kv, n)) { run (cost(P, n / 100)); } lease kv (inf); } }",
                "queue D : decode { pool kv { cap 1000; } serve ps(1); nic ps(BwD); "
                "decode (n) { hold kv (cost(kv, n)) { run (cost(D, n / 100)); } } "
                "decode (n) from src { hold kv (cost(kv, n)) { transfer (cost(D.nic, n)) from src to kv (cost(kv, n)); "
                "run (cost(D, n / 100)); } } }",
                f"{rel} latency {lat} share {self.pick(['maxmin', 'bottleneck'])};"]
            n = self.pick(["50", "100", "200"])
            p.server += ["set t0 = now;", f"P.prefill ({n});", f"D.decode ({n}) from P;",
                         f"observe {self.new_obs()} = now - t0;"]
        elif kind == "link":
            p.lets.append("let Bw = 1000;")
            p.decls += ["queue net[2] : link { serve ps(1); transfer (n) { run (cost(net, n / Bw)); } }",
                        "pool kvA { cap 100; }", "pool kvB { cap 100; }"]
            self.pools += ["kvA", "kvB"]
            self.cap.update(kvA=100, kvB=100)
            s = self.pick(self.simple)
            p.server += [f"hold kvA (cost(kvA, 10)) {{ run {s} (cost({s}, 1)); }} lease kvA (inf);",
                         f"hold kvB (cost(kvB, 10)) {{ net[{self.pick(['0', '1'])}].transfer (cost(net, 10)) "
                         f"from kvA to kvB (cost(kvB, 10)); run {s} (cost({s}, 1)); }}"]
        else:
            p.decls += ["stage X : ps(1);", "pool PP { cap 100; }", "pool QQ { cap 100; }"]
            p.server += [f"tool on X ({self.work()});",
                         "hold PP (cost(PP, 4)) { hold QQ (cost(QQ, 4)) { "
                         "transfer on X (cost(X, 8)) from PP to QQ (cost(QQ, 4)); } }"]

    # -- the whole program -------------------------------------------------------
    def program(self) -> Program:
        p = self.p
        rng = self.rng
        self.stages()
        self.pools_decl()
        if not self.draws and self.chance(0.35):
            self.engine_decl()
        # workload
        if self.draws:
            p.arrive = self.pick(["poisson(0.5)", "poisson(1)", "renewal(~exp(1))",
                                  "renewal(~uniform(0.5, 1.5))", "batch(3)", "closed(2)"])
        else:
            p.arrive = self.pick(["batch(1)", "batch(2)", "batch(3)", "batch(4)", "closed(2)",
                                  "renewal(0.7)", "renewal(1.5)"])
        if self.chance(0.15):
            p.trace = True
            self.attrs += ["new", "out"]
        if self.chance(0.4):
            p.init.append(f"set u = {self.pick(['1 + serial', 'serial == 0 ? 2 : 1', '2'])};")
            self.attrs.append("u")
            self.pure.append("u")
        if self.chance(0.3):
            p.init.append("set k = 0;")
            p.turn_block.append("set k = k + 1;")
            self.attrs.append("k")
            if self.chance(0.4):
                p.turn_block.append("set v = k * 2;")
                p.hidden.append("v")
        n_turns = self.pick([1, 1, 1, 2, 3])
        if n_turns > 1:
            p.decls.append("stage thk : delay;")  # (`think` is a trace attribute in 0.1.5)
            p.thinks = [self.pick(["0.5", "1", "2"]) for _ in range(n_turns - 1)]
            p.loop_turns = "k" in self.attrs and self.chance(0.5)
        if self.chance(0.15):
            p.lets.append("let L = 2 * 1.5;")
            self.consts.append("L")
        if self.chance(0.15):  # a program input (flat: the default as a constant)
            p.uses_args = True
            p.lets.append('let A = args.number("a", 1.5);')
            self.consts.append("A")
        if self.chance(0.1):
            p.defs.append("def twice(x) { 2 * x }")  # (flat: the older spelling `= e;`)
        # the server
        if self.chance(0.15):
            self.queue_template()
        if p.gateway is None:
            p.server = self.block(2, (), False) + self.block(1, (), False) + p.server
            if p.defs and self.chance(0.8):
                s = self.pick(self.simple)
                p.server.append(f"run {s} (cost({s}, twice(0.5)));")
            if self.chance(0.4):
                p.server.append(f"observe {self.new_obs()} = now;")
        if self.share and any(re.search(r"\brun \w+, \w+", ln) for ln in p.server):
            p.decls.append(f"share {self.pick(['maxmin', 'bottleneck'])};")
        # gauges and claims
        if self.chance(0.3):
            g = [f"queue({self.pick(self.simple)})"]
            if self.pools:
                g.append(f"used({self.pick(self.pools)})")
            if self.arrays:
                g.append("sum k2 in 2 (busy(a[k2]))")
            p.tail.append(f"gauge g1 = {self.pick(g)};")
        if self.chance(0.25):
            if self.engines and self.chance(0.6):
                e = self.engines[0]
                p.tail.append(self.pick([f"claim c1: every iteration of {e} (tokens <= 16);",
                                         f"claim c1: some iteration of {e} (decoders > 0);",
                                         f"claim c1 given (serial == 0): every iteration of {e} (tokens <= 8);"]))
            elif self.observed:
                o = self.pick(self.observed)
                p.tail.append(f"claim c1: at end (count({o}) >= 0 && largest({o}) < 1000);")
        p.horizon = self.pick([10, 20, 30])
        if self.chance(0.25):
            p.warmup = self.pick([1, 2.5, 5])
        return p


def generate(seed: int, draws: bool = False) -> Program:
    """The program of `seed` (deterministic: the same seed, the same program)."""
    return _Gen(seed, draws).program()


# --------------------------------------------------------------------------- coverage

#: Every declaration, statement and clause kind of the language reference
#: (docs/language/), with a pattern that finds it in a program text.
KINDS: dict[str, str] = {
    # declarations (Part 01 §2, Part 04 §1, Part 03 §2, Part 05 §2, Part 06 §7-8)
    "let": r"\blet \w+ =", "def": r"\bdef \w+\(", "use std/args": r'use "std/args"',
    "fn main": r"\bfn main\(\)", "run settings": r"\brun \{ horizon",
    "warmup": r"\bwarmup \d",
    "stage fifo": r": fifo;", "stage fifo(c)": r": fifo\(", "stage ps": r": ps\(",
    "stage delay": r": delay;", "stage step": r": step \{", "stage array": r"\bstage \w+\[",
    "share maxmin": r"^\s*share maxmin", "share bottleneck": r"^\s*share bottleneck",
    "pool": r"\bpool \w+ \{", "queue": r"\bqueue \w+(\[\d+\])? :",
    "pull relation": r"\w+ pull \w+", "push relation": r"\w+ push \w+",
    "gauge": r"\bgauge \w+ =", "claim": r"\bclaim \w+",
    # workload (Part 02 §2-6)
    "arrive batch": r"arrive batch\(", "arrive closed": r"arrive closed\(",
    "arrive poisson": r"arrive poisson\(", "arrive renewal": r"arrive renewal\(",
    "trace ordered": r'trace "[^"]+" ordered', "init block": r"\binit \{",
    "turn block": r"\bturn \{", "hidden": r"\bhidden \w+", "server": r"\bserver \{",
    # statements (Part 02 §7, Part 03 §4-6, Part 04 §4, Part 05 §1-2)
    "set": r"\bset \w+ =", "observe": r"\bobserve \w+ =", "turn;": r"\bturn;",
    "request;": r"\brequest;", "request Q;": r"\brequest \w+;", "end;": r"\bend;",
    "if/branch": r"\b(if|branch) \(", "else": r"\belse \{", "while": r"\bwhile \(",
    "loop": r"\bloop \{",
    "choose": r"\bchoose \w+ in", "run": r"\brun \w+(\[\w+\])? \(",
    "run on several stages": r"\brun \w+, \w+", "run prefill": r"\brun \w+ prefill",
    "run decode": r"\brun \w+ decode", "growing": r"\bgrowing \w+", "hold": r"\bhold \w+",
    "nested hold": r"\bhold [^{]*\{[^}]*\bhold ", "grow": r"\bgrow \w+ \(",
    "load": r"\bload \w+ \(", "release": r"\brelease \w+;", "drop": r"\bdrop \w+;",
    "fork": r"\bfork \{", "join": r"\bjoin;", "prefill (form)": r"(^|[;{]\s*)prefill \(",
    "decode (form)": r"(^|[;{]\s*)decode \(", "tool": r"\btool on ", "transfer": r"\btransfer ",
    "entry call": r"\b\w+(\[\w+\])?\.(prefill|decode|transfer) \(",
    # hold clauses (Part 03 §4-6)
    "hold reserve": r"\) reserve \(", "hold several pools": r"\bhold \w+ \([^{]*\), \w+ \(",
    "reuse": r"\breuse \(", "at admission": r"\bat admission \(", "cache": r"\} cache \(",
    "lease": r"\blease \w+ \(",
    # pool options (Part 03 §2, §7-9)
    "cap": r"\bcap \d", "block": r"\bblock \d", "evict lru": r"evict lru",
    "evict by": r"evict by \(", "preempt none": r"preempt none", "preempt lifo": r"preempt lifo",
    "preempt by": r"preempt by \(", "requeue head": r"requeue head",
    "requeue tail": r"requeue tail", "queue fifo": r"\bqueue fifo;", "queue by": r"\bqueue by \(",
    "reserve held": r"reserve held", "admit via": r"admit via \w+", "spill": r"\bspill \w+ via",
    # step clauses (Part 04 §5-9)
    "budget": r"\bbudget ", "chunk": r"\bchunk ", "cost clause": r"\bcost [^(]",
    "memory": r"\bmemory \w+;", "serve admission": r"serve admission",
    "serve decode first": r"serve decode first", "serve by": r"serve (only \([^;]*\) )?by \(",
    "serve exclusive prefill": r"serve exclusive prefill", "serve only": r"serve only \(",
    "granule": r"\bgranule \d", "state": r"\bstate \w+ =", "iteration": r"\biteration \{",
    # cost variables (Part 04 §10)
    "ctx tokens": r"\* tokens\b", "ctx prefilled": r"\* prefilled\b", "ctx attention": r"\* attention\b",
    "ctx kv_decode": r"\* kv_decode\b", "ctx kv_prefill": r"\* kv_prefill\b",
    "ctx decoders": r"\bdecoders\b", "ctx residents": r"\bresidents\b",
    # queue items (Part 05 §2)
    "gateway route": r": gateway \{ route", "prefill queue": r": prefill \{",
    "decode queue": r": decode \{", "link queue": r": link \{", "nic": r"\bnic ps\(",
    "from entry": r"\) from \w+ \{", "latency": r"\blatency [\d.]+",
    # claims (Part 06 §8)
    "claim every iteration": r"every iteration of", "claim some iteration": r"some iteration of",
    "claim at end": r"at end \(", "claim given": r"given \(",
    # expressions (Part 01 §3-4)
    "conditional ?:": r"\? [^:]+ :", "min/max": r"\b(min|max)\(", "aggregate": r"\b(sum|max|min) \w+ in \d",
    "observable": r"\b(queue|busy|work|used|free|holders|queued|cachedin|budget_left|est_lambda)\(",
    "draw": r"~\w+\(",
}
_KIND_RE = {k: re.compile(v, re.M) for k, v in KINDS.items()}


def kinds(text: str) -> set[str]:
    """The construct kinds (keys of KINDS) found in a program text."""
    return {k for k, rx in _KIND_RE.items() if rx.search(text)}
