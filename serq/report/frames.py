"""`Report.to_pandas()`: the report as tidy pandas frames, one per section.

| section | one row per | columns |
|---|---|---|
| `observations` | observation (`series` "observe") and client series (`series` "client") | series, name, count, mean, ci, cv2, p99, then the other percentiles (p50, p90, p95 by default) |
| `samples` | sample after warm-up, of every observation and client series | series, name, time, session, turn, value |
| `stages` | stage or array member | the JSON's stage keys (name, index, mean_number, …) |
| `pools` | pool or array member | the JSON's pool keys, `over_cap` split into over_cap_queue, over_cap_need |
| `gauges` | gauge | name, mean, ci, min, max |
| `claims` | claim | name, kind, result, checked, failures, first, note |

Numbers the JSON writes as null are NaN (`ci` below 40 samples is +inf, as
on the `Report`); `index` is a nullable integer (<NA> for a single stage or
pool). Every frame's `attrs` carry the run line (horizon, end, warmup, seed,
events, arrivals, ended, turns, mean_live), so frames of several runs can be
told apart; add a column (`df.assign(seed=report.seed)`) before
concatenating them.

pandas is an optional dependency (`pip install pandas`, or `pip install -e '.[pandas]'`
in a clone).
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Optional

from ..stats.summary import percentile_key
if TYPE_CHECKING:  # `Report.to_pandas` imports this module; its row classes are `Report.ROWS`
    from .model import Report

SECTIONS: tuple[str, ...] = ("observations", "samples", "stages", "pools", "gauges", "claims")

_SUMMARY = ("count", "mean", "ci", "cv2", "p99")
_SAMPLE = ("series", "name", "time", "session", "turn", "value")
_GAUGE = ("name", "mean", "ci", "min", "max")
_OVER_CAP = ("over_cap_queue", "over_cap_need")  # a pool row's `over_cap` pair, split


def _fields(report: Report, section: str) -> tuple[str, ...]:
    """The columns of a section of rows: its row class's fields (`Report.ROWS`)."""
    names = tuple(f.name for f in dataclasses.fields(report.ROWS[section]))
    return names if section != "pools" else \
        tuple(n for n in names if n != "over_cap") + _OVER_CAP


def load_pandas() -> Any:
    """pandas, imported on first use, or an ImportError saying how to install it."""
    try:
        import pandas
    except ImportError:
        raise ImportError(
            "Report.to_pandas() needs pandas, an optional dependency of serq-simpy: "
            "install it with `pip install pandas` (from a clone of serq-simpy: "
            "`pip install -e '.[pandas]'`); "
            "the report's attributes and `report.json()` need nothing else") from None
    return pandas


def _series(report: Report) -> list[tuple[str, str, Any]]:
    return ([("observe", n, s) for n, s in report.observes.items()]
            + [("client", n, s) for n, s in report.client.items()])


def _observations(report: Report) -> dict[str, list]:
    ranks = [(percentile_key(q), q) for q in report.percentiles if q != 99.0]
    cols: dict[str, list] = {c: [] for c in ("series", "name") + _SUMMARY}
    cols.update((key, []) for key, _q in ranks)
    for kind, name, series in _series(report):
        summary = series.summary(report.percentiles)
        cols["series"].append(kind)
        cols["name"].append(name)
        for c in _SUMMARY:
            cols[c].append(getattr(summary, c))
        for key, q in ranks:
            cols[key].append(summary.percentile(q))
    return cols


def _samples(report: Report) -> dict[str, list]:
    cols: dict[str, list] = {c: [] for c in _SAMPLE}
    for kind, name, series in _series(report):
        n = len(series.values)
        cols["series"] += [kind] * n
        cols["name"] += [name] * n
        cols["time"] += series.times
        cols["session"] += [int(x) for x in series.sessions]
        cols["turn"] += [int(x) for x in series.turns]
        cols["value"] += series.values
    return cols


def _rows(rows: list[Any], columns: tuple[str, ...]) -> dict[str, list]:
    cols: dict[str, list] = {c: [] for c in columns}
    pools = _OVER_CAP[-1] in columns
    for row in rows:
        values = dataclasses.asdict(row)
        over = values.pop("over_cap", None) if pools else None
        if pools:
            values["over_cap_queue"] = None if over is None else over[0]
            values["over_cap_need"] = float("nan") if over is None else over[1]
        for c in columns:
            cols[c].append(values[c])
    return cols


def _gauges(report: Report) -> dict[str, list]:
    cols: dict[str, list] = {c: [] for c in _GAUGE}
    for name, g in report.gauges.items():
        cols["name"].append(name)
        for c in _GAUGE[1:]:
            cols[c].append(getattr(g, c))
    return cols


def _columns(report: Report, section: str) -> dict[str, list]:
    if section == "observations":
        return _observations(report)
    if section == "samples":
        return _samples(report)
    if section == "stages":
        return _rows(report.stages, _fields(report, "stages"))
    if section == "pools":
        return _rows(report.pools, _fields(report, "pools"))
    if section == "gauges":
        return _gauges(report)
    return _rows(report.claims or [], _fields(report, "claims"))


def _frame(report: Report, section: str) -> Any:
    pd = load_pandas()
    df = pd.DataFrame(_columns(report, section))
    if "index" in df.columns:
        df["index"] = df["index"].astype("Int64")
    df.attrs.update(run_line(report))
    return df


def run_line(report: Report) -> dict[str, Any]:
    """The run line of the report (what every frame's `attrs` carry)."""
    return {"horizon": report.horizon, "end": report.end, "warmup": report.warmup,
            "seed": report.seed, "events": report.events, "arrivals": report.arrivals,
            "ended": report.ended, "turns": report.turns, "mean_live": report.mean_live}


def frames(report: Report, section: Optional[str] = None) -> Any:
    """Every section's frame (a dict, in `SECTIONS` order), or `section`'s."""
    if section is None:
        load_pandas()
        return {name: _frame(report, name) for name in SECTIONS}
    if section not in SECTIONS:
        raise ValueError(f"to_pandas: no section `{section}`; the sections are "
                         + ", ".join(SECTIONS))
    return _frame(report, section)
