#!/usr/bin/env python3
"""Hand-written SimPy model of replica.sq: the floor of serq-simpy's benchmark.

The same model as examples/multi-turn/replica.sq (R replicas of the vLLM
request path of examples/lib/vllm.sq behind a sticky session router),
written the way a SimPy user would write it by hand, as fast as reasonably
possible but doing the same work: one SimPy timeout per engine iteration,
every resident served, grown and accounted for in every iteration.

Each replica (``Engine``) is a step engine with continuous batching:

* an iteration serves the running requests in admission order: a decode
  takes 1 token, a prefill what is left of the budget ``B`` (8192), at most
  ``chunk`` (512); before its tokens are committed a request's KV
  allocation grows to cover its position, in whole blocks of ``bs`` (16)
  tokens;
* then, unless a request was preempted in this iteration, it admits from
  the head of its FIFO queue while budget is left, a slot is free
  (``max_seqs`` 16) and the KV pool has room for the request's whole known
  context rounded up to blocks (``reserve (known)``); the first that does
  not fit stops the admissions. A newcomer consumes its session's cached
  prefix (whole blocks, never the last known token), is allocated the
  prefix plus what is left of the budget (at most its known tokens),
  records ``hit`` = cached / known and is served at once (its first chunk);
* the iteration lasts ``max(omega + beta * kv, tokens * a)``, where ``kv``
  is the KV the scheduled requests hold after this iteration's growth
  (``kv_decode + kv_prefill``: every resident is scheduled here unless the
  budget runs out) and ``tokens`` what it scheduled; at its end the
  finished prefills record ``ttft`` (only a request's first prefill) and
  turn into decodes of the tokens still owed (``o - 1 - (known - prompt)``),
  the finished decodes record ``tpot`` = (last token - first token) /
  (o - 1) for o > 1, free their slot and KV, and leave the session's
  computed context (whole blocks of ``min(prompt + o, position)``) cached;
  the next iteration is planned at once (nothing else can happen at that
  instant);
* a growth that does not fit preempts the latest admission (``preempt
  lifo``): it loses its KV (its computed blocks stay cached), goes back to
  the head of the queue and resumes from its position: ``known`` is the
  prompt, or the position plus the sampled token once past the prompt;
  if the grower preempted itself the iteration serves nobody else;
* KV pool (``blocks`` x ``bs`` tokens): cached prefixes, one per session,
  are evicted LRU (oldest release first) a block at a time when an
  allocation needs room; an entry's place in the order never changes while
  it shrinks, so the blocks one allocation takes from one entry go in one
  step (same units, same entries as block by block).

The router picks a session's replica once, at its start: the fewest live
sessions, then the fewest queued requests, then the least KV in use, ties to
the lowest index; every turn goes there. The workload: sessions arrive as a
Poisson process of rate ``lam`` (the first at time 0); the first prompt is
floor(U(1000, 3000)) tokens, a later turn adds the previous prompt and
output plus 1 + floor(Exp(mean 500)) new tokens; the output is 1 +
floor(Exp(mean 200)) tokens; between turns a tool call of Exp(mean 3)
seconds; another turn with probability 0.9. ``response`` is a turn's time
from request to the release of its hold. Observations after the warm-up.

Simplifications (none changes the work): the few bookkeeping paths that
cannot occur in this program are left out -- dead cache entries (a
session's cached prefix never exceeds what its next admission may reuse),
rejection (the KV demand reads the pool, so an oversized request waits),
stuck counting, growth stalls (lifo always has a victim); an iteration that
only preempted counts as busy time. No per-token ITL histogram is kept.

The engine plans an iteration once nothing else is due at the instant
(``env.peek() > now``; otherwise it retries after a zero-delay timeout),
so an iteration sees every arrival and completion of its instant.

Random numbers come from Python's ``random`` module (not serQ's streams),
so the numbers agree with serq-simpy's only statistically. The program's
own horizon 400, warm-up 100; means of the seeds' means (iterations and
utilisation per replica):

                       seeds  hit    ttft    tpot     response  iterations  util
    serq-simpy         1-3    0.811  0.069   0.00929  1.90      35600       0.853
    pyserq 0.1.3       1-3    0.801  0.041   0.00898  1.82      35000       0.792
    this script        1-3    0.795  0.057   0.00936  1.95      36790       0.881
    serq-simpy         1-12   0.790  0.083   0.00950  1.97      35910       0.869
      (medians)               0.804  0.046   0.00920  1.87      35780       0.865
    pyserq 0.1.3       13 (*) 0.804  0.052   0.00923  1.82      35840       0.847
    this script        1-24   0.805  0.054   0.00934  1.92      36600       0.878
      (medians)               0.809  0.047   0.00934  1.91      36850       0.879

(*) seeds 1, 11, ..., 121 (0.1.3's consecutive seeds share streams).
Standard errors of the many-seed means: hit 0.013 / 0.002 / 0.003, ttft
0.025 / 0.003 / 0.004, tpot 0.00023 / 0.00006 / 0.00005, response 0.07 /
0.02 / 0.02 (serq-simpy's spread is the widest: two of its twelve seeds
overload a replica, ttft 0.14 and 0.33). Seed 1 here: 152 557 iterations,
about 1.5 µs each (0.22 s), no preemption, about 250 000 tokens evicted
per replica (serq-simpy: 233 000-259 000).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
import time
from collections import deque
from typing import Optional

import simpy
from simpy.events import Event

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from handwritten_prefix_cache import evict_lru  # noqa: E402  (its sibling: the same LRU cache)


class Req:
    """One request (a turn's hold on a replica), kept across preemptions."""

    __slots__ = ("sid", "prompt", "o", "t0", "known", "alloc", "pos", "remaining",
                 "decoding", "computed", "t_first", "done")

    def __init__(self, sid: int, prompt: int, o: int, t0: float, done: Event) -> None:
        self.sid = sid
        self.prompt = prompt
        self.o = o
        self.t0 = t0
        self.known = prompt
        self.alloc = 0       # KV tokens allocated (whole blocks)
        self.pos = 0         # KV tokens computed (committed)
        self.remaining = 0   # tokens the current run (prefill or decode) still owes
        self.decoding = False
        self.computed = 0    # the position at the last preemption (0: none)
        self.t_first = t0
        self.done = done     # succeeds when the hold's scope ends


class Obs:
    """The program-wide observations (after the warm-up)."""

    def __init__(self, warmup: float) -> None:
        self.warmup = warmup
        self.hit: list[float] = []
        self.ttft: list[float] = []
        self.tpot: list[float] = []
        self.response: list[float] = []


class Engine:
    """One replica: a step engine, its slot limit and its KV pool with a prefix cache."""

    def __init__(self, env: simpy.Environment, obs: Obs, budget: int = 8192, chunk: int = 512,
                 max_seqs: int = 16, blocks: int = 4000, bs: int = 16, a: float = 5e-5,
                 omega: float = 8e-3, beta: float = 6e-8, cache: bool = True) -> None:
        self.env = env
        self.obs = obs
        self.budget = budget
        self.chunk = chunk if chunk > 0 else budget
        self.max_seqs = max_seqs
        self.cap = blocks * bs
        self.bs = bs
        self.a = a
        self.omega = omega
        self.beta = beta
        self.cache = cache
        self.running: list[Req] = []     # residents, in admission order
        self.waiting: deque[Req] = deque()
        self.used = 0                    # KV tokens allocated
        self.entries: dict[int, int] = {}  # session -> cached tokens, oldest release first
        self.cached = 0
        self.done: list[Req] = []        # runs that finish at the current iteration's end
        self.active = False              # an iteration runs or an attempt is due
        self.busy_since: Optional[float] = None  # the start of the current busy period
        self.iterations = 0
        self.admissions = 0
        self.preemptions = 0
        self.evicted_units = 0
        self.evicted_entries = 0
        self.busy = 0.0                  # time with an iteration in progress, after warm-up

    # -- the session's side -------------------------------------------------------------
    def submit(self, req: Req) -> None:
        """Queue a request; an idle engine attempts an iteration at this instant."""
        self.waiting.append(req)
        if not self.active:
            self.active = True
            self._settle()

    # -- the KV pool ----------------------------------------------------------------------
    def make_room(self, units: int) -> None:
        """Evict cached prefixes, oldest first, until ``units`` more fit."""
        excess = self.used + self.cached + units - self.cap
        if excess > 0:
            taken, removed = evict_lru(self.entries, excess, self.bs)
            self.cached -= taken
            self.evicted_units += taken
            self.evicted_entries += removed

    def release(self, r: Req) -> None:
        """Free the request's KV; its computed whole blocks stay cached as the session's prefix."""
        self.used -= r.alloc
        if self.cache:
            keep = min(r.prompt + r.o, r.pos)
            keep -= keep % self.bs
            if keep > 0:
                entries = self.entries
                old = entries.pop(r.sid, 0)  # (consumed at admission: normally none)
                entries[r.sid] = keep        # the young end of the LRU order
                self.cached += keep - old

    def _preempt(self) -> Req:
        """The latest admission loses its KV and goes back to the head of the queue."""
        v = self.running.pop()
        self.release(v)
        v.computed = v.pos
        self.waiting.appendleft(v)
        self.preemptions += 1
        return v

    # -- iterations -----------------------------------------------------------------------
    def _attempt(self) -> None:
        """Plan an iteration and schedule its end; go idle if there is nothing to do."""
        env = self.env
        running = self.running
        done = self.done
        bs = self.bs
        cap = self.cap
        chunk = self.chunk
        left = self.budget
        tokens = 0
        kv = 0
        preempted = False
        stop = False
        i = 0
        while i < len(running):
            r = running[i]
            i += 1
            if r.decoding:
                t = 1
            else:
                t = r.remaining
                if t > chunk:
                    t = chunk
                if t > left:
                    t = left
            end = r.pos + t
            if end > r.alloc:  # grow block by block to cover the position
                need = -(-end // bs) * bs - r.alloc
                while self.used + need > cap:
                    preempted = True
                    if self._preempt() is r:
                        stop = True
                        break
                if stop:
                    break
                self.make_room(need)
                self.used += need
                r.alloc += need
            r.pos = end
            r.remaining -= t
            if r.remaining == 0:
                done.append(r)
            tokens += t
            kv += r.alloc
            left -= t
            if left <= 0:
                break
        if left > 0 and not preempted:
            waiting = self.waiting
            while waiting and len(running) < self.max_seqs:
                r = waiting[0]
                prompt = r.prompt
                known = prompt if r.computed < prompt else r.computed + 1
                if self.used + -(-known // bs) * bs > cap:
                    break  # head-of-line blocking
                waiting.popleft()
                own = self.entries.pop(r.sid, 0) if self.cache else 0
                # whole blocks before the last known token (`reuse`): a session's
                # entry never holds more, so no dead entry is ever left behind
                assert own <= (known - 1) // bs * bs
                self.cached -= own
                units = own + left if own + left < known else known
                alloc = -(-units // bs) * bs
                self.make_room(alloc)
                self.used += alloc
                self.admissions += 1
                r.known = known
                r.alloc = alloc
                r.decoding = False
                running.append(r)
                if env._now >= self.obs.warmup:
                    self.obs.hit.append(own / known)
                # served at once: its first chunk, inside its allocation
                t = known - own
                if t > chunk:
                    t = chunk
                if t > left:
                    t = left
                r.pos = own + t
                r.remaining = known - own - t
                if r.remaining == 0:
                    done.append(r)
                tokens += t
                kv += alloc
                left -= t
                if left <= 0:
                    break
        if tokens == 0 and not preempted:
            self.active = False
            if self.busy_since is not None:
                self.close_busy(env._now)
            return
        if self.busy_since is None:
            self.busy_since = env._now
        self.iterations += 1
        cost = self.omega + self.beta * kv
        if tokens * self.a > cost:
            cost = tokens * self.a
        env.timeout(cost).callbacks.append(self._end)

    def _end(self, _ev: Event) -> None:
        """The iteration's end: finished runs move on, then the next iteration."""
        now = self.env._now
        obs = self.obs
        measured = now >= obs.warmup
        done = self.done
        for r in done:
            if not r.decoding:  # a prefill: the first token, then the decode
                if r.known == r.prompt:
                    if measured:
                        obs.ttft.append(now - r.t0)
                    r.t_first = now
                owed = r.o - 1 - (r.known - r.prompt)
                if owed > 0:
                    r.decoding = True
                    r.remaining = owed
                    continue
            if r.o > 1 and measured:
                obs.tpot.append((now - r.t_first) / (r.o - 1))
            self.running.remove(r)
            self.release(r)
            r.computed = 0
            r.done.succeed()
        done.clear()
        self._settle()

    def _settle(self, _ev: Optional[Event] = None) -> None:
        """Attempt the next iteration once nothing else is due at this instant
        (so it sees every arrival and completion of the instant)."""
        env = self.env
        if env.peek() > env._now:
            self._attempt()
        else:
            env.timeout(0).callbacks.append(self._settle)

    def close_busy(self, t: float) -> None:
        """End the current busy period at ``t``; add its part after the warm-up."""
        start = self.busy_since if self.busy_since > self.obs.warmup else self.obs.warmup
        if t > start:
            self.busy += t - start
        self.busy_since = None


def choose(engines: list[Engine], live: list[int]) -> int:
    """The router: fewest live sessions, then fewest queued requests, then least KV used."""
    best = 0
    key = (live[0], len(engines[0].waiting), engines[0].used)
    for i in range(1, len(engines)):
        k = (live[i], len(engines[i].waiting), engines[i].used)
        if k < key:
            best, key = i, k
    return best


def run(horizon: float = 400.0, seed: int = 1, warmup: float = 100.0, replicas: int = 4,
        lam: float = 0.4, p: float = 0.9, tool_mean: float = 3.0) -> dict:
    """Simulate replica.sq up to ``horizon``; its counts and means."""
    start = time.perf_counter()
    rng = random.Random(seed)
    expo = rng.expovariate
    uniform = rng.uniform
    rnd = rng.random
    env = simpy.Environment()
    timeout = env.timeout
    obs = Obs(warmup)
    engines = [Engine(env, obs) for _ in range(replicas)]
    live = [0] * replicas
    counts = {"arrivals": 0, "ended": 0, "requests": 0}
    area = [0.0, 0.0]  # live sessions x time after the warm-up; the last change

    def live_change(home: int, d: int) -> None:
        now = env.now
        since = area[1] if area[1] > warmup else warmup
        if now > since:
            area[0] += sum(live) * (now - since)
        area[1] = now
        live[home] += d
    r_new, r_out, r_tool = 1.0 / 500.0, 1.0 / 200.0, 1.0 / tool_mean

    def session(sid: int):
        counts["arrivals"] += 1
        n = int(uniform(1000.0, 3000.0))
        o = 1 + int(expo(r_out))
        home = choose(engines, live)
        live_change(home, 1)
        eng = engines[home]
        context = 0
        while True:
            t0 = env.now
            prompt = context + n
            done = Event(env)
            eng.submit(Req(sid, prompt, o, t0, done))
            yield done
            counts["requests"] += 1
            if env.now >= warmup:
                obs.response.append(env.now - t0)
            context = prompt + o
            if rnd() >= p:
                break
            yield timeout(expo(r_tool))
            n = 1 + int(expo(r_new))
            o = 1 + int(expo(r_out))
        live_change(home, -1)
        counts["ended"] += 1

    def source():  # Poisson arrivals, the first at 0
        for sid in itertools.count():
            env.process(session(sid))
            yield timeout(expo(lam))

    env.process(source())
    t_sim = time.perf_counter()
    env.run(until=horizon)
    t_end = time.perf_counter()
    # the calendar entries handled: those made (SimPy numbers them from 0)
    # less those still waiting (the horizon's own entry is handled)
    events = next(env._eid) - len(env._queue)
    for eng in engines:
        if eng.busy_since is not None:
            eng.close_busy(horizon)
    live_change(0, 0)

    def mean(xs: list[float]) -> Optional[float]:
        return sum(xs) / len(xs) if xs else None

    span = horizon - warmup
    iterations = [e.iterations for e in engines]
    return {"horizon": horizon, "seed": seed, "warmup": warmup, **counts,
            "hit": mean(obs.hit), "ttft": mean(obs.ttft), "tpot": mean(obs.tpot),
            "response": mean(obs.response), "mean_live": area[0] / (horizon - warmup),
            "count": {k: len(getattr(obs, k)) for k in ("hit", "ttft", "tpot", "response")},
            "iterations": iterations, "events": events,
            "utilization": [e.busy / span for e in engines],
            "admissions": [e.admissions for e in engines],
            "preemptions": [e.preemptions for e in engines],
            "evicted_units": [e.evicted_units for e in engines],
            "evicted_entries": [e.evicted_entries for e in engines],
            "setup_seconds": t_sim - start, "sim_seconds": t_end - t_sim,
            "us_per_iteration": 1e6 * (t_end - t_sim) / max(1, sum(iterations)),
            "seconds": time.perf_counter() - start}


def main(argv: Optional[list[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=float, default=400.0, help="simulated time (400)")
    ap.add_argument("--warmup", type=float, default=100.0, help="warm-up (100)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lam", type=float, default=0.4, help="sessions per second (0.4)")
    ap.add_argument("--replicas", type=int, default=4, help="replicas, the file's R (4)")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = ap.parse_args(argv)
    res = run(horizon=args.horizon, seed=args.seed, warmup=args.warmup,
              replicas=args.replicas, lam=args.lam)
    if args.json:
        print(json.dumps(res))
        return
    print(f"replica.sq by hand, horizon {res['horizon']:g}, seed {res['seed']}: "
          f"hit {res['hit']:.3f}, ttft {res['ttft']:.4f}, tpot {res['tpot']:.5f}, "
          f"response {res['response']:.3f} ({res['count']['response']} turns measured)")
    print("iterations " + " ".join(map(str, res["iterations"]))
          + ", utilisation " + " ".join(f"{u:.3f}" for u in res["utilization"]))
    print(f"simulation {res['sim_seconds']:.3f} s, "
          f"{res['us_per_iteration']:.2f} µs per engine iteration")


if __name__ == "__main__":
    main()
