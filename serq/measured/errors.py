"""The error a malformed measured log raises: the file, the line (and the
column where it is known), the line's text with a caret, what is wrong and
how to fix it (the layout of every serq-simpy error, Part 01 §8.1)."""
from __future__ import annotations

from typing import Optional

from ..core.errors import SerqError
from ..core.ir import Pos


class MeasuredError(SerqError):
    """A measured run that cannot be read. Raised before anything is
    returned: an importer never hands back part of a file. The header names
    the measured file (never the program a command was also given). The
    user named the log on the command line, so its lines may be quoted."""

    quotes_any_file = True

    def __init__(self, path: str, message: str, pos: Optional[Pos] = None,
                 help: Optional[str] = None, source: Optional[str] = None):
        super().__init__(message, pos, help=help, source=source)
        self.args = (path, message, pos, help, source)
        self.path = path

    def header(self, file: Optional[str] = None) -> str:
        return super().header(self.path)


def measured_error(path: str, message: str, *, line: Optional[int] = None, col: int = 1,
                   text: Optional[str] = None, help: Optional[str] = None) -> MeasuredError:
    """A `MeasuredError` at `path:line:col` (`text`: the file's text, for the
    caret; without `line` the error names the file only)."""
    pos = Pos(path, line, max(col, 1)) if line is not None else None
    return MeasuredError(path, message, pos, help=help, source=text)
