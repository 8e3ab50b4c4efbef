"""Engines on devices (Part 04 §11): `device`, `engine E on D` and `pool P on …`
are rewritten into a step stage and kernel pools before the program is
linked (§11.2). The engine's list values (`running.count`, `waiting.count`,
`batch.tokens`, …) become the kernel's context variables, a device's time
resources are inlined into `execute`, and the schedule becomes a `serve`
clause or an `iteration` body, with its `each at most` as the chunk."""
from __future__ import annotations

from typing import Optional

from ...core.errors import LinkError, ParseError
from ...core.ir import Pos
from ..syntax import tree as S
from .expand import substitute
from ..syntax.names import WORDS
from ..link.resolve import Resolver
from ..syntax.show import show
from ..syntax.walk import nodes, rewrite

# list value -> kernel context variable ("" for waiting.count: Σ queued(p))
LISTS = {
    "running": {"count": "residents", "decoding": "decoders", "kv_decode": "kv_decode",
                "kv_prefill": "kv_prefill", "preempted": "preempted"},
    "waiting": {"count": "", "admitted": "admitted"},
    "batch": {"tokens": "tokens", "prefilled": "prefilled", "kv_decode": "kv_decode",
              "kv_prefill": "kv_prefill", "decoding": "decoders", "attention": "attention"},
}
RUNNING = frozenset({"tokens", "keys", "schedule", "execute", "at_most"})
WHERE = {"running.preempted": {"schedule"}, "waiting.admitted": {"schedule"},
         "waiting.count": {"tokens", "schedule", "execute", "at_most"},
         "batch.tokens": {"schedule", "execute"}, "batch.prefilled": {"schedule", "execute"}}
PLACES = {"tokens": "`tokens cap`", "keys": "a `by` key or an `only` predicate",
          "schedule": "the schedule's `if`, `while` and `set`", "execute": "`execute`",
          "at_most": "`each at most` and the schedule's `let`s"}
ONCE = ("tokens", "granule", "schedule", "execute")
NEEDS = {"tokens": "`tokens cap B;`: the tokens one iteration may schedule (`tokens cap "
                   "inf;` for none)",
         "schedule": "`schedule { … }`: what each iteration does",
         "execute": "`execute (T);`: the clock time of one iteration"}
PREEMPTED = "running.preempted == 0"


def where(value: str) -> frozenset:
    """The places an engine may read a list value (Part 04 §11.2)."""
    if value in WHERE:
        return frozenset(WHERE[value])
    return RUNNING if value.startswith("running.") else frozenset({"execute"})


class EnginePass:
    """Rewrites the devices, engines and pools on them of one item list."""

    def __init__(self, res: Resolver, items: list):
        self.res = res
        self.items = items
        self.devices: dict[str, S.IDevice] = {}
        self.engines: dict[str, S.IEngine] = {}
        self.on_device: dict[str, S.IEngine] = {}
        self.memory: dict[str, S.IPool] = {}                     # engine -> its memory
        self.admitted: dict[str, list[tuple[str, Optional[S.Expr]]]] = {}
        self.homes: dict[int, tuple[S.DevCap, Optional[S.Expr], Optional[str]]] = {}

    def err(self, message: str, pos: Pos, help: Optional[str] = None) -> LinkError:
        return self.res.err(message, pos, help)

    # ------------------------------------------------------------------ run
    def run(self) -> list:
        """The item list with kernel stages and pools in place of the engine form."""
        for item in self.items:
            if isinstance(item, S.IDevice):
                self.device(item)
        for item in self.items:
            if isinstance(item, S.IEngine):
                self.engine(item)
        for item in self.items:
            if isinstance(item, S.IPool) and item.on is not None:
                self.homes[id(item)] = self.home(item)
        self.check_caps()
        out = []
        for item in self.items:
            if isinstance(item, S.IEngine):
                out.append(self.stage(item))
            elif isinstance(item, S.IPool) and item.on is not None:
                out.append(self.kernel_pool(item))
            elif not isinstance(item, S.IDevice):
                out.append(item)
        return out

    # ------------------------------------------------------- declarations
    def device(self, d: S.IDevice) -> None:
        if d.name in self.devices:
            raise self.err(f"duplicate device `{d.name}`", d.name_pos)
        self.devices[d.name] = d
        seen: set[str] = set()
        for x in [*d.caps, *d.resources]:
            if x.name in seen:
                raise self.err(f"device `{d.name}`: `{x.name}` is declared twice", x.pos)
            seen.add(x.name)
        for r in d.resources:
            if r.name in WORDS:
                raise self.err(f"`{r.name}` is a word of the language: name the time "
                               "resource otherwise", r.pos)
            self.res.resources[r.name] = d.name

    def engine(self, e: S.IEngine) -> None:
        if e.name == "engine":
            raise self.err("an engine may not be named `engine`", e.name_pos)
        if e.name in self.devices:
            raise self.err(f"`{e.name}` names a device and an engine", e.name_pos)
        if e.device not in self.devices:
            raise self.err(f"engine `{e.name}` runs on `{e.device}`, which is no device",
                           e.device_pos, "declare it with `device NAME { … }`")
        if e.device in self.on_device:
            raise self.err(f"`{self.on_device[e.device].name}` already runs on "
                           f"`{e.device}`: one device runs one engine", e.name_pos)
        self.on_device[e.device] = e
        self.engines[e.name] = e
        self.admitted[e.name] = []
        keys: list[str] = []
        for c in e.clauses:
            if c.key in ONCE and c.key in keys:
                raise self.err(f"engine `{e.name}`: `{c.key}` is written twice", c.pos,
                               "write each clause of an engine once")
            keys.append(c.key)
        for key, what in NEEDS.items():
            if key not in keys:
                raise ParseError(f"engine `{e.name}` needs {what}",
                                 Pos(e.name_pos.file, e.name_pos.line, e.name_pos.col, 1),
                                 source=self.res.sources.get(e.name_pos.file))

    def home(self, p: S.IPool) -> tuple[S.DevCap, Optional[S.Expr], Optional[str]]:
        """Where `pool P on …` takes its capacity and members, and which engine
        admits it (`on E`, `on E.D`) or takes it as memory (`on D`, `on E.D`)."""
        pos = p.on_pos or p.name_pos
        if p.size is not None:
            raise self.err(f"pool `{p.name}` on `{p.on}`: a pool on a device or an engine "
                           "takes its members from it; write it without `[N]`", p.name_pos)
        for o in p.options:
            if o.key in ("cap", "admit"):
                raise self.err("a pool on a device or an engine takes its capacity and "
                               "who admits it from its `on`: write `NAME cap c;` there, and "
                               "`on E` or `on E.DEVICE` for a pool the engine admits", o.pos)
        if p.on_device is not None:
            e = self.engines.get(p.on)
            if e is None:
                raise self.err(f"`{p.on}.{p.on_device}`: `{p.on}` is no engine", pos)
            if e.device != p.on_device:
                raise self.err(f"`{p.on}.{p.on_device}`: engine `{p.on}` runs on "
                               f"`{e.device}`", pos)
            cap = self.cap(self.devices[e.device].caps, p, e.device)
            self.take_memory(e, p)
            self.admitted[e.name].append((p.name, self.devices[e.device].size))
            return cap, self.devices[e.device].size, e.name
        if p.on in self.devices:
            d = self.devices[p.on]
            cap = self.cap(d.caps, p, d.name)
            if d.name in self.on_device:
                self.take_memory(self.on_device[d.name], p)
            return cap, d.size, None
        e = self.engines.get(p.on)
        if e is None:
            raise self.err(f"pool `{p.name}` is on `{p.on}`, which is no device or engine",
                           pos)
        cap = self.cap(e.caps, p, e.name)
        if e.size is not None and cap.size is not None:
            raise self.err(f"engine `{e.name}[…]`: `{cap.name}[…] cap` on an engine family: "
                           "each member of the family has its own", cap.pos)
        size = e.size if e.size is not None else cap.size
        self.admitted[e.name].append((p.name, size))
        return cap, size, e.name

    def cap(self, caps: list[S.DevCap], p: S.IPool, owner: str) -> S.DevCap:
        cap = next((c for c in caps if c.name == p.name), None)
        if cap is None:
            raise self.err(f"pool `{p.name}` is on `{owner}`, which declares no capacity "
                           f"`{p.name}`", p.name_pos, f"write `{p.name} cap c;` in `{owner}`")
        return cap

    def take_memory(self, e: S.IEngine, p: S.IPool) -> None:
        if e.name in self.memory:
            raise self.err(f"`{self.memory[e.name].name}` and `{p.name}` are both on "
                           f"`{e.device}`: which is `{e.name}`'s memory would be a choice "
                           "the program did not make", p.name_pos)
        self.memory[e.name] = p

    def check_caps(self) -> None:
        """Every capacity of a device or an engine is some pool's (0.1.5's rule)."""
        used = {(id(cap)) for cap, _, _ in self.homes.values()}
        owners = [(d.name, d.caps) for d in self.devices.values()] + \
            [(e.name, e.caps) for e in self.engines.values()]
        for owner, caps in owners:
            for c in caps:
                if id(c) not in used:
                    raise self.err(f"`{c.name}` of `{owner}` is no pool: declare `pool "
                                   f"{c.name} on {owner} {{ … }}`, or nothing can hold it",
                                   c.pos)

    # -------------------------------------------------------------- lowering
    def kernel_pool(self, p: S.IPool) -> S.IPool:
        cap, size, engine = self.homes[id(p)]
        options = [S.POption("cap", cap.pos, exprs=[cap.value]), *p.options]
        if engine is not None:
            options.append(S.POption("admit", p.on_pos or p.name_pos,
                                     refs=[S.EName(engine, p.on_pos or p.name_pos)]))
        return S.IPool(p.name, size, options, p.pos, p.name_pos)

    def stage(self, e: S.IEngine) -> S.IStage:
        """`engine E on D { … }` as `stage E : step { … }` (§11.2)."""
        device = self.devices[e.device]
        clauses: list[S.StepClause] = []
        for c in e.clauses:
            if c.key == "tokens":
                clauses.append(S.StepClause("budget", c.pos,
                                            value=self.values(c.value, "tokens", e)))
            elif c.key in ("granule", "state"):
                clauses.append(c)
            elif c.key == "execute":
                value = self.inline(c.value, device)
                clauses.append(S.StepClause("cost", c.pos,
                                            value=self.values(value, "execute", e)))
            else:
                clauses.extend(self.schedule(e, c))
        if e.name in self.memory:
            p = self.memory[e.name]
            clauses.append(S.StepClause("memory", p.name_pos, ref=S.EName(p.name, p.name_pos)))
        return S.IStage(e.name, e.size, "step", None, e.pos, e.name_pos, clauses, e.pos,
                        S.EngineOf(device.name, device.size, device.name_pos))

    def inline(self, value: S.Expr, device: S.IDevice, stack: tuple = ()) -> S.Expr:
        """`execute`'s expression with the device's time resources inlined."""
        resources = {r.name: r for r in device.resources}

        def fn(n):
            if not isinstance(n, S.ECall) or n.fn not in resources:
                return n
            r = resources[n.fn]
            if len(n.args) != len(r.params):
                raise self.err(f"`{n.fn}` takes {len(r.params)} argument(s), got "
                               f"{len(n.args)}", n.pos)
            if n.fn in stack:
                raise self.err(f"`{n.fn}` reads itself", n.pos)
            body = substitute(r.value, dict(zip(r.params, n.args)), None)
            return self.inline(body, device, stack + (n.fn,))
        return rewrite(value, fn)

    def values(self, value: Optional[S.Expr], place: str, e: S.IEngine) -> Optional[S.Expr]:
        """`value` with the engine's list values read as the kernel's (§11.2)."""
        if value is None:
            return None

        def fn(n):
            if isinstance(n, S.EName) and n.fields and n.name in LISTS:
                return self.list_value(n, place, e)
            return n
        return rewrite(value, fn)

    def list_value(self, n: S.EName, place: str, e: S.IEngine) -> S.Expr:
        pos = Pos(n.pos.file, n.pos.line, n.pos.col, len(n.name))
        fields = LISTS[n.name]
        text = f"{n.name}.{'.'.join(n.fields)}"
        if len(n.fields) != 1 or n.fields[0] not in fields:
            raise self.err(f"`{text}`: `{n.name}` has "
                           f"{', '.join(f'`{f}`' for f in fields)}", pos)
        if place not in where(text):
            allowed = " and ".join(PLACES[p] for p in sorted(where(text)))
            raise self.err(f"`{text}` is read in {PLACES[place]} of engine `{e.name}`; an "
                           f"engine reads it in {allowed}", pos)
        kernel = fields[n.fields[0]]
        if kernel:
            return S.EName(kernel, n.pos)
        if e.size is not None:
            raise self.err(f"engine family `{e.name}[…]` reads `waiting.count`: the queues "
                           "of its members are not one count", pos)
        return self.queued(e, n.pos)

    def queued(self, e: S.IEngine, pos: Pos) -> S.Expr:
        """`waiting.count`: Σ queued(p) over the pools the engine admits."""
        total: Optional[S.Expr] = None
        for name, size in self.admitted[e.name]:
            if size is None:
                term: S.Expr = S.ECall("queued", [S.EName(name, pos)], pos)
            else:
                body = S.ECall("queued", [S.EName(name, pos, S.EName("$k", pos))], pos)
                term = S.EAgg("sum", "$k", size, body, pos, pos)
            total = term if total is None else S.EBinary("+", total, term, pos)
        return total if total is not None else S.ENum(0.0, pos)

    # -------------------------------------------------------------- schedule
    def schedule(self, e: S.IEngine, c: S.StepClause) -> list[S.StepClause]:
        """The clauses a schedule stands for: the chunk of its `each at most`,
        and a `serve` clause or an `iteration` body."""
        lets: dict[str, S.Expr] = {}
        for b in c.lets:
            if b.name in lets:
                raise self.err(f"`let {b.name}` twice in the schedule of `{e.name}`", b.pos)
            lets[b.name] = substitute(self.values(b.value, "at_most", e), lets, None)
        caps = [t for t in walk_schedule(c.stmts) if getattr(t, "at_most", None) is not None]
        for t in caps[1:]:
            if show(t.at_most) != show(caps[0].at_most):
                raise self.err(f"the schedule of `{e.name}` writes `each at most "
                               f"({show(caps[0].at_most)})` and `each at most "
                               f"({show(t.at_most)})`: an iteration has one cap per run",
                               t.at_most.pos)
        self.check_lets(c.stmts, lets)
        out = []
        if caps:
            value = substitute(self.values(caps[0].at_most, "at_most", e), lets, None)
            out.append(S.StepClause("chunk", caps[0].at_most.pos, value=value, at_most=True))
        form = simple_form(c.stmts)
        if form == "exclusive":
            return out + [S.StepClause("serve", c.pos, exclusive=True)]
        bad = next((t for t in walk_schedule(c.stmts) if isinstance(t, S.TExclusive)), None)
        if bad is not None:
            raise self.err("`exclusive prefill` is a schedule of its own: `schedule { "
                           "exclusive prefill; admit waiting while (running.preempted == "
                           "0); }`", bad.pos)
        if form == "serve":
            a = c.stmts[0]
            if a.only is None and a.order is None:
                return out
            return out + [S.StepClause("serve", c.pos, only=self.values(a.only, "keys", e),
                                       order=self.order(a.order, e))]
        return out + [S.StepClause("iteration", c.pos, stmts=self.body(c.stmts, e))]

    def check_lets(self, stmts: list, lets: dict) -> None:
        """A schedule's `let` is read once as the iteration starts: only in
        `each at most` (the chunk, read then)."""
        for t in walk_schedule(stmts):
            exprs = [getattr(t, f, None) for f in ("only", "cond", "guard", "value")]
            order = getattr(t, "order", None)
            exprs += order.keys if order is not None else []
            for n in nodes([x for x in exprs if x is not None]):
                if isinstance(n, S.EName) and n.name in lets:
                    raise self.err(f"`{n.name}` is a `let` of the schedule, read as the "
                                   "iteration starts: it is read only in `each at most`",
                                   n.pos, "write the expression where it is read")

    def order(self, order: Optional[S.SOrder], e: S.IEngine) -> Optional[S.SOrder]:
        if order is None:
            return None
        return S.SOrder(order.kind, [self.values(k, "keys", e) for k in order.keys],
                        order.pos)

    def body(self, stmts: list, e: S.IEngine) -> list:
        """The schedule's statements in the kernel's spelling (§11.2)."""
        out: list = []
        for t in stmts:
            if isinstance(t, S.TServe):
                out.append(S.TServe("serve", self.values(t.only, "keys", e),
                                    self.order(t.order, e), None, t.pos))
            elif isinstance(t, S.TAdmit):
                out.append(S.TAdmit("admit", self.values(t.only, "keys", e),
                                    self.values(t.cond, "schedule", e), None, t.pos))
            elif isinstance(t, S.TIf):
                out.append(S.TIf(t.keyword, self.values(t.guard, "schedule", e),
                                 self.body(t.then, e), self.body(t.other, e), t.pos))
            else:
                out.append(S.TSet(t.name, self.values(t.value, "schedule", e), t.pos,
                                  t.name_pos))
        return out


def walk_schedule(stmts: list):
    """Every statement of a schedule, nested `branch`/`if` bodies included."""
    for t in stmts:
        yield t
        if isinstance(t, S.TIf):
            yield from walk_schedule(t.then)
            yield from walk_schedule(t.other)


def simple_form(stmts: list) -> Optional[str]:
    """"serve" for `advance running [only (p)] [ORDER]; admit waiting [only (p)]
    while (running.preempted == 0);`, "exclusive" for `exclusive prefill; admit
    waiting while (running.preempted == 0);`, else None (§11.2)."""
    if len(stmts) != 2:
        return None
    a, b = stmts
    if not isinstance(b, S.TAdmit) or b.cond is None or show(b.cond) != PREEMPTED:
        return None
    if isinstance(a, S.TExclusive) and b.only is None:
        return "exclusive"
    same = (a.only is None) == (b.only is None) and (
        a.only is None or show(a.only) == show(b.only))
    return "serve" if isinstance(a, S.TServe) and same else None


def lower_engines(res: Resolver, items: list) -> list:
    """The items with the engine form rewritten into the kernel's (§11.2)."""
    if not any(isinstance(i, (S.IDevice, S.IEngine)) or
               (isinstance(i, S.IPool) and i.on is not None) for i in items):
        return items
    return EnginePass(res, items).run()
