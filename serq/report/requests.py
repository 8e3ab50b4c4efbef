"""The per-request table of a run and the throughput figures made from it.

One row per request that ends after warm-up (the rows of the client series
`response`, in its order): the row `vllm bench serve` and Ciw's records
give. Columns:

| column | meaning |
|---|---|
| `session`, `turn` | the session's serial and its `turn_no` at the request's start |
| `arrival` | the request's start (the session reaches `request`) |
| `end` | the request's end |
| `prompt_tokens` | the tokens of the request's first `prefill` run on a step stage (0 without one) |
| `output_tokens` | the tokens of its final token sequence (Part 06 §4; 0 without tokens) |
| `ttft`, `tpot` | as the client series define them (NaN when undefined) |
| `e2e` | end − arrival (the `response` sample) |

Throughput (per time unit of the measured span, `end − warmup`): requests
ended, and the prompt (input) and output tokens of those requests.
"""
from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple, Optional

NAN = float("nan")

#: The columns of the table, in order.
COLUMNS: tuple[str, ...] = ("session", "turn", "arrival", "end", "prompt_tokens",
                            "output_tokens", "ttft", "tpot", "e2e")


class RequestRow(NamedTuple):
    """One request (see the module text)."""

    session: int
    turn: int
    arrival: float
    end: float
    prompt_tokens: float
    output_tokens: int
    ttft: float
    tpot: float
    e2e: float


@dataclass
class RequestLog:
    """What the run records per request beside the `response` series (which
    holds the session, turn, end and e2e of the same rows): the start, the
    tokens, ttft and tpot, 8 bytes a number."""

    arrival: array = field(default_factory=lambda: array("d"))
    prompt: array = field(default_factory=lambda: array("d"))
    output: array = field(default_factory=lambda: array("d"))
    ttft: array = field(default_factory=lambda: array("d"))
    tpot: array = field(default_factory=lambda: array("d"))

    def add(self, start: float, tok: Any) -> None:
        """A request that started at `start` ends; `tok` is the session's
        token state (`serq.runtime.sim.tokens.TokenState`) or None."""
        self.arrival.append(start)
        if tok is None:
            self.prompt.append(0.0)
            self.output.append(0.0)
            self.ttft.append(NAN)
            self.tpot.append(NAN)
            return
        seq = tok.request
        k = seq.count
        self.prompt.append(tok.prompt)
        self.output.append(float(k))
        self.ttft.append(seq.first - tok.req_start if k else NAN)
        self.tpot.append((seq.last - seq.first) / (k - 1) if k >= 2 else NAN)

    def __len__(self) -> int:
        return len(self.arrival)


class RequestTable:
    """The per-request table of a report (`Report.requests()`): iterate it
    for `RequestRow`s, `columns()` for plain lists, `to_pandas()` for a
    frame, `csv()` for what `--dump` writes."""

    def __init__(self, response: Any, log: RequestLog):
        self._response = response
        self._log = log

    def __len__(self) -> int:
        return len(self._log)

    def __iter__(self) -> Iterator[RequestRow]:
        r, g = self._response, self._log
        for i in range(len(g)):
            yield RequestRow(int(r.sessions[i]), int(r.turns[i]), g.arrival[i], r.times[i],
                             g.prompt[i], int(g.output[i]), g.ttft[i], g.tpot[i],
                             r.values[i])

    def __getitem__(self, i: int) -> RequestRow:
        r, g = self._response, self._log
        return RequestRow(int(r.sessions[i]), int(r.turns[i]), g.arrival[i], r.times[i],
                          g.prompt[i], int(g.output[i]), g.ttft[i], g.tpot[i], r.values[i])

    def columns(self) -> dict[str, list]:
        """Column name → values (COLUMNS order)."""
        r, g = self._response, self._log
        return {"session": [int(x) for x in r.sessions], "turn": [int(x) for x in r.turns],
                "arrival": g.arrival.tolist(), "end": list(r.times),
                "prompt_tokens": g.prompt.tolist(),
                "output_tokens": [int(x) for x in g.output],
                "ttft": g.ttft.tolist(), "tpot": g.tpot.tolist(), "e2e": list(r.values)}

    def to_pandas(self) -> Any:
        """The table as a pandas DataFrame (needs pandas)."""
        from .frames import load_pandas
        return load_pandas().DataFrame(self.columns(), columns=list(COLUMNS))

    def csv(self) -> str:
        """The table as CSV (header `COLUMNS`; numbers in shortest round-trip
        form, NaN for an undefined ttft or tpot)."""
        from .json_report import number_text
        lines = [",".join(COLUMNS)]
        for row in self:
            lines.append(",".join(str(v) if isinstance(v, int) else number_text(v)
                                  for v in row))
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return f"<RequestTable: {len(self)} requests; .to_pandas() for the rows>"

    def _repr_html_(self) -> str:
        from .html import rows_table
        head = [list(row) for row in (self[i] for i in range(min(len(self), 10)))]
        note = f"{len(self)} requests" + (" (the first 10)" if len(self) > 10 else "")
        return rows_table(COLUMNS, head, caption=note)


@dataclass(frozen=True)
class Throughput:
    """Requests and tokens per time unit over the measured span."""

    requests: float
    input_tokens: float
    output_tokens: float

    @property
    def total_tokens(self) -> float:
        """Input and output tokens per time unit."""
        return self.input_tokens + self.output_tokens


def throughput(requests: int, log: Optional[RequestLog], span: float) -> Throughput:
    """`Throughput` of `requests` ended requests, whose tokens `log` holds
    (None: unknown, NaN), over `span` (all NaN when `span` ≤ 0)."""
    if not span > 0 or not math.isfinite(span):
        return Throughput(NAN, NAN, NAN)
    if log is None:
        return Throughput(requests / span, NAN, NAN)
    return Throughput(requests / span, math.fsum(log.prompt) / span,
                      math.fsum(log.output) / span)


def optional_table(response: Any, log: Optional[RequestLog]) -> RequestTable:
    """The table of `response`'s rows with `log` (an empty log when None)."""
    return RequestTable(response, log if log is not None else RequestLog())
