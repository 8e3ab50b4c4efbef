"""docs/report.md documents every field the reports of real runs contain.

A few programs that between them emit every part of the report (observes,
client series, gauges, claims, plain and step stages, pools with a cache,
with a lease, and with an `over_cap`) are run briefly; every key of their
JSON reports, every column header of their text reports, and the header of
every `--dump` file must be named on the page (between backticks or double
quotes).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import serq
from serq.report.dump import write_dump
from serq.report.text_report import to_text

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "report.md"

# (file or source, horizon): short runs, chosen for coverage, not for their numbers.
CLAIMS = """
stage E : step { budget 8; cost 1; }
workload { arrive batch(3); init { set big = serial == 2; } session { request; end; } }
server { prefill (8 + 4 * big); decode (3); observe done = now; }
gauge in_engine = queue(E);
claim cap_ok: every iteration of E (tokens <= 8);
claim some_full: some iteration of E (tokens == 8);
claim all_done: at end (count(done) == 3);
claim small_only given (big == 0): every iteration of E (tokens <= 8);
"""
OVER_CAP = """
pool mem { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { turn; hold mem (5 + free(mem)) { run d (1); } }
"""
RUNS = [
    ("examples/single-turn/mg1.sq", 100),
    ("examples/multi-turn/vllm.sq", 50),
    ("examples/pd-disaggregation/llmd_nixl_pull.sq", 20),
    (CLAIMS, 100),
    (OVER_CAP, 5),
]


def run(program: str, horizon: float):
    if program.endswith(".sq"):
        linked = serq.load(str(ROOT / program))
    else:
        linked = serq.load(source=program)
    return serq.run(linked, horizon=horizon, warmup=0)


@pytest.fixture(scope="module")
def reports():
    return [run(program, horizon) for program, horizon in RUNS]


@pytest.fixture(scope="module")
def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def keys_of(value, out: set[str]) -> set[str]:
    """Every dictionary key at any depth, except the names the program chose."""
    if isinstance(value, dict):
        for key, item in value.items():
            out.add(key)
            keys_of(item, out)
    elif isinstance(value, list):
        for item in value:
            keys_of(item, out)
    return out


def program_names(report) -> set[str]:
    """Observation and gauge names: they are the program's, not the report's fields."""
    d = report.to_dict()
    return set(d["observes"]) | set(d["gauges"])


def named(page: str, word: str) -> bool:
    return re.search(r"[`\"]" + re.escape(word) + r"[`\"]", page) is not None


def test_the_runs_cover_every_section(reports):
    dicts = [r.to_dict() for r in reports]
    assert any(d.get("claims") for d in dicts)
    assert any(p["over_cap"] for d in dicts for p in d["pools"])
    assert any(s["iterations"] > 0 for d in dicts for s in d["stages"])
    assert any(d["gauges"] for d in dicts)
    assert any(d["client"]["ttft"]["count"] > 0 for d in dicts)


def test_every_json_key_is_documented(reports, page):
    missing = set()
    for report in reports:
        keys = keys_of(report.to_dict(), set()) - program_names(report)
        missing |= {k for k in keys if not named(page, k)}
    assert sorted(missing) == []


def test_every_text_report_column_is_documented(reports, page):
    missing = set()
    for report in reports:
        lines = to_text(report).splitlines()
        for above, line in zip(lines, lines[1:]):
            if line and set(line.replace(" ", "")) == {"-"}:
                # `above` is a header row: its cells are separated by two spaces
                cells = [c.strip() for c in re.split(r"\s{2,}", above.strip())]
                missing |= {c for c in cells[1:] if not named(page, c)}
                if not named(page, cells[0]):
                    missing.add(cells[0])
    assert sorted(missing) == []


def test_every_dump_header_is_documented(reports, page, tmp_path):
    for number, report in enumerate(reports):
        write_dump(report, tmp_path / str(number))
    headers = {p.read_text().splitlines()[0] for p in tmp_path.rglob("*.csv")}
    assert headers == {"time,session,turn,value", "time,value",
                       "session,turn,arrival,end,prompt_tokens,output_tokens,ttft,tpot,e2e"}
    assert all(named(page, h) for h in headers)


def test_the_check_can_fail(page):
    assert named(page, "evicted_units")
    assert not named(page, "evicted_unit")
