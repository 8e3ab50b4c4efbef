"""Claims: statements about a run that read it and never act (spec Part 06 §8).

`every`/`some iteration of S (e)` are read when an iteration of S starts,
after its batch is formed; `given (g)` per session once its init has run;
`at end (e)` once, when the run ends, over the observations' values from
time 0 (warm-up included).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ...core import ir
from ...report.model import ClaimRow
from ..compile.exprs import ExprCompiler, Scope
from ..compile import names as N

ITERATION = ("tokens", "prefilled", "decoders", "residents", "kv_decode", "kv_prefill",
             "attention", "demand", "served", "arrived")


def _total(v: list[float]) -> float:
    t = 0.0
    for x in v:
        t += x
    return t


def _prefix_total(v: list[float]) -> float:
    total = run = 0.0
    for x in sorted(v):
        run += x
        total += run
    return total


AGGREGATES: dict[str, Callable[[list[float]], float]] = {
    "total": _total,
    "count": lambda v: float(len(v)),
    "largest": lambda v: max(v) if v else 0.0,
    "smallest": lambda v: min(v) if v else 0.0,
    "prefix_total": _prefix_total,
}


class ClaimState:
    """One claim's reading so far."""

    def __init__(self, decl: ir.Claim, value: Callable, given: Optional[Callable],
                 stage: Any):
        self.decl = decl
        self.value = value
        self.given = given
        self.stage = stage
        self.checked = 0
        self.failures = 0
        self.first: Optional[float] = None
        self.note: Optional[str] = None
        self.out = False
        self.result: Optional[str] = None


class Claims:
    """Every claim of a program, compiled once."""

    def __init__(self, claims: list[ir.Claim], exprs: ExprCompiler, attrs: dict[str, str],
                 stages: Callable[[ir.Ref], Any], registers: Callable[[Any], list[str]]):
        self.states: list[ClaimState] = []
        self.all_values: dict[str, list[float]] = {}
        ns = exprs.ns
        for name in sorted({n.name for c in claims for n in _aggregates(c.value)}):
            self.all_values[name] = []
        for fn, agg in AGGREGATES.items():
            ns.globals[f"{N.AGGREGATE}{fn}"] = agg
        for name, values in self.all_values.items():
            exprs.obs_lists[name] = ns.bind(values, "allv")
        for c in claims:
            stage = stages(c.stage) if c.stage is not None else None
            if c.kind == "at_end":
                value = ns.function("", exprs.expr(c.value, Scope(None, None, attrs)), "claim")
            else:
                ctx = {n: n for n in ITERATION}
                for r in registers(stage):
                    ctx[r] = f"R[{r!r}]"
                value = ns.function(", ".join(ITERATION + ("R",)),
                                    exprs.expr(c.value, Scope(None, None, attrs, ctx)), "claim")
            given = None
            if c.given is not None:
                given = ns.function("s", exprs.expr(c.given, Scope("s", None, attrs)), "given")
            self.states.append(ClaimState(c, value, given, stage))
        self.iteration_claims: dict[Any, list[ClaimState]] = {}
        for st in self.states:
            if st.stage is not None:
                self.iteration_claims.setdefault(st.stage, []).append(st)

    def session_created(self, s: Any) -> None:
        """Given moment: a session's init has run."""
        for st in self.states:
            if st.given is not None and not st.out and st.given(s) == 0:
                st.out = True
                st.result = "out_of_scope"
                st.note = f"session {s.sid} fails `given`"

    def iteration(self, stage: Any, now: float, values: tuple) -> None:
        """An iteration of `stage` starts; its claims read it."""
        for st in self.iteration_claims.get(stage, ()):
            if st.out:
                continue
            ok = st.value(*values, stage.registers) != 0
            st.checked += 1
            if not ok:
                st.failures += 1
            kind = st.decl.kind
            if st.first is None and ((kind == "every_iteration" and not ok)
                                     or (kind == "some_iteration" and ok)):
                st.first = now

    def rows(self, live: int, end: float) -> list[ClaimRow]:
        """The report's claim objects (§8.3)."""
        out = []
        for st in self.states:
            kind = st.decl.kind
            if st.out:
                result = "out_of_scope"
            elif kind == "at_end":
                if live > 0:
                    result = "not_evaluated"
                    st.note = f"{live} session{'s' if live != 1 else ''} live at the end"
                else:
                    ok = st.value() != 0
                    st.checked = 1
                    st.failures = 0 if ok else 1
                    result = "holds" if ok else "fails"
                    st.first = None if ok else end
            elif kind == "every_iteration":
                result = "fails" if st.failures else "holds"
            else:
                result = "witnessed" if st.first is not None else "not_witnessed"
            out.append(ClaimRow(name=st.decl.name, kind=kind, result=result,
                                checked=st.checked, failures=st.failures,
                                first=st.first, note=st.note))
        return out


def _aggregates(e: Any):
    return (n for n in ir.walk(e) if isinstance(n, ir.ObsAggregate))
