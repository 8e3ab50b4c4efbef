"""The batched forms of hot paths give exactly what their one-at-a-time forms give."""
from __future__ import annotations

import os
import random

import serq
from serq.runtime.resources.pools import CacheEntry, Pool, _lru_key
from serq.stats.gauges import LogHistogram


def test_add_many_is_add_one_by_one():
    # repeated gaps (the fast path), zeros, negatives, tiny and huge values
    rng = random.Random(7)
    xs = []
    for _ in range(3000):
        x = rng.choice([0.25, 0.25, 1e-3, 0.0, -0.0, -1.0, rng.random(), rng.expovariate(1e-3)])
        xs.extend([x] * rng.randint(1, 4))
    one, many = LogHistogram(), LogHistogram()
    for x in xs:
        one.add(x)
    for k in range(0, len(xs), 97):
        many.add_many(xs[k:k + 97])
    assert many._buckets == one._buckets
    assert many.count == one.count and many._sum == one._sum  # the same additions, in order
    for q in (0.01, 0.5, 0.9, 0.99):
        assert many.quantile(q) == one.quantile(q)


def test_add_many_with_numpy_is_the_gap_by_gap_formula(monkeypatch):
    # many positive gaps go through numpy, a chunk at a time: the same
    # buckets, bounds, count and left-to-right sum as the definition applied
    # gap by gap with `math.log`. The gaps include every bucket boundary
    # exp(k ln 1.01) and its neighbours, where numpy's log may round apart
    # from math.log (1.4888637335882209: numpy 2's log puts it a bucket
    # below math.log on the machine this was written on), runs of equal
    # gaps, and lengths either side of the numpy threshold and the chunk
    import math

    from serq.stats import gauges
    from serq.stats.gauges import _LOG_WIDTH
    monkeypatch.setattr(gauges, "VECTOR_CHUNK", 1000)
    arrays = []
    real = LogHistogram._add_array
    monkeypatch.setattr(LogHistogram, "_add_array",
                        lambda self, x: (arrays.append(len(x)), real(self, x))[1])
    boundary = [1.4888637335882209]
    for k in range(-2500, 2500, 7):
        b = math.exp(k * _LOG_WIDTH)
        boundary += [math.nextafter(b, 0.0), b, math.nextafter(b, math.inf)]
    rng = random.Random(23)
    hist = LogHistogram()
    buckets: dict = {}
    total = 0.0
    for n in (gauges.VECTOR_MIN - 1, gauges.VECTOR_MIN, 999, 1000, 1001, 2500, len(boundary)):
        xs = boundary[:] if n == len(boundary) else []
        while len(xs) < n:
            x = rng.choice([0.25, 0.1 + 0.2, rng.random() + 1e-9, rng.expovariate(1e-3),
                            rng.choice(boundary)])
            xs.extend([x] * rng.choice([1, 1, 3]))
        del xs[n:]
        rng.shuffle(xs)
        hist.add_many(xs)
        for x in xs:
            total += x
            k = math.floor(math.log(x) / _LOG_WIDTH)
            b = buckets.setdefault(k, [0, x, x])
            b[0] += 1
            b[1], b[2] = min(b[1], x), max(b[2], x)
        assert sorted(hist._buckets.items()) == sorted(buckets.items()), n
        assert hist.count == sum(b[0] for b in buckets.values())
        assert repr(hist._sum) == repr(total), n
    assert arrays and max(arrays) == 1000  # numpy took the long lists, by chunks


def test_final_gaps_reach_each_stage_in_order(monkeypatch):
    # a turn's gaps become final when the session's next turn starts
    # (`flush`) or when the run ends (`finish`, the sessions in order); each
    # stage takes them by chunks, in exactly that order (each stage's sum is
    # then the same left-to-right sum), through a buffer made once
    # (`FinalGaps`; a small room here, so that some turns outgrow it); a
    # request's end keeps its gaps as an array of doubles
    from array import array
    from types import SimpleNamespace

    from serq.runtime.sim import tokens
    from serq.runtime.sim.tokens import TokenLog, TokenState
    monkeypatch.setattr(tokens, "FINAL_CHUNK", 50)
    monkeypatch.setattr(tokens, "FINAL_ROOM", 60)

    class Stage:
        def __init__(self):
            self.calls = []

        def add_gaps(self, gaps):
            self.calls.append(list(gaps))

    rng = random.Random(29)
    a, b = Stage(), Stage()
    log = TokenLog(0.0)
    expected = {a: [], b: []}

    def fill(st, i):
        for stage in rng.sample([a, b], rng.randint(0, 2)):
            gaps = [rng.random() for _ in range(rng.randint(1, 30))]
            st.gaps[stage] = gaps if i % 2 else array("d", gaps)

    for i in range(40):
        st = TokenState()
        fill(st, i)
        log.states.append(st)
    for st in rng.sample(log.states, 25):  # next turns start: these turns are final
        for stage, gaps in st.gaps.items():
            expected[stage] += list(gaps)
        log.flush(st)
        fill(st, rng.randrange(2))
    for st in log.states:
        for stage, gaps in st.gaps.items():
            expected[stage] += list(gaps)
    # (a turn that did not fit the room grew its stage's buffer, for good)
    assert any(len(out.buf) > tokens.FINAL_ROOM for out in log.final.values())
    log.finish()
    for stage in (a, b):
        assert [g for call in stage.calls for g in call] == expected[stage]
        assert all(len(call) >= 50 for call in stage.calls[:-1])
    assert not any(st.gaps for st in log.states) and not log.final
    s = SimpleNamespace(tok=None, turn_no=1.0, sid=0)
    log.begin_request(s, 0.0)
    s.tok.gaps[a] = [0.5, 0.25]
    log.end_request(s, 1.0)
    assert type(s.tok.gaps[a]) is array and list(s.tok.gaps[a]) == [0.5, 0.25]


def test_client_rows_are_the_kept_rows_by_time_then_as_recorded():
    # ttft/tpot rows in parallel arrays: the report gets the rows that are not
    # dropped and end at or after the warm-up, by time, equal times as they
    # were recorded -- what sorting the rows as tuples (time, index) gives
    import tracemalloc

    from serq.report.model import Series
    from serq.runtime.sim.tokens import ClientRows
    rng = random.Random(31)
    rows = ClientRows()
    plain = []
    for i in range(3000):
        t = rng.choice([1.0, 2.5, 2.5, 7.0, rng.uniform(0.0, 10.0)])
        row = (t, i, rng.randrange(1 << 40), rng.randrange(50), rng.expovariate(1.0))
        assert rows.add(*row[:1], *row[2:]) == i
        plain.append(list(row))
        if rng.random() < 0.1:
            j = rng.randrange(i + 1)
            rows.drop(j)
            plain[j] = None
    target = Series()
    rows.into(target, 2.5)
    want = sorted(r for r in plain if r is not None and r[0] >= 2.5)
    assert list(target.times) == [r[0] for r in want]
    assert list(target.sessions) == [r[2] for r in want]
    assert list(target.turns) == [r[3] for r in want]
    assert list(target.values) == [r[4] for r in want]
    ClientRows().into(target, 0.0)  # (no rows: nothing added)
    assert len(target.values) == len(want)
    tracemalloc.start()
    try:
        many = ClientRows()
        for i in range(100_000):
            many.add(float(i), i, 3, 0.5)
        size = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert size / 100_000 <= 40  # bytes a row (32, and the arrays' spare room)


def test_lru_victim_is_the_least_key_in_order():
    # entries put out of (last, rseq) order (a dead copy keeps its old key)
    # and ties: the victim is what `min` over the entries would pick, also
    # when the victim kept from the last call (`lru_front`) was shrunk,
    # evicted, taken out or put again in between
    rng = random.Random(3)
    pool = Pool.__new__(Pool)
    pool.entries = {}
    pool.lru_sorted, pool.lru_tail, pool.lru_front = True, (), None
    pool.touch = lambda: None
    pool.cached = pool.evicted_units = 0.0
    pool.evicted_entries = 0
    kept = 0
    for n in range(2000):
        if pool.entries and rng.random() < 0.5:
            expected = min(pool.entries.values(), key=_lru_key)
            kept += pool.lru_front is expected
            assert pool._lru_victim() is expected
            what = rng.random()
            if what < 0.5:  # the victim loses some units and stays first
                pool._shrink(expected, expected.size / 2)
            elif what < 0.8:  # evicted
                pool._shrink(expected, expected.size)
            elif what < 0.9:  # taken out (not an eviction)
                pool.remove_entry(expected.key)
            else:  # released again: the last entry
                pool.put_entry(CacheEntry(expected.key, 16.0, float(n), 9, None, None))
            continue
        last = float(n if rng.random() < 0.8 else rng.randint(0, n))
        pool.put_entry(CacheEntry(rng.randint(0, 60), 16.0, last, rng.randint(0, 5), None, None))
    assert kept > 100  # (the kept victim was used, not only looked for)


def test_whole_steps_match_the_loop():
    # a run of r tokens getting 1.0 a step, as `_quick`'s loop moves it:
    # `_whole_steps` finds the step after which it stops, and r - j is
    # the loop's value after every step j up to it
    from types import SimpleNamespace

    from serq.core.tolerance import TOL
    from serq.runtime.fast.closed import _whole_steps
    rng = random.Random(11)
    values = [1.5, 2.0 + 1e-9, 2.0 + 2e-9, 3.0 - 1e-12, 1.0 + 2e-9, 2 ** 15 + 0.75, 17.25]
    values += [rng.uniform(1.0, 300.0) for _ in range(300)] + [rng.uniform(1.0, 3.0) for _ in range(300)]
    values += [float(n) for n in range(2, 400)]  # whole runs: the closed form int(r) - 1
    for r0 in values:
        if not r0 - 1.0 > TOL:
            continue  # `_quick` starts with runs that do not finish in the first step
        k = _whole_steps([(SimpleNamespace(remaining=r0), 1.0)], [])
        r, j = r0, 0
        while True:
            r -= 1.0
            j += 1
            assert r == r0 - float(j)
            if r - 1.0 <= TOL:
                break
        assert k == j, r0


def test_bulk_eviction_is_block_by_block():
    # `make_room` under the built-in LRU takes what a victim must lose at once
    # when blocks, sizes and units are whole numbers; the block-by-block loop
    # (the same pool with `bulk_blocks` off) must leave the same entries and sums
    from types import SimpleNamespace

    def pool(bulk):
        p = Pool.__new__(Pool)
        p.entries = {}
        p.lru_sorted, p.lru_tail, p.lru_front = True, (), None
        p.touch = lambda: None
        p.spec = SimpleNamespace(spill=None, evict_keys=None)
        p.cap, p.block, p.used, p.cached = 4096.0, 16.0, 0.0, 0.0
        p.evicted_units, p.evicted_entries = 0.0, 0
        p.lru_builtin, p.bulk_blocks = True, bulk
        return p

    rng = random.Random(5)
    fast, slow = pool(True), pool(False)
    for n in range(600):
        if rng.random() < 0.5:
            e = (rng.randint(0, 40), 16.0 * rng.randint(1, 30), float(n), n)
            for p in (fast, slow):
                p.put_entry(CacheEntry(e[0], e[1], e[2], e[3], None, None))
        units = 16.0 * rng.randint(1, 40)
        grow = rng.random() < 0.6
        for p in (fast, slow):
            p.make_room(units)
            # the units are taken, or half the used blocks given back
            p.used = p.used + units if grow else 16.0 * (p.used // 32.0)
        state = [(p.used, p.cached, p.evicted_units, p.evicted_entries,
                  [(e.key, e.size) for e in p.entries.values()]) for p in (fast, slow)]
        assert state[0] == state[1]


def test_whole_steps_refuse_a_hold_moved_by_two_runs():
    # two runs growing one hold move it by two tokens a step: the closed form
    # (a - p steps) does not apply, whatever the number of holds
    from types import SimpleNamespace

    from serq.runtime.fast.closed import _whole_steps
    s0, s1 = SimpleNamespace(pos=0.0, alloc=16.0), SimpleNamespace(pos=3.0, alloc=16.0)
    o0 = SimpleNamespace(pos=5.0, alloc=16.0)
    shared = SimpleNamespace(cells=[s0, s1])
    other = SimpleNamespace(cells=[o0])
    runs = [(SimpleNamespace(remaining=50.0), 1.0), (SimpleNamespace(remaining=60.0), 1.0)]
    assert _whole_steps(runs, [(shared, s1, 1.0), (other, o0, 1.0)]) == 11  # 16 - 5
    assert _whole_steps(runs, [(shared, s1, 1.0), (shared, s1, 1.0)]) is None
    assert _whole_steps(runs + runs[:1], [(other, o0, 1.0), (shared, s0, 1.0),
                                          (other, o0, 1.0)]) is None
    assert _whole_steps(runs, [(shared, s0, 1.0), (shared, s1, 1.0)]) == 13  # two positions of one frame


def test_budget_left_adds_the_wants_in_order():
    # `budget_left` adds each resident's want (`_want`: one token or what is
    # left of a decode, up to `chunk` of a prefill) inline, left to right; it
    # must give what `max(0, b - Σ _want)` gives with the additions in
    # resident order (fails when a want, its order or the clamp is off)
    from types import SimpleNamespace

    from serq.runtime.resources.engine import StepStage
    rng = random.Random(13)
    for trial in range(400):
        st = StepStage.__new__(StepStage)
        st.admit_left = None
        b = rng.choice([8192.0, 100.0, 7.5, 0.3])
        c = rng.choice([0.0, 512.0, 3.0, 0.7, -1.0])
        st._budget_chunk = lambda b=b, c=c: (b, c)
        st.residents = [SimpleNamespace(
            mode=rng.choice(["decode", "prefill"]),
            remaining=rng.choice([1.0, 0.25, 3.0, rng.uniform(0.0, 2.0), rng.expovariate(1e-3)]))
            for _ in range(rng.randint(0, 9))]
        expected = 0
        for j in st.residents:
            expected += st._want(j, c)
        assert st.budget_left() == max(0.0, b - expected), trial


def test_served_queues_are_the_served_pools_queues():
    # `queue_waiting` reads the queues of the pools naming the engine in
    # `admit via`, kept as the lists themselves at build time: they must be
    # those pools' queues, in order, and see a waiting hold as it joins
    from serq.runtime.sim.simulation import Simulation
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sim = Simulation(serq.load(os.path.join(root, "examples", "pd-disaggregation",
                                            "llmd_nixl_pull.sq")))
    served = [st for st in sim.step_list if st.served_pools]
    assert served  # the decode pods admit via their engines
    for st in served:
        assert len(st.served_queues) == len(st.served_pools)
        for q, pool in zip(st.served_queues, st.served_pools):
            assert q is pool.queue
        assert not st.queue_waiting()
        st.served_pools[-1].queue.append(object())
        assert st.queue_waiting()
        st.served_pools[-1].queue.clear()


def test_add_many_of_many_gaps_is_the_gap_by_gap_formula():
    # long lists with runs of equal gaps against the definition applied gap by gap: bucket ⌊ln x / ln 1.01⌋ (x ≤ 0 and
    # NaN below all), count, least and greatest, the sum added left to right
    # (fails when a run is miscounted, a bound is off or the sum reassociates)
    import math

    from serq.stats.gauges import _LOG_WIDTH, _NONPOSITIVE
    rng = random.Random(17)
    hist = LogHistogram()
    buckets: dict = {}
    total = 0.0
    for trial in range(60):
        xs = []
        while len(xs) < rng.choice([64, 65, 300, 2000]):
            x = rng.choice([0.25, 1e-3, 0.0, -0.0, -1.0, rng.random(), rng.expovariate(1e-3),
                            0.1 + 0.2, 0.3, math.nan if trial % 10 == 9 else 0.5])
            xs.extend([x] * rng.choice([1, 1, 2, 7]))
        hist.add_many(xs)
        for x in xs:
            total += x
            k = math.floor(math.log(x) / _LOG_WIDTH) if x > 0.0 else _NONPOSITIVE
            b = buckets.setdefault(k, [0, x, x])
            b[0] += 1
            if x < b[1]:
                b[1] = x
            elif x > b[2]:
                b[2] = x
        assert repr(sorted(hist._buckets.items())) == repr(sorted(buckets.items())), trial
        assert repr(hist._sum) == repr(total), trial  # (NaN once a NaN gap was added)
        if total != total:
            total, hist._sum = 0.0, 0.0  # start the sum again to keep checking it


class _Holder:
    """A session as `totals` reads it: its holds (hashable, as a pool's
    holder count keys sessions)."""

    def __init__(self, holds: list) -> None:
        self.holds = holds


def test_totals_sum_what_each_hold_has_in_the_memory_pool():
    # `totals` over a plan's runs: each session's units in the engine's
    # memory pool, over all its holds (a hold names a pool at most once, at
    # any place; holds without it, and emptied holds, add nothing), summed
    # by decoders and prefills in run order (fails when a hold is missed,
    # the wrong place is read or the order of the additions changes). A run
    # that grows a hold on the memory pool may take the shortcut (its
    # hold's allocation, when the pool counts its session once: the holds
    # on it plus its leases), which must give the same sums.
    from types import SimpleNamespace

    from serq.runtime.resources.engine import StepStage
    rng = random.Random(19)
    other, third = object(), object()
    mem = SimpleNamespace(holder_count={})
    st = StepStage.__new__(StepStage)
    st.spec = SimpleNamespace(needs_kv=True)
    st.memory = mem
    shortcuts = 0
    for trial in range(300):
        jobs = []
        mem.holder_count = {}
        for _ in range(rng.randint(0, 6)):
            holds = []
            for _ in range(rng.randint(0, 3)):
                pools = rng.sample([mem, other, third], rng.randint(0, 3))
                holds.append(SimpleNamespace(pools=pools, cells=[
                    SimpleNamespace(alloc=rng.choice([16.0, 0.1, 0.2, rng.uniform(0, 1e4)]))
                    for _ in pools]))
            s = _Holder(holds) if rng.random() < 0.9 else None
            job = SimpleNamespace(session=s, mode=rng.choice(["decode", "prefill"]),
                                  frame=None, fk=-1, cell=None, growing=None)
            on_mem = [f for f in holds if mem in f.pools] if s is not None else []
            if on_mem:
                leases = rng.choice([0, 0, 1])
                mem.holder_count[s] = len(on_mem) + leases
                if rng.random() < 0.8:  # the run grows one of them
                    job.frame = rng.choice(on_mem)
                    job.fk = job.frame.pools.index(mem)
                    job.cell = job.frame.cells[job.fk]
                    job.growing = mem
                    shortcuts += len(on_mem) + leases == 1  # (the shortcut's case)
            jobs.append(job)
        st.residents = jobs
        mem.multi = sum(c > 1 for c in mem.holder_count.values())  # (`Pool._count` keeps it)
        dec = kvd = kvp = 0.0
        for j in jobs:
            held = 0.0
            for frame in (j.session.holds if j.session is not None else []):
                for k, p in enumerate(frame.pools):
                    if p is mem:
                        held += frame.cells[k].alloc
            if j.mode == "decode":
                dec += 1
                kvd += held
            else:
                kvp += held
        assert st.totals(jobs) == (float(len(jobs)), dec, kvd, kvp), trial
    assert shortcuts > 100  # (the generator reaches the shortcut: 137 runs at seed 19)


def test_a_computed_index_reads_the_member_or_reports_the_index():
    # generated code reads a family member by its index value in one lookup
    # (`exprs.Members`); a value that is not a whole number in range still
    # stops the run with the index checker's message (Part 01 §4.3). The
    # member served is the one the value names (-0 is member 0)
    from serq.core.errors import SimulationError

    def run(index: str):
        src = f"""
stage rep[2] : fifo;
workload {{ arrive poisson(1); }}
server {{ set i = {index}; run rep[i] (1); }}
run {{ horizon 10; seed 1; }}
"""
        return serq.run(serq.load(source=src))

    for index, member in (("1", 1), ("-0", 0), ("2 - 2", 0)):
        rep = run(index)
        done = [row.completed for row in rep.stages if row.name == "rep"]
        assert done[member] > 0 and done[1 - member] == 0, index
    for index, shown in (("2", "2"), ("0.5", "0.5"), ("-1", "-1"), ("0/0", "NaN")):
        try:
            run(index)
        except SimulationError as exc:
            assert f"`rep[…]`: the index is {shown}, not a whole number from 0 to 1" in str(exc)
        else:
            raise AssertionError(f"index {index} was accepted")


def test_fmin_fmax_are_the_nan_ignoring_definitions():
    # `min`/`max` of expressions (Rust f64::min/max): a NaN argument is
    # ignored when the other is a number; written with the common case
    # first, they must return the very object the definition returns (two
    # NaNs: the second; equal numbers, 0.0 and -0.0 too: the second, as
    # pyserq 0.1.3 gives: tests/test_number_rules.py)
    import math

    from serq.core.numeric import fmax, fmin

    def ref_min(a, b):
        if a != a:
            return b
        if b != b:
            return a
        return a if a < b else b

    def ref_max(a, b):
        if a != a:
            return b
        if b != b:
            return a
        return a if a > b else b

    nan1, nan2 = float("nan"), -float("nan")
    values = [nan1, nan2, 0.0, -0.0, 1.0, -1.0, 2.5, math.inf, -math.inf, 1e-300]
    for a in values:
        for b in values:
            assert fmin(a, b) is ref_min(a, b), (a, b)
            assert fmax(a, b) is ref_max(a, b), (a, b)


def test_floor_ceil_keep_nan_and_infinities():
    # `floor`/`ceil` of expressions return NaN and ±inf unchanged (found as
    # `x - x` not being 0), every finite value rounded as a float
    import math

    from serq.core.numeric import ceil, floor
    for x in (math.nan, math.inf, -math.inf):
        assert floor(x) is x and ceil(x) is x
    for x in (0.0, -0.0, 0.5, -0.5, 2.0, -2.0, 1e300, -1e300, 4503599627370495.5, 1e-300, 7):
        assert floor(x) == float(math.floor(x)) and type(floor(x)) is float
        assert ceil(x) == float(math.ceil(x)) and type(ceil(x)) is float
        # the sign of a zero result is C's (and the reference's): floor(-0) = -0,
        # ceil(x) = -0 for -1 < x <= 0
        zero_sign = -1.0 if x == 0.0 and math.copysign(1, x) < 0 else 1.0
        if floor(x) == 0.0:
            assert math.copysign(1, floor(x)) == zero_sign, x
        if ceil(x) == 0.0:
            assert math.copysign(1, ceil(x)) == (-1.0 if x < 0 or zero_sign < 0 else 1.0), x


def test_block_rounding_keeps_nan_and_infinities():
    # `ru`/`rd` round a finite amount to whole blocks and return NaN and
    # ±inf unchanged (found as `x - x` not being 0), as with `isfinite`
    import math

    for block in (None, 16.0, 0.5, 3.0):
        pool = Pool.__new__(Pool)
        pool.block = block
        for x in (math.nan, math.inf, -math.inf):
            assert pool.ru(x) is x and pool.rd(x) is x
        for x in (0.0, -0.0, 1.0, 15.9, 16.0, 16.1, -7.5, 1e300, 1e-300, 123456.75):
            up = x if block is None else math.ceil(x / block) * block
            down = x if block is None else math.floor(x / block) * block
            assert pool.ru(x) == up and type(pool.ru(x)) is type(up), (block, x)
            assert pool.rd(x) == down and type(pool.rd(x)) is type(down), (block, x)


def test_deferred_decode_tokens_are_recorded_as_one_by_one():
    # an engine's iteration end records a run's first decode token and
    # defers the later ones (`decode_deferred`, `job.ticks`); they are
    # recorded when anything else reads or records the session's tokens
    # (`settle`); so are the iterations a leapfrog or a closed run records
    # at once (`decode_run`). Two logs see the same random history of
    # sessions -- runs of decode tokens on two stages, prefill tokens,
    # requests, turns begun without a token, preemptions, a decode token
    # recorded at once in the middle of a run, warm-up passing mid-run --
    # one token by one and with deferral: same sequences, rows, gaps and
    # stages' sums
    from types import SimpleNamespace

    from serq.runtime.sim.tokens import TokenLog

    class Stage:
        def __init__(self, name):
            self.name = name
            self.calls = []

        def add_gaps(self, gaps):
            self.calls.append(list(gaps))

    for seed in range(40):
        rng = random.Random(seed)
        stages = [Stage("a"), Stage("b")]
        warmup = rng.choice([0.0, 5.0, 20.0])
        logs = (TokenLog(warmup), TokenLog(warmup))
        n = 6
        sessions = [[SimpleNamespace(tok=None, turn_no=0.0, sid=i) for i in range(n)]
                    for _ in logs]
        jobs: list = [None] * n  # the running run (its stage, and the deferring log's job)
        t = 0.0
        for _ in range(600):
            t += rng.choice([0.0, 0.25, 0.5, 1.0])
            i = rng.randrange(n)
            a, b = sessions[0][i], sessions[1][i]
            job = jobs[i]
            x = rng.random()
            if job is not None:
                stage = job.stage
                if x < 0.75:  # an iteration's end: a decode token
                    logs[0].decode(a, stage, t)
                    if job.ticks is not None:
                        job.ticks.append(t)
                    else:
                        logs[1].decode_deferred(b, stage, t, job)
                elif x < 0.8:  # a decode token recorded at once
                    logs[0].decode(a, stage, t)
                    logs[1].decode(b, stage, t)
                elif x < 0.83:  # a leapfrog's or closed run's iterations at once
                    times = [t + 0.125 * k for k in range(rng.randint(1, 4))]
                    t = times[-1]
                    for u in times:
                        logs[0].decode(a, stage, u)
                    logs[1].decode_run([job], stage, times)
                elif x < 0.85:  # preempted: the run leaves
                    logs[0].preempted(a)
                    logs[1].preempted(b)
                    jobs[i] = None
                else:  # the run ends
                    jobs[i] = None
                continue
            stage = rng.choice(stages)
            if x < 0.3:
                jobs[i] = SimpleNamespace(session=b, stage=stage, ticks=None)
            elif x < 0.45:
                for log, s in zip(logs, (a, b)):
                    log.begin_request(s, t)
            elif x < 0.6:
                for log, s in zip(logs, (a, b)):
                    if s.tok is not None:
                        log.end_request(s, t)
            elif x < 0.75:
                for log, s in zip(logs, (a, b)):
                    log.token(s, stage, False, t)
            elif x < 0.9:
                a.turn_no = b.turn_no = a.turn_no + 1  # a turn begins; no token yet
            else:
                for log, s in zip(logs, (a, b)):
                    log.preempted(s)
        calls = []
        for log in logs:
            for stage in stages:
                stage.calls = []
            log.finish()
            calls.append([stage.calls for stage in stages])
        assert calls[0] == calls[1] and any(calls[0])
        for rows in ("ttft", "tpot"):
            one, two = getattr(logs[0], rows), getattr(logs[1], rows)
            for f in ("times", "sessions", "turns", "values"):
                assert getattr(one, f) == getattr(two, f), (seed, rows, f)
            assert one.dropped == two.dropped
        for a, b in zip(*sessions):
            if a.tok is None:
                assert b.tok is None
                continue
            assert b.tok.pend is None
            for seq in ("request", "turn"):
                u, v = getattr(a.tok, seq), getattr(b.tok, seq)
                assert (u.first, u.last, u.count, u.prev_decode, u.prev_stage) == \
                    (v.first, v.last, v.count, v.prev_decode, v.prev_stage), (seed, seq)
