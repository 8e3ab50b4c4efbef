"""Compile a step stage's clauses and iteration body (spec Part 04 §5, §8, §9).

Expressions become functions of the values their moment supplies:
`budget`/`chunk` of (residents, decoders, kv_decode, kv_prefill, R) and
`cost` of (tokens, decoders, prefilled, residents, kv_decode, kv_prefill,
attention, R), both on the machine stream; serve keys and `only` of the
resident (s, decoding, admission, remaining) and the totals; Plan-moment
guards of the totals and (tokens, prefilled, admitted, preempted). `R` is
the stage's register dict. The body becomes a function `(stage, plan)`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from ...core import ir
from .exprs import ExprCompiler, Scope
from . import names as N

BUDGET = ("residents", "decoders", "kv_decode", "kv_prefill")
COST = ("tokens", "decoders", "prefilled", "residents", "kv_decode", "kv_prefill", "attention")
SERVE = ("s", "decoding", "admission", "remaining") + BUDGET
PLAN = BUDGET + ("tokens", "prefilled", "admitted", "preempted")

Body = Callable[[Any, Any], None]


@dataclass
class StepSpec:
    budget: Callable[..., float]
    chunk: Callable[..., float]
    cost: Callable[..., float]
    granule: Optional[float]
    registers: dict[str, float]
    body: Body
    needs_kv: bool = True  # some expression reads kv_decode or kv_prefill
    # budget, chunk, keys, `only` or the body (the expressions over all the
    # residents' totals) read kv_decode or kv_prefill; decoders
    resident_kv: bool = True
    resident_dec: bool = True
    pre_totals: bool = True  # budget or chunk reads the residents' totals
    serve_totals: bool = True  # serve keys, `only` or the body read the totals
    fixed: Optional[tuple[float, float]] = None  # (budget, chunk) when both are numbers
    in_order: bool = False  # the default body in admission order (no keys, `only`, granule, registers)
    # what `burst.py` needs to plan the default body itself (see `closed_form`)
    keys: Optional[Callable[..., tuple]] = None  # compiled `serve by` keys of the default body
    only: Optional[Callable[..., float]] = None  # compiled `serve only` of the default body
    closed: bool = False  # default body, no granule; budget and chunk read only context and numbers
    serve_varies: bool = False  # keys or `only` read what an iteration changes (remaining, now, …)
    cost_steady: bool = False  # the cost neither draws nor reads the clock or the model's state
    cost_pools: bool = True  # the cost reads an observable (another engine's blocks may move it)
    grow_moves: bool = True  # budget, chunk, keys or `only` read totals or pools (growth changes them)
    # budget, chunk, keys and `only` read no observable, attribute, clock or draw:
    # a plan depends on nothing but the engine's residents, their totals and registers
    plans_own: bool = False


#: IR nodes whose value may change between two iterations of a quiet engine
#: (or draw): an expression without them, over the residents' totals, the
#: registers and the observables of `_STEADY_OBS`, has the same value at
#: every iteration of a closed run that allocates nothing (`burst.py`).
_MOVING = (ir.Now, ir.ObsAggregate, ir.Draw)
#: IR nodes that read something besides an engine's residents and registers
_OUTSIDE = (ir.Now, ir.ObsAggregate, ir.Draw, ir.Observable, ir.Attr)
#: Observables that only admissions, releases, growth, other stages' events
#: or this engine's plan (not its iterations' progress) change; `busy` of
#: the engine itself is 0 while it plans and evaluates the cost.
_STEADY_OBS = frozenset({"queue", "busy", "used", "free", "cachedin", "holders", "queued"})


def _steady(node: Any, moving: tuple[str, ...] = ()) -> bool:
    """Whether an IR subtree reads none of `_MOVING`, no other observable
    and none of the context variables `moving`."""
    for n in ir.walk(node):
        if isinstance(n, _MOVING) or (isinstance(n, ir.Ctx) and n.name in moving):
            return False
        if isinstance(n, ir.Observable) and n.fn not in _STEADY_OBS:
            return False
    return True


#: Observables that a block allocated to a resident (and the eviction it
#: may cause) leaves as they were: counts of holds and of waiting requests.
_GROWTH_FIXED_OBS = frozenset({"queue", "busy", "holders", "queued"})


def _grow_moves(node: Any) -> bool:
    """Whether a block allocated in a closed run may change what the
    subtree reads: the residents' KV totals, or a pool's units."""
    for n in ir.walk(node):
        if isinstance(n, ir.Ctx) and n.name in ("kv_decode", "kv_prefill"):
            return True
        if isinstance(n, ir.Observable) and n.fn not in _GROWTH_FIXED_OBS:
            return True
    return False


def reads_any(node: Any, names: set[str]) -> bool:
    """Whether an IR subtree reads one of the context variables `names`."""
    return any(isinstance(n, ir.Ctx) and n.name in names for n in ir.walk(node))


class StepCompiler:
    """Compiles step stages over one namespace (machine stream `_machine`)."""

    def __init__(self, exprs: ExprCompiler, attrs: dict[str, str], claims_read_kv: bool = True):
        self.exprs = exprs
        self.attrs = attrs
        self.claims_read_kv = claims_read_kv

    def _ctx(self, names: tuple[str, ...], registers: list[str]) -> dict[str, str]:
        ctx = {n: n for n in names if n != "s"}
        for r in registers:
            ctx[r] = f"R[{r!r}]"
        return ctx

    def _fn(self, names: tuple[str, ...], e: ir.Expr, registers: list[str],
            session: Optional[str] = None, stream: Optional[str] = None) -> Callable:
        scope = Scope(session, stream, self.attrs, self._ctx(names, registers))
        params = ", ".join(names + ("R",))
        return self.exprs.ns.function(params, self.exprs.expr(e, scope), "step")

    def _keys(self, keys: Optional[list[ir.Expr]], registers: list[str]) -> Optional[Callable]:
        if keys is None:
            return None
        scope = Scope("s", None, self.attrs, self._ctx(SERVE, registers))
        body = ", ".join(self.exprs.expr(k, scope) for k in keys)
        return self.exprs.ns.function(", ".join(SERVE + ("R",)), f"({body},)", "skey")

    def compile(self, step: ir.Step) -> StepSpec:
        """The runtime spec of a step stage."""
        regs = [name for name, _v in step.registers]
        budget = self._fn(BUDGET, step.budget, regs, stream=N.MACHINE_STREAM)
        chunk = self._fn(BUDGET, step.chunk, regs, stream=N.MACHINE_STREAM)
        cost = self._fn(COST, step.cost, regs, stream=N.MACHINE_STREAM)
        only = keys = None
        if step.serve == "exclusive":
            body = exclusive_body()
        elif step.iteration is not None:
            body = self._body(step.iteration, regs)
        else:
            only = None if step.only is None else self._fn(SERVE, step.only, regs, "s")
            keys = self._keys(step.keys, regs)
            body = default_body(only, keys)
        closed = (step.serve != "exclusive" and step.iteration is None and step.granule is None
                  and _steady([step.budget, step.chunk]))
        in_order = (step.serve != "exclusive" and step.iteration is None and step.only is None
                    and step.keys is None and step.granule is None and not step.registers)
        # the expressions that read the totals over all residents
        planning = [step.budget, step.chunk, step.keys, step.only, step.iteration]
        fixed = ((float(step.budget.value), float(step.chunk.value))
                 if isinstance(step.budget, ir.Num) and isinstance(step.chunk, ir.Num) else None)
        return StepSpec(budget, chunk, cost, step.granule, dict(step.registers), body,
                        fixed=fixed, in_order=in_order, needs_kv=self.claims_read_kv or reads_any(step, {"kv_decode", "kv_prefill"}),
                        resident_kv=reads_any(planning, {"kv_decode", "kv_prefill"}),
                        resident_dec=reads_any(planning, {"decoders"}),
                        pre_totals=reads_any([step.budget, step.chunk], set(BUDGET)),
                        serve_totals=reads_any([step.keys, step.only, step.iteration], set(BUDGET)),
                        keys=keys, only=only, closed=closed,
                        serve_varies=not _steady([step.keys, step.only], ("remaining",)),
                        cost_steady=_steady(step.cost),
                        cost_pools=any(isinstance(n, ir.Observable) for n in ir.walk(step.cost)),
                        grow_moves=_grow_moves([step.budget, step.chunk, step.keys, step.only]),
                        plans_own=not any(isinstance(n, _OUTSIDE) for n in ir.walk(
                            [step.budget, step.chunk, step.keys, step.only])))

    def _body(self, stmts: list[ir.IterStmt], regs: list[str]) -> Body:
        parts = [self._stmt(st, regs) for st in stmts]

        def run(stage: Any, plan: Any) -> None:
            for part in parts:
                part(stage, plan)
        return run

    def _stmt(self, st: ir.IterStmt, regs: list[str]) -> Body:
        if isinstance(st, ir.IServe):
            only = None if st.only is None else self._fn(SERVE, st.only, regs, "s")
            keys = self._keys(st.keys, regs)

            def serve(stage: Any, plan: Any) -> None:
                stage.serve_pass(plan, only, keys)
                plan.stop = False  # a grower that preempted itself ended this statement (§9)
            return serve
        if isinstance(st, ir.IAdmit):
            only = None if st.only is None else self._fn(SERVE, st.only, regs, "s")
            cond = None if st.cond is None else self._fn(PLAN, st.cond, regs)
            return lambda stage, plan: admit_loop(stage, plan, only, cond)
        if isinstance(st, ir.IIf):
            guard = self._fn(PLAN, st.guard, regs)
            then = self._body(st.then, regs)
            other = self._body(st.other, regs)
            text = st.text or "`branch (…)`"

            def branch(stage: Any, plan: Any) -> None:
                g = guard(*plan_values(stage, plan), stage.registers)
                if g == 1.0:
                    then(stage, plan)
                elif g == 0.0:
                    other(stage, plan)
                else:
                    from ...core.errors import SimulationError, shortest
                    raise SimulationError(
                        f"{text}: the guard is {shortest(g)}, not 0 or 1", stage.env.now)
            return branch
        if isinstance(st, ir.ISet):
            value = self._fn(PLAN, st.value, regs)
            name = st.name

            def assign(stage: Any, plan: Any) -> None:
                stage.registers[name] = value(*plan_values(stage, plan), stage.registers)
            return assign
        raise TypeError(f"unknown iteration statement {st!r}")


def plan_values(stage: Any, plan: Any) -> tuple:
    """The Plan-moment values, in PLAN order."""
    res, dec, kvd, kvp = stage.totals()
    return (res, dec, kvd, kvp, plan.tokens, plan.prefilled, float(plan.admitted),
            float(plan.preempted))


def admit_loop(stage: Any, plan: Any, only: Optional[Callable], cond: Optional[Callable]) -> None:
    """`admit [only (p)] [while (e)]`: admit one at a time, serving newcomers."""
    while plan.left > 0 and not plan.no_admit and not plan.stop:
        if cond is not None and cond(*plan_values(stage, plan), stage.registers) == 0:
            return
        newcomers = stage.admit_one(plan)
        if newcomers is None:
            return
        if newcomers:
            stage.serve_pass(plan, only, None, among=set(newcomers))


def default_body(only: Optional[Callable], keys: Optional[Callable]) -> Body:
    """`serve [only (p)] ORDER; admit [only (p)] while (!preempted);`"""

    def body(stage: Any, plan: Any) -> None:
        stage.serve_pass(plan, only, keys)
        if not plan.preempted and not plan.stop:
            while plan.left > 0 and not plan.preempted and not plan.no_admit:
                newcomers = stage.admit_one(plan)
                if newcomers is None:
                    return
                if newcomers:
                    stage.serve_pass(plan, only, keys, among=set(newcomers))
                if plan.stop:
                    return
    return body


def displace(stage: Any, plan: Any, prefill: Any) -> None:
    """A newcomer's prefill displaces the tentative decode batch (Part 04
    §8.4 step 4) and gets the full budget. A prefill that gets no tokens --
    its growth stalls or preempts it -- displaces nothing: the decodes keep
    their tokens, but those of a resident its growth preempted (pyserq
    0.1.3; generator seed 80540, where the grower preempts itself)."""
    batch, tokens, left = plan.assign, plan.tokens, plan.left
    plan.assign = []
    plan.tokens = plan.prefilled = plan.attention = 0.0
    plan.left = plan.budget
    stage.serve_one(prefill, plan)
    if plan.assign:
        return
    kept = []
    for a in batch:  # (decodes only: no prefill or attention to restore)
        if a[0] in stage.residents:
            kept.append(a)
        else:  # a victim of the growth: its tokens go back, as `cancel` gives them
            tokens -= a[1]
            left += a[1]
    plan.assign, plan.tokens, plan.left = kept, tokens, left


def exclusive_body() -> Body:
    """`serve exclusive prefill` (Part 04 §8.4)."""

    def body(stage: Any, plan: Any) -> None:
        selected = False
        while True:
            prefill = next((j for j in stage.residents
                            if j.mode == "prefill" and j.stall is None), None)
            if prefill is None:
                break
            selected = True
            plan.left = plan.budget
            stage.serve_one(prefill, plan)
            if prefill.stall is None or plan.assign or plan.preempted or plan.stop:
                return
            # it stalled in its growth and gets nothing (§7 step 4): the
            # next prefilling resident is the one selected (pyserq 0.1.3)
        if not selected:
            for job in list(stage.residents):
                if job.mode == "decode" and job in stage.residents and not plan.stop:
                    stage.serve_one(job, plan)
        # (every prefill selected stalled: no decode batch now, but the
        # engine admits as step 4 says: pyserq 0.1.3, generator seed 109117)
        while plan.left > 0 and not plan.preempted and not plan.stop:
            newcomers = stage.admit_one(plan, left=plan.budget)
            if newcomers is None:
                return
            fresh = [j for j in newcomers if j.mode == "prefill"]
            if fresh:
                displace(stage, plan, fresh[0])
                return
            for j in newcomers:
                stage.serve_one(j, plan)
    return body
