"""What a step engine's iteration works on (spec Part 04 §5–§7): its runs
(`StepJob`) and the plan of an attempt (`Plan`)."""
from __future__ import annotations

from typing import Optional

from .stages import Job


class StepJob(Job):
    """A run on a step stage: `mode` prefill/decode, `remaining` tokens; a
    run that grows a pool (`growing`) keeps the hold it grows (`frame`), the
    pool's index there (`fk`) and the hold's allotment on it (`cell`)."""

    # (the fields every iteration reads first, right after `Job.session`: in
    # a large fleet a resident's fields are read from memory, not from the
    # processor's caches, and fields side by side share a cache line)
    __slots__ = ("remaining", "mode", "growing", "stall", "cell", "ticks", "frame", "fk",
                 "adm", "joined")


class Plan:
    """The state of one iteration attempt (Plan/Step moments read it)."""

    __slots__ = ("budget", "chunk", "left", "served", "assign", "tokens", "prefilled",
                 "attention", "admitted", "preempted", "stop", "no_admit", "sums", "growing")

    def __init__(self, budget: float, chunk: float):
        self.budget = budget
        self.chunk = chunk
        self.left = budget
        self.served: set[StepJob] = set()
        self.assign: list[tuple[StepJob, float, float]] = []  # (job, tokens, K)
        self.tokens = 0.0
        self.prefilled = 0.0
        self.attention = 0.0
        self.admitted = 0
        self.preempted = 0
        self.stop = False          # a grower preempted itself: the pass ended
        self.no_admit = False      # exclusive prefill / granule wait
        # (decoders, kv_decode, kv_prefill, entries): `totals` of the first
        # `entries` of `assign`, added up by `_serve_in_order` as it served
        self.sums: Optional[tuple[float, float, float, int]] = None
        self.growing = False  # a hold grows for its tokens: a victim gives them back
