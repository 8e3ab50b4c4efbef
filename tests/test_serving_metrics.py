"""The serving metrics of issue 25: percentiles, request and token
throughput, stage requests beside jobs, the per-request table.

Expected numbers: the exact quantiles of M/M/1's response time (exponential
with rate mu − lam; Kleinrock, Queueing Systems Vol. 1, §3.2), the closed
form of a saturated step engine (derived below), and the spec's worked
example W-2 (Part 06 §4).
"""
from __future__ import annotations

import csv
import json
import math
import os

import pytest

import serq
from serq.report.json_report import reference_view, to_dict, to_json
from serq.report.text_report import to_text
from serq.stats.summary import nearest_rank, parse_percentiles, summarize

from e2e_util import run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MG1 = os.path.join(ROOT, "examples", "single-turn", "mg1.sq")
REFERENCE_SUMMARY_KEYS = ["count", "mean", "ci", "cv2", "p99"]

# A step engine that is never idle: 4 closed sessions, each asking at once
# for its next request. Every request is a prefill of 8 tokens (one
# iteration: budget 64 >= 4 x 8) and a decode of 4 tokens (4 iterations), all
# at cost 1, and the 4 sessions move in lockstep: a request takes 5 time
# units, has 8 prompt tokens and 1 + 4 = 5 output tokens (the prefill's end
# is the first token, Part 06 §4). Closed form: requests 4/5 = 0.8 per
# time unit, input tokens 8 x 0.8 = 6.4, output tokens 5 x 0.8 = 4, and the
# stage completes two jobs (prefill, decode) per request: 1.6 jobs per time
# unit. Requests end at 5, 10, …; warm-up 102 and horizon 1002 put exactly
# 180 request ends (105 … 1000) and 180 prefill ends (106 … 1001) of each
# session in the 900 measured time units.
SATURATED = """
stage llm : step { budget 64; cost 1; }
workload { arrive closed(4); session { loop { request; } } }
server { prefill (8); decode (4); }
run { horizon 1002; }
"""

# Part 06 §4, worked example W-2.
W2 = """
stage llm : step { budget 8; cost 1; }
workload { arrive batch(3); init { set o = serial + 1; } session { request; end; } }
server { set t0 = now; prefill (8); decode (o - 1); observe finished = now - t0; }
run { horizon 20; }
"""


def test_nearest_rank_percentiles_of_a_short_series():
    # nearest rank (§3.2): rank ceil(q n) of 1..10 is q*10 for these q
    s = summarize([float(x) for x in range(10, 0, -1)])
    assert (s.p50, s.p90, s.p95, s.p99) == (5.0, 9.0, 10.0, 10.0)
    assert summarize([1.0, 2.0], (25.0, 99.9)).percentiles == ((25.0, 1.0), (99.9, 2.0))


def test_parse_percentiles():
    assert parse_percentiles("99.9, 50,50") == (50.0, 99.9)
    with pytest.raises(ValueError, match="outside"):
        parse_percentiles("0")
    with pytest.raises(ValueError, match="not a number"):
        parse_percentiles("p99")


@pytest.fixture(scope="module")
def mm1_study():
    return serq.replicate(MG1, 10, sets={"lam": 0.5}, horizon=20_000, warmup=1_000,
                          seed=11, executor=1)


@pytest.mark.parametrize("q", [50, 90, 95, 99])
def test_mm1_response_percentiles_cover_the_exponential_quantiles(mm1_study, q):
    """M/M/1 at lam = 0.5, mu = 1: the response time is exponential with
    rate 0.5, whose q-th percentile is ln(1/(1 − q/100)) / 0.5. Ten
    replications' percentiles give a Student-t interval that covers it."""
    iv = mm1_study.interval("observe", "response", f"p{q}")
    exact = math.log(1.0 / (1.0 - q / 100.0)) / 0.5
    assert abs(iv.mean - exact) <= iv.half_width, (q, iv, exact)
    assert iv.half_width < 0.1 * exact  # (the check has power)


def test_percentiles_in_json_text_and_frames_beside_the_reference_keys():
    rep = run(path=MG1, horizon=2000)
    d = to_dict(rep)
    summ = d["observes"]["response"]
    assert list(summ) == REFERENCE_SUMMARY_KEYS + ["p50", "p90", "p95"]
    values = rep.observes["response"].values
    for q in (50, 90, 95, 99):
        assert summ[f"p{q}"] == nearest_rank(values, q / 100)
    assert list(d["client"]["ttft"]) == REFERENCE_SUMMARY_KEYS + ["p50", "p90", "p95"]
    header = next(line for line in to_text(rep).splitlines() if line.startswith("observe"))
    assert header.split()[-4:] == ["p50", "p90", "p95", "p99"]
    frame = rep.to_pandas("observations")
    assert list(frame.columns)[-3:] == ["p50", "p90", "p95"]
    rep.percentiles = (50.0, 99.9)
    d = to_dict(rep)
    assert list(d["observes"]["response"]) == REFERENCE_SUMMARY_KEYS + ["p50", "p99.9"]


def test_reference_view_is_the_report_without_the_additions():
    rep = run(path=MG1, horizon=2000)
    view = reference_view(to_dict(rep))
    assert "throughput" not in view and "serq_simpy" in view
    assert list(view["observes"]["response"]) == REFERENCE_SUMMARY_KEYS
    assert "requests" not in view["stages"][0]
    assert list(view["stages"][0])[-1] == "idle_with_work"


def test_percentiles_flag(tmp_path):
    from serq.cli import main
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["run", MG1, "--horizon", "500", "--json", "--percentiles", "50,99.9"]) == 0
    summ = json.loads(out.getvalue())["observes"]["response"]
    assert list(summ) == REFERENCE_SUMMARY_KEYS + ["p50", "p99.9"]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exc:
        main(["run", MG1, "--percentiles", "101"])
    assert exc.value.code == 2 and "outside (0, 100]" in err.getvalue()


def test_saturated_engine_throughput_closed_form():
    rep = run(SATURATED, warmup=102)
    t = rep.throughput
    assert t.requests == pytest.approx(0.8, rel=1e-12)
    assert t.input_tokens == pytest.approx(6.4, rel=1e-12)
    assert t.output_tokens == pytest.approx(4.0, rel=1e-12)
    stage = rep.stage("llm")
    assert stage.throughput == pytest.approx(1.6, rel=1e-12)  # jobs: prefill and decode
    assert stage.requests == 720
    assert stage.request_throughput == pytest.approx(0.8, rel=1e-12)
    d = to_dict(rep)
    assert d["throughput"] == {"requests": t.requests, "input_tokens": t.input_tokens,
                               "output_tokens": t.output_tokens}
    assert list(d["stages"][0])[-2:] == ["requests", "request_throughput"]
    text = to_text(rep)
    assert "jobs/t" in text and "requests/t" in text
    assert "throughput: 0.8 requests, 6.4 input tokens, 4 output tokens per time unit" in text


def test_per_request_table_of_w2(tmp_path):
    """W-2 (Part 06 §4): ttft 1, 2, 3; tpot –, 2, 1; response 1, 4, 5; every
    request prefills 8 tokens; session k's final sequence has k + 1 tokens."""
    rep = run(W2)
    rows = list(rep.requests())
    assert [(r.session, r.turn, r.arrival, r.end) for r in rows] == [
        (0, 0, 0.0, 1.0), (1, 0, 0.0, 4.0), (2, 0, 0.0, 5.0)]
    assert [r.prompt_tokens for r in rows] == [8.0, 8.0, 8.0]
    assert [r.output_tokens for r in rows] == [1, 2, 3]
    assert [r.ttft for r in rows] == [1.0, 2.0, 3.0]
    assert math.isnan(rows[0].tpot) and [r.tpot for r in rows[1:]] == [2.0, 1.0]
    assert [r.e2e for r in rows] == [1.0, 4.0, 5.0]
    frame = rep.requests().to_pandas()
    assert list(frame.columns) == ["session", "turn", "arrival", "end", "prompt_tokens",
                                   "output_tokens", "ttft", "tpot", "e2e"]
    from serq.report.dump import write_dump
    write_dump(rep, tmp_path)
    with open(tmp_path / "client" / "requests.csv", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert [(r["session"], r["output_tokens"], r["tpot"]) for r in table] == [
        ("0", "1", "NaN"), ("1", "2", "2"), ("2", "3", "1")]


def test_json_is_reproducible_with_the_additions():
    a = to_json(run(SATURATED, warmup=102, horizon=300))
    b = to_json(run(SATURATED, warmup=102, horizon=300))
    assert a == b
