"""Stages on their own (`serq/runtime/resources/stages.py`, spec Part 04 §1–§2,
§12, online estimates Part 01 §4.3): small programs, each aimed at one rule
of `fifo(c)`, `ps(φ)` and `delay`, written for the mutation run of issue 27
(the statistical queueing tests took most of a mutant's time). Every
expected number is worked out by hand in the test's docstring, and each
program gives the same observations and stage rows under pyserq 0.1.3
(seed 1; the differential test at the end, run where the reference is
installed)."""
from __future__ import annotations

import pytest

import serq
from serq.report.json_report import to_dict

from oracle import assert_fields_match, requires, run_reference

FIFO2 = """
stage f : fifo(2);
stage g : delay;
workload { arrive batch(4); init { set w = serial + 1; } }
session { turn; run g (serial * 0.5);
  observe q = queue(f); observe b = busy(f); observe wk = work(f); observe gw = work(g);
  observe gb = busy(g);
  run f (w); observe done = now; }
run { horizon 20; warmup WARMUP; seed 1; }
"""

# session 1 holds m and runs 5 at the stage; session 0's growth at 1 preempts it
PREEMPTED_JOB = """
pool m { cap 10; preempt lifo; }
stage f : KIND;
stage d : delay;
workload { arrive batch(3); }
session { turn;
  branch (serial == 0) { hold m (6) { run d (1); grow m (4); run d (1); } }
  else { branch (serial == 1) { run d (FIRST); hold m (4) { run f (5); } }
         else { run d (SECOND); run f (3); } }
  observe done = now; }
run { horizon 20; warmup 0; seed 1; }
"""

ESTIMATES = """
stage svc : fifo;
stage sh : ps(2);
workload { arrive batch(3); }
session { turn; observe ew0 = est_wait(svc); run svc (2); run sh (1 + serial);
  observe pr = price(svc, 1, 1); observe pr2 = price(svc, 2, 0.5); }
run { horizon 20; warmup 0; seed 1; }
"""

NO_CAPACITY_ALONE = """
stage s : ps(present >= 2 ? 1 : 0);
stage d : delay;
workload { arrive batch(2); }
session { turn; run d (serial * 2); run s (1); observe done = now; }
run { horizon 10; warmup 0; seed 1; }
"""

TWO_REQUESTS = """
stage f : fifo(1);
workload { arrive batch(2); session { request; request; } }
server { run f (1); run f (0.5); observe done = now; }
run { horizon 10; warmup 0; seed 1; }
"""

SERVERS = """
stage svc : fifo(1);
workload { arrive batch(5); }
session { turn; observe w = work(svc); run svc (2); observe done = now; }
run { horizon 10; warmup 0; seed 1; }
"""


def run(source: str):
    return serq.run(serq.load(source=source))


def samples(rep, name):
    """`(session, time, value)` of every sample of `name`, in recording order."""
    s = rep.observes[name]
    return [(int(k), t, v) for v, t, k in zip(s.values, s.times, s.sessions)]


def stage(rep, name):
    return next(st for st in to_dict(rep)["stages"] if st["name"] == name)


def preempted(kind: str, first: str, second: str) -> str:
    return PREEMPTED_JOB.replace("KIND", kind).replace("FIRST", first).replace("SECOND", second)


def test_fifo_with_two_servers():
    """§1 fifo(2): works 1, 2, 3, 4 arriving at 0, 0.5, 1, 1.5. Session 0
    takes [0, 1], 1 [0.5, 2.5], 2 the server 0 freed [1, 4], 3 waits for
    the first free server at 2.5: [2.5, 6.5]. Before each run: queue (jobs
    present) 0, 1, 2, 2; busy 0, 1, 2, 2; work(f) 0, 0.5, 1.5, 1 + 2.5 =
    3.5; work(g) (the delay's remaining work) 0.5 + 1 + 1.5 = 3 at 0, then
    1.5, 0.5, 0; busy(g) (a delay's jobs present) 3, 2, 1, 0. Row (§12, horizon 20): completed 4, mean_wait 1/4,
    mean_service 10/4, mean_number (1 + 2 + 3 + 5)/20 = 0.55, utilization
    6.5/20."""
    rep = run(FIFO2.replace("WARMUP", "0"))
    assert [v for _, _, v in samples(rep, "q")] == [0, 1, 2, 2]
    assert [v for _, _, v in samples(rep, "b")] == [0, 1, 2, 2]
    assert [v for _, _, v in samples(rep, "wk")] == [0, 0.5, 1.5, 3.5]
    assert [v for _, _, v in samples(rep, "gw")] == [3, 1.5, 0.5, 0]
    assert [v for _, _, v in samples(rep, "gb")] == [3, 2, 1, 0]
    assert [t for _, t, _ in samples(rep, "done")] == [1, 2.5, 4, 6.5]
    row = stage(rep, "f")
    assert (row["completed"], row["requests"], row["mean_wait"], row["mean_service"]) == (4, 4, 0.25, 2.5)
    assert row["mean_number"] == pytest.approx(0.55, rel=1e-12)
    assert row["utilization"] == pytest.approx(0.325, rel=1e-12)
    assert row["throughput"] == pytest.approx(0.2, rel=1e-12)
    # events: the four completions at f and the three at g (pyserq 0.1.3: 7)
    assert to_dict(rep)["events"] == 7


def test_stage_statistics_start_at_the_warmup():
    """§12: with warm-up 2 only completions from 2 on count (sessions 1, 2,
    3: waits 0, 0, 1, services 2, 3, 4) and the averages integrate [2, 20]:
    jobs present 3 over [2, 2.5], 2 over [2.5, 4], 1 over [4, 6.5]:
    mean_number 7/18, utilization 4.5/18; the delay's jobs all ended by
    1.5: nothing. No observation is made before 2 (none is kept)."""
    rep = run(FIFO2.replace("WARMUP", "2"))
    row = stage(rep, "f")
    assert (row["completed"], row["requests"]) == (3, 3)
    assert row["mean_wait"] == pytest.approx(1 / 3, rel=1e-12)
    assert row["mean_service"] == pytest.approx(3.0, rel=1e-12)
    assert row["mean_number"] == pytest.approx(7 / 18, rel=1e-12)
    assert row["utilization"] == pytest.approx(4.5 / 18, rel=1e-12)
    assert row["throughput"] == pytest.approx(3 / 18, rel=1e-12)
    g = stage(rep, "g")
    assert (g["completed"], g["mean_number"], g["mean_wait"]) == (0, 0, None)


def test_a_completion_at_the_warmup_counts():
    """§12 (from the warm-up on, inclusive): with warm-up 2.5 session 1's
    completion at 2.5 counts: completed 3, requests 3, as with warm-up 2;
    jobs present 2 over [2.5, 4] and 1 over [4, 6.5]: mean_number
    5.5/17.5."""
    row = stage(run(FIFO2.replace("WARMUP", "2.5")), "f")
    assert (row["completed"], row["requests"]) == (3, 3)
    assert row["mean_number"] == pytest.approx(5.5 / 17.5, rel=1e-12)


def test_a_preempted_job_in_service_frees_its_fifo_server():
    """Part 03 §7.3 step 4 (the victim's job leaves its stage): session 1
    runs 5 on fifo(1) from 0, session 2 (3) waits from 0.5. At 1 session 1
    is preempted: its job leaves, 2 starts at once (done 4). Session 1 is
    admitted again at 2 and waits for the server until 4: [4, 9]. Row: the
    cancelled job is not counted: completed 2, mean_wait (0.5 + 2)/2,
    mean_service (3 + 5)/2, mean_number (1 + 3.5 + 7)/20, utilization
    9/20."""
    rep = run(preempted("fifo(1)", "0", "0.5"))
    assert samples(rep, "done") == [(0, 2.0, 2.0), (2, 4.0, 4.0), (1, 9.0, 9.0)]
    row = stage(rep, "f")
    assert (row["completed"], row["mean_wait"], row["mean_service"]) == (2, 1.25, 4.0)
    assert row["mean_number"] == pytest.approx(11.5 / 20, rel=1e-12)
    assert row["utilization"] == pytest.approx(0.45, rel=1e-12)


def test_a_preempted_job_in_service_leaves_an_empty_fifo_idle():
    """As above with session 2's run on the delay d instead: when session
    1's job leaves at 1 nobody waits, the server stays idle until 1 comes
    back at 2 ([2, 7]): f completed 1, mean_number (1 + 5)/20."""
    rep = run(preempted("fifo(1)", "0", "0.5").replace("run f (3);", "run d (3);"))
    assert samples(rep, "done") == [(0, 2.0, 2.0), (2, 3.5, 3.5), (1, 7.0, 7.0)]
    row = stage(rep, "f")
    assert (row["completed"], row["mean_service"]) == (1, 5.0)
    assert row["mean_number"] == pytest.approx(6 / 20, rel=1e-12)


def test_a_preempted_job_waiting_leaves_the_fifo_queue():
    """As above, but session 2 (3) has the server from 0 and session 1
    waits behind it from 0.5 when it is preempted at 1: its job leaves the
    queue. 2 ends at 3; 1, admitted again at 2, waits until 3: [3, 8].
    completed 2, mean_wait (0 + 1)/2, mean_number (3 + 0.5 + 6)/20,
    utilization 8/20."""
    rep = run(preempted("fifo(1)", "0.5", "0"))
    assert samples(rep, "done") == [(0, 2.0, 2.0), (2, 3.0, 3.0), (1, 8.0, 8.0)]
    row = stage(rep, "f")
    assert (row["completed"], row["mean_wait"], row["mean_service"]) == (2, 0.5, 4.0)
    assert row["mean_number"] == pytest.approx(9.5 / 20, rel=1e-12)
    assert row["utilization"] == pytest.approx(0.4, rel=1e-12)


def test_a_preempted_job_leaves_the_shared_server():
    """§2 ps(1): session 1 (5) alone from 0, session 2 (3) joins at 0.5;
    at 1 session 1 has 0.5 + 0.25 done and leaves (preempted), 2 has 0.25
    done and runs alone until 2, when session 1 joins again with 5: then
    each at rate 1/2, 2 needs 3 - 0.25 - 1 = 1.75 more: done 5.5; session
    1 then has 1.75 done and runs alone: done 5.5 + 3.25 = 8.75. Row:
    completed 2, mean_service (5 + 6.75)/2 (§12: the time in service)."""
    rep = run(preempted("ps(1)", "0", "0.5"))
    assert samples(rep, "done") == [(0, 2.0, 2.0), (2, 5.5, 5.5), (1, 8.75, 8.75)]
    row = stage(rep, "f")
    assert (row["completed"], row["mean_wait"], row["mean_service"]) == (2, 0.0, 5.875)


def test_a_preempted_job_leaves_the_delay():
    """A preempted `delay` job leaves at once (here f is the delay, d a
    fifo(9)): session 1's 5 from 0 stop at 1; its second run is [2, 7].
    Session 2's 3 from 0.5: done 3.5. The row counts the finished jobs
    only (2's 3 and 1's second 5): completed 2, mean_service 4; the
    cancelled job counts while present: mean_number (1 + 3 + 5)/20."""
    rep = run(preempted("delay", "0", "0.5").replace("stage d : delay;", "stage d : fifo(9);"))
    assert samples(rep, "done") == [(0, 2.0, 2.0), (2, 3.5, 3.5), (1, 7.0, 7.0)]
    row = stage(rep, "f")
    assert (row["completed"], row["mean_service"]) == (2, 4.0)
    assert row["mean_number"] == pytest.approx((1 + 3 + 5) / 20, rel=1e-12)


def test_the_price_of_a_miss_from_the_online_estimates():
    """Part 01 §4.3 (α = 0.01): svc is fifo, works 2 from 0: starts 0, 2,
    4, waits 0, 2, 4, services 2. Each session then runs 1 + serial on
    sh and reads price(svc, 1, 1) = ds + λ(s_m² - s_hit²)/(2(1 - ρ)) +
    λŴ ds/(1 - ρ) with s_m = 2. At 2.5 one completion: λ = 0, price 1. At
    5 two: ĝ = 2 (the first gap), λ = 0.5, ŝ = 2, ρ = min(1, 0.99) =
    0.99, Ŵ = 0.01·2 = 0.02: 1 + 0.5·3/0.02 + 0.5·0.02/0.01 = 77. At 7.5
    three: ĝ = 2, Ŵ = 0.99·0.02 + 0.01·4 = 0.0598: 1 + 75 + 2.99 = 78.99."""
    rep = run(ESTIMATES)
    # before any completion Ŵ is 0 (no estimate yet)
    assert [v for _, _, v in samples(rep, "ew0")] == [0.0, 0.0, 0.0]
    got = samples(rep, "pr")
    assert [(k, t) for k, t, _ in got] == [(0, 2.5), (1, 5.0), (2, 7.5)]
    assert [v for _, _, v in got] == pytest.approx([1.0, 77.0, 78.99], rel=1e-12)
    # price(svc, 2, 0.5): s_m = 2.5; 0.5, then 0.5 + 0.5·(6.25 - 4)/0.02 +
    # 0.5·0.02·0.5/0.01 = 57.25, then 0.5 + 56.25 + 0.5·0.0598·0.5/0.01 = 58.245
    assert [v for _, _, v in samples(rep, "pr2")] == pytest.approx([0.5, 57.25, 58.245], rel=1e-12)


def test_a_shared_server_of_no_capacity_serves_nobody():
    """§2: φ(present) = 1 with two jobs present, else 0. Session 0's job (1)
    is alone from 0: no progress. Session 1's (1) joins at 2: each at rate
    1/2, both tags reached at 4; 0 finishes first (start order), and 1,
    alone again, gets nothing until the horizon 10. Row: completed 1
    (service 4), mean_number (2·1 + 2·2 + 6·1)/10 = 1.2, utilization 1 (a
    job is present throughout)."""
    rep = run(NO_CAPACITY_ALONE)
    assert samples(rep, "done") == [(0, 4.0, 4.0)]
    row = stage(rep, "s")
    assert (row["completed"], row["mean_service"], row["utilization"]) == (1, 4.0, 1.0)
    assert row["mean_number"] == pytest.approx(1.2, rel=1e-12)


def test_a_request_is_counted_once_at_a_stage_however_many_jobs_it_runs_there():
    """§12 `requests`: two sessions of two requests each; each request runs
    1 then 0.5 on fifo(1): 8 jobs (completed 8) of 4 requests (requests 4).
    The fifo order gives done 2.5, 3 (first requests) and 5.5, 6."""
    rep = run(TWO_REQUESTS)
    assert [(k, t) for k, t, _ in samples(rep, "done")] == [(0, 2.5), (1, 3.0), (0, 5.5), (1, 6.0)]
    row = stage(rep, "f")
    assert (row["completed"], row["requests"], row["mean_service"]) == (8, 4, 0.75)
    assert row["request_throughput"] == pytest.approx(0.4, rel=1e-12)


def test_a_spills_link_job_belongs_to_no_request():
    """Part 03 §9 step 4: the spill's jobs on the link are owned by no
    session: 3 completed (work 1 each, fifo(1): 3, 4, 5), 0 requests
    (tests/test_holds.py's SPILL_AGE program)."""
    from hold_programs import SPILL_AGE
    row = stage(run(SPILL_AGE), "link")
    assert (row["completed"], row["requests"], row["mean_wait"]) == (3, 0, 1.0)


def test_more_fifo_servers_start_waiting_jobs_at_once_and_fewer_stop_none():
    """§1 fifo(c) with a process's change (`serq.build`, StageHandle.servers):
    five jobs of 2 at 0 on fifo(1): job 0 [0, 2]. At 1 the servers become
    3: jobs 1 and 2 start at once ([1, 3]); job 3 takes the server job 0
    frees at 2 ([2, 4]). At 2.5 they become 1: nothing in service stops,
    and job 4 waits until fewer than 1 job is in service: after job 3 at
    4 ([4, 6]), not when 1 and 2 leave at 3. done 2, 3, 3, 4, 6; mean_wait
    (0 + 1 + 1 + 2 + 4)/5 = 1.6. work(svc) before each run (§2: the work of
    the waiting jobs plus what remains in service): 0, 2, 4, 6, 8."""
    model = serq.build(serq.load(source=SERVERS))
    svc = model.stage("svc")

    def scale(env):
        yield env.timeout(1)
        svc.servers = 3
        yield env.timeout(1.5)
        svc.servers = 1

    model.process(scale(model.env))
    rep = model.run()
    assert samples(rep, "done") == [(0, 2.0, 2.0), (1, 3.0, 3.0), (2, 3.0, 3.0), (3, 4.0, 4.0),
                                    (4, 6.0, 6.0)]
    assert [v for _, _, v in samples(rep, "w")] == [0, 2, 4, 6, 8]
    row = stage(rep, "svc")
    assert (row["completed"], row["mean_wait"], row["mean_service"]) == (5, 1.6, 2.0)
    assert svc.servers == 1


SIMULTANEOUS = ESTIMATES.replace("stage svc : fifo;", "stage svc : fifo(3);").replace(
    "observe pr = price(svc, 1, 1);",
    "observe pr = price(svc, 1, 1); observe el = est_lambda(svc); observe er = est_rho(svc);")


def test_no_rate_is_estimated_from_gaps_of_zero():
    """Part 01 §4.3: λ̂ = 1/ĝ only once two completions were seen and ĝ >
    0. On fifo(3) the three jobs start together at 0: every gap is 0, so
    ĝ = 0 and λ̂ = 0, ρ̂ = 0, and the price of a miss is ds = 1."""
    rep = run(SIMULTANEOUS)
    for name, value in (("pr", 1.0), ("el", 0.0), ("er", 0.0)):
        assert [v for _, _, v in samples(rep, name)] == [value] * 3, name


SHORT = """
stage d : delay;
workload { arrive batch(1); }
session { turn; run d (0.5); }
run { horizon 1; warmup 0; seed 1; }
"""


def test_a_measured_span_of_one_time_unit():
    """§12 over a span of 1 (horizon 1, no warm-up): one job of 0.5:
    mean_number = utilization = 0.5/1, throughput = request_throughput =
    1/1."""
    row = stage(run(SHORT), "d")
    assert (row["mean_number"], row["utilization"], row["throughput"],
            row["request_throughput"]) == (0.5, 0.5, 1.0, 1.0)


PS_TENTHS = """
stage s : ps(1);
stage gate : delay;
workload { arrive batch(3); init { set w = serial == 0 ? 0.1 : serial == 1 ? 0.2 : 0.7; } }
session { turn; run gate (START); run s (w); observe done = now; }
run { horizon 10; warmup 0; seed 1; }
"""


@pytest.mark.parametrize("start, done, mean, events", [
    ("0", [0.1 * 3, 0.5, 1.0], 0.6, 3), ("1", [1.3, 1.5, 2.0], 1.5999999999999999, 8)])
def test_processor_sharing_in_virtual_time_to_the_last_bit(start, done, mean, events):
    """§2 ps(1), works 0.1, 0.2, 0.7 from `start`: done start + 3·0.1,
    start + 0.5, start + 1 (closed form), in floating point as the
    reference computes them: virtual time starts at 0 and advances only
    while jobs are present, so from 0 the first is 0.1·3 =
    0.30000000000000004 and the mean exactly 0.6, and from 1 the mean is
    1.5999999999999999 (pyserq 0.1.3, seed 1, both means; a virtual time
    started or advanced elsewhere rounds the tags differently: 0.6000000000000001,
    1.6)."""
    rep = run(PS_TENTHS.replace("START", start))
    assert [v for _, _, v in samples(rep, "done")] == done
    assert rep.observes["done"].mean == mean
    # events (pyserq 0.1.3: 3 and 8): from 0, the three completions; from 1
    # also the three gate runs and two completion entries that a
    # re-evaluation of the shared rate made obsolete
    assert to_dict(rep)["events"] == events


# a job of 0.5 alone at 0, the stage empty over [0.5, 1], then PS_TENTHS's three at 1
PS_IDLE = """
stage s : ps(1);
stage gate : delay;
workload { arrive batch(4); init { set w = serial == 0 ? 0.1 : serial == 1 ? 0.2 : serial == 2 ? 0.7 : 0.5; } }
session { turn; run gate (serial == 3 ? 0 : 1); run s (w); observe done = now; }
run { horizon 10; warmup 0; seed 1; }
"""


def test_virtual_time_stands_still_while_the_shared_server_is_empty():
    """§2: virtual time advances at φ/n only while jobs are present: after
    the first job leaves at 0.5 it stands still until the three arrive at
    1, which then finish at 1.3, 1.5, 2.0 (closed form) -- in floating
    point 1.2999999999999998, 1.4999999999999998, 1.9999999999999998,
    mean 1.3249999999999997, as pyserq 0.1.3 computes them (seed 1: mean
    1.3249999999999997, p99 1.9999999999999998); a virtual time that ran
    on while empty rounds them to 1.3000000000000003, 1.5, 2.0."""
    rep = run(PS_IDLE)
    assert [v for _, _, v in samples(rep, "done")] == [
        0.5, 1.2999999999999998, 1.4999999999999998, 1.9999999999999998]
    assert rep.observes["done"].mean == 1.3249999999999997


PS_WORK = """
stage s : ps(1);
stage gate : delay;
workload { arrive batch(2); }
session { turn; run gate (serial * 0.5); observe w = work(s); run s (1); observe done = now; }
run { horizon 10; warmup 0; seed 1; }
"""


def test_the_work_left_at_a_shared_server():
    """§2 `work(S)` of ps: the remaining work of the jobs present. Session
    0's job of 1 runs alone from 0; at 0.5 session 1 reads 1 - 0.5 = 0.5
    left, then joins: each at rate 1/2, 0 ends at 1.5, 1 at 2."""
    rep = run(PS_WORK)
    assert samples(rep, "w") == [(0, 0.0, 0.0), (1, 0.5, 0.5)]
    assert [t for _, t, _ in samples(rep, "done")] == [1.5, 2.0]


SPACED = """
stage svc : fifo;
stage gate : delay;
workload { arrive batch(3); }
session { turn; run gate (serial); run svc (0.25);
  observe el = est_lambda(svc); observe er = est_rho(svc); observe ew = est_wait(svc); }
run { horizon 10; warmup 0; seed 1; }
"""


def test_estimates_below_the_cap():
    """Part 01 §4.3 with ρ̂ below its cap 0.99: works 0.25 starting at 0,
    1, 2 (no waits), each session reading the estimates after its own
    completion. After one completion λ̂ = ρ̂ = 0; after two ĝ = 1 (the
    first gap), λ̂ = 1, ŝ = 0.25, ρ̂ = 0.25; after three ĝ = 0.99·1 +
    0.01·1 = 1: the same. Ŵ stays 0."""
    rep = run(SPACED)
    assert [v for _, _, v in samples(rep, "el")] == pytest.approx([0.0, 1.0, 1.0], rel=1e-12)
    assert [v for _, _, v in samples(rep, "er")] == pytest.approx([0.0, 0.25, 0.25], rel=1e-12)
    assert [v for _, _, v in samples(rep, "ew")] == [0.0, 0.0, 0.0]


INDEXED = """
stage f[2] : fifo;
stage d : delay;
workload { arrive batch(2); }
session { turn; run f[serial] (1); run d (1); }
run { horizon 5; warmup 0; seed 1; }
"""


def test_a_stage_member_is_labelled_by_its_index():
    """Part 06 §10 (text report): a member of a stage array is `name[index]`,
    a plain stage its name: rows f[0], f[1], d; the built model's stages
    (`serq.build`, the labels its change errors name) are labelled alike."""
    rep = run(INDEXED)
    assert [st.label for st in rep.stages] == ["f[0]", "f[1]", "d"]
    model = serq.build(serq.load(source=INDEXED))
    assert [model.stage("f", 0).label, model.stage("f", 1).label, model.stage("d").label] == [
        "f[0]", "f[1]", "d"]


PROGRAMS = [PS_IDLE, PS_WORK, PS_TENTHS.replace("START", "0"), PS_TENTHS.replace("START", "1"), SPACED, SHORT, SIMULTANEOUS, NO_CAPACITY_ALONE, TWO_REQUESTS, FIFO2.replace("WARMUP", "0"),
            FIFO2.replace("WARMUP", "2"), FIFO2.replace("WARMUP", "2.5"), ESTIMATES] + [
    preempted(kind, a, b) for kind, a, b in (("fifo(1)", "0", "0.5"), ("fifo(1)", "0.5", "0"),
                                             ("ps(1)", "0", "0.5"))] + [
    preempted("delay", "0", "0.5").replace("stage d : delay;", "stage d : fifo(9);"),
    preempted("fifo(1)", "0", "0.5").replace("run f (3);", "run d (3);")]


@requires("0.1.3")
@pytest.mark.oracle
@pytest.mark.parametrize("source", PROGRAMS)
def test_stages_programs_against_the_reference(source):
    """The same programs under pyserq 0.1.3 (seed 1): every observe's
    count, mean, min and max, and every stage field the reference reports."""
    assert_fields_match(to_dict(run(source)), run_reference(source, version="0.1.3"), "stages")
