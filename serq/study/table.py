"""A sweep's summary for people: which statistic a `--y` text names, the
compact default table of `sweep` and `summary`, the points that do not
settle, and the unit of every statistic (for the table's note and the
figures' axes).

The default table shows the mean and p99 of every observation and of
every client series that is not also an observation (the client series of
the same name measure the same thing), leaves out statistics that are 0 at
every point, and writes each cell as `mean ±half-width` with the decimals
its magnitude needs (`serq.report.numbers`).
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

#: The statistics the sweep and summary tables show by default.
DEFAULT_TABLE_STATS = ("mean", "p99")
#: The row a sweep's run carries: 1 when one of its series grows through the
#: run (`serq.report.trust.growth`), else 0; its mean over a point's
#: replications is the share of them that do not settle.
UNSETTLED = ("run", "run", "unsettled")

Key = tuple[str, str, str]

_TIME = "time units"
_STAGE_UNITS = {"utilization": "fraction of time", "prefill_only": "fraction of time",
                "decode_only": "fraction of time", "mixed": "fraction of time",
                "throughput": "jobs per time unit", "mean_number": "jobs",
                "completed": "jobs", "iterations": "iterations",
                "mean_decodes": "requests", "mean_decode_batch": "requests"}
_POOL_UNITS = {"mean_used": "units", "mean_cached": "units", "evicted_units": "units",
               "mean_queue": "holds", "mean_holders": "holds", "mean_wait": _TIME}
_RUN_UNITS = {"arrivals": "sessions", "ended": "sessions", "turns": "turns",
              "mean_live": "sessions", "events": "events", "unsettled": "share of runs"}


def parse_statistic(text: str, sections: Sequence[tuple[str, str]]) -> tuple[str, str, str]:
    """`ttft:p99`, `client.ttft:p99`, `stage.svc:utilization` → (section, name,
    statistic); a bare name is looked up among `sections` ((section, name) pairs,
    observations first), the statistic defaults to `mean`."""
    head, _, stat = text.partition(":")
    stat = stat or "mean"
    if "." in head and head.split(".", 1)[0] in ("observe", "client", "stage", "pool",
                                                  "gauge", "run"):
        section, name = head.split(".", 1)
        return section, name, stat
    for section in ("observe", "client", "gauge", "stage", "pool", "run"):
        if (section, head) in sections:
            return section, head, stat
    known = ", ".join(sorted({f"{s}.{n}" for s, n in sections}))
    raise ValueError(f"no statistic named {head!r} in the results (known: {known})")


def unit(section: str, name: str, statistic: str) -> str:
    """The unit of a statistic ("" when the program decides it: an observation's
    or a gauge's values are whatever its expression computes). Times are in
    the program's clock ("time units": seconds when its costs are seconds)."""
    if statistic == "count":
        return "samples"
    if statistic == "cv2":
        return ""
    if section == "client":
        return _TIME
    if section == "stage":
        if statistic.startswith(("mean_wait", "mean_service", "mean_itl", "itl_",
                                 "mean_decode_step")):
            return _TIME
        return _STAGE_UNITS.get(statistic, "")
    if section == "pool":
        return _POOL_UNITS.get(statistic, "count")
    if section == "run":
        return _RUN_UNITS.get(statistic, "")
    return ""


def axis_label(section: str, name: str, statistic: str) -> str:
    """`ttft p99 (time units)`: a statistic and its unit, for a figure's axis."""
    u = unit(section, name, statistic)
    return f"{name} {statistic}" + (f" ({u})" if u else "")


def resolve(summary: Any, text: str) -> Key:
    """The (section, name, statistic) a `--y` text names in `summary`, or a
    ValueError that says what the results do have."""
    sections, names, stats = summary["section"], summary["name"], summary["statistic"]
    pairs = set(zip(sections, names))
    section, name, stat = parse_statistic(text, pairs)
    if (section, name) not in pairs:
        known = ", ".join(sorted(f"{s}.{n}" for s, n in pairs if s != "run"))
        raise ValueError(f"`{text}`: the results have no {section} `{name}` (known: {known})")
    have = list(dict.fromkeys(st for s, n, st in zip(sections, names, stats)
                              if (s, n) == (section, name)))
    if stat not in have:
        raise ValueError(f"`{text}`: {section} `{name}` has no statistic `{stat}` in the "
                         f"results (it has {', '.join(have)})")
    return section, name, stat


def default_statistics(summary: Any) -> list[Key]:
    """The compact table's columns (see the module's docstring)."""
    observed = {n for s, n in zip(summary["section"], summary["name"]) if s == "observe"}
    seen: dict[Key, bool] = {}  # key -> some point has a non-zero mean
    for s, n, st, v in zip(summary["section"], summary["name"], summary["statistic"],
                           summary["mean"]):
        if s not in ("observe", "client") or st not in DEFAULT_TABLE_STATS:
            continue
        if s == "client" and n in observed:
            continue
        key = (s, n, st)
        seen[key] = seen.get(key, False) or (v == v and v != 0)
    return [k for k, nonzero in seen.items() if nonzero]


def _points(summary: Any, params: Sequence[str]) -> list[tuple]:
    columns = [list(summary[p]) for p in params]
    return list(zip(*columns)) if params else [()] * len(summary)


def unsettled_points(summary: Any, params: Sequence[str]) -> dict[tuple, tuple[int, int]]:
    """The points at which some replication does not settle:
    point -> (replications that do not settle, replications)."""
    out: dict[tuple, tuple[int, int]] = {}
    rows = zip(_points(summary, params), summary["section"], summary["name"],
               summary["statistic"], summary["mean"], summary["n"])
    for point, s, n, st, mean, count in rows:
        if (s, n, st) == UNSETTLED and mean == mean and mean > 0:
            out[point] = (int(round(mean * count)), int(count))
    return out


def _cell(mean: float, half_width: float) -> str:
    """`mean ±hw`; the mean alone when there is no interval (one replication)."""
    from ..report.numbers import mean_cells
    m, hw = mean_cells(mean, half_width)
    return f"{m} {hw}" if math.isfinite(half_width) else m


def _headers(stats: list[Key]) -> list[str]:
    out = []
    for s, n, st in stats:
        clash = any(n2 == n and s2 != s for s2, n2, _ in stats)
        out.append(f"{s}.{n} {st}" if clash else f"{n} {st}")
    return out


def summary_text(summary: Any, params: list[str], wanted: Sequence[str]) -> str:
    """One row per grid point, one column per statistic (`wanted`, or the
    compact default), `mean ±half-width`; a last column marks the points that
    do not settle. "no finished runs" when the summary is empty."""
    from ..report.text_report import table
    stats = [resolve(summary, w) for w in wanted] if wanted else default_statistics(summary)
    cells: dict[tuple, dict[Key, str]] = {}
    rows = zip(_points(summary, params), summary["section"], summary["name"],
               summary["statistic"], summary["mean"], summary["half_width"])
    for point, s, n, st, mean, hw in rows:
        cells.setdefault(point, {})
        if (s, n, st) in stats:
            cells[point][(s, n, st)] = _cell(mean, hw)
    if not cells:
        return "no finished runs\n"
    unsettled = unsettled_points(summary, params)
    header = list(params) + _headers(stats) + (["settles"] if unsettled else [])
    body = []
    for point, c in cells.items():
        row = [str(v) for v in point] + [c.get(k, "") for k in stats]
        if unsettled:
            k_n = unsettled.get(point)
            row.append(f"no ({k_n[0]}/{k_n[1]})" if k_n else "yes")
        body.append(row)
    lines = table(header, body)[1:]
    if unsettled:
        lines.append("")
        lines.append("settles no (k/n): in k of the point's n runs a series grows through the "
                     "run; its means describe no steady state")
    return "\n".join(lines) + "\n"


def unsettled_warning(summary: Any, params: list[str]) -> Optional[str]:
    """The sweep's warning line about points that do not settle (None when all do)."""
    points = unsettled_points(summary, params)
    if not points:
        return None
    named = "; ".join(", ".join(f"{p}={v}" for p, v in zip(params, point)) +
                      f" ({k}/{n} runs)" for point, (k, n) in points.items())
    return (f"warning: {len(points)} point(s) do not settle — a series grows through the "
            f"run, so its mean and interval describe no steady state (work may arrive "
            f"faster than it is served): {named}")
