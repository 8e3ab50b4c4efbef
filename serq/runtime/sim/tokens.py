"""The token model of requests and turns (spec Part 06 §4, §6.2, Part 04 §12).

Tokens are the decode tokens (ends of iterations that scheduled one) and
the prefill completions of a session's runs on step stages. A prefill
completion continues the sequence when the previous token was a decode (or
a prefill completion that continued after one), or when it is on the
previous token's stage and the session was preempted since that token
(wherever it was then: at a stage, waiting or growing); else it starts a new
sequence: the request's first token again, while the turn's gaps before it
stay counted (pyserq 0.1.3). Requests give the client series
`ttft`/`tpot`; turns give each stage's inter-token gaps.
"""
from __future__ import annotations

from array import array
from bisect import bisect_left
from operator import sub
from typing import Any, Optional

import numpy as np


class _Sequence:
    """One token sequence: first and last token, count, what came last."""

    __slots__ = ("first", "last", "count", "prev_decode", "prev_stage", "preempted")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.first = 0.0
        self.last = 0.0
        self.count = 0
        self.prev_decode = False
        self.prev_stage: Any = None
        # whether the session was preempted since the last token
        self.preempted = False

    def extend(self, stage: Any, t: float) -> None:
        """A decode token continuing a sequence that has tokens (`token`'s
        common case)."""
        self.count += 1
        self.last = t
        self.prev_decode = True
        self.prev_stage = stage
        if self.preempted:  # (a read, not a store, on the common path)
            self.preempted = False

    def token(self, stage: Any, decode: bool, t: float) -> bool:
        """Add a token; returns whether it continues the sequence."""
        # (pyserq 0.1.3: after a preemption, a prefill end continues only on
        # the previous token's stage, wherever the preemption found the session)
        cont = self.count > 0 and (decode or self.prev_decode
                                   or (self.preempted and self.prev_stage is stage))
        if cont:
            self.count += 1
        else:
            self.first = t
            self.count = 1
        self.last = t
        # a prefill end that continued the sequence after a decode token lets
        # the next one continue too; one that continued only because of a
        # preemption does not (pyserq 0.1.3: a decode, then two prefill ends,
        # are one sequence; a preemption, then two prefill ends, are two)
        self.prev_decode = decode or (cont and self.prev_decode)
        self.prev_stage = stage
        self.preempted = False
        return cont


FINAL_CHUNK = 1 << 13  # final gaps a stage takes at a time (or more: a turn is not split)
# a stage's buffer, made once (80 KiB): a chunk and a quarter, so any turn of up
# to 2,048 gaps fits (a larger one may grow it)
FINAL_ROOM = FINAL_CHUNK + (FINAL_CHUNK >> 2)


class FinalGaps:
    """A stage's final gaps not taken yet: the first `n` of `buf`, a buffer
    made once with room for `FINAL_ROOM` (it grows only for a turn that
    does not fit). An array that grew by `extend` was copied each time it
    outgrew its memory, about every sixteenth of its length: a gap was
    copied about sixteen times, from memory a large fleet's other events
    had left."""

    __slots__ = ("buf", "n")

    def __init__(self) -> None:
        self.buf = array("d", bytes(8 * FINAL_ROOM))
        self.n = 0

    def add(self, gaps: Any) -> int:
        """Append `gaps` (floats, in order); how many the buffer holds."""
        if type(gaps) is not array:
            gaps = array("d", gaps)
        buf = self.buf
        k = self.n
        e = self.n = k + len(gaps)
        if e <= len(buf):
            buf[k:e] = gaps
        else:
            del buf[k:]
            buf.extend(gaps)
        return e

    def take(self) -> array:
        """The gaps held, in order; the buffer is empty after."""
        out = self.buf[:self.n]
        self.n = 0
        return out


def compact(gaps: dict) -> None:
    """Turn a session's pending gaps into arrays of doubles (8 bytes a gap
    instead of a list's 32): at a request's end, when the session may wait
    long -- for its last turn, until the run ends -- before they are final."""
    for stage, g in gaps.items():
        if type(g) is list:
            gaps[stage] = array("d", g)


class TokenState:
    """A session's request and turn sequences, and its pending gaps."""

    __slots__ = ("request", "turn", "turn_no", "gaps", "req_start", "active", "ttft", "prompt",
                 "pend")

    def __init__(self) -> None:
        self.request = _Sequence()
        self.turn = _Sequence()
        self.turn_no = -1.0
        # the turn's inter-token gaps that end after warm-up, by stage (each
        # stage's in order): a list while the request runs, then an array of
        # doubles (8 bytes a gap; `compact`), kept until the turn's sequence
        # is final -- for a session's last turn, the run's end
        self.gaps: dict[Any, Any] = {}
        self.req_start = 0.0
        self.active = False
        self.ttft: Optional[int] = None  # the request's ttft row, while it stands
        self.prompt = 0.0  # the tokens of the request's first prefill run (`prefill_run`)
        # the run whose later decode tokens wait on it (`decode_deferred`), or
        # None; `job.ticks` is not None exactly while `job` is its session's `pend`
        self.pend: Any = None


class TokenLog:
    """Feeds the client series and the stages' inter-token statistics."""

    def __init__(self, warmup: float):
        self.warmup = warmup
        self.states: list[TokenState] = []
        # the client series' rows (ttft rows are recorded at the first token
        # and dropped if a new sequence replaces it)
        self.ttft = ClientRows()
        self.tpot = ClientRows()
        # final gaps not yet given to their stages, by stage, in order (`flush`)
        self.final: dict[Any, FinalGaps] = {}

    def state(self, s: Any) -> TokenState:
        """The session's token state, its deferred tokens recorded."""
        st = s.tok
        if st is None:
            st = s.tok = TokenState()
            self.states.append(st)
        elif st.pend is not None:
            self.settle(st)
        return st

    def decode_deferred(self, s: Any, stage: Any, t: float, job: Any) -> None:
        """`decode(s, stage, t)` for a run's decode token at the end of an
        iteration of `stage` (`StepStage._finish`), and the run's later
        tokens deferred: the engine appends their times to `job.ticks`, and
        they are recorded (`settle`) when anything else reads or records
        the session's tokens. After a decode token, each further decode
        token of the same run only continues the sequences, and nothing
        reads them in between (the leapfrog's `_continued` reads only
        whether they have tokens), so deferring them changes no
        number and no order of the report; the engine's iteration end no
        longer reads the session's token state at every token."""
        self.decode(s, stage, t)
        s.tok.pend = job
        job.ticks = []

    def settle(self, st: TokenState) -> None:
        """Record the deferred decode tokens of `st.pend` (`decode_deferred`):
        each continues the sequences of the turn and request they were made
        in (the session may have begun its next turn since; `token` closes
        that turn after this), as `decode`'s common case records it."""
        job = st.pend
        st.pend = None
        ticks = job.ticks
        job.ticks = None
        if not ticks:
            return
        stage = job.stage
        n = len(ticks)
        last = ticks[-1]
        if st.active:
            r = st.request
            r.count += n
            r.last = last
            r.prev_decode = True
            r.prev_stage = stage
        u = st.turn
        if last >= self.warmup:  # the gaps ending after warm-up
            before = [u.last]
            before += ticks[:-1]
            gaps = list(map(sub, ticks, before))  # each time minus the token before it
            i = bisect_left(ticks, self.warmup)
            if i:
                del gaps[:i]
            out = st.gaps.get(stage)
            if out is None:
                st.gaps[stage] = gaps
            else:
                out.extend(gaps)
        u.count += n
        u.last = last
        u.prev_decode = True
        u.prev_stage = stage

    def begin_request(self, s: Any, now: float) -> None:
        st = self.state(s)
        st.request.reset()
        st.req_start = now
        st.active = True
        st.ttft = None
        st.prompt = 0.0

    @staticmethod
    def prefill_run(s: Any, work: float) -> None:
        """Session `s` asks a step stage for a prefill run of `work` tokens:
        the first of its request gives the request's prompt tokens (a later
        one is a recompute, or a decoder's prefill of the last token)."""
        st = s.tok
        if st is not None and st.active and not st.prompt:
            st.prompt = work

    def end_request(self, s: Any, now: float) -> None:
        """Record ttft and tpot of the request that ends now."""
        st = self.state(s)
        st.active = False
        st.ttft = None
        if st.gaps:
            compact(st.gaps)
        seq = st.request
        if seq.count >= 2 and seq.last >= self.warmup:
            self.tpot.add(seq.last, s.sid, int(s.turn_no),
                          (seq.last - seq.first) / (seq.count - 1))

    def token(self, s: Any, stage: Any, decode: bool, t: float) -> None:
        """A token of session `s` on `stage` at time `t`."""
        st = self.state(s)
        if st.active and not st.request.token(stage, decode, t):
            # the request's first token (again): its ttft sample, replacing one
            if st.ttft is not None:
                self.ttft.drop(st.ttft)
            st.ttft = self.ttft.add(t, s.sid, int(s.turn_no), t - st.req_start)
        if s.turn_no != st.turn_no:
            self.flush(st)
            st.turn_no = s.turn_no
            st.turn.reset()
        prev = st.turn.last
        # (a token that starts the sequence again leaves the gaps before it:
        # pyserq 0.1.3 counts them)
        if st.turn.token(stage, decode, t) and t >= self.warmup:
            out = st.gaps.get(stage)
            if out is None:
                st.gaps[stage] = [t - prev]
            else:
                out.append(t - prev)

    def decode(self, s: Any, stage: Any, t: float) -> None:
        """`token(s, stage, True, t)`, with the common case inline: a decode
        token of a running turn (and request) continues their sequences."""
        st = s.tok
        if st is None or s.turn_no != st.turn_no:
            return self.token(s, stage, True, t)
        if st.pend is not None:
            self.settle(st)
        u = st.turn
        r = st.request
        if not u.count or (st.active and not r.count):
            return self.token(s, stage, True, t)
        if st.active:
            r.extend(stage, t)
        if t >= self.warmup:
            out = st.gaps.get(stage)
            if out is None:
                st.gaps[stage] = [t - u.last]
            else:
                out.append(t - u.last)
        u.extend(stage, t)
        return None

    def decode_run(self, decoders: list, stage: Any, times: list) -> None:
        """`decode(job.session, stage, t)` for every `t` of `times`
        (increasing) and, at each, every run of `decoders` in order -- as a
        burst's iterations record them. Only a run's first decode token can
        take `token`'s general path (after it the sequences continue), so
        the first time is recorded run by run (`decode_deferred`, which
        `decode` records at once) and the rest deferred with the run's
        later tokens (`settle`): the same counts, last tokens and gaps."""
        rest = None
        for job in decoders:
            ticks = job.ticks
            if ticks is not None:  # (its tokens are deferred already)
                ticks += times
                continue
            self.decode_deferred(job.session, stage, times[0], job)
            if len(times) > 1:
                if rest is None:
                    rest = times[1:]
                job.ticks += rest

    @staticmethod
    def preempted(s: Any) -> None:
        """Session `s` (or fork leg) lost a hold to a preemption, wherever
        it was: resident at a stage, waiting, or growing."""
        st = s.tok
        if st is not None:
            # (deferred tokens need not be recorded first: they leave the
            # mark as they find it, and it comes after them)
            st.request.preempted = True
            st.turn.preempted = True

    def flush(self, st: TokenState) -> None:
        """A turn's sequence is final: its gaps (those ending after warm-up)
        are final, each stage's in order. They wait in the stage's buffer
        (`final`), which the stage takes `FINAL_CHUNK` gaps at a time: a
        stage's sum depends only on the order of its own gaps, which the
        buffer keeps, and its buckets on no order."""
        if st.pend is not None:
            self.settle(st)
        pending = st.gaps
        if not pending:
            return
        final = self.final
        for stage, gaps in pending.items():
            out = final.get(stage)
            if out is None:
                out = final[stage] = FinalGaps()
            if out.add(gaps) >= FINAL_CHUNK:
                stage.add_gaps(out.take())
        st.gaps = {}

    def finish(self) -> None:
        """The run ends: every pending turn is final (the sessions in order),
        and the stages take every final gap."""
        for st in self.states:
            self.flush(st)
        for stage, out in self.final.items():
            if out.n:
                stage.add_gaps(out.take())
        self.final = {}

    def series(self, rows: "ClientRows", target: Any) -> None:
        """Fill a report Series from rows kept after warm-up, in time-stamp order."""
        rows.into(target, self.warmup)


class ClientRows:
    """The rows of a client series (ttft or tpot) as the run records them:
    time, session, turn and value in parallel arrays, 32 bytes a row, in
    the order they are recorded (rows of equal times keep it in the report).
    A ttft row that a new sequence replaced is `dropped`."""

    __slots__ = ("times", "sessions", "turns", "values", "dropped")

    def __init__(self) -> None:
        self.times = array("d")
        self.sessions = array("q")
        self.turns = array("d")  # (whole numbers, as the report's `Turns` keeps them)
        self.values = array("d")
        self.dropped: set[int] = set()

    def add(self, t: float, sid: int, turn: int, value: float) -> int:
        """Append a row; its index."""
        self.times.append(t)
        self.sessions.append(sid)
        self.turns.append(turn)
        self.values.append(value)
        return len(self.times) - 1

    def drop(self, i: int) -> None:
        """Row `i` is not a sample after all."""
        self.dropped.add(i)

    def into(self, target: Any, warmup: float) -> None:
        """Append the rows kept (not dropped, time at or after `warmup`) to
        the report Series `target`, by time, then as recorded."""
        if not len(self.times):
            return
        t = np.frombuffer(self.times, dtype=np.float64)
        keep = t >= warmup
        if self.dropped:
            keep[list(self.dropped)] = False
        kept = np.flatnonzero(keep)
        pick = kept[np.argsort(t[kept], kind="stable")]  # (ties: as recorded)
        target.times.frombytes(t[pick].tobytes())
        target.sessions.frombytes(np.frombuffer(self.sessions, dtype=np.int64)[pick].tobytes())
        target.turns.frombytes(np.frombuffer(self.turns, dtype=np.float64)[pick].tobytes())
        target.values.frombytes(np.frombuffer(self.values, dtype=np.float64)[pick].tobytes())
