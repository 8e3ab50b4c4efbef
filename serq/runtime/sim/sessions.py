"""Sessions: their class, their creation and their end (spec Part 02 §3.6,
§4, §7.5, §8).

A program gets its own `Session` class with one slot per attribute, so
generated code reads `s.<slot>` directly. Built-in attributes keep their
names as slots; a user attribute `x` gets a slot `a<k>` (attribute names may
be any Unicode identifier, which Python would normalise).
"""
from __future__ import annotations

from typing import Any, Optional

from ...core import ir
from ..compile import names as N

RESERVED_SLOTS = ("sid", "rng", "corpus", "cursor", "proc", "holds", "leases", "pending",
                  "preempt_pos", "stuck", "ended", "adm_seq", "tok", "parent", "legs", "forks",
                  "join_ev", "at", "rq", "rq_at")


def attribute_slots(program: ir.Program) -> dict[str, str]:
    """Attribute name -> slot name on the session object."""
    slots = {name: name for name in ir.BUILTIN_ATTRIBUTES}
    for k, name in enumerate(program.attributes):
        if name not in slots:
            slots[name] = f"a{k}"
    return slots


def session_class(slots: dict[str, str], ns_globals: dict[str, Any],
                  pools: bool = True) -> type:
    """A class with one slot per attribute; `Session(serial)` zeroes them.

    Without `pools` a session never holds anything: its (empty) lists of
    holds and leases are a shared empty tuple, and it has no preemption
    positions."""
    names = list(dict.fromkeys(slots.values())) + list(RESERVED_SLOTS)
    body = ["def __init__(self, sid):",
            "    self.sid = sid",
            "    self.serial = float(sid)",
            "    self.rng = None",
            "    self.corpus = None",
            "    self.cursor = 0",
            "    self.proc = None",
            "    self.holds = []" if pools else "    self.holds = ()",
            "    self.leases = []" if pools else "    self.leases = ()",
            "    self.pending = None",
            "    self.preempt_pos = {}" if pools else "    self.preempt_pos = None",
            "    self.stuck = False",
            "    self.ended = False",
            "    self.adm_seq = 0",
            "    self.tok = None",
            "    self.parent = None",
            "    self.legs = []",
            "    self.forks = 0",
            "    self.join_ev = None",
            "    self.at = None",
            "    self.rq = 0",  # the session's requests so far (stages count requests by it)
            "    self.rq_at = None"]  # stage -> the request it last counted (`Stage._record`)
    for slot in slots.values():
        if slot != "serial":
            body.append(f"    self.{slot} = 0.0")
    ns: dict[str, Any] = {}
    exec("\n".join(body) + "\n", ns)
    cls = type("Session", (), {"__slots__": tuple(names), "__init__": ns["__init__"],
                               "attribute": _attribute, "attribute_slots": dict(slots)})
    ns_globals[N.SESSION_CLASS] = cls
    return cls


def _attribute(self: Any, name: str) -> float:
    """The session's attribute `name` (as the program spells it), for policies."""
    slot = self.attribute_slots.get(name)
    if slot is None:
        known = ", ".join(f"`{n}`" for n in self.attribute_slots)
        raise KeyError(f"the program has no session attribute `{name}` (it has {known})")
    return getattr(self, slot)


class TraceCursor:
    """Loads trace turns into sessions (Part 02 §4.3)."""

    def __init__(self, trace: ir.Trace, stream: Optional[Any]):
        self.sessions = trace.sessions
        self.ordered = trace.ordered
        self.stream = stream

    def assign(self, s: Any) -> None:
        """Pick the corpus session of a new session (creation step 3)."""
        count = len(self.sessions)
        if self.ordered:
            s.corpus = self.sessions[s.sid % count]
        else:
            s.corpus = self.sessions[self.stream.below(count)]
        s.cursor = 0

    @staticmethod
    def load(s: Any) -> None:
        """`turn;` with a trace: the next corpus turn, and `more`."""
        corpus = s.corpus
        k = s.cursor
        if k < len(corpus):
            t = corpus[k]
            s.new = t.new
            s.out = t.out
            s.think = t.think
            s.forced = t.forced
            k += 1
            s.cursor = k
            s.more = 1.0 if k < len(corpus) else 0.0
        else:
            s.more = 0.0
