"""Part 06: the worked examples that are pure statistics and report rendering.

Each expected number names its source in the spec (Part 06 unless stated).
The reports are built by hand from the examples' numbers; no simulation runs.
"""
from __future__ import annotations

import json
import math

from array import array

import pytest

from serq.report import (ClaimRow, GaugeRow, PoolRow, Report, Series, StageRow, to_dict,
                         to_json, to_text, write_dump)
from serq.report.json_report import number_text, reference_json
from serq.report.requests import RequestLog
from serq.stats.gauges import GaugeTrace, LogHistogram
from serq.stats.summary import BATCHES, MIN_SAMPLES, T95, summarize


def series(values, times=None, sessions=None, is_test=False) -> Series:
    """A series of `values` recorded at `times` (default: the values) by `sessions`."""
    n = len(values)
    return Series(times=list(times if times is not None else values),
                  sessions=list(sessions if sessions is not None else range(n)),
                  turns=[0] * n, values=[float(v) for v in values], is_test=is_test)


def trace(points) -> GaugeTrace:
    g = GaugeTrace()
    for t, v in points:
        g.record(t, v)
    return g


# ---------------------------------------------------------------- §3 summaries

def test_p06_constants():
    # §3.1: B = 20, N_min = 40, t = 2.093 (the rounded Student-t quantile)
    assert (BATCHES, MIN_SAMPLES, T95) == (20, 40, 2.093)


def test_p06_w1_batch_means():
    s = summarize(range(1, 46))  # §3.3 W-1: samples 1, 2, …, 45
    assert s.count == 45
    assert s.mean == 23  # §3.3: 1035/45
    assert s.ci == 5.537557494058189  # §3.3: 2.093·√7
    assert s.cv2 == 0.32608695652173914  # §3.3: 172.5/529
    assert s.p99 == 45  # §3.3: rank ⌈44.55⌉ = 45


def test_p06_w1_39_samples_no_interval():
    s = summarize([float(x) for x in range(1, 40)])  # §3.3: 39 sessions → ci null
    assert s.ci == math.inf  # §3.1: +inf, JSON null, text ±inf
    assert to_dict(Report(observes={"response": series(range(1, 40))})
                   )["observes"]["response"]["ci"] is None


def test_p06_w1_40_samples():
    s = summarize([float(x) for x in range(1, 41)])  # §3.3: 40 sessions
    assert s.mean == 20.5  # §3.3
    assert s.ci == 5.537557494058189  # §3.3: the same 20 batches


def test_p06_w1_json_summary():
    r = Report(horizon=100, end=100, observes={"response": series(range(1, 46))})
    # §3.3: the object pyserq 0.1.3 and 0.1.5 both report
    expected = ('"response":{"count":45,"mean":23,"ci":5.537557494058189,'
                '"cv2":0.32608695652173914,"p99":45}')
    assert expected in reference_json(r)  # the reference's keys, byte for byte
    # issue 25: serq-simpy's percentiles after them (nearest rank of 1 … 45:
    # ⌈0.5·45⌉ = 23, ⌈0.9·45⌉ = 41, ⌈0.95·45⌉ = 43)
    assert expected[:-1] + ',"p50":23,"p90":41,"p95":43}' in to_json(r)


def test_p06_p99_1000_samples():
    xs = [k / 1000 for k in range(1, 1001)]
    assert summarize(xs).p99 == 0.99  # §3.2: the 990th of 0.001 … 1.000
    assert summarize(list(reversed(xs))).p99 == 0.99  # §3.2: rank after sorting


def test_p06_p99_small_and_empty():
    assert summarize([5.0]).p99 == 5.0  # §3.2: r = min(max(⌈0.99⌉, 1), 1) = 1
    empty = summarize([])  # §3 table: n = 0 → mean, p99 null; ci null (n < 40)
    assert empty.count == 0 and math.isnan(empty.mean) and math.isnan(empty.p99)
    assert math.isnan(empty.cv2) and empty.ci == math.inf


def test_p06_cv2_undefined():
    assert math.isnan(summarize([3.0]).cv2)  # §3 table: n < 2
    assert math.isnan(summarize([-1.0, 1.0]).cv2)  # §3 table: mean = 0


def test_p06_w2_client_summaries():
    # §4 W-2 expected client object
    ttft, tpot, response = summarize([1, 2, 3]), summarize([2, 1]), summarize([1, 4, 5])
    assert (ttft.mean, ttft.cv2, ttft.p99) == (2, 0.25, 3)
    assert (tpot.mean, tpot.cv2, tpot.p99) == (1.5, 0.2222222222222222, 2)
    assert (response.mean, response.cv2, response.p99) == (3.3333333333333335,
                                                           0.3899999999999999, 5)


def test_p06_w3_response_summary():
    s = summarize([2, 3, 5, 7])  # §5.4 W-3: responses at 2, 3, 5, 7
    assert (s.count, s.mean, s.cv2, s.p99) == (4, 4.25, 0.27220299884659743, 7)
    assert s.ci == math.inf  # §5.4: ci null


# ---------------------------------------------------------------- §7 gauges

W1_JOBS = [(float(t), 45.0 - t) for t in range(46)]  # §7: 45 − ⌊t⌋ on [0, 45), then 0


def test_p06_w1_gauge():
    mean, ci, lo, hi = trace(W1_JOBS).finish(0.0, 100.0)
    assert mean == 10.35  # §7: 1035/100
    assert ci == 6.89048198202457  # §7: 2.093·√(216.7658/20)
    assert (lo, hi) == (0, 45)  # §7


def test_p06_w3_gauge_used_slots():
    g = trace([(0, 3), (1, 3), (2, 2), (4, 1), (6, 0), (7, 0)])  # §5.4: no transient 2 at t = 1
    assert g.points == [(0, 3), (2, 2), (4, 1), (6, 0)]  # §5.4 change points
    mean, ci, lo, hi = g.finish(0.0, 20.0)
    assert mean == 0.6  # §7: W-3 used_slots
    assert ci == 0.4896763141418817  # §7: window means 3,3,2,2,1,1 and fourteen 0s
    assert (lo, hi) == (0, 3)


def test_p06_gauge_same_instant_replaces():
    g = trace([(0, 0), (2, 5), (2, 0), (3, 1)])  # only the settled value of an instant counts
    assert g.points == [(0, 0), (3, 1)]


def test_p06_gauge_warmup_and_zero_time_values():
    # §7: a value set before warmup holds into the span; min/max need positive time
    mean, ci, lo, hi = time_stats_of([(0, 4), (2, 9), (5, 1)], 3.0, 5.0)
    assert (mean, lo, hi) == (9, 9, 9)
    mean, ci, lo, hi = time_stats_of([(0, 1), (2, 9), (2, 1)], 0.0, 4.0)
    assert (mean, lo, hi) == (1, 1, 1)
    mean, ci, lo, hi = time_stats_of([(0, 3)], 0.0, 7.0)  # windows of a span 20 does not divide
    assert mean == 3 and ci < 1e-12


def time_stats_of(points, warmup, end):
    from serq.stats.gauges import time_stats
    return time_stats([(float(t), float(v)) for t, v in points], warmup, end)


def test_p06_s96_gauges():
    held = trace([(0, 0), (2, 8), (3, 20), (9, 12), (11, 0)])  # §9.6 hand check
    assert held.finish(0.0, 50.0) == (3.04, 3.0984139858083237, 0, 20)  # §9.6 gauges.held
    slots = trace([(0, 0), (2, 1), (3, 2), (9, 1), (11, 0)])  # pyserq 0.1.3 change points
    assert slots.finish(0.0, 50.0) == (0.3, 0.3074569794467614, 0, 2)  # §9.6 gauges.slots


# ---------------------------------------------------------------- §6 inter-token latency

def test_p06_w4_itl_histogram():
    h = LogHistogram()
    for gap in (3, 1, 1, 2, 1, 1, 1, 1, 1):  # §6.3: gaps 3,1,1 · 2,1,1 · 1,1,1
        h.add(gap)
    assert h.mean() == 1.3333333333333333  # §6.3 mean_itl
    assert h.quantile(0.5) == 1  # §6.3 itl_p50: rank 5 of 9
    assert h.quantile(0.99) == 3  # §6.3 itl_p99: rank 9 of 9


def test_p06_log_histogram_within_half_percent():
    h = LogHistogram()
    xs = [0.0, -1.0] + [1.0 + k / 97 for k in range(200)]
    for x in xs:
        h.add(x)
    assert h.quantile(0.0) == 0.0  # §6.2: the non-positive bucket's middle is 0, clamped
    exact = sorted(xs)[math.ceil(0.5 * len(xs)) - 1]
    assert abs(h.quantile(0.5) / exact - 1) <= 0.005  # §6.2: within 0.5 %
    assert math.isnan(LogHistogram().quantile(0.5))


# ---------------------------------------------------------------- §9.6 the JSON report

S96_JSON = (  # §9.6 expected --json, line breaks removed; serq_version replaced below
    '{"serq_version":"…","horizon":50,"end":50,"warmup":0,"seed":1,"events":13,'
    '"arrivals":4,"ended":4,"turns":0,"mean_live":0.64,'
    '"observes":{"finished":{"count":4,"mean":8,"ci":null,"cv2":0.10416666666666667,"p99":11}},'
    '"client":{"ttft":{"count":4,"mean":6,"ci":null,"cv2":0.1851851851851852,"p99":9},'
    '"tpot":{"count":4,"mean":1,"ci":null,"cv2":0,"p99":1},'
    '"response":{"count":4,"mean":8,"ci":null,"cv2":0.10416666666666667,"p99":11}},'
    '"gauges":{"held":{"mean":3.04,"ci":3.0984139858083237,"min":0,"max":20},'
    '"slots":{"mean":0.3,"ci":0.3074569794467614,"min":0,"max":2}},'
    '"claims":[{"name":"cap_ok","kind":"every_iteration","result":"holds","checked":9,'
    '"failures":0,"first":null,"note":null},'
    '{"name":"full","kind":"some_iteration","result":"witnessed","checked":9,"failures":5,'
    '"first":2,"note":null},'
    '{"name":"fast","kind":"at_end","result":"holds","checked":1,"failures":0,"first":null,'
    '"note":null}],'
    '"stages":[{"name":"llm","index":null,"mean_number":0.3,"utilization":0.18,"completed":8,'
    '"throughput":0.16,"mean_wait":0,"mean_service":1.875,"iterations":9,"prefill_only":0.02,'
    '"decode_only":0.04,"mixed":0.12,"mean_decodes":0.16,"mean_decode_batch":1,'
    '"mean_decode_step":1,"mean_itl":1,"itl_p50":1,"itl_p99":1,"idle_with_work":false},'
    '{"name":"net","index":null,"mean_number":0.16,"utilization":0.04,"completed":4,'
    '"throughput":0.08,"mean_wait":0,"mean_service":2,"iterations":0,"prefill_only":0,'
    '"decode_only":0,"mixed":0,"mean_decodes":0,"mean_decode_batch":null,'
    '"mean_decode_step":null,"mean_itl":null,"itl_p50":null,"itl_p99":null,'
    '"idle_with_work":false}],'
    '"pools":[{"name":"reqs","index":null,"mean_used":0.3,"mean_cached":0,"mean_queue":0.18,'
    '"mean_holders":0.3,"mean_wait":2.25,"admissions":4,"evicted_entries":0,"evicted_units":0,'
    '"preemptions":0,"spills":0,"rejected":0,"stuck":0,"over_cap":null,"growing_at_end":0,'
    '"growing_stalled":false},'
    '{"name":"kv","index":null,"mean_used":3.04,"mean_cached":0,"mean_queue":0,'
    '"mean_holders":0.3,"mean_wait":null,"admissions":4,"evicted_entries":0,"evicted_units":0,'
    '"preemptions":0,"spills":0,"rejected":0,"stuck":0,"over_cap":null,"growing_at_end":0,'
    '"growing_stalled":false}]}'
)


def s96_report() -> Report:
    """§9.6's report, from the example's numbers and hand checks."""
    finished = series([5, 7, 9, 11])  # §9.6: response 5, 7, 9, 11 (t0 = 0)
    return Report(
        serq_version="…", horizon=50.0, end=50.0, warmup=0.0, seed=1, events=13, arrivals=4,
        ended=4, turns=0, mean_live=0.64,
        observes={"finished": finished},
        client={"ttft": series([3, 5, 7, 9]),  # §9.6: first tokens at 3, 5, 7, 9
                "tpot": series([1, 1, 1, 1], times=[5, 7, 9, 11]),  # §9.6: tpot 1 each
                "response": series([5, 7, 9, 11])},
        gauges={"held": GaugeRow.from_trace(
                    trace([(0, 0), (2, 8), (3, 20), (9, 12), (11, 0)]), 0.0, 50.0),
                "slots": GaugeRow.from_trace(
                    trace([(0, 0), (2, 1), (3, 2), (9, 1), (11, 0)]), 0.0, 50.0)},
        claims=[ClaimRow("cap_ok", "every_iteration", "holds", 9, 0),
                ClaimRow("full", "some_iteration", "witnessed", 9, 5, first=2.0),
                ClaimRow("fast", "at_end", "holds", 1, 0)],
        stages=[StageRow("llm", mean_number=0.3, utilization=0.18, completed=8,
                         throughput=0.16, mean_wait=0.0, mean_service=1.875, iterations=9,
                         prefill_only=0.02, decode_only=0.04, mixed=0.12, mean_decodes=0.16,
                         mean_decode_batch=1.0, mean_decode_step=1.0, mean_itl=1.0,
                         itl_p50=1.0, itl_p99=1.0),
                StageRow("net", mean_number=0.16, utilization=0.04, completed=4,
                         throughput=0.08, mean_wait=0.0, mean_service=2.0)],
        pools=[PoolRow("reqs", mean_used=0.3, mean_queue=0.18, mean_holders=0.3, mean_wait=2.25,
                       admissions=4),
               PoolRow("kv", mean_used=3.04, mean_holders=0.3, admissions=4)],
    )


def test_p06_s96_json_report():
    full = json.loads(to_json(s96_report()))
    assert list(full)[-2:] == ["throughput", "serq_simpy"]  # issue 25's object, then §9.7's
    text = reference_json(s96_report())  # the reference's keys, byte for byte
    assert "\n" not in text and ": " not in text and ", " not in text
    assert text.startswith(S96_JSON[:-1] + ",")  # every key and value, in order (§9.6)
    got = json.loads(text)
    extra = got.pop("serq_simpy")
    assert list(got) == list(json.loads(S96_JSON))  # serq_simpy is the last key (§9.7)
    assert got == json.loads(S96_JSON)
    assert extra["implementation"] == "serq-simpy"  # §9.7
    assert (extra["schema"], extra["report_version"]) == ("pyserq-0.1.5", 1)  # §9.7
    assert extra["ci"] == {"batches": 20, "t": 2.093, "level": 0.95, "min_samples": 40}  # §9.7
    assert isinstance(extra["version"], str) and extra["version"]


def test_p06_s96_to_dict_matches_json():
    d = to_dict(s96_report())
    assert json.loads(to_json(s96_report())) == json.loads(json.dumps(d))
    assert d["stages"][0]["completed"] == 8 and isinstance(d["stages"][0]["completed"], int)


def test_p06_json_claims_absent_and_over_cap():
    r = Report(horizon=10.0, end=10.0,
               pools=[PoolRow("mem", mean_queue=2.0, over_cap=("mem", 204.0))])
    d = json.loads(to_json(r))
    assert "claims" not in d  # §9.1: present only if the program declares a claim
    assert d["pools"][0]["over_cap"] == {"queue": "mem", "need": 204}  # Part 03 P-3
    assert '"over_cap":{"queue":"mem","need":204}' in to_json(r)
    assert '"claims":[]' in to_json(Report(claims=[]))


@pytest.mark.parametrize("x, text", [
    (2000.0, "2000"), (0.5, "0.5"), (-2.5, "-2.5"), (0.1 + 0.2, "0.30000000000000004"),
    (1e-7, "0.0000001"), (1e20, "100000000000000000000"), (-0.0, "-0"),
    (1 / 3 * 1e-10, "0.000000000033333333333333335"),
])
def test_p06_json_numbers(x, text):
    # §9: an integral double without fraction; the digits are pyserq 0.1.3's for these values
    assert number_text(x) == text


# ---------------------------------------------------------------- §10 the text report

S10_TEXT = """\
run: horizon 100 end 100 warmup 0 seed 1 events 7 arrivals 3 ended 3 turns 0 mean live 0.190

observe  count   mean  95% CI      cv2    p50    p90    p95    p99
-------  -----  -----  ------  -------  -----  -----  -----  -----
done         3  6.333       –  0.00831  6.000  7.000  7.000  7.000

client    count   mean  95% CI      cv2    p50    p90    p95    p99
--------  -----  -----  ------  -------  -----  -----  -----  -----
ttft          3  2.333       –    0.429  2.000  4.000  4.000  4.000
tpot          3  1.333       –   0.0625  1.333  1.667  1.667  1.667
response      3  6.333       –  0.00831  6.000  7.000  7.000  7.000
throughput: 0.03 requests, 0.28 input tokens, 0.12 output tokens per time unit

claim        kind             result
-----------  ---------------  -------------------------------------
cap_ok       every iteration  holds (7 iterations)
always_full  every iteration  fails at 3.0000 (4 of 7 iterations)
some_full    some iteration   witnessed at 0.0000 (7 iterations)
never        some iteration   not witnessed (7 iterations)
all_done     at end           holds
small_only   every iteration  out of scope: session 2 fails `given`

stage  number   util  jobs  jobs/t  requests/t  wait  service  iters
-----  ------  -----  ----  ------  ----------  ----  -------  -----
E        0.19  0.070     6    0.06        0.03     0    3.167      7

step  prefill only  decode only  mixed   idle  decodes  decode batch  decode step  itl p50  itl p99
----  ------------  -----------  -----  -----  -------  ------------  -----------  -------  -------
E            0.030        0.030  0.010  0.930     0.09          2.25            1        1        3

warning: too few samples after the warm-up for an interval (it needs 40): observe `done` (3), \
client `ttft` (3), client `tpot` (3), client `response` (3); run longer
"""  # §10's example (W-4/W-5's program): §10's layout and values, the numbers
# written with significant digits, `–` for no interval and the warnings (issue 13);
# issue 25 adds p50/p90/p95 (nearest rank of the same samples), the throughput
# line (3 requests over 100; W-4's prompts 8, 8, 12 and 1 + 3 output tokens each)
# and the stage's jobs and requests per time unit (6 jobs, 3 requests)


def s10_report() -> Report:
    """§10's report: W-4's numbers (§6.3), W-5's claims (§8.4), the client series of §10."""
    return Report(
        horizon=100.0, end=100.0, warmup=0.0, seed=1, events=7, arrivals=3, ended=3, turns=0,
        mean_live=0.19,  # §6.3 / pyserq 0.1.3
        observes={"done": series([6, 6, 7])},  # §10: done = now at 6, 6, 7
        client={"ttft": series([1, 2, 4]),  # §10: first tokens at 1, 2, 4
                "tpot": series([5 / 3, 4 / 3, 1], times=[6, 6, 7]),  # §10: 5/3, 4/3, 1
                "response": series([6, 6, 7])},  # §10: 6, 6, 7
        claims=[ClaimRow("cap_ok", "every_iteration", "holds", 7, 0),  # §8.4
                ClaimRow("always_full", "every_iteration", "fails", 7, 4, first=3.0),
                ClaimRow("some_full", "some_iteration", "witnessed", 7, 4, first=0.0),
                ClaimRow("never", "some_iteration", "not_witnessed", 7, 7),
                ClaimRow("all_done", "at_end", "holds", 1, 0),
                ClaimRow("small_only", "every_iteration", "out_of_scope", 0, 0,
                         note="session 2 fails `given`")],
        stages=[StageRow("E", mean_number=0.19, utilization=0.07, completed=6, throughput=0.06,
                         mean_wait=0.0, mean_service=3.166666666666667, iterations=7,
                         prefill_only=0.03, decode_only=0.03, mixed=0.01, mean_decodes=0.09,
                         mean_decode_batch=2.25, mean_decode_step=1.0,
                         mean_itl=1.3333333333333333, itl_p50=1.0, itl_p99=3.0,  # §6.3
                         requests=3, request_throughput=0.03)],
        # W-4's requests (issue 25): prompts 8 + 4·big, decode (3) after the prefill's token
        request_log=RequestLog(arrival=array("d", [0, 0, 0]), prompt=array("d", [8, 8, 12]),
                               output=array("d", [4, 4, 4]), ttft=array("d", [1, 2, 4]),
                               tpot=array("d", [5 / 3, 4 / 3, 1])),
    )


def test_p06_s10_text_report():
    assert to_text(s10_report()) == S10_TEXT


def test_p06_text_notes_and_extra_lines():
    r = Report(horizon=10.0, end=10.0, warmup=0.5,
               observes={"hit": series([0] * 40, times=range(40), is_test=True)},
               claims=[ClaimRow("c", "at_end", "not_evaluated", note="1 session live at the end"),
                       ClaimRow("d", "every_iteration", "fails", 1, 1, first=2.5)],
               stages=[StageRow("E", index=0, iterations=1, idle_with_work=True)],
               pools=[PoolRow("kv", index=1, stuck=2, rejected=1, over_cap=("mem", 204.0))])
    text = to_text(r)
    assert text.startswith("run: horizon 10 end 10 warmup 0.5 ")  # §10: shortest form
    assert "note: observe hit is constant 0 over 40 samples\n" in text  # §2 test note
    assert "client" not in text  # §10: client only with a client sample
    assert "not evaluated: 1 session live at the end" in text  # §10
    assert "fails at 2.5000 (1 of 1 iteration)" in text  # §10: singular
    assert ("stuck: 2 session(s) preempted again at pool `kv[1]` without passing the "
            "position of their previous preemption\n") in text  # §10
    assert "rej: 1 session(s) ended at pool `kv[1]` asking for more than its cap\n" in text
    assert "over: the head of pool `mem`'s queue asks `kv[1]` for 204," in text
    assert "idle: stage `E[0]` " in text
    assert "E[0]        0  0.000     0" in text  # the stage table: label, number, util, done
    assert "  –" in text and "NaN" not in text  # an undefined wait prints `–` (issue 13)
    assert "warning: stage `E[0]` served nothing after the warm-up\n" in text


# ---------------------------------------------------------------- §11.2 --dump

def test_p06_dump(tmp_path):
    r = s96_report()
    r.observes["finished"].values[0] = 0.1 + 0.2
    write_dump(r, tmp_path / "out")
    lines = (tmp_path / "out" / "finished.csv").read_text().splitlines()
    assert lines[0] == "time,session,turn,value"  # §11.2
    assert lines[1] == "5,0,0,0.30000000000000004"  # shortest round-trip form
    assert (tmp_path / "out" / "gauge" / "held.csv").read_text() == (
        "time,value\n0,0\n2,8\n3,20\n9,12\n11,0\n")  # §9.6 change points from 0
    assert (tmp_path / "out" / "client" / "tpot.csv").read_text().splitlines()[1] == "5,0,0,1"
    (tmp_path / "file").write_text("")
    with pytest.raises(OSError):
        write_dump(r, tmp_path / "file")
