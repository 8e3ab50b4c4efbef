"""Reading a program file: UTF-8 text of a bounded size.

`read_source(path, label)` returns the text, or raises `ParseError`: a file
that cannot be opened, one larger than `MAX_SOURCE_BYTES` (refused before it
is read), or bytes that are not UTF-8 (at the line and column of the first
bad byte, with the line shown as far as it decodes).
"""
from __future__ import annotations

import os
import stat
from typing import Optional

from ...core.caches import note_read
from ...core.errors import ParseError
from ...core.ir import Pos

MAX_SOURCE_BYTES = 2 ** 20  # a program (or a library) of at most 1 MiB


class NotReadable(OSError):
    """An input that is not a regular file (a device, a folder, a socket;
    a pipe where only files are read), or one over its size limit."""

    def __init__(self, reason: str, size: Optional[int] = None):
        super().__init__(reason)
        self.reason = reason
        self.size = size


def read_bounded(path: str, limit: int, pipes: bool = False) -> bytes:
    """The bytes of the regular file `path` (or, with `pipes`, of a named
    pipe), read with a bounded read: never more than `limit` bytes are kept,
    whatever the file says its size is (`/proc` files say 0). Raises
    `NotReadable`, or `OSError` when it cannot be opened."""
    st = os.stat(path)  # before opening: a pipe without a writer blocks in open()
    if stat.S_ISFIFO(st.st_mode) and not pipes:
        raise NotReadable("a named pipe, not a file: a program reads regular files only")
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a device or special file"
        raise NotReadable(f"{kind}, not a file: a program reads regular files only")
    if st.st_size > limit:
        raise NotReadable("too large", st.st_size)
    with open(path, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode) and not pipes:  # swapped meanwhile
            raise NotReadable("not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise NotReadable("too large", len(data))
    return data


def read_source(path: str, label: str, pipes: bool = True) -> str:
    """The UTF-8 text of the file `path` (`label` is how messages name it);
    `pipes`: a named pipe is read too (a program named on the command line,
    not a library a program names)."""
    try:
        data = read_bounded(path, MAX_SOURCE_BYTES, pipes)
    except NotReadable as e:
        if e.size is not None:
            raise too_large(label, e.size) from None
        raise ParseError(f"cannot read `{label}`: {e.reason}") from None
    except OSError as e:
        raise ParseError(f"cannot read `{label}`: {e.strerror or e}") from None
    note_read(path, data)  # for the program cache (serq.cli.program_cache)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise decode_error(data, e, label) from None


def too_large(label: str, size: int) -> ParseError:
    """A program over `MAX_SOURCE_BYTES`, refused before it is read."""
    more = "more than " if size == MAX_SOURCE_BYTES + 1 else ""
    return ParseError(f"`{label}` is {more}{size / 2 ** 20:.1f} MiB: a program file has at most "
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
