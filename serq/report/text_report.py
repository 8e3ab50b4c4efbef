"""The text report (spec Part 06 §10), upstream 0.1.3's layout plus serq-simpy's `client` table.

Every line ends with a newline. Fixed-point numbers print `NaN` for NaN
and `inf` for an infinite value (so an interval without samples reads
`±inf`).
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

from ..stats.summary import Summary
from .json_report import number_text
from .model import CLAIM_KINDS, ClaimRow, Report

_SUMMARY_HEADER = ("count", "mean", "95% CI", "cv2", "p99")


def fixed(x: float, digits: int) -> str:
    """`x` with `digits` decimals (ties to even on the exact binary value), `NaN`/`inf`/`-inf`."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}f}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]], left: bool = False) -> list[str]:
    """A section: a blank line, the header, a rule of dashes, the rows.

    Each column is as wide as its widest cell (in characters); columns are
    separated by two spaces; the first column is left-aligned, the others
    right-aligned (left-aligned too when `left`); trailing spaces trimmed.
    """
    widths = [max([len(header[c])] + [len(r[c]) for r in rows]) for c in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        out = cells[0].ljust(widths[0])
        for cell, width in zip(cells[1:], widths[1:]):
            out += "  " + (cell.ljust(width) if left else cell.rjust(width))
        return out.rstrip()

    return ["", line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def _summary_cells(name: str, s: Summary) -> list[str]:
    return [name, str(s.count), fixed(s.mean, 4), "±" + fixed(s.ci, 4), fixed(s.cv2, 3),
            fixed(s.p99, 4)]


def _iterations(n: int) -> str:
    return f"{n} iteration" + ("" if n == 1 else "s")


def claim_result(c: ClaimRow) -> str:
    """A claim's result as the text report says it (§10)."""
    at = "" if c.first is None else f" at {fixed(c.first, 4)}"
    at_end = c.kind == "at_end"
    note = c.note or ""
    if c.result == "holds":
        return "holds" if at_end else f"holds ({_iterations(c.checked)})"
    if c.result == "fails":
        return "fails" if at_end else f"fails{at} ({c.failures} of {_iterations(c.checked)})"
    if c.result == "witnessed":
        return f"witnessed{at} ({_iterations(c.checked)})"
    if c.result == "not_witnessed":
        return f"not witnessed ({_iterations(c.checked)})"
    if c.result == "not_evaluated":
        return f"not evaluated: {note}"
    if c.result == "out_of_scope":
        return f"out of scope: {note}"
    raise ValueError(f"unknown claim result {c.result!r}")


def _run_line(r: Report) -> str:
    return (f"run: horizon {number_text(r.horizon)} end {number_text(r.end)} "
            f"warmup {number_text(r.warmup)} seed {r.seed} events {r.events} "
            f"arrivals {r.arrivals} ended {r.ended} turns {r.turns} "
            f"mean live {fixed(r.mean_live, 3)}")


def _observes(r: Report) -> list[str]:
    if not r.observes:
        return []
    rows = [_summary_cells(n, s) for n, s in r.observe_summaries().items()]
    lines = table(("observe",) + _SUMMARY_HEADER, rows)
    for name, series in r.observes.items():
        if series.never_held():
            lines.append(f"note: observe {name} is constant 0 over {len(series.values)} samples")
    return lines


def _client(r: Report) -> list[str]:
    if not r.has_client_samples():
        return []
    rows = [_summary_cells(n, s) for n, s in r.client_summaries().items()]
    return table(("client",) + _SUMMARY_HEADER, rows)


def _gauges(r: Report) -> list[str]:
    if not r.gauges:
        return []
    rows = [[n, fixed(g.mean, 4), "±" + fixed(g.ci, 4), fixed(g.min, 4), fixed(g.max, 4)]
            for n, g in r.gauges.items()]
    return table(("gauge", "mean", "95% CI", "min", "max"), rows)


def _claims(r: Report) -> list[str]:
    if not r.claims:
        return []
    rows = [[c.name, CLAIM_KINDS[c.kind], claim_result(c)] for c in r.claims]
    return table(("claim", "kind", "result"), rows, left=True)


def _stages(r: Report) -> list[str]:
    if not r.stages:
        return []
    rows = [[s.label, fixed(s.mean_number, 3), fixed(s.utilization, 3), str(s.completed),
             fixed(s.throughput, 4), fixed(s.mean_wait, 4), fixed(s.mean_service, 4),
             str(s.iterations)] for s in r.stages]
    return table(("stage", "number", "util", "done", "thru", "wait", "service", "iters"), rows)


def _step(r: Report) -> list[str]:
    steps = [s for s in r.stages if s.iterations > 0]
    if not steps:
        return []
    rows = [[s.label, fixed(s.prefill_only, 3), fixed(s.decode_only, 3), fixed(s.mixed, 3),
             fixed(1.0 - s.prefill_only - s.decode_only - s.mixed, 3), fixed(s.mean_decodes, 3),
             fixed(s.mean_decode_batch, 3), fixed(s.mean_decode_step, 6), fixed(s.itl_p50, 6),
             fixed(s.itl_p99, 6)] for s in steps]
    header = ("step", "prefill only", "decode only", "mixed", "idle", "decodes", "decode batch",
              "decode step", "itl p50", "itl p99")
    return table(header, rows)


def _over_line(pool_label: str, over: Optional[tuple[str, float]]) -> list[str]:
    if over is None:
        return []
    queue, need = over
    return [f"over: the head of pool `{queue}`'s queue asks `{pool_label}` for "
            f"{number_text(need)}, above its cap, when the run ends, and waits (its hold reads "
            f"the deployment's state, so joining the queue did not reject it)"]


def _pools(r: Report) -> list[str]:
    if not r.pools:
        return []
    rows = [[p.label, fixed(p.mean_used, 1), fixed(p.mean_cached, 1), fixed(p.mean_queue, 3),
             fixed(p.mean_holders, 3), fixed(p.mean_wait, 4), str(p.admissions),
             str(p.evicted_entries), fixed(p.evicted_units, 0), str(p.preemptions),
             str(p.spills), str(p.rejected), str(p.stuck)] for p in r.pools]
    header = ("pool", "used", "cached", "queue", "holders", "wait", "admits", "evict(n)",
              "evict(u)", "preempt", "spill", "rej", "stuck")
    lines = table(header, rows)
    for p in r.pools:
        if p.stuck > 0:
            lines.append(f"stuck: {p.stuck} session(s) preempted again at pool `{p.label}` "
                         f"without passing the position of their previous preemption")
        if p.rejected > 0:
            lines.append(f"rej: {p.rejected} session(s) ended at pool `{p.label}` "
                         f"asking for more than its cap")
        lines += _over_line(p.label, p.over_cap)
    return lines


def _idle(r: Report) -> list[str]:
    return [f"idle: stage `{s.label}` ended with residents or waiting requests, its last "
            f"iteration scheduling nothing (a body or `serve only` that serves and admits "
            f"nobody waits for an event)" for s in r.stages if s.idle_with_work]


def to_text(report: Report) -> str:
    """The whole text report, each line ending in a newline (§10)."""
    lines = [_run_line(report)]
    for section in (_observes, _client, _gauges, _claims, _stages, _step, _pools, _idle):
        lines += section(report)
    return "\n".join(lines) + "\n"
