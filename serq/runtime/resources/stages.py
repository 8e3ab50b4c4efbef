"""Stages as custom SimPy resources: `fifo(c)`, `ps(φ)` and `delay`
(spec Part 04 §1–2, statistics §12, online estimates Part 01 §4.3).

A session's `run S (w)` calls `stage.request(session, w)` and yields the
returned `Job`, a SimPy event that succeeds when the job completes. As in
SimPy's own resources, the policy is a method a subclass may override:
`Fifo.select_next()` chooses which waiting job a freed server takes,
`Ps.finish_order()` breaks ties between jobs with equal finish tags.

Completion bookkeeping runs as the first callback of the completion event,
before the session resumes, so a session sees the stage as it stands after
its own job left and the next one started (Part 01 E-3).
"""
from __future__ import annotations

from collections import deque
from heapq import heapify, heappop, heappush
from typing import Any, Callable, Optional

from simpy.events import Event

from ..kernel.calendar import Entry, fire_entry, trigger
from ..kernel.instant import CALENDAR, Instant
from .decision import decision
from ...core.numeric import seq_sum

ALPHA = 0.01  # weight of the online estimates (Part 01 §4.3)


def left(work: float) -> float:
    """What is left of a job's work, as `work(s)` adds it: never below 0. A
    job whose completion falls at the current time, read before its entry
    is handled, has `w - (now - start)` a few ulps below 0; pyserq (0.1.3 to
    0.1.5) counts 0 (drawing program 1123264)."""
    return work if work > 0.0 else 0.0


class Job(Entry, Event):
    """One run of one session at one stage; succeeds at completion."""

    # the event's own fields as slots too: no per-job dict (Event has none of them as
    # slots); it is always a success with no value (`Entry`). Slots lie in
    # the object in this order, a subclass's after them: `session` last, next
    # to the fields a step engine's iteration reads (`StepJob`)
    __slots__ = ("env", "callbacks",
                 "work", "arrival", "start", "tag", "seq", "stage", "cancelled", "session")

    def __init__(self, env: Any, session: Any, work: float, stage: "Stage"):
        self.env = env
        self.callbacks = []
        self.session = session
        self.work = work
        self.arrival = env.now
        self.start = env.now
        self.stage = stage
        self.cancelled = False

    def cancel(self) -> None:
        """The session is preempted: its job leaves the stage unfinished."""
        self.cancelled = True
        self.stage.cancel(self)


class Stage:
    """Common state and statistics of a stage member.

    Time averages integrate the number of jobs present (`mean_number`) and
    the time with at least one job (`utilization`) from the warm-up on."""

    kind = "stage"

    def __init__(self, sim: Any, name: str, index: Optional[int]):
        self.sim = sim
        self.env = sim.env
        self.name = name
        self.index = index
        self.n = 0
        self.t_last = 0.0
        self.int_n = 0.0
        self.int_busy = 0.0
        self.completed = 0
        self.requests = 0  # requests with a completed job here (`count_request`)
        self.wait_sum = 0.0
        self.service_sum = 0.0
        self.warmup = sim.warmup
        # online estimates
        self.track = False
        self.track_work = False  # keep the jobs in service (for `work(S)`)
        self.est_count = 0
        self.s_hat = 0.0
        self.w_hat = 0.0
        self.g_hat = 0.0
        self.prev_start = 0.0

    @property
    def label(self) -> str:
        """`name` or `name[index]`."""
        return self.name if self.index is None else f"{self.name}[{self.index}]"

    # -- time averages -----------------------------------------------------
    def _advance(self, now: float) -> None:
        dt = now - self.t_last
        if dt:
            n = self.n
            if n:
                self.int_n += n * dt
                self.int_busy += dt
            self.t_last = now

    def reset_measurement(self, now: float) -> None:
        """The warm-up boundary: averages start afresh at `now`."""
        self._advance(now)
        self.int_n = 0.0
        self.int_busy = 0.0

    def finish_measurement(self, end: float) -> None:
        """Integrate up to the end of the run."""
        self._advance(end)

    # -- completions -------------------------------------------------------
    def count_request(self, job: Job, now: float) -> None:
        """Count `job`'s request once at this stage: at the first job of it
        that completes here, when that is after warm-up (a step engine runs
        a request's prefill and decode as two jobs; a session without
        `request` statements is one request)."""
        s = job.session
        if s is None:
            return
        seen = s.rq_at
        if seen is None:
            seen = s.rq_at = {}
        elif seen.get(self) == s.rq:
            return
        seen[self] = s.rq
        if now >= self.warmup:
            self.requests += 1

    def _record(self, job: Job, now: float) -> None:
        self.count_request(job, now)
        if now >= self.warmup:
            self.completed += 1
            self.wait_sum += job.start - job.arrival
            self.service_sum += now - job.start
        if self.track:
            self._estimate(job.start, job.start - job.arrival, now - job.start)

    def _estimate(self, start: float, wait: float, service: float) -> None:
        c = self.est_count
        if c == 0:
            self.s_hat = service
            self.w_hat = wait
        else:
            self.s_hat = (1 - ALPHA) * self.s_hat + ALPHA * service
            self.w_hat = (1 - ALPHA) * self.w_hat + ALPHA * wait
            gap = start - self.prev_start
            self.g_hat = gap if c == 1 else (1 - ALPHA) * self.g_hat + ALPHA * gap
        self.prev_start = start
        self.est_count = c + 1

    # -- observables -------------------------------------------------------
    def busy_count(self) -> int:
        """Jobs in service."""
        return self.n

    def est_lambda(self) -> float:
        """λ̂ = 1/ĝ once two completions were seen and ĝ > 0, else 0."""
        if self.est_count >= 2 and self.g_hat > 0:
            return 1.0 / self.g_hat
        return 0.0

    def est_rho(self) -> float:
        """ρ̂ = min(λ̂ ŝ, 0.99)."""
        lam = self.est_lambda()
        if lam == 0.0:
            return 0.0
        return min(lam * self.s_hat, 0.99)

    def est_wait(self) -> float:
        """Ŵ, the smoothed wait."""
        return self.w_hat

    def price(self, s_hit: float, ds: float) -> float:
        """Online price of a cache miss (Part 01 §4.3)."""
        lam = self.est_lambda()
        rho = self.est_rho()
        s_m = s_hit + ds
        return (ds + lam * (s_m * s_m - s_hit * s_hit) / (2 * (1 - rho))
                + lam * self.w_hat * ds / (1 - rho))

    # -- rows ----------------------------------------------------------------
    def row_values(self, span: float) -> dict[str, float]:
        """mean_number, utilization, completed, throughput, mean_wait,
        mean_service, requests, request_throughput over the measured span."""
        nan = float("nan")
        c = self.completed
        return {
            "requests": self.requests,
            "request_throughput": self.requests / span if span > 0 else nan,
            "mean_number": self.int_n / span if span > 0 else nan,
            "utilization": self.int_busy / span if span > 0 else nan,
            "completed": c,
            "throughput": c / span if span > 0 else nan,
            "mean_wait": self.wait_sum / c if c else nan,
            "mean_service": self.service_sum / c if c else nan,
        }


class Delay(Stage):
    """`delay`: every job finishes its work after it starts, no waiting."""

    kind = "delay"

    def __init__(self, sim: Any, name: str, index: Optional[int]):
        super().__init__(sim, name, index)
        self.in_service: dict[Job, None] = {}  # in the order they started

    def request(self, session: Any, work: float) -> Job:
        """Start a job of `work` time units for `session`."""
        env = self.env
        now = env.now
        self._advance(now)
        self.n += 1
        job = Job(env, session, work, self)
        job.callbacks.append(self._complete)
        if self.track_work:
            self.in_service[job] = None
        env.schedule(job, CALENDAR, work)
        return job

    def _complete(self, job: Job) -> None:
        self.sim.events += 1
        if job.cancelled:
            return
        now = self.env.now
        self._advance(now)
        self.n -= 1
        self.in_service.pop(job, None)
        self._record(job, now)

    def cancel(self, job: Job) -> None:
        """Remove an unfinished job (its completion entry then does nothing)."""
        self._advance(self.env.now)
        self.n -= 1
        self.in_service.pop(job, None)

    def work(self) -> float:
        """Remaining work of the jobs present (each job's work less the time
        it has spent, in that order of operations, as pyserq 0.1.3 rounds it:
        generator seed 55184; `left`)."""
        now = self.env.now
        return seq_sum(left(job.work - (now - job.start)) for job in self.in_service)


class Fifo(Stage):
    """`fifo(c)`: c servers taking jobs in arrival order."""

    kind = "fifo"

    def __init__(self, sim: Any, name: str, index: Optional[int], servers: int):
        super().__init__(sim, name, index)
        self.servers = servers
        self.busy = 0
        self.waiting: deque[Job] = deque()
        self.in_service: dict[Job, None] = {}  # in the order they started

    @decision
    def select_next(self) -> Job:
        """Policy: the waiting job a freed server takes (default: the oldest).

        Receives nothing: the waiting jobs are `self.waiting` (a deque, in
        arrival order; a `Job` has `work`, `arrival` and `session`, whose
        `session.attribute("name")` reads an attribute). Must remove the
        chosen job from `self.waiting` and return it. Checked when
        overridden: the job was waiting, and exactly it was removed."""
        return self.waiting.popleft()

    def request(self, session: Any, work: float) -> Job:
        """Queue a job of `work` time units for `session`."""
        env = self.env
        now = env.now
        self._advance(now)
        self.n += 1
        job = Job(env, session, work, self)
        job.callbacks.append(self._complete)
        if self.busy < self.servers:
            self.busy += 1
            if self.track_work:
                self.in_service[job] = None
            heappush(env.queue, (now + work, CALENDAR, next(env.eids), job))  # schedule_at
        else:
            self.waiting.append(job)
        return job

    def _start(self, job: Job) -> None:
        env = self.env
        self.busy += 1
        job.start = env.now
        if self.track_work:
            self.in_service[job] = None
        heappush(env.queue, (env.now + job.work, CALENDAR, next(env.eids), job))  # schedule_at

    def _complete(self, job: Job) -> None:
        self.sim.events += 1
        if job.cancelled:
            return
        now = self.env.now
        self._advance(now)
        self.n -= 1
        self.busy -= 1
        if self.track_work:
            self.in_service.pop(job, None)
        self._record(job, now)
        if self.waiting and self.busy < self.servers:
            self._start(self.select_next())

    def cancel(self, job: Job) -> None:
        """Remove an unfinished job; a freed server takes the next one."""
        self._advance(self.env.now)
        self.n -= 1
        if job in self.waiting:
            self.waiting.remove(job)
        else:
            self.in_service.pop(job, None)
            self.busy -= 1
            if self.waiting and self.busy < self.servers:
                self._start(self.select_next())

    def busy_count(self) -> int:
        return self.busy

    def set_servers(self, count: int) -> None:
        """`count` servers from now (a process's change, `serq.build`): more
        start waiting jobs at once; fewer take no new job until the jobs in
        service that exceed them have finished (nothing is preempted)."""
        self._advance(self.env.now)
        self.servers = count
        while self.waiting and self.busy < self.servers:
            self._start(self.select_next())

    def work(self) -> float:
        """Work of waiting jobs plus what remains of jobs in service."""
        now = self.env.now
        total = 0.0
        for job in self.in_service:
            total += left(job.work - (now - job.start))  # (as `Delay.work` rounds it)
        for job in self.waiting:
            total += job.work
        return total


class Ps(Stage):
    """`ps(φ)`: processor sharing at total rate φ(present).

    Virtual time `V` advances at rate φ/n; a job arriving at `V` with work
    `w` gets finish tag `V + w`; the smallest tag finishes next (ties in
    start order). φ is re-evaluated after every settle in which the
    population changed (Part 04 §2, Part 07 §4.5): a completion it schedules
    at the current instant does not hold back that settle's iteration
    attempts (`Instant.settle_each`; pyserq 0.1.3, issue 22)."""

    kind = "ps"
    each_settle = True  # φ is re-evaluated after every settle (`Instant.settle_each`)

    def __init__(self, sim: Any, name: str, index: Optional[int],
                 capacity: Callable[[int], float], instant: Instant):
        super().__init__(sim, name, index)
        self.capacity = capacity
        self.instant = instant
        self.dirty = False
        self.heap: list[tuple[float, int, Job]] = []
        self.seq = 0
        self.vtime = 0.0
        self.v_last = 0.0
        self.rate = 0.0
        self.gen = 0

    @decision
    def finish_order(self, job: Job) -> Any:
        """Policy: the key that orders `job` among jobs with the same finish tag.

        Receives the arriving job (`job.tag` its finish tag in virtual time,
        `job.work`, `job.session`); `self.seq` counts the jobs that joined
        before it. Returns a key: of two jobs whose tags are equal, the
        smaller key finishes first. Checked when overridden: the key compares
        with, and differs from, the key of every job present. Default: start
        order (`self.seq`)."""
        return self.seq

    def _vnow(self, now: float) -> float:
        if self.rate and now != self.v_last:
            return self.vtime + self.rate * (now - self.v_last)
        return self.vtime

    def _sync(self, now: float) -> None:
        self.vtime = self._vnow(now)
        self.v_last = now

    def request(self, session: Any, work: float) -> Job:
        """Join the shared server with `work` units."""
        env = self.env
        now = env.now
        self._advance(now)
        self._sync(now)
        self.n += 1
        job = Job(env, session, work, self)
        job.tag = self.vtime + work
        job.seq = self.finish_order(job)
        self.seq += 1
        heappush(self.heap, (job.tag, job.seq, job))
        self._changed()
        return job

    def _changed(self) -> None:
        self.gen += 1  # a pending completion is obsolete
        self.instant.mark(self)

    def end_of_instant(self) -> None:
        """Re-evaluate φ and schedule the next completion."""
        if not self.n:
            self.rate = 0.0
            return
        now = self.env.now
        self._sync(now)
        phi = self.capacity(self.n)
        if not phi > 0:
            self.rate = 0.0
            return
        self.rate = phi / self.n
        tag = self.heap[0][0]
        delay = (tag - self.vtime) / self.rate
        if delay < 0:
            delay = 0.0
        ev = Event(self.env)
        ev.callbacks.append(self._timer)
        trigger(self.env, ev, CALENDAR, delay, self.gen)

    def _timer(self, ev: Event) -> None:
        self.sim.events += 1
        now = self.env.now
        if ev.value != self.gen:
            return  # an entry made before the last re-evaluation does nothing
        self._advance(now)
        self._sync(now)
        tag, _seq, job = heappop(self.heap)
        if tag > self.vtime:
            self.vtime = tag  # the finished job's tag is reached exactly
        self.n -= 1
        self._record(job, now)
        self._changed()
        fire_entry(job)

    def cancel(self, job: Job) -> None:
        """Remove an unfinished job from the shared server."""
        now = self.env.now
        self._advance(now)
        self._sync(now)
        self.heap = [e for e in self.heap if e[2] is not job]
        heapify(self.heap)
        self.n -= 1
        self._changed()

    def work(self) -> float:
        """Sum of the remaining work of the jobs present."""
        v = self._vnow(self.env.now)
        return seq_sum(left(tag - v) for tag, _s, _j in self.heap)
