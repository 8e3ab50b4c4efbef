"""The study layer (serq/study): the seed rule, the study report, MSER-5,
precision targets, sweeps and their result files, executors."""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
from scipy import stats as sps

import serq
import serq.study as study
from serq.report.json_report import to_json
from serq.study.grid import GridError, normalize, parse_axis, points

from study_programs import GAUGED

MG1 = "examples/single-turn/mg1.sq"

POOLED = GAUGED

def test_replication_i_is_the_run_with_seed_base_plus_i():
    """The seed rule: replication i runs with seed base + i, so `run --seed
    base+i` gives its report byte for byte."""
    s = study.replicate(source=POOLED, replications=3, seed=11, jobs=1)
    assert s.seeds == [11, 12, 13]
    prog = serq.load(source=POOLED)
    for i, rep in enumerate(s.reports):
        assert to_json(rep) == to_json(serq.run(prog, seed=11 + i))


def test_default_base_seed_is_the_programs():
    s = study.replicate(source=POOLED, replications=2, jobs=1)
    assert s.seeds == [7, 8]  # run { seed 7; }


def test_study_statistics_are_t_intervals_over_replications():
    s = study.replicate(source=POOLED, replications=4, seed=1, jobs=1)
    summary = s.summary()
    for key, pick in [(("observe", "response", "mean"), lambda r: r.observes["response"].mean),
                      (("observe", "response", "p99"), lambda r: r.observes["response"].p99),
                      (("stage", "svc", "utilization"), lambda r: r.stage("svc").utilization),
                      (("pool", "tok", "mean_used"), lambda r: r.pool("tok").mean_used),
                      (("gauge", "q", "mean"), lambda r: r.gauges["q"].mean)]:
        xs = np.array([pick(r) for r in s.reports])
        iv = summary[key]
        assert iv.n == 4
        assert iv.mean == pytest.approx(xs.mean(), rel=1e-12)
        # Student-t, 3 degrees of freedom, 95 % two-sided
        hw = sps.t.ppf(0.975, 3) * xs.std(ddof=1) / math.sqrt(4)
        assert iv.half_width == pytest.approx(hw, rel=1e-9)
    pooled = s.pooled()["observes"]["response"]
    allv = [v for r in s.reports for v in r.observes["response"].values]
    assert pooled.count == len(allv)
    assert pooled.mean == pytest.approx(np.mean(allv), rel=1e-12)


def test_study_json_embeds_each_replications_report():
    s = study.replicate(source=POOLED, replications=2, seed=3, jobs=1)
    d = json.loads(s.json())
    assert list(d) == ["study", "statistics", "pooled", "replications", "serq_simpy"]
    assert d["study"]["schema"] == "serq-simpy-study-1"
    assert d["study"]["seeds"] == [3, 4]
    for rep, report in zip(d["replications"], s.reports):
        assert rep["report"] == json.loads(to_json(report))
    row = next(x for x in d["statistics"]
               if (x["section"], x["name"], x["statistic"]) == ("stage", "svc", "utilization"))
    assert row["n"] == 2
    text = s.text()
    assert "utilization" in text and "pooled samples" in text
    frames = s.to_pandas()
    tidy = frames["replications"]
    assert set(tidy["replication"]) == {0, 1}
    assert len(frames["summary"]) == len(d["statistics"])


def test_warmup_auto_is_stored_with_its_method():
    s = study.replicate(MG1, 2, horizon=2000, jobs=1, warmup="auto", observe="response")
    assert s.warmup_choice.method == "MSER-5"
    assert all(r.warmup == s.warmup_choice.time for r in s.reports)
    d = json.loads(s.json())
    assert d["study"]["warmup_rule"]["method"] == "MSER-5"
    assert d["study"]["warmup"] == s.warmup_choice.time


def test_precision_adds_replications_until_met():
    s = study.replicate(MG1, 3, horizon=600, warmup=50, jobs=1, observe="response",
                        precision=0.15)
    p = s.precision
    assert p.mode == "replications" and p.met and p.achieved <= 0.15
    assert p.replications == s.replications >= 3
    assert s.interval("observe", "response").relative == pytest.approx(p.achieved)
    assert "precision met" in p.describe()


def test_precision_budget_spent_is_said():
    s = study.replicate(MG1, 2, horizon=300, warmup=10, jobs=1, observe="response",
                        precision=0.001, budget=4)
    assert s.replications == 4 and not s.precision.met
    assert "budget of 4 replications is spent" in s.precision.describe()


def test_precision_of_one_run_extends_the_horizon():
    s = study.replicate(MG1, 1, horizon=500, warmup=50, jobs=1, observe="response",
                        precision=0.15, max_horizon=16000)
    p = s.precision
    assert p.mode == "horizon" and s.replications == 1
    assert s.reports[0].horizon == p.horizon > 500
    assert p.met == (p.achieved <= 0.15)
    assert p.met or p.horizon == 16000
    r = s.reports[0].observes["response"]
    assert p.achieved == pytest.approx(r.ci / r.mean)


def test_grid_texts():
    assert parse_axis("lam=0.5:0.9:0.1") == ("lam", [0.5, 0.6, 0.7, 0.8, 0.9])
    assert parse_axis("max_seqs=8,16,32") == ("max_seqs", [8, 16, 32])
    assert parse_axis("n=1:7:3") == ("n", [1, 4, 7])
    g = normalize(["a=1,2", "b=0.1:0.2:0.1"])
    assert points(g) == [{"a": 1, "b": 0.1}, {"a": 1, "b": 0.2},
                         {"a": 2, "b": 0.1}, {"a": 2, "b": 0.2}]
    for bad in ("lam", "lam=", "lam=1:0:0.1", "lam=0:1", "lam=a:b:c"):
        with pytest.raises(GridError):
            parse_axis(bad)


def _small_sweep(**kw):
    return study.sweep(MG1, {"lam": [0.5, 0.7], "z": ["1", "2"]} if kw.pop("two", False)
                       else {"lam": "0.5:0.7:0.1"}, replications=2, horizon=300, warmup=20,
                       **kw)


def test_sweep_frames_and_jobs_agree():
    one = _small_sweep(jobs=1)
    two = _small_sweep(jobs=2)
    assert one.tidy.equals(two.tidy) and one.summary.equals(two.summary)
    tidy, summary = one
    assert list(tidy.columns) == ["lam", "replication", "seed", "section", "name",
                                  "statistic", "value"]
    assert sorted(set(tidy["lam"])) == [0.5, 0.6, 0.7]
    row = summary[(summary["lam"] == 0.6) & (summary["name"] == "response")
                  & (summary["statistic"] == "mean")]
    vals = tidy[(tidy["lam"] == 0.6) & (tidy["name"] == "response")
                & (tidy["statistic"] == "mean")]["value"]
    assert row["mean"].iloc[0] == pytest.approx(vals.mean())
    assert row["n"].iloc[0] == 2
    # point lam=0.6, replication 1 is the run with seed 1 + 1 and --set lam=0.6
    rep = serq.run(serq.load(MG1, sets={"lam": "0.6"}), seed=2, horizon=300, warmup=20)
    v = tidy[(tidy["lam"] == 0.6) & (tidy["replication"] == 1) & (tidy["name"] == "response")
             & (tidy["statistic"] == "p99")]["value"].iloc[0]
    assert v == rep.observes["response"].p99


def test_sweep_records_failing_points_and_goes_on(tmp_path):
    res = study.sweep(MG1, {"lam": ["0.5", "nosuch"]}, horizon=200, jobs=1, out=str(tmp_path))
    assert len(res.errors) == 1
    assert res.errors["lam"].iloc[0] == "nosuch"
    assert "nosuch" in res.errors["error"].iloc[0]
    assert set(res.tidy["lam"]) == {"0.5"}
    again = study.sweep(MG1, {"lam": ["0.5", "nosuch"]}, horizon=200, jobs=1,
                        out=str(tmp_path))
    assert again.computed == 0 and again.reused == 2
    retry = study.sweep(MG1, {"lam": ["0.5", "nosuch"]}, horizon=200, jobs=1,
                        out=str(tmp_path), retry_failed=True)
    assert retry.computed == 1


def test_sweep_results_on_disk_are_read_back_exactly(tmp_path):
    first = _small_sweep(jobs=1, out=str(tmp_path))
    assert first.computed == 6 and first.reused == 0
    files = os.listdir(tmp_path / "runs")
    assert len(files) == 6
    os.remove(tmp_path / "runs" / sorted(files)[0])
    second = _small_sweep(jobs=1, out=str(tmp_path))
    assert second.computed == 1 and second.reused == 5
    assert second.tidy.equals(first.tidy) and second.summary.equals(first.summary)
    manifest = json.loads((tmp_path / "sweep.json").read_text())
    assert manifest["grid"] == {"lam": [0.5, 0.6, 0.7]}


def test_sweep_csv_store_reads_back_exactly(tmp_path):
    from serq.study.store import Store
    from serq.study.sweeps import run_frame
    from serq.study.worker import run_outcome
    spec = study.ProgramSpec.make(MG1, horizon=200.0)
    frame = run_frame(run_outcome(spec, 1), {"lam": 0.8})
    store = Store(str(tmp_path), fmt="csv")
    store.write_run("k", frame)
    back = store.read_run(store.find("k"))
    assert len(back) == len(frame)
    for a, b in zip(back["value"], frame["value"]):
        assert a == b or (math.isnan(a) and math.isnan(b))
    assert back["error"].tolist() == [None] * len(frame)


def test_keys_follow_text_settings_and_seed():
    a = study.ProgramSpec.make(MG1, horizon=100.0)
    assert a.key(1) == study.ProgramSpec.make(MG1, horizon=100.0).key(1)
    assert a.key(1) != a.key(2)
    assert a.key(1) != a.with_sets({"lam": 0.5}).key(1)
    assert a.key(1) != study.ProgramSpec.make(MG1, horizon=200.0).key(1)
