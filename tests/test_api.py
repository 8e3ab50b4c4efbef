"""The Python API (issue 6): `serq.load`/`serq.compile`, `serq.run`, the
`Report`'s attributes and methods (pyserq's names), and `to_pandas()`.

The key-for-key test compares the API's `Report` with the JSON that
`python -m serq.cli run --json` prints for the same program and settings.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap

import pytest

import serq
import serq.policies
from serq.report.frames import SECTIONS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# observations, a client series, gauges, claims, a stage array, a step engine
# and pools (one an array), so that every section of the report has rows
PROGRAM = """
let K = 2;
pool reqs { cap 2; admit via engine; }
pool kv { cap 3000; block 16; evict lru; preempt lifo; }
pool side[K] { cap 1; }
stage engine : step { budget 256; cost 0.002 + tokens * 0.0001; memory kv; }
stage s[K] : fifo;
gauge busy = queue(s[0]) + queue(s[1]);
claim small_steps: every iteration of engine (tokens <= 256);
claim never_big: some iteration of engine (tokens > 256);
workload {
  arrive poisson(3);
  hidden o;
  turn { set n = floor(~uniform(100, 1200)); set o = 1 + floor(~exp(20)); }
  session { turn; request; end; }
}
server {
  set t0 = now;
  set j = serial - 2 * floor(serial / 2);
  hold side[j] (1) { run s[j] (~exp(0.2)); }
  hold reqs (1), kv (n) {
    run engine prefill (n) growing kv;
    observe ttft = now - t0;
    run engine decode (o - 1) growing kv;
  } cache (n + o);
  observe response = now - t0;
}
run { horizon 200; warmup 20; }
"""


@pytest.fixture(scope="module")
def program_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("api") / "program.sq"
    path.write_text(textwrap.dedent(PROGRAM), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def report(program_file):
    return serq.run(serq.load(str(program_file)), seed=5)


@pytest.fixture(scope="module")
def cli_json(program_file):
    res = subprocess.run([sys.executable, "-m", "serq.cli", "run", str(program_file), "--json",
                          "--seed", "5"], capture_output=True, text=True, cwd=ROOT,
                         timeout=300, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _same(json_value, attr_value, where: str) -> None:
    """A JSON value against the attribute: null ↔ a non-finite number."""
    if json_value is None and isinstance(attr_value, float):
        assert not math.isfinite(attr_value), where
    elif isinstance(json_value, float) or isinstance(attr_value, float):
        assert json_value == attr_value, where  # the JSON writes round-trip digits
    else:
        assert json_value == attr_value, where


def _row(json_row: dict, obj, where: str) -> None:
    for key, value in json_row.items():
        assert hasattr(obj, key), f"{where}: no attribute {key}"
        attr = getattr(obj, key)
        if key == "over_cap" and value is not None:
            attr = {"queue": attr[0], "need": attr[1]}
        _same(value, attr, f"{where}.{key}")


def test_report_and_cli_json_agree_key_for_key(report, cli_json):
    assert cli_json["claims"] and cli_json["gauges"] and cli_json["pools"]  # every section
    assert len(cli_json["stages"]) == 3 and len(cli_json["pools"]) == 4
    assert set(vars(type(report))) >= {"observe", "json", "to_pandas"}
    for key, value in cli_json.items():
        assert hasattr(report, key), f"the Report has no attribute `{key}`"
        attr = getattr(report, key)
        if key in ("observes", "client", "gauges"):
            assert list(attr) == list(value), key  # same names, same order
            for name, stats in value.items():
                _row(stats, attr[name], f"{key}[{name}]")
                assert attr[name].name == name
        elif key in ("claims", "stages", "pools"):
            assert len(attr) == len(value), key
            for k, (row_json, row) in enumerate(zip(value, attr)):
                _row(row_json, row, f"{key}[{k}]")
        elif key == "serq_simpy":
            assert attr == value
        elif key == "throughput":  # issue 25: an object of three rates
            _row(value, attr, key)
        elif key == "serq_version":
            assert attr == value == serq.__version__
        else:
            _same(value, attr, key)
    assert json.loads(report.json()) == cli_json  # the same run, the same report


def test_observe_samples_and_statistics(report):
    o = report.observe("ttft")
    assert o.name == "ttft" and o.count == len(o.samples) > 100
    assert len(o.times) == len(o.sessions) == len(o.turns) == o.count
    assert all(t >= report.warmup for t in o.times)
    assert o.times == sorted(o.times)
    assert o.samples is o.values
    assert o.mean == pytest.approx(math.fsum(o.samples) / o.count, rel=1e-12)
    assert 0 < o.ci < o.mean  # a batch-means half-width (Part 06 §3.1)
    assert o.p99 == sorted(o.samples)[math.ceil(0.99 * o.count) - 1]  # nearest rank
    assert report.observe("nothing") is None  # as pyserq
    assert report.observe("tpot") is None and report.client["tpot"].count > 0  # client only


def test_lookup_methods_follow_pyserq(report):
    assert report.stage("s").label == "s[0]" and report.stage("s", 1).label == "s[1]"
    assert [r.index for r in report.stages_named("s")] == [0, 1]
    assert [r.index for r in report.pools_named("side")] == [0, 1]
    assert report.pool("kv").name == "kv" and report.pool("nope") is None
    assert report.gauge("busy").name == "busy" and report.gauge("nope") is None
    g = report.gauge("busy")
    assert g.times[0] == 0 and len(g.times) == len(g.values) == len(g.points)
    assert report.claim("small_steps").result == "holds"
    assert report.claim("never_big").result == "not_witnessed"
    assert report.claim("nope") is None


def test_compile_is_load_with_pyserq_signature(program_file):
    a = serq.compile(str(program_file), seed=9, horizon=50, warmup=5)
    b = serq.load(str(program_file), seed=9, horizon=50, warmup=5)
    assert serq.run(a).json() == serq.run(b).json()
    assert serq.run(a).seed == 9 and serq.run(a).horizon == 50
    assert serq.run(a, seed=2).json() == serq.run(b, seed=2).json()


def test_run_settings_errors_are_clear(program_file):
    prog = serq.load(str(program_file))
    with pytest.raises(serq.core.errors.LinkError, match="warmup must be below the horizon"):
        serq.run(prog, horizon=10, warmup=20)


# ---------------------------------------------------------------- pandas

def test_to_pandas_one_tidy_frame_per_section(report):
    pytest.importorskip("pandas")
    frames = report.to_pandas()
    assert list(frames) == list(SECTIONS)
    obs = frames["observations"]
    assert list(obs.columns) == ["series", "name", "count", "mean", "ci", "cv2", "p99",
                                 "p50", "p90", "p95"]  # (issue 25: the percentiles)
    row = obs[(obs.series == "observe") & (obs.name == "ttft")].iloc[0]
    assert row["count"] == report.observe("ttft").count
    assert row["mean"] == report.observe("ttft").mean
    samples = frames["samples"]
    assert list(samples.columns) == ["series", "name", "time", "session", "turn", "value"]
    assert len(samples) == sum(obs["count"])  # one row per sample of every series
    ttft = samples[(samples.series == "observe") & (samples.name == "ttft")]
    assert list(ttft.value) == report.observe("ttft").samples
    assert ttft.value.mean() == pytest.approx(report.observe("ttft").mean, rel=1e-12)
    stages = frames["stages"]
    assert list(stages.name) == ["engine", "s", "s"]
    assert list(stages["index"].astype(object).where(stages["index"].notna(), None)) \
        == [None, 0, 1]
    assert stages.loc[0, "iterations"] == report.stage("engine").iterations
    pools = frames["pools"]
    assert {"over_cap_queue", "over_cap_need", "preemptions"} <= set(pools.columns)
    assert list(pools.name) == ["reqs", "kv", "side", "side"]
    assert list(frames["gauges"].columns) == ["name", "mean", "ci", "min", "max"]
    assert list(frames["claims"].name) == ["small_steps", "never_big"]
    assert frames["claims"].attrs["seed"] == 5
    assert report.to_pandas("stages").equals(stages)
    with pytest.raises(ValueError, match="no section `nope`"):
        report.to_pandas("nope")


def test_to_pandas_without_pandas_says_how_to_install(report, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError
    with pytest.raises(ImportError, match=r"pip install -e '\.\[pandas\]'"):
        report.to_pandas()


def test_a_policy_binds_every_member_of_an_array(program_file):
    seen = set()

    class Watch(serq.policies.Pool):
        def select_candidate(self):
            seen.add(self.label)
            return super().select_candidate()

    prog = serq.load(str(program_file))
    rep = serq.run(prog, seed=5, horizon=60, policies={"side": Watch})
    assert seen == {"side[0]", "side[1]"}
    assert rep.json() == serq.run(prog, seed=5, horizon=60).json()


def test_readme_python_api_blocks_run():
    # the ```python blocks of README.md's "Python API" section, as written
    pytest.importorskip("pandas")
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    section = readme.split("## Python API", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    assert len(blocks) == 2
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        scope: dict = {}
        for block in blocks:
            exec(compile(block, "README.md", "exec"), scope)  # noqa: S102
    finally:
        os.chdir(cwd)
    assert scope["response"].count > 1000
    assert set(scope["frames"]) == set(SECTIONS)
    assert scope["report"].observe("ttft_short").count > 0
