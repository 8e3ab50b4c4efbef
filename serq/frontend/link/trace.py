"""Reading a trace corpus (Part 02 §4.1) at link time."""
from __future__ import annotations

import math
import re
from typing import Optional

from ...core import ir
from ...core.caches import note_read
from ...core.errors import LinkError
from ..parse.source import NotReadable, read_bounded

#: The largest trace file read (its turns take about 40 times its size in memory).
MAX_TRACE_BYTES = 16 * 2 ** 20
#: The largest amount (tokens) or think time a trace may give.
MAX_AMOUNT = 1e12

COLUMNS = ("session", "turn", "new", "out", "think", "forced")
NUMBER = re.compile(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|infinity|nan)",
                    re.IGNORECASE)


def parse_number(field: str) -> Optional[float]:
    """A CSV number as the reference reads one (no spaces, no `_`)."""
    if not NUMBER.fullmatch(field):
        return None
    return float(field)


def read_trace(path: str, shown: str, ordered: bool,
               pos: Optional[ir.Pos] = None, source: Optional[str] = None,
               pipes: bool = False) -> ir.Trace:
    """Read the corpus at `path` (a regular file of at most `MAX_TRACE_BYTES`;
    with `pipes`, a named pipe too: a trace named on the command line);
    errors name the file as `shown`. A UTF-8 byte-order mark is skipped."""
    def fail(message: str, help: Optional[str] = None) -> LinkError:
        return LinkError(f"trace {shown}: {message}", pos, help=help, source=source)

    note_read(path)  # before it is read: a later edit is seen (serq.cli.program_cache)
    try:
        lines = read_bounded(path, MAX_TRACE_BYTES, pipes).decode("utf-8-sig").split("\n")
    except NotReadable as e:
        reason = e.reason if e.size is None else (
            f"{e.size / 2 ** 20:.1f} MiB, more than a trace's {MAX_TRACE_BYTES // 2 ** 20} MiB")
        raise LinkError(f"cannot read trace {shown}: {reason}", pos, source=source,
                        help="split a larger corpus into several runs" if e.size else None
                        ) from None
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or (
            "not UTF-8 text" if isinstance(e, UnicodeDecodeError) else str(e))
        raise LinkError(f"cannot read trace {shown}: {reason}", pos, source=source) from None
    sessions: list[list[ir.TraceTurn]] = []
    current: Optional[float] = None
    for no, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#") or re.match(r"session\b", line):
            continue
        fields = line.split(",")
        if len(fields) not in (5, 6):
            raise fail(f"line {no}: expected 5 or 6 fields, got {len(fields)}",
                       "use session,turn,new,out,think[,forced]")
        values = []
        for col, text in enumerate(fields):
            if col == 1:
                values.append(0.0)
                continue
            value = parse_number(text)
            if value is None or not (math.isfinite(value) or col == 0) or (
                    col > 1 and value > MAX_AMOUNT):
                what = f"`{text[:40]}`" if path.lower().endswith(".csv") else "(not shown)"
                if value is None:
                    raise fail(f"line {no}: column {col + 1} ({COLUMNS[col]}): invalid number "
                               f"{what}", f"replace `{COLUMNS[col]}` with a numeric value")
                raise fail(f"line {no}: column {col + 1} ({COLUMNS[col]}): {what} is not a "
                           f"finite amount of at most {MAX_AMOUNT:g}",
                           "a trace's amounts and think times are finite numbers")
            values.append(value)
        if len(values) == 5:
            values.append(0.0)
        key = math.trunc(values[0]) if math.isfinite(values[0]) else values[0]
        if current is None or key != current or not sessions:
            sessions.append([])
            current = key
        sessions[-1].append(ir.TraceTurn(new=values[2], out=values[3], think=values[4],
                                         forced=values[5]))
    if not sessions:
        raise fail("empty trace")
    return ir.Trace(path=path, ordered=ordered, sessions=sessions)
