"""Reading a trace corpus (Part 02 §4.1) at link time."""
from __future__ import annotations

import math
import re
from typing import Optional

from ...core import ir
from ...core.caches import note_read
from ...core.errors import LinkError

COLUMNS = ("session", "turn", "new", "out", "think", "forced")
NUMBER = re.compile(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|infinity|nan)",
                    re.IGNORECASE)


def parse_number(field: str) -> Optional[float]:
    """A CSV number as the reference reads one (no spaces, no `_`)."""
    if not NUMBER.fullmatch(field):
        return None
    return float(field)


def read_trace(path: str, shown: str, ordered: bool,
               pos: Optional[ir.Pos] = None, source: Optional[str] = None) -> ir.Trace:
    """Read the corpus at `path`; errors name the file as `shown`."""
    def fail(message: str, help: Optional[str] = None) -> LinkError:
        return LinkError(f"trace {shown}: {message}", pos, help=help, source=source)

    note_read(path)  # before it is read: a later edit is seen (serq.cli.program_cache)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
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
            if value is None:
                raise fail(f"line {no}: column {col + 1} ({COLUMNS[col]}): invalid number "
                           f"`{text}`", f"replace `{COLUMNS[col]}` with a numeric value")
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
