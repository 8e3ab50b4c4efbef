"""Reports in notebooks: HTML tables (`_repr_html_`) and short reprs.

A notebook shows the last value of a cell by its `_repr_html_`, or else its
`repr`; a report's dataclass repr would print every sample (hundreds of
kilobytes). These functions give tables of the statistics instead: the
sections of the text report, as HTML.
"""
from __future__ import annotations

from html import escape
from typing import Any, Optional, Sequence

from .numbers import mean_cells, share, sig


def rows_table(header: Sequence[str], rows: Sequence[Sequence[Any]],
               caption: Optional[str] = None) -> str:
    """An HTML table: `header` cells, then `rows` (numbers written with
    `sig`, other cells as text), an optional caption."""
    def cell(v: Any) -> str:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return escape(str(v))
        return str(v) if isinstance(v, int) else sig(v)

    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in r) + "</tr>" for r in rows)
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return (f'<table class="serq">{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def report_html(report: Any) -> str:
    """A report as HTML: the run line, then the text report's tables
    (observations, client series and throughput, gauges, claims, stages,
    step stages, pools) with their notes, then the warnings."""
    from .text_report import closing_notes, run_line, sections
    parts = [f"<p><b>serq-simpy report</b>: {escape(run_line(report))}</p>"]
    for section in sections(report):
        parts.append(rows_table(section.header, section.rows))
        parts += [f"<p>{escape(n)}</p>" for n in section.notes]
    parts += [f"<p>{escape(n)}</p>" for n in closing_notes(report) if n]
    return "<div>" + "".join(parts) + "</div>"


def report_repr(report: Any) -> str:
    """A few lines: the run, then each series' count, mean and p99, each stage's
    utilization (no samples)."""
    lines = [f"<Report horizon={sig(report.horizon)} end={sig(report.end)} "
             f"warmup={sig(report.warmup)} seed={report.seed} arrivals={report.arrivals} "
             f"ended={report.ended}"]
    for group, summaries in (("observe", report.observe_summaries()),
                             ("client", report.client_summaries())):
        for name, s in summaries.items():
            if s.count:
                mean, ci, p99 = mean_cells(s.mean, s.ci, s.p99)
                lines.append(f"  {group} {name}: n={s.count} mean={mean} {ci} p99={p99}")
    for st in report.stages[:8]:
        lines.append(f"  stage {st.label}: util={share(st.utilization)} "
                     f"jobs/t={sig(st.throughput)} requests/t={sig(st.request_throughput)}")
    if len(report.stages) > 8:
        lines.append(f"  … {len(report.stages) - 8} more stages")
    for p in report.pools[:8]:
        lines.append(f"  pool {p.label}: used={sig(p.mean_used)} wait={sig(p.mean_wait)}")
    if len(report.pools) > 8:
        lines.append(f"  … {len(report.pools) - 8} more pools")
    return "\n".join(lines) + "\n  (.text() for the report, .json(), .to_pandas())>"
