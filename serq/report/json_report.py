"""The JSON report (spec Part 06 §9): one line, upstream's key order.

`to_dict` builds the report as Python objects (non-finite numbers → `None`,
counts → `int`); `to_json` writes it without spaces, numbers as upstream
writes doubles: the shortest round-trip digits in plain decimal notation
(`2000`, `0.5`, `0.0000001`), never an exponent.
"""
from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Optional

from ..stats.summary import BATCHES, MIN_SAMPLES, T95, Summary, percentile_key
from ..core.version import __version__

if TYPE_CHECKING:  # the rows are read, never built, here: `model` imports this module
    from .model import ClaimRow, GaugeRow, PoolRow, Report, StageRow

#: Version of the report's shape (upstream's REPORT_VERSION; not a JSON key of its own).
REPORT_VERSION = 1
#: The schema serq-simpy's keys follow.
SCHEMA = "pyserq-0.1.5"


def finite_or_none(x: Optional[float]) -> Optional[float]:
    """`x` as a float, or `None` when it is missing or not finite (JSON null)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def number_text(x: float) -> str:
    """A double as the shortest round-trip decimal without exponent (`2000`, `-0`, `0.1`).

    Non-finite values read `NaN`, `inf`, `-inf` (the text report and CSVs;
    the JSON writes `null` instead).
    """
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    text = plain_decimal(repr(float(x)))
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def plain_decimal(text: str) -> str:
    """A finite double's `repr` without its exponent (`1e-07` → `0.0000001`,
    `1.5e+16` → `15000000000000000`), as `format(Decimal(text), "f")` writes
    it (without importing `decimal`: 1 ms of a start)."""
    mantissa, e, exponent = text.partition("e")
    if not e:
        return text
    sign = "-" if mantissa.startswith("-") else ""
    whole, _, fraction = mantissa.lstrip("-").partition(".")
    digits = whole + fraction
    point = len(whole) + int(exponent)  # where the decimal point goes in `digits`
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def summary_dict(s: Summary) -> dict[str, Any]:
    """A summary object: the reference's keys (count, mean, ci, cv2, p99),
    then serq-simpy's percentiles beside them (`p50`, `p90`, `p95`, … but p99)."""
    out = {"count": int(s.count), "mean": finite_or_none(s.mean), "ci": finite_or_none(s.ci),
           "cv2": finite_or_none(s.cv2), "p99": finite_or_none(s.p99)}
    for q, value in s.percentiles:
        out.setdefault(percentile_key(q), finite_or_none(value))
    return out


def _gauge(g: GaugeRow) -> dict[str, Any]:
    return {"mean": finite_or_none(g.mean), "ci": finite_or_none(g.ci),
            "min": finite_or_none(g.min), "max": finite_or_none(g.max)}


def _claim(c: ClaimRow) -> dict[str, Any]:
    return {"name": c.name, "kind": c.kind, "result": c.result, "checked": int(c.checked),
            "failures": int(c.failures), "first": finite_or_none(c.first), "note": c.note}


def _index(i: Optional[int]) -> Optional[int]:
    return None if i is None else int(i)


def _stage(s: StageRow) -> dict[str, Any]:
    f = finite_or_none
    return {
        "name": s.name, "index": _index(s.index),
        "mean_number": f(s.mean_number), "utilization": f(s.utilization),
        "completed": int(s.completed), "throughput": f(s.throughput),
        "mean_wait": f(s.mean_wait), "mean_service": f(s.mean_service),
        "iterations": int(s.iterations),
        "prefill_only": f(s.prefill_only), "decode_only": f(s.decode_only),
        "mixed": f(s.mixed), "mean_decodes": f(s.mean_decodes),
        "mean_decode_batch": f(s.mean_decode_batch), "mean_decode_step": f(s.mean_decode_step),
        "mean_itl": f(s.mean_itl), "itl_p50": f(s.itl_p50), "itl_p99": f(s.itl_p99),
        "idle_with_work": bool(s.idle_with_work),
        "requests": int(s.requests), "request_throughput": f(s.request_throughput),
    }


def _pool(p: PoolRow) -> dict[str, Any]:
    f = finite_or_none
    over = None if p.over_cap is None else {"queue": p.over_cap[0], "need": f(p.over_cap[1])}
    return {
        "name": p.name, "index": _index(p.index),
        "mean_used": f(p.mean_used), "mean_cached": f(p.mean_cached),
        "mean_queue": f(p.mean_queue), "mean_holders": f(p.mean_holders),
        "mean_wait": f(p.mean_wait),
        "admissions": int(p.admissions), "evicted_entries": int(p.evicted_entries),
        "evicted_units": f(p.evicted_units),
        "preemptions": int(p.preemptions), "spills": int(p.spills),
        "rejected": int(p.rejected), "stuck": int(p.stuck),
        "over_cap": over,
        "growing_at_end": int(p.growing_at_end), "growing_stalled": bool(p.growing_stalled),
    }


def _throughput(report: Report) -> dict[str, Any]:
    """serq-simpy's `throughput` object: requests and tokens per time unit."""
    t = report.throughput
    return {"requests": finite_or_none(t.requests),
            "input_tokens": finite_or_none(t.input_tokens),
            "output_tokens": finite_or_none(t.output_tokens)}


#: The keys issue 25 added to the report (beside §9.7's `serq_simpy`):
#: a top-level object, and keys appended to the summary and stage objects.
ADDED_TOP = ("throughput",)
ADDED_STAGE = ("requests", "request_throughput")


def reference_view(report: dict[str, Any]) -> dict[str, Any]:
    """A JSON report (`to_dict`'s form) without the percentiles, throughput
    and stage request counts serq-simpy adds beside the reference's keys:
    the report as it was before them (summaries keep count, mean, ci, cv2,
    p99; stages lose `ADDED_STAGE`; `serq_simpy` stays)."""
    out = {k: v for k, v in report.items() if k not in ADDED_TOP}
    for group in ("observes", "client"):
        if group in out:
            out[group] = {n: {k: s[k] for k in ("count", "mean", "ci", "cv2", "p99")}
                          for n, s in out[group].items()}
    if "stages" in out:
        out["stages"] = [{k: v for k, v in st.items() if k not in ADDED_STAGE}
                         for st in out["stages"]]
    return out


def reference_json(report: Report) -> str:
    """`to_json` of the report without serq-simpy's additions (`reference_view`):
    byte for byte the JSON report as it was before them."""
    return dumps(reference_view(to_dict(report)))


def serq_simpy_block() -> dict[str, Any]:
    """serq-simpy's own top-level object, written after `pools` (§9.7)."""
    return {"implementation": "serq-simpy", "version": __version__,
            "schema": SCHEMA, "report_version": REPORT_VERSION,
            "ci": {"batches": BATCHES, "t": T95, "level": 0.95, "min_samples": MIN_SAMPLES}}


def to_dict(report: Report) -> dict[str, Any]:
    """The report as JSON-ready Python objects, keys in upstream's order (§9)."""
    out: dict[str, Any] = {
        "serq_version": report.serq_version,
        "horizon": finite_or_none(report.horizon),
        "end": finite_or_none(report.end),
        "warmup": finite_or_none(report.warmup),
        "seed": int(report.seed),
        "events": int(report.events),
        "arrivals": int(report.arrivals),
        "ended": int(report.ended),
        "turns": int(report.turns),
        "mean_live": finite_or_none(report.mean_live),
        "observes": {name: summary_dict(s) for name, s in report.observe_summaries().items()},
        "client": {name: summary_dict(s) for name, s in report.client_summaries().items()},
        "gauges": {name: _gauge(g) for name, g in report.gauges.items()},
    }
    if report.claims is not None:
        out["claims"] = [_claim(c) for c in report.claims]
    out["stages"] = [_stage(s) for s in report.stages]
    out["pools"] = [_pool(p) for p in report.pools]
    out["throughput"] = _throughput(report)
    out["serq_simpy"] = serq_simpy_block()
    return out


def _write(value: Any, parts: list[str]) -> None:
    """Append `value`'s compact JSON text to `parts`."""
    if value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(str(value))
    elif isinstance(value, float):
        parts.append(number_text(value) if math.isfinite(value) else "null")
    elif isinstance(value, str):
        parts.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, dict):
        parts.append("{")
        for i, (key, item) in enumerate(value.items()):
            if i:
                parts.append(",")
            parts.append(json.dumps(str(key), ensure_ascii=False))
            parts.append(":")
            _write(item, parts)
        parts.append("}")
    elif isinstance(value, (list, tuple)):
        parts.append("[")
        for i, item in enumerate(value):
            if i:
                parts.append(",")
            _write(item, parts)
        parts.append("]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")


def dumps(value: Any) -> str:
    """Compact JSON of plain Python objects, doubles written as `number_text` does."""
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def to_json(report: Report) -> str:
    """The one-line JSON report (§9), with the `serq_simpy` object last (§9.7)."""
    return dumps(to_dict(report))
