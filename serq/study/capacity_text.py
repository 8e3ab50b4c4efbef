"""The text of a capacity result: a table (one row per configuration) and
the verdicts a capacity planner reads: the capacity with its 95 % interval,
the cheapest configuration that carries the load, and the configurations
that cannot be told apart at the budget spent."""
from __future__ import annotations

import math
from typing import Any

from ..report.text_report import table

_STATUS = {
    "found": "",
    "imprecise": "precision not reached",
    "unbounded": "every load tried holds",
    "none": "every load tried fails",
}


def _num(x: float) -> str:
    if not math.isfinite(x):
        return "inf" if x == math.inf else "-"
    return f"{x:.4g}"


def config_name(config: dict) -> str:
    """`max_seqs=8, replicas=2` (or `-` without a grid)."""
    return ", ".join(f"{k}={v}" for k, v in config.items()) or "-"


def _interval(c: Any) -> str:
    if c.status == "unbounded":
        return f"≥ {_num(c.low)}"
    if c.status == "none":
        return f"< {_num(c.high)}"
    return f"{_num(c.low)} – {_num(c.high)}"


def _note(c: Any, precision: float) -> str:
    """The status note; a found interval wider than the precision says that
    its final batch, sized for the precision, came out wider (it is not
    replaced: see serq.study.capacity_search)."""
    if c.status == "found" and c.relative_half_width > precision:
        return f"final batch wider than the ±{100 * precision:.3g}% aimed at"
    return _STATUS.get(c.status, c.status)


def capacity_text(result: Any) -> str:
    """The whole text (see the module text)."""
    grid = bool(result.grid)
    head = (["config"] if grid else []) + [
        "capacity", "95% interval", "±rel", "binding SLO", "goodput", "throughput", "at",
        "runs", "events"] + (["cost"] if result.cost else []) + ["note"]
    rows = []
    for c in result.configs:
        rel = c.relative_half_width
        row = ([config_name(c.config)] if grid else []) + [
            _num(c.estimate), _interval(c), f"{100 * rel:.1f}%" if math.isfinite(rel) else "-",
            c.binding or "-", _num(c.goodput), _num(c.throughput), _num(c.goodput_at), str(c.runs),
            f"{c.events:.0f}"] + ([_num(c.cost)] if result.cost else []) + [
            _note(c, result.precision)]
        rows.append(row)
    slos = ", ".join(s.text for s in result.slos)
    lines = [f"capacity: the largest {result.vary} at which {slos} "
             f"{'holds' if len(result.slos) == 1 else 'hold'}",
             f"95% intervals, each from a final batch on seeds no other probe ran; "
             f"replication i of a probe runs with seed {result.base_seed}+i (of a final "
             f"batch, {result.base_seed}+first+i); goodput and throughput at the "
             f"highest probe below the capacity (at)"]
    lines += table(head, rows)
    lines.append("")
    lines += _verdicts(result)
    lines.append(f"{result.runs} runs ({result.computed} computed, {result.reused} read back"
                 + (f" from {result.out}" if result.out else "") + f"), "
                 f"{result.events:.0f} simulated events")
    return "\n".join(lines) + "\n"


def _verdicts(result: Any) -> list[str]:
    out = []
    if result.load is not None:
        name, value = result.load
        best = result.cheapest()
        if best is not None:
            who = config_name(best.config) if result.grid else "the configuration"
            cost = f" (cost {_num(best.cost)})" if best.cost is not None else ""
            out.append(f"load {name}={_num(value)}: the cheapest configuration that carries "
                       f"it is {who}{cost}: capacity {_interval(best)}")
        else:
            out.append(f"load {name}={_num(value)}: no configuration surely carries it")
        for c in result.undecided():
            out.append(f"  {config_name(c.config)}: its interval {_interval(c)} contains "
                       f"the load: whether it carries it cannot be told at this budget "
                       f"(a smaller --precision or more --max-runs decide)")
    for i, j in result.overlapping():
        a, b = result.configs[i], result.configs[j]
        out.append(f"cannot be told apart at this budget: {config_name(a.config)} and "
                   f"{config_name(b.config)} (intervals {_interval(a)} and {_interval(b)} "
                   f"overlap)")
    return out
