#!/usr/bin/env python3
"""Hand-written SimPy model of the prefix cache: the floor of serq-simpy's benchmark.

The same model as examples/multi-turn/prefix_cache.sq, written the way a
SimPy user would write it by hand, as fast as reasonably possible:

* sessions arrive as a Poisson process of rate ``lam`` (the first at time 0,
  as serQ's ``arrive poisson``); a session has 2 + floor(U(0, 4)) turns;
  every turn appends ``new = 100 + floor(Exp(mean 400))`` prompt tokens and is
  answered with ``out = 50 + floor(Exp(mean 150))`` tokens;
* a turn's request holds ``ru(ctx + new + out)`` tokens of a KV pool
  (``kv_cap`` tokens in ``block``-token blocks; ``ru``/``rd`` round up/down to
  a block); a request that does not fit waits in FIFO order (head-of-line);
  at admission the session's own cached prefix is consumed (its size is the
  turn's ``cached``) and, when ``used + cached + need > cap``, cached prefixes
  are evicted LRU (oldest release first), a block at a time from the oldest
  entry's tail; an entry's eviction order never changes while it shrinks, so
  the blocks one admission takes from one entry are removed in one step (same
  entries, same units as block by block); a demand above the capacity
  rejects the session (it ends);
* while holding, the request runs on a processor-sharing server ``ps(4)``:
  the stage's rate 4 is shared equally by the ``n`` jobs present, each
  progressing at rate 4/n (serQ's ``ps(φ)``: one job alone runs at rate 4);
  its work is ``(ctx + new - cached) / prefill_rate + out / decode_rate``;
  implemented with a virtual clock and finish tags, one pending timeout for
  the next departure (a timeout made stale by an arrival is ignored);
* at release ``rd(ctx + new + out)`` tokens stay cached as the session's
  prefix (its entry moves to the young end of the LRU order); they stay after
  the session ends, until evicted;
* between turns the user thinks Exp(mean ``think_mean``);
* observed: ``hit`` = cached / ctx (0 on a first turn) at admission and
  ``response`` = the turn's time from request to release.

Random numbers come from Python's ``random`` module (not serQ's streams), so
the numbers agree with serq-simpy's only statistically. Over the program's
own horizon 20000, seed 1:

    serq-simpy run examples/multi-turn/prefix_cache.sq
        hit 0.685 ±0.011, response 1.65 ±0.08 (3529 samples), 1002 arrivals,
        2 538 736 tokens evicted, events 7873
    python scripts/handwritten_prefix_cache.py
        hit 0.680, response 1.62 (3512 samples), 1009 arrivals,
        2 561 040 tokens evicted, events 7783

(seeds 2-5 here: hit 0.675-0.688, response 1.63-1.69; pyserq 0.1.3, seed 1:
hit 0.673, response 1.63). With ``--kv-cap 4096`` (``--set kv_cap=4096``)
eviction costs hits: hit 0.376 here, 0.371 in serq-simpy, 0.381 in pyserq
0.1.3, responses 1.62, 1.65, 1.60. The calendar does
the same work: `events` counts what serQ counts (Poisson arrivals, think-time
ends, the ps stage's completion entries, stale ones included); the pool's
bookkeeping (admission, eviction, release) happens inside those events in
both.
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import time
from collections import deque
from typing import Optional

import simpy


def evict_lru(entries: dict[int, int], excess: float, block: float) -> tuple[float, int]:
    """Evict at least ``excess`` units from ``entries`` (session -> cached units,
    oldest release first): whole blocks from the oldest entry's tail, an
    entry at a time. An entry keeps its place while it shrinks, so the blocks
    one call takes from it go in one step (the same units and entries as
    block by block). Returns (units evicted, entries removed)."""
    units = 0
    removed = 0
    while excess > 0:
        victim = next(iter(entries))
        size = entries[victim]
        take = -(-excess // block) * block  # whole blocks from the tail
        if take >= size:
            take = size
            del entries[victim]
            removed += 1
        else:
            entries[victim] = size - take
        units += take
        excess -= take
    return units, removed


class PS:
    """A processor-sharing server of total rate ``phi`` shared by the jobs present."""

    def __init__(self, env: simpy.Environment, phi: float) -> None:
        self.env = env
        self.phi = phi
        self.v = 0.0  # virtual time: the work one job has received since 0
        self.t = 0.0  # when v was last brought up to date
        self.jobs: list = []  # heap of (finish tag, sequence, event)
        self.seq = 0
        self.gen = 0  # the current departure timeout's number; older ones are stale
        self.fired = 0  # departure timeouts handled, stale ones included

    def submit(self, work: float) -> simpy.Event:
        """An event that succeeds when ``work`` units of service are done."""
        env = self.env
        jobs = self.jobs
        if jobs:
            self.v += (env.now - self.t) * self.phi / len(jobs)
        self.t = env.now
        ev = env.event()
        self.seq += 1
        heapq.heappush(jobs, (self.v + work, self.seq, ev))
        self._schedule()
        return ev

    def _schedule(self) -> None:
        self.gen += 1
        jobs = self.jobs
        if jobs:
            delay = (jobs[0][0] - self.v) * len(jobs) / self.phi
            timeout = self.env.timeout(delay if delay > 0.0 else 0.0, self.gen)
            timeout.callbacks.append(self._depart)

    def _depart(self, timeout: simpy.Event) -> None:
        self.fired += 1
        if timeout.value != self.gen:
            return  # an arrival has rescheduled the departure
        jobs = self.jobs
        self.v += (self.env.now - self.t) * self.phi / len(jobs)
        self.t = self.env.now
        heapq.heappop(jobs)[2].succeed()
        self._schedule()


class KVPool:
    """A token pool with per-session cached prefixes, LRU eviction and a FIFO queue."""

    def __init__(self, env: simpy.Environment, cap: float, block: int) -> None:
        self.env = env
        self.cap = cap
        self.block = block
        self.used = 0
        self.cached = 0
        self.entries: dict[int, int] = {}  # session -> cached tokens, oldest release first
        self.queue: deque = deque()  # (session, tokens, event)
        self.evicted_entries = 0
        self.evicted_units = 0

    def admit_now(self, sid: int, need: int) -> Optional[int]:
        """Admit at once if nobody waits and ``need`` fits: the consumed prefix; else None."""
        if self.queue or self.used + need > self.cap:
            return None
        return self._admit(sid, need)

    def wait(self, sid: int, need: int) -> simpy.Event:
        """Join the queue; the event's value is the consumed prefix."""
        ev = self.env.event()
        self.queue.append((sid, need, ev))
        return ev

    def release(self, sid: int, held: int, keep: int) -> None:
        """Give back ``held`` tokens, keep ``keep`` cached, admit the queue's heads."""
        self.used -= held
        if keep > 0:
            self.entries[sid] = keep  # the entry was consumed at admission: a new one
            self.cached += keep
        queue = self.queue
        while queue and self.used + queue[0][1] <= self.cap:
            sid2, need, ev = queue.popleft()
            ev.succeed(self._admit(sid2, need))

    def _admit(self, sid: int, need: int) -> int:
        entries = self.entries
        own = entries.pop(sid, 0)
        self.cached -= own
        excess = self.used + self.cached + need - self.cap
        if excess > 0:
            units, removed = evict_lru(entries, excess, self.block)
            self.cached -= units
            self.evicted_units += units
            self.evicted_entries += removed
        self.used += need
        return own


def run(horizon: float = 20000.0, seed: int = 1, lam: float = 0.05, kv_cap: float = 16384,
        block: int = 16, prefill_rate: float = 4000.0, decode_rate: float = 40.0,
        think_mean: float = 20.0, servers: float = 4.0) -> dict:
    """Simulate the prefix-cache model up to ``horizon``; its counts and means."""
    start = time.perf_counter()
    rng = random.Random(seed)
    expo = rng.expovariate
    uniform = rng.uniform
    env = simpy.Environment()
    timeout = env.timeout
    pool = KVPool(env, kv_cap, block)
    llm = PS(env, servers)
    hits: list[float] = []
    responses: list[float] = []
    counts = {"arrivals": 0, "ended": 0, "rejected": 0, "thinks": 0}
    r_new, r_out, r_think = 1.0 / 400.0, 1.0 / 150.0, 1.0 / think_mean

    def session(sid: int):
        turns = 2 + int(uniform(0.0, 4.0))
        ctx = 0
        turn_no = 1
        new = 100 + int(expo(r_new))
        out = 50 + int(expo(r_out))
        while True:
            t0 = env.now
            units = ctx + new + out
            need = -(-units // block) * block
            if need > kv_cap:
                counts["rejected"] += 1
                break
            cached = pool.admit_now(sid, need)
            if cached is None:
                cached = yield pool.wait(sid, need)
            hits.append(cached / ctx if ctx > 0 else 0.0)
            yield llm.submit((ctx + new - cached) / prefill_rate + out / decode_rate)
            pool.release(sid, need, units // block * block)
            ctx = units
            responses.append(env.now - t0)
            if turn_no >= turns:
                break
            yield timeout(expo(r_think))
            counts["thinks"] += 1
            turn_no += 1
            new = 100 + int(expo(r_new))
            out = 50 + int(expo(r_out))
        counts["ended"] += 1

    def source():
        sid = 0
        while True:
            env.process(session(sid))
            sid += 1
            counts["arrivals"] = sid
            yield timeout(expo(lam))

    env.process(source())
    env.run(until=horizon)

    def mean(xs: list[float]) -> Optional[float]:
        return sum(xs) / len(xs) if xs else None

    # events as serQ counts them: arrivals, think-time ends, ps calendar entries
    events = counts["arrivals"] + counts.pop("thinks") + llm.fired
    return {"horizon": horizon, "seed": seed, "events": events, **counts,
            "turns": len(hits), "responses": len(responses),
            "hit": mean(hits), "response": mean(responses),
            "evicted_entries": pool.evicted_entries, "evicted_units": int(pool.evicted_units),
            "seconds": time.perf_counter() - start}


def main(argv: Optional[list[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=float, default=20000.0, help="simulated time (20000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kv-cap", type=float, default=16384.0, help="KV pool tokens (16384)")
    ap.add_argument("--block", type=int, default=16, help="tokens per block (16)")
    args = ap.parse_args(argv)
    res = run(horizon=args.horizon, seed=args.seed, kv_cap=args.kv_cap, block=args.block)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
