"""serq-simpy's own measured-run CSV: a header line, then one request a line.

| column | required | meaning |
|---|---|---|
| `arrival` | yes | seconds (any origin) at which the request was sent |
| `prompt_tokens` | yes | the prompt's tokens |
| `output_tokens` | yes | the tokens generated |
| `ttft` | yes | seconds from the send to the first token (empty: the request failed) |
| `e2e` | yes | seconds from the send to the last token (empty: failed) |
| `session` | no | the session's name (default: every request its own session) |
| `turn` | no | read for the reader only: turns are ordered by arrival |
| `request` | no | the request's id |
| `cached_tokens` | no | prompt tokens served from a cache |
| `tpot` | no | seconds per output token after the first (default (e2e − ttft) / (output_tokens − 1)) |

Lines starting with `#` are comments. The columns may come in any order;
other columns are ignored. This is also what `MeasuredRun.frame.to_csv`
writes, so a converted run reads back.
"""
from __future__ import annotations

import csv
import io
import math

from .errors import measured_error
from .frame import build_frame
from .jsonl import read_text

#: Columns every row must have.
REQUIRED = ("arrival", "prompt_tokens", "output_tokens", "ttft", "e2e")
#: Columns read when present.
OPTIONAL = ("session", "turn", "request", "cached_tokens", "tpot")
_EMPTY_OK = ("ttft", "e2e", "cached_tokens", "tpot")


def read_csv_run(path: str):
    """The tidy frame of a measured-run CSV."""
    text = read_text(path)
    lines = [(no, line) for no, line in enumerate(text.splitlines(), 1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise measured_error(path, "no header line", help="the first line names the columns: "
                             + ",".join(REQUIRED))
    head_no, head = lines[0]
    header = [h.strip() for h in next(csv.reader([head]))]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise measured_error(path, f"the header has no column {', '.join(missing)}",
                             line=head_no, text=text,
                             help="the required columns are " + ", ".join(REQUIRED))
    records = []
    for no, line in lines[1:]:
        cells = next(csv.reader(io.StringIO(line)))
        if len(cells) != len(header):
            raise measured_error(path, f"{len(cells)} fields where the header has "
                                 f"{len(header)}", line=no, text=text,
                                 help="one field per header column (an empty field for none)")
        rec: dict = {"line": no}
        for name in REQUIRED + OPTIONAL:
            if name not in header:
                continue
            k = header.index(name)
            cell = cells[k].strip()
            if name in ("session", "request", "turn"):
                if name != "turn":
                    rec[name] = cell
                continue
            if cell == "" and name in _EMPTY_OK:
                rec[name] = None
                continue
            try:
                v = float(cell)
            except ValueError:
                v = math.nan
            if not math.isfinite(v):
                col = sum(len(c) + 1 for c in cells[:k]) + 1
                raise measured_error(path, f"column {k + 1} ({name}): invalid number "
                                     f"`{cell}`", line=no, col=col, text=text,
                                     help=f"give `{name}` a finite number"
                                     + (" (or leave it empty)" if name in _EMPTY_OK else ""))
            rec[name] = v
        records.append(rec)
    return build_frame(records, path, text)
