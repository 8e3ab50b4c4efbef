"""Errors of serq-simpy and their layout (spec Part 01 §8).

Three kinds: `ParseError`, `LinkError` (prefix ``link error:``) and
`SimulationError` (a run-time error, with the simulation time). Each carries
an optional position; `format()` renders the message with the source line and
a caret marker, then the `help:`/`note:` lines.
"""
from __future__ import annotations

from typing import Any, Optional

from .ir import Pos


def shortest(x: float) -> str:
    """A number as the shortest decimal that reads back the same (`0`, `2.5`)."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e16:
        return str(int(x))
    return repr(x)


class SerqError(Exception):
    """Base of every error a bad program or a failing run reports."""

    prefix = ""

    def __init__(self, message: str, pos: Optional[Pos] = None,
                 help: Optional[str] = None, notes: Optional[list[str]] = None,
                 source: Optional[str] = None):
        super().__init__(message, pos, help, notes, source)
        self.message = message
        self.pos = pos
        self.help = help
        self.notes = list(notes or [])
        self.source = source  # text of the file `pos.file` (for the caret)

    #: Whether the error may quote its file whatever its name: a file the
    #: user named as input of a command (a measured log), not one a program
    #: reads.
    quotes_any_file: bool = False

    def header(self, file: Optional[str] = None) -> str:
        """The first line: `FILE:LINE:COL: [prefix]MESSAGE`."""
        first = self.message.split("\n", 1)[0]
        if self.pos is not None:
            where = f"{self.pos.file}:{self.pos.line}:{self.pos.col}"
        else:
            where = file or "<program>"
        return f"{where}: {self.prefix}{first}"

    def format(self, file: Optional[str] = None,
               source: Optional[str] = None) -> str:
        """The full message of Part 01 §8.1. In a file that is not a program
        (`shows_content`) only the position is given: an error never echoes
        the content of `/etc/passwd` a program named."""
        if (self.pos is not None and not self.quotes_any_file
                and not shows_content(self.pos.file)):
            return (f"{self.pos.file}:{self.pos.line}:{self.pos.col}: {self.prefix}not a "
                    "serQ program: the file does not read as one at this position\n"
                    "note: its content is not shown (only files whose names end in .sq "
                    "are quoted in messages)")
        lines = [self.header(file)]
        text = self.source if self.source is not None else source
        if self.pos is not None and text is not None:
            src_lines = text.split("\n")
            if 1 <= self.pos.line <= len(src_lines):
                line = src_lines[self.pos.line - 1].rstrip("\r")
                num = str(self.pos.line)
                pad = " " * len(num)
                indent = "".join("\t" if ch == "\t" else " "
                                 for ch in line[: max(self.pos.col - 1, 0)])
                lines.append(f"{num} | {line}")
                lines.append(f"{pad} | {indent}{'^' * max(self.pos.length, 1)}")
        rest = self.message.split("\n", 1)
        if len(rest) > 1:
            lines.append(rest[1])
        if self.help:
            lines.append(f"help: {self.help}")
        for note in self.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def shows_content(label: str) -> bool:
    """Whether an error may quote the file `label`: a program file (`.sq`),
    program text given without a file (`<program>`), or text the user typed
    on the command line (labelled by its option, `--slo`)."""
    return label.startswith(("<", "-")) or label.lower().endswith(".sq")


class ParseError(SerqError):
    """A lexical or syntax error, or a structural rule of the parser."""


class LinkError(SerqError):
    """A name, moment, constant or consistency error found after parsing."""

    prefix = "link error: "


class SimulationError(SerqError):
    """A run-time error: the run stops and no report is produced."""

    def __init__(self, message: str, time: float = 0.0, pos: Optional[Pos] = None,
                 help: Optional[str] = None, notes: Optional[list[str]] = None,
                 source: Optional[str] = None):
        super().__init__(message, pos, help, notes, source)
        # keep every argument in .args, so that SimPy's copy of a failed
        # process's exception (type(e)(*e.args)) is the same error
        self.args = (message, time, pos, help, notes, source)
        self.time = time

    def header(self, file: Optional[str] = None) -> str:
        where = file or (self.pos.file if self.pos else "<program>")
        return f"{where}: run-time error at t={shortest(self.time)}: {self.message.splitlines()[0]}"

    def format(self, file: Optional[str] = None, source: Optional[str] = None) -> str:
        lines = [self.header(file)]
        if self.help:
            lines.append(f"help: {self.help}")
        for note in self.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)


class UsageError(Exception):
    """A bad command line or API call (exit status 2)."""


def amount_error(value: float, text: str, time: float) -> SimulationError:
    """A computed amount (work, units, tokens) that is NaN or negative."""
    if value != value:
        msg = f"{text}: the amount is NaN, not a number of units, tokens or seconds"
    else:
        msg = (f"{text}: the amount is {shortest(value)}; an amount of units, "
               "tokens or seconds is a number, and not negative")
    return SimulationError(msg, time)


#: readiness of one session at one instant before "does not settle" (Part 02 §10.5)
SPIN_LIMIT = 1000


def unsettled_error(serial: float, time: float, why: str,
                    where: Optional[str] = None) -> SimulationError:
    """Part 02 §10.5's run-time error: session `serial` became ready more
    than SPIN_LIMIT times at the instant `time`; `why` names the likely
    cause, `where` (`file:line:col`) the statement the session is at."""
    return SimulationError(
        f"the instant t = {shortest(time)} does not settle: session {int(serial)} became "
        f"ready {SPIN_LIMIT + 1} times without time passing ({why})", time,
        notes=[f"the session is at {where}"] if where else None)


class PolicyError(SimulationError):
    """A user policy broke a rule of the runtime: the run stops.

    `policy` is the class name, `method` the decision, `rule` the rule broken."""

    def __init__(self, message: str, time: float = 0.0, pos: Any = None,
                 help: Optional[str] = None, notes: Optional[list[str]] = None,
                 source: Optional[str] = None, policy: str = "", method: str = "",
                 rule: str = ""):
        super().__init__(message, time, pos, help, notes, source)
        self.args = (message, time, pos, help, notes, source, policy, method, rule)
        self.policy = policy
        self.method = method
        self.rule = rule
