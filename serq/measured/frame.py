"""The tidy frame every importer returns, and the checks it passes.

One row per request, in arrival order, with the columns of `COLUMNS`:

| column | meaning |
|---|---|
| `request` | the log's request id (text) |
| `session` | 0, 1, … in the order of the sessions' first arrivals |
| `turn` | 1, 2, … the request's place in its session, by arrival |
| `arrival` | seconds from the run's first arrival to the request's send |
| `prompt_tokens`, `output_tokens` | the prompt sent, the tokens generated |
| `cached_tokens` | prompt tokens the server reported cached (NaN: not logged) |
| `ttft` | seconds from the send to the first token |
| `tpot` | (last token − first token) / (output tokens − 1); NaN below 2 tokens |
| `e2e` | seconds from the send to the last token |
| `source_session` | the session as the log names it |
| `line` | the line of the log the request came from |

A request that failed (no first token) keeps its row with NaN times, so a
replay still sends it; the statistics skip it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from .errors import measured_error

#: The columns of a measured run's frame, in order.
COLUMNS = ("request", "session", "turn", "arrival", "prompt_tokens", "output_tokens",
           "cached_tokens", "ttft", "tpot", "e2e", "source_session", "line")

#: The request metrics a run reports (seconds).
METRICS = ("ttft", "tpot", "e2e")


@dataclass
class MeasuredRun:
    """A measured run: its tidy `frame` (see the module text), where it came
    from, the log's kind, and what else the log says (`meta`: engine
    settings, …). `scored` marks the requests a selection `PATH@A:B` keeps
    for scoring (all of them without a selection); a replay sends every
    request."""

    path: str
    kind: str
    frame: Any
    meta: dict = field(default_factory=dict)
    selection: Optional[tuple[float, float]] = None

    @property
    def scored(self) -> Any:
        """The rows a comparison scores (the selection's requests by arrival)."""
        f = self.frame
        if self.selection is None:
            return f
        lo, hi = self.selection
        n = len(f)
        rank = f["arrival"].rank(method="first") - 1
        return f[(rank >= math.floor(lo * n + 1e-9)) & (rank < math.floor(hi * n + 1e-9))]

    @property
    def label(self) -> str:
        """The run as the user named it (with its selection)."""
        if self.selection is None:
            return self.path
        return f"{self.path}@{self.selection[0]:g}:{self.selection[1]:g}"


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_record(rec: dict, path: str, text: Optional[str] = None) -> None:
    """Raise a `MeasuredError` at the record's line when its numbers are
    impossible: a negative or non-finite time or token count, a first token
    after the last."""
    line = rec.get("line")
    for key in ("arrival", "prompt_tokens", "output_tokens"):
        v = rec.get(key)
        if not _finite(v) or v < 0:
            raise measured_error(path, f"{key} is {v!r}: a finite number, at least 0",
                                 line=line, text=text,
                                 help="fix or remove the record")
    for key in ("ttft", "e2e", "cached_tokens", "tpot"):
        v = rec.get(key)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        if not _finite(v) or v < 0:
            raise measured_error(path, f"{key} is {v!r}: a finite number, at least 0",
                                 line=line, text=text, help="fix or remove the record")
    ttft, e2e = rec.get("ttft"), rec.get("e2e")
    if _finite(ttft) and _finite(e2e) and e2e < ttft - 1e-9:
        raise measured_error(path, f"the last token ({e2e:g} s) comes before the first "
                             f"({ttft:g} s)", line=line, text=text,
                             help="the request's times are out of order: fix the record")


def build_frame(records: list[dict], path: str, text: Optional[str] = None) -> Any:
    """The tidy frame of `records` (dicts with the columns' keys; `tpot`,
    `cached_tokens`, `request` and `session` may be missing). Sessions are
    renumbered by first arrival and turns by arrival within the session."""
    import pandas as pd
    if not records:
        raise measured_error(path, "no request records", help="the file has no data line")
    for rec in records:
        check_record(rec, path, text)
    rows = []
    for i, rec in enumerate(records):
        out = int(rec["output_tokens"])
        ttft, e2e = rec.get("ttft"), rec.get("e2e")
        tpot = rec.get("tpot")
        if tpot is None or (isinstance(tpot, float) and math.isnan(tpot)):
            tpot = (e2e - ttft) / (out - 1) if out >= 2 and _finite(ttft) and _finite(e2e) \
                else math.nan
        rows.append({
            "request": str(rec.get("request", i)),
            "source_session": rec.get("session", f"r{i}"),
            "arrival": float(rec["arrival"]),
            "prompt_tokens": int(rec["prompt_tokens"]),
            "output_tokens": out,
            "cached_tokens": _nan(rec.get("cached_tokens")),
            "ttft": _nan(ttft), "tpot": float(tpot), "e2e": _nan(e2e),
            "line": rec.get("line", i + 1)})
    f = pd.DataFrame(rows)
    f["arrival"] = f["arrival"] - f["arrival"].min()
    f = f.sort_values(["arrival", "line"], kind="stable").reset_index(drop=True)
    first = f.groupby("source_session", sort=False)["arrival"].transform("min")
    order = {s: k for k, s in enumerate(
        f.assign(first=first).sort_values(["first", "line"], kind="stable")["source_session"]
        .drop_duplicates())}
    f["session"] = f["source_session"].map(order).astype(int)
    f["turn"] = f.groupby("session").cumcount() + 1
    f["source_session"] = f["source_session"].astype(str)
    return f[list(COLUMNS)]


def _nan(v: Any) -> float:
    return float(v) if _finite(v) else math.nan
