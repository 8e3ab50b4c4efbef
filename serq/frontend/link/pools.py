"""Pool declarations (Part 03 §2): names, array sizes, `cap` and `block`
(constant positions), then the options with their moments: `evict by`
(Evict), `preempt by` (Victim), `queue by` (Select), spill clauses (Evict),
`reserve held` and `admit via`."""
from __future__ import annotations

from dataclasses import replace
from typing import Optional, Union

from ...core import ir
from ...core.errors import shortest
from ..syntax import tree as S
from .consts import Constants
from .resolve import EVICT, SELECT, VICTIM, Moment, PoolInfo, Resolver, fold, whole
from .steps import pair
from ..syntax.walk import first_call, first_draw, first_read

OPTION_TEXT = {"cap": "cap", "block": "block", "evict": "evict", "preempt": "preempt",
               "queue": "queue", "reserve": "reserve held", "admit": "admit via",
               "spill": "spill"}


MAX_ARRAY = 100_000  # members of one stage or pool array (docs/guide/limits.md)


def family_size(res: Resolver, consts: Constants,
                item: Union[S.IStage, S.IPool]) -> Optional[int]:
    """The member count of `s[N]`/`p[N]` (None for a single declaration)."""
    if item.size is None:
        return None
    n = consts.array_size(item)
    if not whole(n) or n < 1:
        raise res.err(f"the array size of `{item.name}` is {shortest(n)}: a size "
                      "is a whole number ≥ 1", item.size.pos)
    if n > MAX_ARRAY:
        raise res.err(f"the array size of `{item.name}` is {shortest(n)}: an array has at "
                      f"most {MAX_ARRAY} members", item.size.pos,
                      "each member is an object of the run; model a large farm as one "
                      "stage with servers (`: fifo(c)`) or fewer, larger members")
    return int(n)


class PoolLowerer:
    """Declares the pools of a program and lowers them to `ir.Pool`."""

    def __init__(self, res: Resolver, consts: Constants, decls: list[S.IPool]):
        self.res = res
        self.consts = consts
        self.decls = decls
        self.options: dict[str, dict[str, S.POption]] = {}

    # ------------------------------------------------------------ declaring
    def declare(self) -> None:
        """Names, sizes, `cap` and `block` of every pool (before any
        expression can read `blocksize(p)` or index a pool)."""
        res = self.res
        for p in self.decls:
            if p.name in res.pools:
                first = res.pools[p.name].pos
                raise res.err(f"duplicate pool `{p.name}`", p.name_pos,
                              notes=[f"`{p.name}` declared at {first.line}:{first.col}"])
            opts = self.options[p.name] = {}
            for o in p.options:
                if o.key in opts:
                    raise res.err(f"pool `{p.name}`: `{OPTION_TEXT[o.key]}` is written "
                                  "twice", o.pos, "write each option of a pool once")
                opts[o.key] = o
            info = PoolInfo(p.name, family_size(res, self.consts, p), p.name_pos)
            if "cap" in opts:
                info.cap = self.cap(p.name, opts["cap"].exprs[0])
            if "block" in opts:
                info.block = self.block(p.name, opts["block"].exprs[0])
            if "admit" in opts:
                info.admit_via = opts["admit"].refs[0].name
            res.pools[p.name] = info

    def constant(self, pool: str, key: str, e: S.Expr) -> float:
        value = self.res.constant(e, f"`{key}`")
        if value != value:
            raise self.res.err(f"pool `{pool}`: `{key}` is NaN", e.pos,
                               "a constant is a number or `inf`; `0/0` and "
                               "`inf - inf` are not")
        return value

    def cap(self, pool: str, e: S.Expr) -> float:
        value = self.constant(pool, "cap", e)
        if value < 0:
            raise self.res.err(f"pool `{pool}`: `cap {shortest(value)}`: a capacity is a "
                               "number ≥ 0 or `inf`", e.pos)
        return value

    def block(self, pool: str, e: S.Expr) -> float:
        value = self.constant(pool, "block", e)
        if not value > 0:
            raise self.res.err(f"pool `{pool}`: `block {shortest(value)}`: a block must be "
                               "positive", e.pos)
        return value

    # ------------------------------------------------------------- lowering
    def lower(self) -> list[ir.Pool]:
        """The IR pools in declaration order (after the workload's `hidden`)."""
        return [self.pool(p) for p in self.decls]

    def pool(self, p: S.IPool) -> ir.Pool:
        info = self.res.pools[p.name]
        opts = self.options[p.name]
        pool = ir.Pool(p.name, info.size, info.cap, info.block, pos=p.name_pos)
        pool.reserve_held = "reserve" in opts
        if "evict" in opts and opts["evict"].form == "by":
            pool.evict = [self.res.expr(k, EVICT) for k in opts["evict"].exprs]
        select = SELECT
        if "admit" in opts:
            pool.admit_via = self.admit_via(p.name, info.size, opts["admit"].refs[0])
            regs = self.res.stages[pool.admit_via.name].registers
            select = replace(SELECT, registers=frozenset(regs))
        if "queue" in opts and opts["queue"].form == "by":
            pool.queue = self.queue_keys(p.name, opts["queue"].exprs, select)
        if "preempt" in opts:
            self.preempt(pool, opts["preempt"])
        if "spill" in opts:
            pool.spill = self.spill(p.name, opts["spill"])
        return pool

    def admit_via(self, pool: str, size: Optional[int], stage: S.EName) -> ir.Ref:
        """`admit via S`: S is a step stage, paired member for member (§2.3)."""
        ref = pair(self.res, pool, size, "admit via", stage, "stage")
        kind = self.res.stages[stage.name].kind
        if kind != "step":
            raise self.res.err(f"`admit via {stage.name}`: `{stage.name}` is not a step "
                               f"stage (it runs no iterations)", ref.pos,
                               f"`{stage.name}` is a {kind} stage; a pool is admitted by "
                               "the iterations of a `step` stage")
        return ref

    def queue_keys(self, pool: str, keys: list[S.Expr], moment: Moment) -> list[ir.Expr]:
        draw = first_draw(keys)
        if draw is not None:
            raise self.res.err(f"pool `{pool}`: a queue key may not draw; sample into an "
                               "attribute first", draw.pos)
        return [self.res.expr(k, moment) for k in keys]

    def preempt(self, pool: ir.Pool, o: S.POption) -> None:
        if o.form == "none":
            return
        pool.preempt, pool.requeue = "by", o.requeue
        if o.form == "lifo":
            pool.preempt_keys = [ir.Unary("-", ir.Ctx("admission"))]  # by (-admission)
            return
        res, name = self.res, pool.name
        draw = first_draw(o.exprs)
        if draw is not None:
            raise res.err(f"pool `{name}`: a preempt key may not draw (`~`): it is read "
                          "for every candidate at every growth that does not fit; sample "
                          "into an attribute first", draw.pos)
        computed = first_read(o.exprs, ("computed",))
        if computed is not None:
            raise res.err(f"pool `{name}`: a preempt key reads `computed`, the position at "
                          "the session's last preemption (0 for one never preempted); a "
                          "preempt key reads `position`, where the candidate is now",
                          computed.pos)
        budget = first_call(o.exprs, ("budget_left",))
        if budget is not None:
            raise res.err(f"pool `{name}`: a preempt key may not read `budget_left(…)`: a "
                          "victim is chosen while the iteration that would answer it is "
                          "being planned", budget.pos)
        pool.preempt_keys = [res.expr(k, VICTIM) for k in o.exprs]

    def spill(self, pool: str, o: S.POption) -> ir.Spill:
        res = self.res
        tier_e, link_e = o.refs
        work_e, when_e = o.exprs
        tier = res.ref(tier_e, EVICT, {}, kind="pool")
        link = res.ref(link_e, EVICT, {})
        work = res.expr(work_e, EVICT)
        k = fold(work)
        if k is not None and not k >= 0:
            what = ("the amount is NaN, not a number of units, tokens or seconds"
                    if k != k else "an amount of units, tokens or seconds is a number, "
                    "and not negative")
            raise res.err(f"pool `{pool}`: the spill work is {shortest(k)}: {what}",
                          work_e.pos)
        return ir.Spill(tier, link, work, res.expr(when_e, EVICT))
