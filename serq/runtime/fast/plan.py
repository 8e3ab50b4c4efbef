"""The plan a closed run keeps between iterations (`closed`, `burst`, `leapfrog`).

`KeptPlan` is what `ClosedRuns._launch_kept` keeps on the engine (`kept`)
when it launches an iteration whose plan may go on unchanged; `ClosedRun`
is what a closed run needs of that plan (`ClosedRuns._run_of`), made once
per plan. Both are tuples with named fields: built positionally and read by
name (or unpacked) on the hot path.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Optional


class ClosedRun(NamedTuple):
    """What a closed run needs of a plan (`ClosedRuns._run_of`)."""

    cls: int  # the iteration's class: 0 prefill only, 1 decode only, 2 mixed
    pairs: list  # (job, tokens) of each run of the plan
    grows: list  # (frame, its allotment, tokens) of each growing hold
    decoders: list  # the decoding runs of sessions (their tokens are recorded)
    moving: bool  # whether a prefill moves a hold (the attention changes)
    regrow: Any  # the growth step (`closed.Regrow`); None when the plan reads growth


class KeptPlan(NamedTuple):
    """The plan of a closed run's launched iteration, kept for its end."""

    stamp: int  # `_plan_stamp()` at launch: the plan holds while it is unchanged
    assign: list  # (job, tokens, k) of each run
    tokens: float
    dec: int
    prefilled: float
    attention: float
    r: float
    kvd: float
    kvp: float
    cost: float  # the iteration's duration
    run: Optional[ClosedRun]  # None: not made yet
    ready: bool  # `_relay_kept` did the next iteration's checks and cost
