"""Lone-request probes (`probe_xfer.py`'s `*_probe.jsonl`): one JSON object
a line with `n` (prompt tokens), `ttft` and `total` (seconds), and the
decoder's KV-transfer time over the request (`xfer_sum` seconds over
`xfer_count` transfers)."""
from __future__ import annotations

from .jsonl import json_lines, number, read_text


def read_probe(path: str):
    """A frame with one row per probe: `n`, `ttft`, `total`, `xfer` (the mean
    transfer time, NaN without a transfer) and `line`."""
    import math

    import pandas as pd
    text = read_text(path)
    rows = []
    for no, obj in json_lines(path, text):
        num = lambda k, optional=False: number(obj, k, path, no, text, optional=optional,
                                               what="probe")
        n, ttft, total = num("n"), num("ttft"), num("total", optional=True)
        xs, xc = num("xfer_sum", optional=True), num("xfer_count", optional=True)
        rows.append({"n": n, "ttft": ttft, "total": math.nan if total is None else total,
                     "xfer": xs / xc if xs is not None and xc else math.nan, "line": no})
    if not rows:
        from .errors import measured_error
        raise measured_error(path, "no probe records", help="the file has no data line")
    return pd.DataFrame(rows)
