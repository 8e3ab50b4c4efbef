"""The report of a study of independent replications: JSON, text, pandas.

JSON (schema `serq-simpy-study-1`), keys in this order:

- `study`: `schema`, `replications` (n), `base_seed`, `seeds`, `seed_rule`,
  `confidence`, `interval` ("student-t"), `horizon`, `warmup`,
  `warmup_rule` (null, or the MSER-5 choice), `precision` (null, or the
  target and its outcome), `sets`;
- `statistics`: one object per statistic of the single-run report
  (`section`, `name`, `statistic`, `mean`, `half_width`, `n`), the
  across-replication mean and Student-t half-width;
- `pooled`: `observes` and `client`, each series' samples of all
  replications pooled and summarised by batch means, as a run's report does;
- `replications`: `{index, seed, report}` per replication, `report` being
  that replication's ordinary JSON report (what `run --json --seed` prints);
- `serq_simpy`: the implementation block of the ordinary report.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .spec import ProgramSpec
from .stats import CONFIDENCE, Interval, across, report_rows
from .warmup import WarmupChoice

SCHEMA = "serq-simpy-study-1"
SEED_RULE = "replication i (from 0) runs with seed base_seed + i"

#: The statistics the text report shows per section (the JSON has them all).
TEXT_STATS: dict[str, tuple[str, ...]] = {
    "run": ("arrivals", "ended", "mean_live"),
    "observe": ("mean", "p50", "p90", "p99"),
    "client": ("mean", "p50", "p90", "p99"),
    "gauge": ("mean", "max"),
    "stage": ("utilization", "throughput", "mean_wait", "mean_decode_batch"),
    "pool": ("mean_used", "mean_queue", "mean_wait", "preemptions"),
}


@dataclass
class PrecisionOutcome:
    """A precision target and what became of it."""

    target: float
    observation: str
    statistic: str
    achieved: float
    met: bool
    mode: str  # "replications" or "horizon"
    replications: int
    horizon: float
    budget: float

    def describe(self) -> str:
        """One line: met, or which budget was spent."""
        got = f"{self.observation} {self.statistic} ±{100 * self.achieved:.2f}%"
        want = f"target ±{100 * self.target:g}%"
        if self.mode == "replications":
            spent = f"{self.replications} replications"
            budget = f"the budget of {int(self.budget)} replications"
        else:
            spent = f"horizon {self.horizon:g}"
            budget = f"the horizon budget {self.budget:g}"
        if self.met:
            return f"precision met: {got} ({want}) with {spent}"
        return f"precision not met: {budget} is spent; {got} ({want}) with {spent}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON object."""
        return {"target": self.target, "observation": self.observation,
                "statistic": self.statistic, "achieved": self.achieved, "met": self.met,
                "mode": self.mode, "replications": self.replications,
                "horizon": self.horizon, "budget": self.budget}


@dataclass(repr=False)
class StudyReport:
    """Independent replications of one program: each replication's `Report`
    and the across-replication view (`summary()`), plus the pooled view."""

    spec: ProgramSpec
    base_seed: int
    seeds: list[int]
    reports: list[Any]
    warmup_choice: Optional[WarmupChoice] = None
    precision: Optional[PrecisionOutcome] = None
    confidence: float = CONFIDENCE
    _rows: Optional[list[list[tuple]]] = field(default=None, repr=False)

    @property
    def replications(self) -> int:
        """How many replications ran."""
        return len(self.reports)

    def rows(self) -> list[list[tuple[str, str, str, float]]]:
        """Each replication's statistic rows (see `serq.study.stats`)."""
        if self._rows is None or len(self._rows) != len(self.reports):
            self._rows = [report_rows(r) for r in self.reports]
        return self._rows

    def summary(self) -> dict[tuple[str, str, str], Interval]:
        """(section, name, statistic) → across-replication mean, half-width, n."""
        return across(self.rows())

    def interval(self, section: str, name: str, statistic: str = "mean") -> Interval:
        """One statistic's across-replication interval (KeyError if absent)."""
        return self.summary()[(section, name, statistic)]

    def pooled(self) -> dict[str, dict[str, Any]]:
        """`observes`/`client` → name → batch-means `Summary` of the pooled samples."""
        from serq.stats.summary import summarize
        out: dict[str, dict[str, Any]] = {"observes": {}, "client": {}}
        if not self.reports:
            return out
        for key, attr in (("observes", "observes"), ("client", "client")):
            for name in getattr(self.reports[0], attr):
                values: list[float] = []
                for r in self.reports:
                    s = getattr(r, attr).get(name)
                    if s is not None:
                        values.extend(s.values)
                out[key][name] = summarize(values)
        return out

    # -- renderings ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The study JSON as Python objects (schema in the module text)."""
        from serq.report.json_report import summary_dict, serq_simpy_block, to_dict
        from ..report.json_report import finite_or_none as f
        first = self.reports[0] if self.reports else None
        study = {
            "schema": SCHEMA, "replications": self.replications, "base_seed": self.base_seed,
            "seeds": list(self.seeds), "seed_rule": SEED_RULE,
            "confidence": self.confidence, "interval": "student-t",
            "horizon": f(first.horizon) if first else None,
            "warmup": f(first.warmup) if first else None,
            "warmup_rule": self.warmup_choice.to_dict() if self.warmup_choice else None,
            "precision": self.precision.to_dict() if self.precision else None,
            "sets": dict(self.spec.sets),
        }
        stats = [{"section": s, "name": n, "statistic": st, "mean": f(iv.mean),
                  "half_width": f(iv.half_width), "n": iv.n}
                 for (s, n, st), iv in self.summary().items()]
        pooled = {k: {n: summary_dict(s) for n, s in group.items()}
                  for k, group in self.pooled().items()}
        reps = [{"index": i, "seed": seed, "report": to_dict(r)}
                for i, (seed, r) in enumerate(zip(self.seeds, self.reports))]
        return {"study": study, "statistics": stats, "pooled": pooled,
                "replications": reps, "serq_simpy": serq_simpy_block()}

    def json(self) -> str:
        """The study JSON on one line (numbers written as the run report writes them)."""
        from serq.report.json_report import dumps
        return dumps(self.to_dict())

    def text(self) -> str:
        """The text report: settings, warm-up, precision, the across-replication
        table, the pooled batch-means table."""
        from serq.report.text_report import summary_cells, summary_header, table
        from serq.stats.summary import PERCENTILES
        lines = [self._headline()]
        if self.warmup_choice is not None:
            lines.append(self.warmup_choice.describe())
        if self.precision is not None:
            lines.append(self.precision.describe())
        lines += table(["section", "name", "statistic", "mean",
                        f"{100 * self.confidence:g}% t", "n"], self.table_rows())
        lines.append("")
        lines.append("pooled samples (batch means over all replications)")
        prow = [summary_cells(f"{k}.{n}", s) for k, group in self.pooled().items()
                for n, s in group.items() if s.count]
        lines += table(("series",) + summary_header(PERCENTILES), prow)
        return "\n".join(lines) + "\n"

    def table_rows(self) -> list[list[str]]:
        """The across-replication table of `text()`: section, name,
        statistic, mean, half-width, n (the `TEXT_STATS` statistics)."""
        from serq.report.text_report import fixed
        return [[section, name, stat, fixed(iv.mean, 4), "±" + fixed(iv.half_width, 4),
                 str(iv.n)]
                for (section, name, stat), iv in self.summary().items()
                if stat in TEXT_STATS.get(section, ()) and iv.n]

    def _headline(self) -> str:
        first = self.reports[0]
        return (f"study: {self.replications} replications, seeds {self.seeds[0]}…"
                f"{self.seeds[-1]} (base seed + i), horizon {first.horizon:g}, "
                f"warmup {first.warmup:g}")

    def __repr__(self) -> str:
        """A few lines (never the replications' samples): see `text()`."""
        if not self.reports:
            return "<StudyReport: no replications>"
        lines = [f"<StudyReport {self._headline()}"]
        lines += [f"  {r[0]} {r[1]} {r[2]}: {r[3]} {r[4]} (n={r[5]})"
                  for r in self.table_rows()[:20]]
        return "\n".join(lines) + "\n  (.text(), .summary(), .to_pandas(), .reports)>"

    def _repr_html_(self) -> str:
        """The across-replication table as HTML (what a notebook shows)."""
        from html import escape
        from serq.report.html import rows_table
        head = ["section", "name", "statistic", "mean",
                f"{100 * self.confidence:g}% t", "n"]
        notes = [self.warmup_choice.describe()] if self.warmup_choice else []
        notes += [self.precision.describe()] if self.precision else []
        return ("<div>" + "".join(f"<p>{escape(x)}</p>" for x in [self._headline()] + notes)
                + rows_table(head, self.table_rows()) + "</div>")

    def to_pandas(self, section: Optional[str] = None):
        """Tidy frames: `replications` (one row per replication × statistic:
        replication, seed, section, name, statistic, value), `summary` (one
        row per statistic: mean, half_width, n), `pooled` (one row per
        series). A dict of the three, or the one `section` names."""
        import pandas as pd
        tidy = pd.DataFrame(
            [(i, seed, *row) for i, (seed, rows) in enumerate(zip(self.seeds, self.rows()))
             for row in rows],
            columns=["replication", "seed", "section", "name", "statistic", "value"])
        summ = pd.DataFrame(
            [(s, n, st, iv.mean, iv.half_width, iv.n) for (s, n, st), iv in
             self.summary().items()],
            columns=["section", "name", "statistic", "mean", "half_width", "n"])
        pooled = pd.DataFrame(
            [(k, n, s.count, s.mean, s.ci, s.cv2, s.p99) for k, group in
             self.pooled().items() for n, s in group.items()],
            columns=["section", "name", "count", "mean", "ci", "cv2", "p99"])
        frames = {"replications": tidy, "summary": summ, "pooled": pooled}
        if section is None:
            return frames
        if section not in frames:
            raise KeyError(f"no section {section!r}: one of {', '.join(frames)}")
        return frames[section]

    def plot(self, kind: str = "series", name: Optional[str] = None, *,
             replication: int = 0, path: Optional[str] = None):
        """A figure of replication `replication`'s report (see `Report.plot`)."""
        from .plots import report_figure
        return report_figure(self.reports[replication], kind, name, path=path,
                             warmup_choice=self.warmup_choice)
