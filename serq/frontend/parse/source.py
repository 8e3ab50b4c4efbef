"""Reading a program file: UTF-8 text of a bounded size.

`read_source(path, label)` returns the text, or raises `ParseError`: a file
that cannot be opened, one larger than `MAX_SOURCE_BYTES` (refused before it
is read), or bytes that are not UTF-8 (at the line and column of the first
bad byte, with the line shown as far as it decodes).
"""
from __future__ import annotations

import os

from ...core.caches import note_read
from ...core.errors import ParseError
from ...core.ir import Pos

MAX_SOURCE_BYTES = 2 ** 20  # a program (or a library) of at most 1 MiB


def read_source(path: str, label: str) -> str:
    """The UTF-8 text of the file `path` (`label` is how messages name it)."""
    try:
        size = os.path.getsize(path)
        if size > MAX_SOURCE_BYTES:
            raise too_large(label, size)
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ParseError(f"cannot read `{label}`: {e.strerror or e}") from None
    note_read(path, data)  # for the program cache (serq.cli.program_cache)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise decode_error(data, e, label) from None


def too_large(label: str, size: int) -> ParseError:
    """A program over `MAX_SOURCE_BYTES`, refused before it is read."""
    return ParseError(f"`{label}` is {size / 2 ** 20:.1f} MiB: a program file has at most "
                      f"{MAX_SOURCE_BYTES // 2 ** 20} MiB",
                      help="keep data (traces) in CSV files that the program reads")


def decode_error(data: bytes, e: UnicodeDecodeError, label: str) -> ParseError:
    """The error at the first byte that is not UTF-8."""
    before = data[:e.start].decode("utf-8")
    line = before.count("\n") + 1
    start = before.rfind("\n") + 1
    col = len(before) - start + 1
    shown = before[start:] + "\ufffd"
    return ParseError(f"the file is not UTF-8 text: byte 0x{data[e.start]:02x} here",
                      Pos(label, line, col, 1), source="\n" * (line - 1) + shown,
                      help="save the program as UTF-8")
