"""`run --dump DIR` (spec Part 06 §11.2): the raw samples and gauge traces as CSV.

Files: `DIR/NAME.csv` per observation and `DIR/client/{ttft,tpot,response}.csv`
(header `time,session,turn,value`, samples after warm-up in recording order),
`DIR/client/requests.csv` (the per-request table, `serq.report.requests`:
session, turn, arrival, end, prompt and output tokens, ttft, tpot, e2e),
and `DIR/gauge/NAME.csv` per gauge (header `time,value`, every change point
from time 0). Numbers are written in shortest round-trip decimal form.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Union

from .json_report import number_text
from .model import CLIENT_SERIES, Report, Series


def _series_csv(series: Series) -> str:
    rows = ["time,session,turn,value"]
    for t, session, turn, value in zip(series.times, series.sessions, series.turns,
                                       series.values):
        rows.append(f"{number_text(t)},{int(session)},{int(turn)},{number_text(value)}")
    return "\n".join(rows) + "\n"


def _points_csv(points: list[tuple[float, float]]) -> str:
    rows = ["time,value"] + [f"{number_text(t)},{number_text(v)}" for t, v in points]
    return "\n".join(rows) + "\n"


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def write_dump(report: Report, directory: Union[str, os.PathLike]) -> None:
    """Write the dump into `directory`, creating it; raises `OSError` on failure."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    for name, series in report.observes.items():
        _write(root / f"{name}.csv", _series_csv(series))
    if report.gauges:
        (root / "gauge").mkdir(exist_ok=True)
        for name, gauge in report.gauges.items():
            _write(root / "gauge" / f"{name}.csv", _points_csv(gauge.points))
    (root / "client").mkdir(exist_ok=True)
    for name in CLIENT_SERIES:
        _write(root / "client" / f"{name}.csv", _series_csv(report.client.get(name, Series())))
    _write(root / "client" / "requests.csv", report.requests().csv())
