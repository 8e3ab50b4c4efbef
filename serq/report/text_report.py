"""The text report (spec Part 06 §10): upstream 0.1.3's layout and sections plus
serq-simpy's `client` table, with numbers written for people.

Every line ends with a newline. The layout (sections, columns, alignment,
the notes after the pool table) is upstream's; the figures are written with
the significant digits their magnitude needs (`numbers.py`: a mean and its
interval share their decimals, `–` marks an undefined figure), and the
report ends with plain-word warnings about figures that cannot be trusted
(`trust.py`). Tools read `--json`, whose numbers are exact.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple, Optional, Sequence

from ..stats.summary import Summary, percentile_key
from .json_report import number_text
from .numbers import mean_cells, share, sig
from .trust import findings

if TYPE_CHECKING:  # the report's classes are read, never built, here: `model` imports this module
    from .model import ClaimRow, Report

#: Claim kinds (JSON spelling, §9.3) and how the text report says them (§10).
CLAIM_KINDS: dict[str, str] = {
    "every_iteration": "every iteration",
    "some_iteration": "some iteration",
    "at_end": "at end",
}

class Section(NamedTuple):
    """One table of the report: its header, its rows of cells, the notes
    printed after it, and whether every column is left-aligned."""

    header: Sequence[str]
    rows: list[list[str]]
    notes: Sequence[str] = ()
    left: bool = False


def summary_header(percentiles: Sequence[float]) -> tuple[str, ...]:
    """The columns of an observe or client table: count, mean, interval, cv2
    and the percentiles (p99 always)."""
    qs = sorted(set(percentiles) | {99.0})
    return ("count", "mean", "95% CI", "cv2") + tuple(percentile_key(q) for q in qs)


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


def summary_cells(name: str, s: Summary) -> list[str]:
    """A table row of `summary_header(q for q, _ in s.percentiles)`: the
    percentiles share the mean's decimals."""
    values = dict(s.percentiles)
    values[99.0] = s.p99
    mean, ci, *ranks = mean_cells(s.mean, s.ci, *(values[q] for q in sorted(values)))
    return [name, str(s.count), mean, ci, sig(s.cv2, 3)] + ranks



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


def _observes(r: Report) -> Optional[Section]:
    if not r.observes:
        return None
    rows = [summary_cells(n, s) for n, s in r.observe_summaries().items()]
    notes = [f"note: observe {name} is constant 0 over {len(series.values)} samples"
             for name, series in r.observes.items() if series.never_held()]
    return Section(("observe",) + summary_header(r.percentiles), rows, notes)


def _client(r: Report) -> Optional[Section]:
    if not r.has_client_samples():
        return None
    rows = [summary_cells(n, s) for n, s in r.client_summaries().items()]
    t = r.throughput
    return Section(("client",) + summary_header(r.percentiles), rows, [
        f"throughput: {sig(t.requests)} requests, {sig(t.input_tokens)} input tokens, "
        f"{sig(t.output_tokens)} output tokens per time unit"])


def _gauges(r: Report) -> Optional[Section]:
    if not r.gauges:
        return None
    rows = [[n] + mean_cells(g.mean, g.ci, g.min, g.max) for n, g in r.gauges.items()]
    return Section(("gauge", "mean", "95% CI", "min", "max"), rows)


def _claims(r: Report) -> Optional[Section]:
    if not r.claims:
        return None
    rows = [[c.name, CLAIM_KINDS[c.kind], claim_result(c)] for c in r.claims]
    return Section(("claim", "kind", "result"), rows, left=True)


def _stages(r: Report) -> Optional[Section]:
    if not r.stages:
        return None
    rows = [[s.label, sig(s.mean_number), share(s.utilization), str(s.completed),
             sig(s.throughput), sig(s.request_throughput), sig(s.mean_wait),
             sig(s.mean_service), str(s.iterations)] for s in r.stages]
    return Section(("stage", "number", "util", "jobs", "jobs/t", "requests/t", "wait",
                    "service", "iters"), rows)


def _step(r: Report) -> Optional[Section]:
    steps = [s for s in r.stages if s.iterations > 0]
    if not steps:
        return None
    rows = [[s.label, share(s.prefill_only), share(s.decode_only), share(s.mixed),
             share(1.0 - s.prefill_only - s.decode_only - s.mixed), sig(s.mean_decodes),
             sig(s.mean_decode_batch), sig(s.mean_decode_step), sig(s.itl_p50),
             sig(s.itl_p99)] for s in steps]
    header = ("step", "prefill only", "decode only", "mixed", "idle", "decodes", "decode batch",
              "decode step", "itl p50", "itl p99")
    return Section(header, rows)


def _over_line(pool_label: str, over: Optional[tuple[str, float]]) -> list[str]:
    if over is None:
        return []
    queue, need = over
    return [f"over: the head of pool `{queue}`'s queue asks `{pool_label}` for "
            f"{number_text(need)}, above its cap, when the run ends, and waits (its hold reads "
            f"the deployment's state, so joining the queue did not reject it)"]


def _pools(r: Report) -> Optional[Section]:
    if not r.pools:
        return None
    rows = [[p.label, sig(p.mean_used), sig(p.mean_cached), sig(p.mean_queue),
             sig(p.mean_holders), sig(p.mean_wait), str(p.admissions),
             str(p.evicted_entries), number_text(p.evicted_units), str(p.preemptions),
             str(p.spills), str(p.rejected), str(p.stuck)] for p in r.pools]
    header = ("pool", "used", "cached", "queue", "holders", "wait", "admits", "evict(n)",
              "evict(u)", "preempt", "spill", "rej", "stuck")
    lines: list[str] = []
    for p in r.pools:
        if p.stuck > 0:
            lines.append(f"stuck: {p.stuck} session(s) preempted again at pool `{p.label}` "
                         f"without passing the position of their previous preemption")
        if p.rejected > 0:
            lines.append(f"rej: {p.rejected} session(s) ended at pool `{p.label}` "
                         f"asking for more than its cap")
        lines += _over_line(p.label, p.over_cap)
    return Section(header, rows, lines)


def _idle(r: Report) -> list[str]:
    return [f"idle: stage `{s.label}` ended with residents or waiting requests, its last "
            f"iteration scheduling nothing (a body or `serve only` that serves and admits "
            f"nobody waits for an event)" for s in r.stages if s.idle_with_work]


def _warnings(r: Report) -> list[str]:
    found = findings(r)
    return [""] + [f"warning: {w}" for w in found] if found else []


def run_line(report: Report) -> str:
    """The report's first line: horizon, end, warm-up, seed, counts."""
    return _run_line(report)


def sections(report: Report) -> list[Section]:
    """The report's tables in order: observations, client series, gauges,
    claims, stages, step stages, pools (those the report has)."""
    found = (f(report) for f in (_observes, _client, _gauges, _claims, _stages, _step, _pools))
    return [s for s in found if s is not None]


def closing_notes(report: Report) -> list[str]:
    """The lines after the tables: idle stages, then the warnings."""
    return _idle(report) + _warnings(report)


def to_text(report: Report) -> str:
    """The whole text report, each line ending in a newline (§10)."""
    lines = [_run_line(report)]
    for section in sections(report):
        lines += table(section.header, section.rows, left=section.left) + list(section.notes)
    lines += closing_notes(report)
    return "\n".join(lines) + "\n"
