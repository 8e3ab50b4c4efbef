"""Reading JSON Lines and JSON logs with errors that name the line."""
from __future__ import annotations

import json
import math
from typing import Any, Iterator, Optional

from .errors import measured_error


def read_text(path: str) -> str:
    """The file's text (a `MeasuredError` when it cannot be read)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise measured_error(path, f"cannot read the measured log: {reason}") from None


def json_lines(path: str, text: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every non-blank line; a line that is not a
    JSON object is an error at its line and column."""
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise measured_error(path, f"not valid JSON: {exc.msg}", line=no, col=exc.colno,
                                 text=text, help="each line of a JSON Lines log is one "
                                 "JSON object; fix the line or remove it") from None
        if not isinstance(obj, dict):
            raise measured_error(path, f"a record is a JSON object, found "
                                 f"{type(obj).__name__}", line=no, text=text,
                                 help="each line of a JSON Lines log is one JSON object")
        yield no, obj


def key_column(text: str, line: int, key: str) -> int:
    """The column of `"key"` on `line` of `text` (1 when absent)."""
    lines = text.splitlines()
    if 1 <= line <= len(lines):
        k = lines[line - 1].find(f'"{key}"')
        if k >= 0:
            return k + 1
    return 1


def number(obj: dict, key: str, path: str, line: int, text: str, *,
           optional: bool = False, what: str = "record") -> Optional[float]:
    """`obj[key]` as a finite number; missing (unless `optional`, then None)
    or not a number is an error at the line and the key's column."""
    if key not in obj or obj[key] is None:
        if optional:
            return None
        raise measured_error(path, f"the {what} has no `{key}`", line=line, text=text,
                             help=f"every {what} needs a numeric `{key}`")
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise measured_error(path, f"`{key}` is {json.dumps(v)}: expected a number",
                             line=line, col=key_column(text, line, key), text=text,
                             help=f"give `{key}` a numeric value")
    return float(v)


def nested(obj: Any, *keys: str) -> Any:
    """obj[k1][k2]… or None where a level is missing."""
    for k in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(k)
    return obj
