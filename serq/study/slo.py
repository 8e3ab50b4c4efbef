"""Service-level objectives (SLOs): their text, and their statistic in one run.

An SLO is written

- `SERIES:STAT OP LIMIT` — a percentile (`ttft:p99<=0.5`, `tpot:p90<=0.05`,
  `response:p99.9<=30`) or a mean (`ttft:mean<=0.3`) of an observation or
  client series is at most (`<=`) or at least (`>=`) `LIMIT`;
- `SERIES OP LIMIT for P%` — an attainment (DistServe's form): at least P %
  of the samples meet `value OP LIMIT` (`ttft<=0.2 for 90%`).

`SERIES` is an observation or client series name, optionally qualified
(`observe.response`, `client.ttft`). A bad text raises `SloError`, whose
message points at the offending character with a caret, as the program's
errors do.

Each run gives one value per SLO (the statistic over the run's samples after
warm-up: the nearest-rank percentile, the mean, or the attained fraction),
and per request whether it met the limit of every percentile and
attainment SLO (a mean bounds no single request): goodput is the rate of
requests that did (DistServe's goodput), throughput the rate of all
requests with a sample in an SLO's series.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Optional, Sequence

from ..core.errors import ParseError
from ..core.ir import Pos

#: Sections an SLO series may name.
SECTIONS = ("observe", "client")


class SloError(ValueError):
    """An SLO text that cannot be read; `str()` is the message with the text
    and a caret under the offending part, then `help:`."""

    def __init__(self, text: str, col: int, length: int, message: str, help: str):
        self.text, self.col, self.length = text, col, length
        self.message, self.help = message, help
        rendered = ParseError(message, Pos("--slo", 1, col + 1, max(length, 1)),
                              help=help, source=text).format()
        super().__init__(rendered)


@dataclass(frozen=True)
class SLO:
    """One objective. `kind`: "percentile" (`q` in (0, 1)), "mean" or
    "attainment" (`q`: the fraction that must meet it). `op`: "<=" or ">=".
    `section` is None for a bare series name (observations first)."""

    text: str
    series: str
    section: Optional[str]
    kind: str
    q: float
    op: str
    limit: float

    @property
    def stat_name(self) -> str:
        """`mean`, `p99`, `p99.9` (or `fraction` for an attainment)."""
        if self.kind == "attainment":
            return "fraction"
        return "mean" if self.kind == "mean" else f"p{_number(self.q * 100)}"

    @property
    def canonical(self) -> str:
        """The SLO written back in one normal form (the key of its results)."""
        name = f"{self.section}.{self.series}" if self.section else self.series
        if self.kind == "attainment":
            return f"{name}{self.op}{self.limit!r} for {_number(self.q * 100)}%"
        return f"{name}:{self.stat_name}{self.op}{self.limit!r}"

    @property
    def statistic_label(self) -> str:
        """What the SLO's statistic is, for tables and axes."""
        if self.kind == "attainment":
            return f"{self.series} fraction {self.op} {_number(self.limit)}"
        return f"{self.series} {self.stat_name}"

    @property
    def threshold(self) -> float:
        """The value the statistic is compared with."""
        return self.q if self.kind == "attainment" else self.limit

    @property
    def upper(self) -> bool:
        """Whether the statistic must stay at or below `threshold` (else at or above)."""
        if self.kind == "attainment":
            return False
        return self.op == "<="

    def margin(self, value: float) -> float:
        """How far `value` is past the threshold, relative to it: above 0
        violates, below 0 holds (the scale is the limit, or for an
        attainment the allowed miss fraction 1 − P)."""
        if self.kind == "attainment":
            return (self.q - value) / (1.0 - self.q)
        scale = abs(self.limit) or 1.0
        return (value - self.limit) / scale if self.upper else (self.limit - value) / scale

    def meets(self, values: Any) -> Any:
        """Per sample (a numpy array) whether it meets the SLO's limit."""
        return values <= self.limit if self.op == "<=" else values >= self.limit

    def value(self, values: Sequence[float]) -> float:
        """The statistic of one run's samples (NaN without samples)."""
        import numpy as np
        if len(values) == 0:
            return math.nan
        if self.kind == "mean":
            return math.fsum(values) / len(values)
        if self.kind == "percentile":
            from ..stats.summary import nearest_rank
            return nearest_rank(values, self.q)
        return float(np.count_nonzero(self.meets(np.asarray(values, dtype=float)))) \
            / len(values)


def _number(x: float) -> str:
    r = round(x, 9)
    return str(int(r)) if r == int(r) else repr(r)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")
_STAT = re.compile(r"(mean|p[0-9]+(\.[0-9]+)?)\b")
_OP = re.compile(r"<=|>=|<|>|==|=")
_NUM = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")

_HOW = ("write SERIES:STAT<=LIMIT (ttft:p99<=0.5, tpot:mean<=0.05) or "
        "SERIES<=LIMIT for P% (ttft<=0.2 for 90%)")


def parse_slo(text: str) -> SLO:
    """Read one SLO text (see the module text); `SloError` when it is bad."""
    i = _skip(text, 0)
    m = _NAME.match(text, i)
    if not m:
        raise SloError(text, i, 1, "expected a series name (an observation or client "
                       "series)", _HOW)
    head, name_at = m.group(0), i
    i = _skip(text, m.end())
    section, series = None, head
    if "." in head:
        section, series = head.split(".", 1)
        if section not in SECTIONS:
            raise SloError(text, name_at, len(section), f"`{section}` is not a section "
                           "of series", "qualify a name as observe.NAME or client.NAME")
    kind, q = None, math.nan
    if i < len(text) and text[i] == ":":
        i = _skip(text, i + 1)
        s = _STAT.match(text, i)
        if not s:
            end = re.match(r"[A-Za-z0-9_.]*", text[i:])
            raise SloError(text, i, max(1, len(end.group(0)) if end else 1),
                           "expected a statistic: mean or a percentile pNN (p50, p90, "
                           "p99, p99.9)", _HOW)
        stat = s.group(0)
        if stat == "mean":
            kind = "mean"
        else:
            q = float(Decimal(stat[1:]) / 100)  # p99.9 → 0.999 exactly as written
            if not 0 < q < 1:
                raise SloError(text, i, len(stat), f"percentile {stat} is not between "
                               "p0 and p100", "a percentile is pNN with 0 < NN < 100")
            kind = "percentile"
        i = _skip(text, s.end())
    o = _OP.match(text, i)
    if not o or o.group(0) in ("==", "="):
        raise SloError(text, i, len(o.group(0)) if o else 1,
                       "expected a comparison, <= or >=", _HOW)
    op = "<=" if o.group(0) in ("<=", "<") else ">="
    i = _skip(text, o.end())
    limit, i = _limit(text, i)
    i = _skip(text, i)
    if text.startswith("for", i) and (kind is None):
        i = _skip(text, i + 3)
        n = _NUM.match(text, i)
        if not n:
            raise SloError(text, i, 1, "expected a percentage after `for` (for 90%)", _HOW)
        pct = float(n.group(0))
        j = _skip(text, n.end())
        if j >= len(text) or text[j] != "%":
            raise SloError(text, j, 1, "expected `%` after the percentage", _HOW)
        if not 0 < pct < 100:
            raise SloError(text, i, n.end() - i, f"{n.group(0)}% is not between 0% and "
                           "100%", "an attainment is at least P% of requests, 0 < P < 100")
        kind, q, i = "attainment", float(Decimal(n.group(0)) / 100), _skip(text, j + 1)
    elif text.startswith("for", i):
        raise SloError(text, i, 3, "`for P%` makes an attainment and goes without a "
                       ":STAT", "write ttft<=0.2 for 90% (or ttft:p90<=0.2)")
    if i < len(text):
        raise SloError(text, i, len(text) - i, "unexpected text after the SLO", _HOW)
    if kind is None:
        raise SloError(text, name_at + len(head), 1, "the statistic is missing",
                       f"say which: {head}:p99{op}LIMIT, {head}:mean{op}LIMIT, or the "
                       f"attainment {head}{op}LIMIT for 90%")
    return SLO(text, series, section, kind, q, op, limit)


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _limit(text: str, i: int) -> tuple[float, int]:
    n = _NUM.match(text, i)
    if not n:
        raise SloError(text, i, 1, "expected a number (the limit)", _HOW)
    value, j = float(n.group(0)), n.end()
    if not math.isfinite(value):
        raise SloError(text, i, j - i, "the limit is not a finite number", _HOW)
    return value, j


def parse_slos(texts: Sequence[str]) -> list[SLO]:
    """Every SLO of `texts` (at least one; the same SLO twice is refused)."""
    if isinstance(texts, str):
        texts = [texts]
    slos = [parse_slo(t) if not isinstance(t, SLO) else t for t in texts]
    if not slos:
        raise ValueError("a capacity search needs at least one SLO (--slo 'ttft:p99<=0.5')")
    seen: set[str] = set()
    for s in slos:
        if s.canonical in seen:
            raise ValueError(f"the SLO {s.text!r} is given twice")
        seen.add(s.canonical)
    return slos


def check_series(slos: Sequence[SLO], program: Any) -> None:
    """Refuse (`ValueError`) an SLO on a series the linked `program` does not
    record: its observations, and the client series when it has requests."""
    from ..report.model import CLIENT_SERIES
    client = list(CLIENT_SERIES) if program.has_requests else []
    for slo in slos:
        if slo.section in (None, "observe") and slo.series in program.observations:
            continue
        if slo.section in (None, "client") and slo.series in client:
            continue
        names = ", ".join(dict.fromkeys([*program.observations,
                                         *(f"client.{c}" for c in client)])) or "none"
        raise ValueError(f"--slo {slo.text}: the program records no series "
                         f"{slo.series!r} (its series: {names})")


def find_series(report: Any, slo: SLO) -> Any:
    """The series an SLO names in a report (`ValueError` naming those there are)."""
    groups = [("observe", report.observes), ("client", report.client)]
    for section, group in groups:
        if slo.section in (None, section) and slo.series in group:
            return group[slo.series]
    names = ", ".join([*report.observes, *report.client])
    raise ValueError(f"--slo {slo.text}: no observation or client series "
                     f"{slo.series!r} (the program has {names})")


def slo_rows(report: Any, slos: Sequence[SLO]) -> list[tuple[str, str, str, float]]:
    """Per SLO its statistic (`("slo", canonical, "value", v)`), then the run's
    goodput and throughput (`("capacity", …)`: requests per unit of measured
    time meeting the limit of every percentile and attainment SLO / with a
    sample in any SLO's series)."""
    import numpy as np
    rows = []
    keys, oks = [], []
    for slo in slos:
        s = find_series(report, slo)
        vals = np.asarray(s.values, dtype=float)
        rows.append(("slo", slo.canonical, "value", float(slo.value(s.values))))
        # a mean bounds no single request: every request meets it
        oks.append(slo.meets(vals) if slo.kind != "mean" else np.ones(len(vals), dtype=bool))
        keys.append(np.column_stack([np.asarray(s.sessions, dtype=np.int64),
                                     np.asarray(s.turns, dtype=np.int64)]).reshape(-1, 2))
    # a request (session, turn) is good when every sample of it met its SLO
    requests, which = np.unique(np.concatenate(keys), axis=0, return_inverse=True)
    missed = np.zeros(len(requests), dtype=bool)
    np.logical_or.at(missed, which.reshape(-1), ~np.concatenate(oks))
    span = max(report.end - report.warmup, 0.0)
    rate = (lambda n: n / span) if span > 0 else (lambda n: math.nan)
    rows.append(("capacity", "goodput", "value",
                 rate(int(len(requests) - np.count_nonzero(missed)))))
    rows.append(("capacity", "throughput", "value", rate(len(requests))))
    return rows
