"""Lowering an expanded program to the kernel IR (`ir.Program`): stages and
`share`, pools (pools.py), the workload (arrivals, trace, init/turn blocks,
hidden), the session code (`at admission` bindings first, bindings.py),
gauges, observations and attributes."""
from __future__ import annotations

import math
import os
from dataclasses import replace
from typing import Optional

from ...core import ir
from ...core.errors import LinkError, shortest
from ...core.ir import Pos
from ..syntax import tree as S
from .consts import Constants
from .bindings import leased_pools, prepare_holds
from .claims import lower_claims
from .statements import StatementLinker, target_error
from .pools import PoolLowerer, family_size
from .resolve import GAUGE, PS, RENEWAL, Resolver, StageInfo, fold, whole
from .shapes import Shaped
from .steps import StepLinker
from .trace import read_trace
from ..syntax.walk import stmts_in

MAX_COUNT = 1_000_000
TRACE_ATTRS = {"new", "out", "think", "forced", "more"}


class Lowerer:
    """Builds the IR of one program from its expanded, shaped items."""

    def __init__(self, label: str, items: list, shaped: Shaped, res: Resolver,
                 consts: Constants, trace_override: Optional[str] = None):
        self.label = label
        self.items = items
        self.shaped = shaped
        self.res = res
        self.consts = consts
        self.trace_override = trace_override
        self.program = ir.Program(file=label)
        self.steps = StepLinker(res)

    def of(self, kind) -> list:
        return [i for i in self.items if isinstance(i, kind)]

    # --------------------------------------------------------------- stages
    def declare_stages(self) -> None:
        res = self.res
        for st in self.of(S.IStage):
            if st.name in res.stages:
                raise res.err(f"duplicate stage `{st.name}`", st.name_pos, notes=[
                    f"`{st.name}` declared at {res.stages[st.name].pos.line}:"
                    f"{res.stages[st.name].pos.col}"])
            size = family_size(res, self.consts, st)
            res.stages[st.name] = StageInfo(st.name, st.kind, size, st.name_pos,
                                            order=res.order_key(st.name_pos))

    def lower_stages(self) -> None:
        res = self.res
        for st in self.of(S.IStage):
            info = res.stages[st.name]
            stage = ir.Stage(st.name, st.kind, info.size, pos=st.name_pos)
            if st.kind == "fifo" and st.arg is not None:
                c = res.constant(st.arg, "a fifo server count")
                if not whole(c) or c < 1:
                    raise res.err(f"`fifo({shortest(c)})`: the number of servers is a "
                                  "positive whole number", st.name_pos)
                stage.servers = int(c)
            if st.kind == "step":
                stage.step = self.steps.lower(st, info)
            if st.kind == "ps":
                stage.capacity = res.expr(st.arg, PS)
                k = fold(stage.capacity)
                if k is not None and not k > 0:
                    raise res.err(f"`ps({shortest(k)})`: a constant capacity must be "
                                  "positive", st.name_pos)
                info.capacity = k
            self.program.stages.append(stage)

    # ----------------------------------------------------------- attributes
    def attributes(self) -> None:
        res = self.res
        found: dict[str, Pos] = {}
        code = self.shaped.init + self.shaped.turn + (self.shaped.session or [])
        for s in stmts_in(code):
            if isinstance(s, (S.SSet, S.SChoose)) and s.name not in found:
                err = target_error(res, s.name, s.name_pos)
                if err:
                    raise err
                found[s.name] = s.name_pos
        for name in ir.BUILTIN_ATTRIBUTES:
            res.attributes[name] = None
        for name, pos in found.items():
            if name not in res.attributes:
                res.attributes[name] = pos
                self.program.attributes.append(name)

    # ------------------------------------------------------------- workload
    def workload(self) -> None:
        wl = self.program.workload
        loads = self.of(S.IWorkload)
        has_trace = any(isinstance(c, S.CTrace) for w in loads for c in w.clauses)
        if self.trace_override is not None and not has_trace:
            raise LinkError(f"--trace {self.trace_override}: the workload has no `trace` "
                            "clause to replace", help="declare the trace in the workload: "
                            '`trace "FILE" [ordered];`')
        if not loads:
            return
        item = loads[0]
        hidden: list[tuple[str, Pos]] = []
        for c in item.clauses:
            if isinstance(c, S.CArrive):
                self.arrival(c, wl)
            elif isinstance(c, S.CTrace):
                wl.trace = self.trace(c, item.base)
            elif isinstance(c, S.CHidden):
                hidden.extend(c.names)
        self.hidden(hidden, wl)

    def arrival(self, c: S.CArrive, wl: ir.Workload) -> None:
        res = self.res
        wl.arrival = c.kind
        wl.pos = c.pos
        if c.kind == "poisson":
            rate = res.constant(c.arg, "a rate")
            if not (math.isfinite(rate) and rate > 0):
                raise res.err(f"`arrive poisson(…)`: the rate is {shortest(rate)}; a rate "
                              "must be positive and finite", c.pos)
            wl.rate = rate
        elif c.kind == "renewal":
            wl.gap = res.expr(c.arg, RENEWAL)
            g = fold(wl.gap)
            if g is not None and not (math.isfinite(g) and g > 0):
                raise res.err("an interarrival time must be positive", c.pos)
        elif c.kind in ("closed", "batch"):
            n = res.constant(c.arg, "a count")
            what = "the closed population" if c.kind == "closed" else "the batch size"
            if not whole(n) or not 1 <= n <= MAX_COUNT:
                raise res.err(f"{what} is {shortest(n)}: a count is a whole number from 1 "
                              f"to {MAX_COUNT}", c.pos)
            wl.count = int(n)

    def trace(self, c: S.CTrace, base: str) -> ir.Trace:
        if self.trace_override is not None:
            path = os.path.abspath(self.trace_override)
            return read_trace(path, self.trace_override, c.ordered, pipes=True)
        path = c.path if os.path.isabs(c.path) else os.path.join(base, c.path)
        return read_trace(path, c.path, c.ordered, c.path_pos,
                          self.res.sources.get(c.path_pos.file))

    def hidden(self, names: list[tuple[str, Pos]], wl: ir.Workload) -> None:
        res = self.res
        for name, pos in names:
            if name in ("cached", "computed"):
                raise res.err(f"hidden `{name}`: the scheduler sets it", pos)
            if name in wl.hidden:
                raise res.err(f"hidden `{name}` twice", pos)
            user = name in self.program.attributes
            if not user and not (name in TRACE_ATTRS and wl.trace is not None):
                raise res.err(f"hidden `{name}`: no `set` or `choose` makes it a session "
                              "attribute", pos)
            wl.hidden.append(name)
        res.hidden = set(wl.hidden)

    # ----------------------------------------------------------------- code
    def code(self) -> None:
        linker = StatementLinker(self.res, leased_pools(self.shaped.session))
        linker.preemptible = {p.name for p in self.program.pools if p.preempt != "none"}
        self.program.workload.init = linker.block(self.shaped.init)
        self.program.workload.turn = linker.block(self.shaped.turn)
        if self.shaped.session is not None:
            self.program.session = linker.block(self.shaped.session)
        linker.check_legs()
        self.program.has_requests = self.shaped.shape in ("R", "T")
        self.share(linker)

    def share(self, linker: StatementLinker) -> None:
        res = self.res
        decls = self.of(S.IShare)
        if len(decls) > 1:
            raise res.err("a program declares one `share`", decls[1].pos)
        if linker.multi_runs and not decls:
            _, s = linker.multi_runs[0]
            raise res.err("a run over several stages needs the program's `share "
                          "maxmin;` or `share bottleneck;`", s.pos)
        if decls and not linker.multi_runs:
            raise res.err("`share` without a run over several stages", decls[0].pos)
        if decls:
            self.program.share = decls[0].policy
        for stage in self.program.stages:
            stage.shared = stage.name in linker.shared

    # --------------------------------------------------------------- gauges
    def gauges(self) -> None:
        res = self.res
        observed = set(self.program.observations)
        for g in self.of(S.IGauge):
            if any(x.name == g.name for x in self.program.gauges):
                raise res.err(f"duplicate gauge `{g.name}`", g.name_pos)
            if g.name in observed:
                raise res.err(f"`{g.name}` is a gauge and an `observe`: one name would be "
                              "two statistics", g.name_pos)
            moment = replace(GAUGE, registers=frozenset(res.registers))
            self.program.gauges.append(ir.Gauge(g.name, res.expr(g.value, moment),
                                                g.name_pos))

    def observations(self) -> None:
        p = self.program
        code = p.workload.init + p.workload.turn + (p.session or [])
        names: dict[str, None] = {}
        for s in ir_stmts(code):
            if isinstance(s, ir.Observe):
                names.setdefault(s.name, None)
        p.observations = list(names)

    def run(self) -> ir.Program:
        self.declare_stages()
        pools = PoolLowerer(self.res, self.consts, self.of(S.IPool))
        pools.declare()
        sh = self.shaped
        sh.session = prepare_holds(self.res, sh.init, sh.turn, sh.session)
        self.attributes()
        for st in self.of(S.IStage):
            if st.kind == "step":
                self.steps.declare_registers(st, self.res.stages[st.name])
        self.workload()
        self.lower_stages()
        self.program.pools = pools.lower()
        self.code()
        self.observations()
        self.gauges()
        self.res.observations = set(self.program.observations)
        self.program.claims = lower_claims(self.res, self.of(S.IClaim))
        return self.program


def ir_stmts(stmts: list):
    """Every IR statement in a block, nested blocks included, in order."""
    for s in stmts:
        yield s
        for attr in ("then", "other", "body"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                yield from ir_stmts(inner)
