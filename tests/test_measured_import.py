"""Importers of measured runs (serq.measured) and `serq-simpy trace`.

Expected numbers come from the shipped logs' own documentation:
upstream's docs/case-study-pd.md table "Pull, request for request"
(measured pull1x1: mean TTFT 1.300 s, median 0.692 s) and LLMServingSim's
validation/summary.txt vLLM column for RTX4090/Llama-3.1-8B."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from serq.measured import MeasuredError, read_run
from serq.measured.trace import trace_rows, trace_text

pytest.importorskip("pandas")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
A6000 = os.path.join(ROOT, "examples", "measured", "a6000")
PULL1 = os.path.join(A6000, "pull1x1_s3_rounds.jsonl")
LSS = os.path.join(ROOT, "examples", "measured", "llmservingsim", "RTX4090_Llama-3.1-8B")


def cli(*args: str, cwd: str = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "serq", *args], capture_output=True, text=True,
                          cwd=cwd)


def test_rounds_frame_matches_upstream_table():
    run = read_run(PULL1)
    f = run.frame
    assert run.kind == "rounds"
    assert len(f) == 957 and f["session"].nunique() == 96
    assert list(f.columns)[:10] == ["request", "session", "turn", "arrival", "prompt_tokens",
                                    "output_tokens", "cached_tokens", "ttft", "tpot", "e2e"]
    assert f["ttft"].mean() == pytest.approx(1.300, abs=5e-4)
    assert f["ttft"].median() == pytest.approx(0.692, abs=5e-4)
    first = f.iloc[0]  # line 1: sent 0.00238, first 0.37060, done 0.44136, 4 tokens
    assert first["ttft"] == pytest.approx(0.37059569358825684 - 0.0023794174194335938)
    assert first["tpot"] == pytest.approx((0.4413590431213379 - 0.37059569358825684) / 3)
    assert f["arrival"].iloc[0] == 0.0


def test_llmservingsim_frame_matches_its_summary():
    run = read_run(LSS)  # the directory: requests.jsonl with meta.json beside it
    f = run.frame
    assert run.kind == "llmservingsim" and len(f) == 300
    assert run.meta["engine_kwargs"]["max_num_seqs"] == 256
    # validation/summary.txt, vLLM column (ms): TTFT mean 65456.6, median 60110.9,
    # TPOT mean 32.4, latency mean 86578.3
    assert 1e3 * f["ttft"].mean() == pytest.approx(65456.6, abs=0.05)
    assert 1e3 * f["ttft"].median() == pytest.approx(60110.9, abs=0.05)
    assert 1e3 * f["tpot"].mean() == pytest.approx(32.4, abs=0.05)
    assert 1e3 * f["e2e"].mean() == pytest.approx(86578.3, abs=0.05)


def test_vllm_bench_result(tmp_path):
    p = tmp_path / "bench.json"
    p.write_text(json.dumps({
        "request_rate": "inf", "input_lens": [100, 200], "output_lens": [3, 1],
        "ttfts": [0.5, 0.25], "itls": [[0.1, 0.3], []], "errors": ["", ""]}, indent=1))
    f = read_run(str(p)).frame
    assert list(f["e2e"]) == [pytest.approx(0.9), pytest.approx(0.25)]
    assert f["tpot"].iloc[0] == pytest.approx(0.2) and math.isnan(f["tpot"].iloc[1])
    assert list(f["arrival"]) == [0.0, 0.0]


def test_csv_round_trip(tmp_path):
    f = read_run(PULL1).frame
    p = tmp_path / "run.csv"
    p.write_text(f.to_csv(index=False))
    g = read_run(str(p)).frame
    for col in ("session", "turn", "arrival", "prompt_tokens", "output_tokens", "ttft", "tpot",
                "e2e"):
        assert list(g[col]) == pytest.approx(list(f[col]), nan_ok=True)


def test_selection_scores_half_by_arrival():
    run = read_run(PULL1 + "@0.5:1")
    assert len(run.scored) == 957 - 478 and len(run.frame) == 957
    assert run.scored["arrival"].min() >= run.frame["arrival"].sort_values().iloc[477]


MALFORMED = [
    # (file name, text, the line named, a phrase of the message)
    ("r.jsonl", '{"session": 0, "turn": 1, "sent": 0, "new": 5, "out": 2, "first": 1, "done": 2}\n'
                '{"session": 0, "turn": 2, "sent": 3, "new": 5, "out": 2, "first": 4, "done": 5\n',
     2, "not valid JSON"),
    ("r.jsonl", '{"session": 0, "turn": 1, "sent": "x", "new": 5, "out": 2, "first": 1, "done": 2}\n',
     1, "`sent` is \"x\""),
    ("r.jsonl", '{"session": 0, "turn": 1, "sent": 0, "new": 5, "out": 2, "first": 1, "done": 2}\n'
                '{"session": 0, "turn": 2, "sent": 3, "new": 5, "out": 2, "first": 2, "done": 5}\n',
     2, "comes before the send"),
    ("requests.jsonl", '{"request_id": "a", "input_toks": 5, "output_toks": 2, "queued_ts": 1,'
                       ' "first_token_ts": 2, "last_token_ts": 3}\n'
                       '{"request_id": "b", "input_toks": 5, "queued_ts": 1,'
                       ' "first_token_ts": 2, "last_token_ts": 3}\n', 2, "no `output_toks`"),
    ("run.csv", "arrival,prompt_tokens,output_tokens,ttft,e2e\n0,10,2,0.1,0.2\n1,10,2,abc,0.2\n",
     3, "invalid number `abc`"),
    ("run.csv", "arrival,prompt_tokens,output_tokens,ttft,e2e\n0,10,2,0.3,0.2\n", 2,
     "comes before the first"),
    ("run.csv", "arrival,prompt_tokens,ttft,e2e\n0,10,0.3,0.2\n", 1, "no column output_tokens"),
]


@pytest.mark.parametrize("name,text,line,phrase", MALFORMED)
def test_malformed_logs_name_the_line(tmp_path, name, text, line, phrase):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(MeasuredError) as exc:
        read_run(str(p))
    msg = exc.value.format()
    assert msg.startswith(f"{p}:{line}:") and phrase in msg
    assert f"{line} | " in msg and "^" in msg and "help:" in msg


def test_vllm_bench_arrays_of_different_lengths(tmp_path):
    p = tmp_path / "bench.json"
    p.write_text(json.dumps({"input_lens": [1, 2], "output_lens": [3], "ttfts": [0.1, 0.2],
                             "itls": [[], []]}, indent=1))
    with pytest.raises(MeasuredError, match="`output_lens` has 1 entries where `ttfts` has 2"):
        read_run(str(p))


def test_trace_rows_replay_the_measured_sends():
    run = read_run(PULL1)
    rows = trace_rows(run)
    assert len(rows) == 957 + 96
    f = run.frame
    s0 = f[f["session"] == 0]
    assert rows[0] == (0, 0, 0, 0, 0.0, 0)  # session 0 arrives at the run's start
    # turn 1's think: from its last token to turn 2's send
    assert rows[1][4] == pytest.approx(s0["arrival"].iloc[1] - s0["arrival"].iloc[0]
                                       - s0["e2e"].iloc[0])
    assert rows[1][2:4] == (2004, 4)
    # the shipped trace is this function's output
    with open(os.path.join(A6000, "pull1x1_trace.csv")) as fh:
        assert fh.read() == trace_text(run)


def test_trace_command(tmp_path):
    out = tmp_path / "t.csv"
    r = cli("trace", PULL1, "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "96 sessions, 957 requests" in r.stdout
    assert out.read_text().startswith("session,turn,new,out,think,forced\n0,0,0,0,0,0\n")


def test_trace_command_malformed_writes_nothing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"session": 0, "turn": 1, "sent": 0, "new": 5, "out": 2}\n{oops}\n')
    out = tmp_path / "t.csv"
    r = cli("trace", str(bad), "-o", str(out))
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"{bad}:2:2: not valid JSON")
    assert "Traceback" not in r.stderr and not out.exists()


def test_a_bad_selection_is_refused():
    with pytest.raises(MeasuredError, match="is not A:B with 0 <= A < B <= 1"):
        read_run(PULL1 + "@0.6:0.2")


def test_validate_names_the_log_not_the_program(tmp_path):
    bad = tmp_path / "run.csv"
    bad.write_text("arrival,prompt_tokens,output_tokens,ttft,e2e\n0,10,2,x,0.2\n")
    prog = os.path.join(ROOT, "examples", "measured", "a6000_pull.sq")
    r = cli("validate", prog, "--measured", str(bad))
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"{bad}:2:8: column 4 (ttft): invalid number `x`")
