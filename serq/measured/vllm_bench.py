"""vLLM's `benchmark_serving.py` (`vllm bench serve`) saved results: one
JSON object with per-request arrays `input_lens`, `output_lens`, `ttfts`
(seconds) and `itls` (each request's inter-token latencies, seconds), and
optionally `start_times` (each request's send, seconds).

E2E = TTFT + the sum of the ITLs; a request with an empty `ttfts` entry or
a non-empty `errors` entry failed and keeps NaN times. Without
`start_times` the arrivals are unknown (NaN) unless the run sent every
request at once (`request_rate` "inf"); such a run can be compared but not
replayed."""
from __future__ import annotations

import json
import math

from .errors import measured_error
from .frame import build_frame
from .jsonl import read_text

#: The keys that identify a saved result (format detection).
SIGNATURE = ("ttfts", "itls", "input_lens", "output_lens")


def _line_of(text: str, key: str) -> int:
    k = text.find(f'"{key}"')
    return text.count("\n", 0, k) + 1 if k >= 0 else 1


def read_bench(path: str):
    """The tidy frame of a benchmark_serving results JSON."""
    text = read_text(path)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise measured_error(path, f"not valid JSON: {exc.msg}", line=exc.lineno,
                             col=exc.colno, text=text,
                             help="a benchmark_serving result is one JSON object") from None
    if not isinstance(obj, dict):
        raise measured_error(path, "a benchmark_serving result is one JSON object", line=1,
                             text=text)
    for key in SIGNATURE:
        if not isinstance(obj.get(key), list):
            raise measured_error(path, f"no per-request array `{key}`",
                                 line=_line_of(text, key) if key in obj else None, text=text,
                                 help="save the run with `--save-result --save-detailed`")
    n = len(obj["ttfts"])
    starts = obj.get("start_times")
    if starts is None and str(obj.get("request_rate", "")).lower() == "inf":
        starts = [0.0] * n
    arrays = {k: obj[k] for k in SIGNATURE}
    if starts is not None:
        arrays["start_times"] = starts
    for key, arr in arrays.items():
        if not isinstance(arr, list) or len(arr) != n:
            raise measured_error(path, f"`{key}` has {len(arr) if isinstance(arr, list) else 0}"
                                 f" entries where `ttfts` has {n}", line=_line_of(text, key),
                                 text=text, help="the per-request arrays have one entry per "
                                 "request each")
    errors = obj.get("errors") if isinstance(obj.get("errors"), list) else [""] * n
    records = []
    for i in range(n):
        line = _line_of(text, "ttfts")
        ttft, itl = obj["ttfts"][i], obj["itls"][i]
        bad = [k for k, v in (("input_lens", obj["input_lens"][i]),
                              ("output_lens", obj["output_lens"][i]),
                              ("ttfts", ttft)) if not _num(v)]
        if bad or not isinstance(itl, list) or not all(_num(x) for x in itl):
            key = bad[0] if bad else "itls"
            raise measured_error(path, f"entry {i} of `{key}` is not a number"
                                 + (" list" if key == "itls" else ""),
                                 line=_line_of(text, key), text=text,
                                 help="every entry is a number (`itls`: a list of numbers)")
        failed = (i < len(errors) and errors[i]) or ttft <= 0 and not itl
        start = float(starts[i]) if starts is not None else math.nan
        records.append({
            "line": line, "request": str(i), "session": i,
            "arrival": 0.0 if math.isnan(start) else start,
            "prompt_tokens": obj["input_lens"][i], "output_tokens": obj["output_lens"][i],
            "ttft": None if failed else float(ttft),
            "e2e": None if failed else float(ttft) + float(sum(itl))})
    frame = build_frame(records, path, text)
    if starts is None:
        frame["arrival"] = math.nan
    return frame


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
