"""The report of a run, as plain dataclasses (spec Part 06 §9, Part 03 §11, Part 04 §12).

The runtime fills a `Report`; `json_report`, `text_report` and `dump` render
it. Sample series are kept raw (`Series`) and summarised lazily; every other
row holds final numbers. NaN stands for an undefined number (JSON `null`).
Field order of `StageRow` and `PoolRow` is the JSON key order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Optional, Sequence

from ..core.version import __version__
from ..stats.gauges import GaugeTrace
from ..stats.samples import Turns, doubles, integers
from ..stats.summary import PERCENTILES, Summary, summarize
from .requests import RequestLog, RequestTable, Throughput, optional_table, throughput

NAN = float("nan")

#: The three client series (§4), in report order.
CLIENT_SERIES: tuple[str, ...] = ("ttft", "tpot", "response")



def package_version() -> str:
    """serq-simpy's version (`serq.core.version`)."""
    return __version__


def label(name: str, index: Optional[int]) -> str:
    """A row's label: `name[index]` for an array member, `name` otherwise."""
    return name if index is None else f"{name}[{index}]"


@dataclass
class Series:
    """The samples of one observation, in recording order (parallel arrays,
    8 bytes a number: `serq.stats.samples.Samples`, equal to lists of the
    same numbers).

    `is_test` marks an `observe` whose expression is a test (outermost
    operator a comparison, `&&`, `||` or `!`), for the text report's note.
    As pyserq's `Observe`: `name`, the samples (`samples`, `times`,
    `sessions`, `turns`) and the JSON's statistics (`count`, `mean`, `ci`,
    `cv2`, `p99`; NaN where the JSON writes null, `ci` +inf below 40
    samples).
    """

    times: Sequence[float] = field(default_factory=doubles)
    sessions: Sequence[int] = field(default_factory=integers)
    turns: Sequence[int] = field(default_factory=Turns)
    values: Sequence[float] = field(default_factory=doubles)
    is_test: bool = False
    name: str = ""
    _cache: Optional[tuple[tuple, Summary]] = field(default=None, init=False, repr=False,
                                                  compare=False)

    def add(self, time: float, session: int, turn: int, value: float) -> None:
        """Append one sample."""
        self.times.append(time)
        self.sessions.append(session)
        self.turns.append(turn)
        self.values.append(value)

    def summary(self, percentiles: Sequence[float] = PERCENTILES) -> Summary:
        """The §3 summary of the values with the nearest-rank `percentiles`
        (computed once per length and percentiles)."""
        key = (len(self.values), tuple(percentiles))
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, summarize(self.values, percentiles))
        return self._cache[1]

    @property
    def p50(self) -> float:
        """Nearest-rank median."""
        return self.summary().p50

    @property
    def p90(self) -> float:
        """Nearest-rank 90th percentile."""
        return self.summary().p90

    @property
    def p95(self) -> float:
        """Nearest-rank 95th percentile."""
        return self.summary().p95

    def percentile(self, q: float) -> float:
        """The nearest-rank `q`-th percentile of the values (`q` in (0, 100])."""
        from ..stats.summary import nearest_rank
        return nearest_rank(self.values, q / 100.0)

    @property
    def samples(self) -> list[float]:
        """The sample values (pyserq's name for `values`)."""
        return self.values

    @property
    def count(self) -> int:
        """Samples recorded after warm-up."""
        return self.summary().count

    @property
    def mean(self) -> float:
        """Their mean (NaN without samples)."""
        return self.summary().mean

    @property
    def ci(self) -> float:
        """Half-width of the batch-means 95 % interval (+inf below 40 samples)."""
        return self.summary().ci

    @property
    def cv2(self) -> float:
        """Squared coefficient of variation."""
        return self.summary().cv2

    @property
    def p99(self) -> float:
        """Nearest-rank 99th percentile."""
        return self.summary().p99

    def __repr__(self) -> str:
        s = self.summary()
        return (f"<Series {self.name or '?'}: {s.count} samples, mean {s.mean:.6g}, "
                f"p50 {s.p50:.6g}, p99 {s.p99:.6g} (.values, .times, .sessions, .turns)>")

    def never_held(self) -> bool:
        """A test series that is 0 over at least 40 samples (the text report's note, §2)."""
        return (self.is_test and len(self.values) >= 40
                and all(v == 0.0 for v in self.values))


@dataclass
class GaugeRow:
    """One gauge (§7): statistics over the measured span, and every change point."""

    mean: float = NAN
    ci: float = NAN
    min: float = NAN
    max: float = NAN
    #: `(time, value)` change points from time 0, warm-up included (`--dump`).
    points: list[tuple[float, float]] = field(default_factory=list)
    name: str = ""

    def __repr__(self) -> str:
        return (f"<GaugeRow {self.name or '?'}: mean {self.mean:.6g} ±{self.ci:.3g}, "
                f"min {self.min:.6g}, max {self.max:.6g}, {len(self.points)} change points>")

    @property
    def times(self) -> list[float]:
        """The times of the change points (pyserq's `Gauge.times`)."""
        return [t for t, _v in self.points]

    @property
    def values(self) -> list[float]:
        """The values from each change point on (pyserq's `Gauge.values`)."""
        return [v for _t, v in self.points]

    @classmethod
    def from_trace(cls, trace: GaugeTrace, warmup: float, end: float) -> "GaugeRow":
        """Summarise a finished trace over `[warmup, end]`."""
        mean, ci, lo, hi = trace.finish(warmup, end)
        return cls(mean=mean, ci=ci, min=lo, max=hi, points=list(trace.points))


@dataclass
class ClaimRow:
    """One claim's result (§8.3, JSON §9.3)."""

    name: str
    kind: str  # every_iteration | some_iteration | at_end
    result: str  # holds | fails | witnessed | not_witnessed | not_evaluated | out_of_scope
    checked: int = 0
    failures: int = 0
    first: Optional[float] = None
    note: Optional[str] = None


@dataclass
class StageRow:
    """One stage or array member (Part 04 §12, JSON §9.4); defaults are a non-step stage's."""

    name: str
    index: Optional[int] = None
    mean_number: float = 0.0
    utilization: float = 0.0
    completed: int = 0
    throughput: float = 0.0
    mean_wait: float = NAN
    mean_service: float = NAN
    iterations: int = 0
    prefill_only: float = 0.0
    decode_only: float = 0.0
    mixed: float = 0.0
    mean_decodes: float = 0.0
    mean_decode_batch: float = NAN
    mean_decode_step: float = NAN
    mean_itl: float = NAN
    itl_p50: float = NAN
    itl_p99: float = NAN
    idle_with_work: bool = False
    #: serq-simpy's, after the reference's keys: requests with a job completed
    #: here after warm-up (each counted once: a step engine's prefill and
    #: decode of one request are two jobs, `completed`), and per time unit.
    requests: int = 0
    request_throughput: float = NAN

    @property
    def label(self) -> str:
        """`name` or `name[index]`."""
        return label(self.name, self.index)


@dataclass
class PoolRow:
    """One pool or array member (Part 03 §11, JSON §9.5).

    `over_cap` is `None` or `(queue_label, need)`: the label of the pool in
    whose queue the over-cap hold waits, and the units it needs.
    """

    name: str
    index: Optional[int] = None
    mean_used: float = 0.0
    mean_cached: float = 0.0
    mean_queue: float = 0.0
    mean_holders: float = 0.0
    mean_wait: float = NAN
    admissions: int = 0
    evicted_entries: int = 0
    evicted_units: float = 0.0
    preemptions: int = 0
    spills: int = 0
    rejected: int = 0
    stuck: int = 0
    over_cap: Optional[tuple[str, float]] = None
    growing_at_end: int = 0
    growing_stalled: bool = False

    @property
    def label(self) -> str:
        """`name` or `name[index]`."""
        return label(self.name, self.index)


def _client_series() -> dict[str, Series]:
    return {name: Series() for name in CLIENT_SERIES}


@dataclass
class Report:
    """What a run reports (§9.1). Dict orders are report orders.

    `claims` is `None` when the program declares no claim (the JSON key is
    then absent); `client` always has exactly the keys of `CLIENT_SERIES`.
    This is what `serq.run` returns: every top-level key of the JSON is an
    attribute of the same name and value (null ↔ NaN), and the methods
    follow pyserq's `Report` (`observe`, `gauge`, `claim`, `stage`,
    `stages_named`, `pool`, `pools_named`, `json`), plus `to_pandas()`.
    """

    #: The row class of each section of rows (what `frames` makes columns of).
    ROWS: ClassVar[dict[str, type]] = {"stages": StageRow, "pools": PoolRow, "claims": ClaimRow}

    serq_version: str = field(default_factory=package_version)
    horizon: float = 0.0
    end: float = 0.0
    warmup: float = 0.0
    seed: int = 1
    events: int = 0
    arrivals: int = 0
    ended: int = 0
    turns: int = 0
    mean_live: float = 0.0
    observes: dict[str, Series] = field(default_factory=dict)
    client: dict[str, Series] = field(default_factory=_client_series)
    gauges: dict[str, GaugeRow] = field(default_factory=dict)
    claims: Optional[list[ClaimRow]] = None
    stages: list[StageRow] = field(default_factory=list)
    pools: list[PoolRow] = field(default_factory=list)
    #: The percentiles every series' summary reports (`--percentiles`).
    percentiles: tuple[float, ...] = PERCENTILES
    #: Per request, beside the `response` row: start, tokens, ttft, tpot (`requests()`).
    request_log: Optional[RequestLog] = field(default=None, repr=False)

    def requests(self) -> RequestTable:
        """The per-request table: session, turn, arrival, end, prompt and
        output tokens, ttft, tpot, e2e (`serq.report.requests`)."""
        return optional_table(self.client.get("response", Series()), self.request_log)

    @property
    def throughput(self) -> Throughput:
        """Requests, input (prompt) and output tokens per time unit over the
        measured span (`end − warmup`); the tokens are NaN for a report made
        without the run's request log."""
        requests = len(self.client.get("response", Series()).values)
        return throughput(requests, self.request_log, self.end - self.warmup)

    def observe_summaries(self) -> dict[str, Summary]:
        """Name → summary of every observation, in report order."""
        return {name: s.summary(self.percentiles) for name, s in self.observes.items()}

    def client_summaries(self) -> dict[str, Summary]:
        """`ttft`, `tpot`, `response` → summary (an absent series counts as empty)."""
        return {name: self.client.get(name, Series()).summary(self.percentiles)
                for name in CLIENT_SERIES}

    def has_client_samples(self) -> bool:
        """Whether any client series has a sample (the text report's client section)."""
        return any(self.client.get(name) is not None and self.client[name].values
                   for name in CLIENT_SERIES)

    def stage(self, name: str, index: Optional[int] = None) -> Optional[StageRow]:
        """The row of stage `name` (`index`: that member of an array; None:
        the first row of that name, as pyserq), or None."""
        return next((s for s in self.stages
                     if s.name == name and (index is None or s.index == index)), None)

    def pool(self, name: str, index: Optional[int] = None) -> Optional[PoolRow]:
        """The row of pool `name` (`index`: that member of an array; None:
        the first row of that name, as pyserq), or None."""
        return next((p for p in self.pools
                     if p.name == name and (index is None or p.index == index)), None)

    def stages_named(self, name: str) -> list[StageRow]:
        """Every row of stage `name`: an array's members in index order."""
        return [s for s in self.stages if s.name == name]

    def pools_named(self, name: str) -> list[PoolRow]:
        """Every row of pool `name`: an array's members in index order."""
        return [p for p in self.pools if p.name == name]

    def observe(self, name: str) -> Optional[Series]:
        """The program's observation `name` (samples and statistics), or None
        (as pyserq; the client's series are `client["ttft"]` and so on)."""
        return self.observes.get(name)

    def gauge(self, name: str) -> Optional[GaugeRow]:
        """The gauge `name`, or None."""
        return self.gauges.get(name)

    def claim(self, name: str) -> Optional[ClaimRow]:
        """The claim `name`, or None."""
        return next((c for c in self.claims or [] if c.name == name), None)

    def name_series(self) -> None:
        """Give every series and gauge its report name (after a run fills them)."""
        for group in (self.observes, self.client, self.gauges):
            for name, item in group.items():
                item.name = name

    @property
    def serq_simpy(self) -> dict:
        """serq-simpy's own block of the JSON (implementation, version, schema, CI)."""
        from .json_report import serq_simpy_block
        return serq_simpy_block()

    def to_dict(self) -> dict:
        """The JSON report as Python objects (non-finite numbers → None)."""
        from .json_report import to_dict
        return to_dict(self)

    def json(self) -> str:
        """The JSON report `serq-simpy run --json` prints (pyserq's `Report.json()`)."""
        from .json_report import to_json
        return to_json(self)

    def text(self) -> str:
        """The text report `serq-simpy run` prints."""
        from .text_report import to_text
        return to_text(self)

    def __repr__(self) -> str:
        """A few lines of statistics (never the samples): see `text()`."""
        from .html import report_repr
        return report_repr(self)

    def _repr_html_(self) -> str:
        """The report's tables as HTML (what a notebook shows)."""
        from .html import report_html
        return report_html(self)

    def to_pandas(self, section: Optional[str] = None):
        """Tidy pandas frames of the report, one per section: `observations`,
        `samples`, `stages`, `pools`, `gauges`, `claims` (a dict), or the one
        frame `section` names. Needs pandas (`pip install -e '.[pandas]'` in a clone);
        see `serq.report.frames`."""
        from .frames import frames
        return frames(self, section)

    def plot(self, kind: str = "series", name: Optional[str] = None,
             path: Optional[str] = None):
        """A matplotlib figure of this report: `kind` is `series` (samples,
        running mean and CI band, warm-up marked), `hist`, `ecdf` (p50/p99
        marked) or `gauges` (over time); saved to `path` (.png/.svg/.pdf)
        when given. Needs matplotlib (`pip install -e '.[plot]'` in a clone)."""
        from .figures import report_figure
        return report_figure(self, kind, name, path=path)

