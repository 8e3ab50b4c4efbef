"""What a capacity search returns: per configuration the capacity interval,
the runs and events it took, goodput beside throughput; across
configurations the cheapest that carries a target load and the ones that
cannot be told apart at the budget spent. Text table and JSON.
"""
from __future__ import annotations

import ast
import json
import math
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

from .capacity_search import SearchOutcome
from .slo import SLO

_OPS: dict[type, Callable] = {ast.Add: operator.add, ast.Sub: operator.sub,
                              ast.Mult: operator.mul, ast.Div: operator.truediv,
                              ast.Pow: operator.pow, ast.USub: operator.neg,
                              ast.UAdd: operator.pos}


def parse_cost(text: str, names: Sequence[str]) -> Callable[[dict], float]:
    """`--cost EXPR`: an arithmetic expression (+ − × / ** and parentheses)
    of numbers and grid parameter names, as a function of a configuration."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"--cost {text}: not an arithmetic expression "
                         f"({exc.msg} at column {exc.offset})") from None

    def check(node: ast.AST) -> None:
        if isinstance(node, ast.Expression):
            check(node.body)
        elif isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            check(node.left)
            check(node.right)
        elif isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            check(node.operand)
        elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            pass
        elif isinstance(node, ast.Name):
            if node.id not in names:
                raise ValueError(f"--cost {text}: `{node.id}` is not a --grid parameter "
                                 f"(the grid has {', '.join(names) or 'none'})")
        else:
            raise ValueError(f"--cost {text}: only numbers, --grid names, + - * / ** "
                             "and parentheses")
    check(tree)

    def value(node: ast.AST, env: dict) -> float:
        if isinstance(node, ast.Expression):
            return value(node.body, env)
        if isinstance(node, ast.BinOp):
            return _OPS[type(node.op)](value(node.left, env), value(node.right, env))
        if isinstance(node, ast.UnaryOp):
            return _OPS[type(node.op)](value(node.operand, env))
        if isinstance(node, ast.Constant):
            return float(node.value)
        v = env[node.id]
        if isinstance(v, str):
            raise ValueError(f"--cost {text}: {node.id}={v} is not a number")
        return float(v)
    return lambda config: value(tree, config)


def parse_load(load: Union[str, tuple]) -> tuple[str, float]:
    """`--load NAME=VALUE` → (name, value)."""
    if isinstance(load, tuple):
        return str(load[0]), float(load[1])
    name, eq, value = str(load).partition("=")
    try:
        v = float(value)
    except ValueError:
        v = math.nan
    if not eq or not name.strip() or not math.isfinite(v):
        raise ValueError(f"--load {load}: expected NAME=NUMBER (lam=2.0)")
    return name.strip(), v


@dataclass
class ConfigCapacity:
    """One configuration's capacity: `low`–`high` the 95 % interval,
    `estimate` the fitted crossing; `status` as in `SearchOutcome`;
    `runs`/`events` spent; `goodput`/`throughput` (mean over the
    replications) at `goodput_at`, the highest probe at or below the
    estimate."""

    config: dict
    status: str
    low: float
    high: float
    estimate: float
    replications: int
    binding: Optional[str]
    runs: int
    events: float
    goodput: float
    throughput: float
    cost: Optional[float]
    probes: list[dict] = field(default_factory=list)
    goodput_at: float = math.nan
    bracket: Optional[tuple] = None
    #: The pilot pair (both ran the same seeds from 0: their line gives the slope).
    pair: Optional[tuple] = None
    #: The load of the final batch the interval comes from (`replications`
    #: runs on seeds no other probe ran).
    final: Optional[float] = None

    @classmethod
    def make(cls, config: dict, outcome: SearchOutcome, slos: Sequence[SLO],
             cost: Optional[float]) -> "ConfigCapacity":
        """From a search's outcome."""
        below = [p for p in outcome.probes if not p.overloaded and p.x <= (
            outcome.estimate if math.isfinite(outcome.estimate) else outcome.low)
            and p.goodput]
        at = below[-1] if below else None
        probes = []
        for p in outcome.probes:
            n = p.n
            stats = []
            for k, s in enumerate(slos):
                iv = p.interval(k, n, margin=False)
                stats.append({"slo": s.text, "mean": iv.mean, "half_width": iv.half_width,
                              "n": iv.n})
            probes.append({"x": p.x, "replications": p.n, "first_seed": p.first_seed,
                           "judged_on": n,
                           "verdict": p.verdict(n), "overloaded": p.overloaded,
                           "events": math.fsum(e for e in p.events if math.isfinite(e)),
                           "statistics": stats})
        return cls(dict(config), outcome.status, outcome.low, outcome.high,
                   outcome.estimate, outcome.replications,
                   slos[outcome.binding].text if outcome.binding is not None else None,
                   sum(p.n for p in outcome.probes),
                   math.fsum(e for p in outcome.probes for e in p.events if math.isfinite(e)),
                   _mean(at.goodput) if at else math.nan,
                   _mean(at.throughput) if at else math.nan, cost, probes,
                   at.x if at else math.nan, outcome.bracket, outcome.pair, outcome.final)

    @property
    def relative_half_width(self) -> float:
        """(high − low) / (high + low)."""
        s = self.high + self.low
        return (self.high - self.low) / s if s > 0 and math.isfinite(self.high) else math.inf

    def carries(self, load: float) -> str:
        """"yes" (the whole interval is at or above the load), "no" (below
        it) or "undecided" (the load is inside the interval)."""
        if self.low >= load:
            return "yes"
        if self.high < load:
            return "no"
        return "undecided"

    def to_dict(self) -> dict:
        """Plain data (JSON)."""
        d = {k: getattr(self, k) for k in ("config", "status", "low", "high", "estimate",
                                           "replications", "binding", "runs", "events",
                                           "goodput", "throughput", "goodput_at", "cost",
                                           "bracket", "pair", "final")}
        d["relative_half_width"] = self.relative_half_width
        d["probes"] = self.probes
        return d


def _mean(xs: Sequence[float]) -> float:
    v = [x for x in xs if math.isfinite(x)]
    return math.fsum(v) / len(v) if v else math.nan


@dataclass
class CapacityResult:
    """A finished capacity study (`serq.capacity`). `configs`: one
    `ConfigCapacity` per configuration (one without a grid). With a `load`,
    `cheapest()` is the cheapest configuration that surely carries it."""

    vary: str
    slos: list[SLO]
    configs: list[ConfigCapacity]
    precision: float
    load: Optional[tuple[str, float]]
    cost: Optional[str]
    base_seed: int
    computed: int
    reused: int
    out: Optional[str]
    grid: dict

    @property
    def runs(self) -> int:
        """Replications run (or read back) over all configurations."""
        return sum(c.runs for c in self.configs)

    @property
    def events(self) -> float:
        """Simulated events over all of them."""
        return math.fsum(c.events for c in self.configs)

    def _cost(self, c: ConfigCapacity) -> float:
        return c.cost if c.cost is not None else math.inf

    def cheapest(self) -> Optional[ConfigCapacity]:
        """The cheapest configuration whose interval lies at or above the load."""
        if self.load is None:
            return None
        ok = [c for c in self.configs if c.carries(self.load[1]) == "yes"]
        return min(ok, key=lambda c: (self._cost(c), -c.low)) if ok else None

    def undecided(self) -> list[ConfigCapacity]:
        """Configurations cheaper than `cheapest()` whose interval contains the
        load: whether they carry it cannot be told at this budget."""
        if self.load is None:
            return []
        best = self.cheapest()
        limit = self._cost(best) if best is not None else math.inf
        return [c for c in self.configs if c.carries(self.load[1]) == "undecided"
                and self._cost(c) <= limit and c is not best]

    def overlapping(self) -> list[tuple[int, int]]:
        """Pairs of configurations (indices) whose capacity intervals overlap:
        they cannot be told apart at the budget spent."""
        out = []
        for i, a in enumerate(self.configs):
            for j in range(i + 1, len(self.configs)):
                b = self.configs[j]
                if a.status in ("found", "imprecise") and b.status in ("found", "imprecise") \
                        and a.low <= b.high and b.low <= a.high:
                    out.append((i, j))
        return out

    def to_dict(self) -> dict:
        """Plain data (the JSON result)."""
        best = self.cheapest()
        return {
            "vary": self.vary, "slos": [s.text for s in self.slos],
            "precision": self.precision, "confidence": 0.95, "base_seed": self.base_seed,
            "load": {"name": self.load[0], "value": self.load[1]} if self.load else None,
            "cost": self.cost, "grid": self.grid,
            "configs": [c.to_dict() for c in self.configs],
            "cheapest": self.configs.index(best) if best is not None else None,
            "undecided": [self.configs.index(c) for c in self.undecided()],
            "cannot_tell_apart": [list(p) for p in self.overlapping()],
            "runs": self.runs, "events": self.events,
            "computed": self.computed, "reused": self.reused,
        }

    def json(self) -> str:
        """The JSON result (NaN and infinities as null)."""
        return json.dumps(_clean(self.to_dict()), indent=1)

    def text(self) -> str:
        """The text table, then the verdicts."""
        from .capacity_text import capacity_text
        return capacity_text(self)

    def plot(self, path: Optional[str] = None, config: int = 0) -> Any:
        """The SLO statistics against the varied parameter (one configuration)."""
        from .capacity_plots import search_figure
        return search_figure(self, config, path=path)

    def plot_configs(self, path: Optional[str] = None) -> Any:
        """Capacity (with its interval) per configuration."""
        from .capacity_plots import configs_figure
        return configs_figure(self, path=path)


def _clean(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj
