"""Part 06's pool rows on Part 03's programs, end to end: §1's program D
(and §5.4's W-3 on it), §9.5's `growing_*` observables and §10's text
report (the pool table, its `rej`, `stuck` and `over` lines, and the exit
status). The helpers and the §12 programs come from test_p03_examples.py,
whose rules for expected numbers hold here too: each names the spec
section it comes from, and each program was run in pyserq 0.1.3 (seed 1)
while it was written and printed the numbers asserted; the §9.5 growing
cases were verified in pyserq 0.1.5 (fn main text, seed 1), since 0.1.3
does not report `growing_*`."""
from __future__ import annotations

import math
import shutil
import subprocess
import sys
import textwrap

import pytest

from serq.report.json_report import to_dict

from e2e_util import assert_close, run
from oracle import requires, run_reference
from test_p03_examples import (P3_OVER_CAP, P3_REJECT, P9, P12, assert_obs, assert_pool,
                               json_pool, obs, pool)
from test_p06_reports import PROGRAM_D  # Part 06 §1's program D

# ---------------------------------------------------------------- Part 06 §1 and §5.4: program D


def test_p06_1_program_d_warmup_0():
    rep = run(PROGRAM_D)  # Part 06 §1 check: program D, horizon 20, warm-up 0
    svc = rep.stage("svc")
    assert svc.completed == 4  # §1: completed 4
    assert_close(svc.mean_wait, 0.5, what="svc.mean_wait")  # §1: 0.5
    assert_close(svc.mean_service, 2.5, what="svc.mean_service")  # §1: 2.5
    # §1: slots admissions 4, mean_wait 0.25
    assert_pool(pool(rep, "slots"), "D", admissions=4, mean_wait=0.25)


def test_p06_1_program_d_warmup_1_5():
    rep = run(PROGRAM_D, warmup=1.5)  # Part 06 §1: warm-up 1.5
    svc = rep.stage("svc")
    # §1: the completion at t = 1 is dropped: completed 3, mean_wait 0.6667, mean_service 3
    assert svc.completed == 3
    assert_close(svc.mean_wait, 2 / 3, what="svc.mean_wait")
    assert_close(svc.mean_service, 3, what="svc.mean_service")
    # §1: the pool's only waited admission (at t = 1) is dropped: mean_wait null, but
    # admissions stays 4
    row = pool(rep, "slots")
    assert_pool(row, "D warm-up 1.5", mean_wait=None, admissions=4)
    assert json_pool(rep, "slots")["mean_wait"] is None
    # §1: every time average is over [1.5, 20]: mean_live = 11/18.5 = 0.594595
    assert_close(rep.mean_live, 11 / 18.5, what="mean_live")
    # verified 0.1.3: slots mean_used = mean_holders = 7.5/18.5, mean_queue 0
    assert_pool(row, "D warm-up 1.5", mean_used=7.5 / 18.5, mean_holders=7.5 / 18.5,
                mean_queue=0)


def test_p06_5_4_w3_program_d():
    rep = run(PROGRAM_D)  # Part 06 §5.4 W-3 (0.1.3, warm-up 0), horizon 20
    assert_close(rep.mean_live, 0.85, what="mean_live")  # (2+3+5+7)/20
    svc, shared = rep.stage("svc"), rep.stage("shared")
    assert_close(svc.mean_number, 0.6, what="svc.mean_number")
    assert_close(svc.utilization, 0.3, what="svc.utilization")
    assert_close(svc.mean_wait, 0.5, what="svc.mean_wait")
    assert_close(svc.mean_service, 2.5, what="svc.mean_service")
    assert_close(shared.utilization, 0.2, what="shared.utilization")
    assert_close(shared.mean_number, 0.2, what="shared.mean_number")
    # W-3: slots.mean_used = mean_holders 0.6, mean_queue 0.05, mean_wait 0.25
    assert_pool(pool(rep, "slots"), "W-3", mean_used=0.6, mean_holders=0.6, mean_queue=0.05,
                mean_wait=0.25, admissions=4, mean_cached=0)
    # W-3: response count 4, mean 4.25, cv2 0.27220299884659743, p99 7, ci null
    r = to_dict(rep)["observes"]["response"]
    assert r["count"] == 4
    assert_close(r["mean"], 4.25, what="response.mean")
    assert_close(r["cv2"], 0.27220299884659743, what="response.cv2")
    assert_close(r["p99"], 7, what="response.p99")
    assert r["ci"] is None
    assert_obs(rep, "response", [(0, 2, 2), (1, 3, 3), (2, 5, 5), (3, 7, 7)])
    # §5.4: used(slots) never shows the transient 2 at t = 1: change points (0,3) (2,2)
    # (4,1) (6,0); §7: mean 0.6, ci 0.4896763141418817 (window means 3,3,2,2,1,1, 14 zeros)
    g = rep.gauges["used_slots"]
    assert [(t, v) for t, v in g.points] == [(0, 3), (2, 2), (4, 1), (6, 0)]
    assert_close(g.mean, 0.6, what="used_slots.mean")
    assert_close(g.ci, 0.4896763141418817, what="used_slots.ci")
    assert g.min == 0 and g.max == 3  # verified 0.1.3
    # verified 0.1.3: busy_svc mean 0.5 ci 0.38712311723111664; q_svc mean 0.6
    assert_close(rep.gauges["busy_svc"].mean, 0.5, what="busy_svc.mean")
    assert_close(rep.gauges["busy_svc"].ci, 0.38712311723111664, what="busy_svc.ci")
    assert_close(rep.gauges["q_svc"].mean, 0.6, what="q_svc.mean")


# ---------------------------------------------------------------- Part 06 §9.5 growing_*

# Two sessions each holding 4 of a cap-10 pool and both growing by 4 (§9.5): 8 + 4 > 10,
# both stall; every holder is itself waiting to grow.
GROW_BOTH = """
pool mem { cap 10; }
stage svc : delay;
workload { arrive batch(2); session { request; } }
server {
  hold mem (4) { run svc (1); grow mem (4); observe grown = now; run svc (1); }
  observe done = now;
}
"""

GROW_BOTH_MAIN = """
fn main() {
  pool mem { cap 10; }
  stage svc : delay;
  workload { arrive batch(2); }
  server {
    hold mem (cost(mem, 4)) { run svc (cost(svc, 1)); grow mem (cost(mem, 4)); observe grown = now; run svc (cost(svc, 1)); }
    observe done = now;
  }
}
"""

# One grower behind a holder still running (§9.5): session 0 holds 4 and runs until 100;
# session 1 holds 4 and grows by 4 at 1 (8 + 4 > 10): it waits for session 0.
GROW_ONE = """
pool mem { cap 10; }
stage svc : delay;
workload { arrive batch(2); session { request; } }
server {
  hold mem (4) { run svc (serial == 0 ? 100 : 1); grow mem (serial == 0 ? 0 : 4); observe grown = now; run svc (1); }
  observe done = now;
}
"""

GROW_ONE_MAIN = """
fn main() {
  pool mem { cap 10; }
  stage svc : delay;
  workload { arrive batch(2); }
  server {
    hold mem (cost(mem, 4)) { run svc (cost(svc, serial == 0 ? 100 : 1)); grow mem (cost(mem, serial == 0 ? 0 : 4)); observe grown = now; run svc (cost(svc, 1)); }
    observe done = now;
  }
}
"""


def test_p06_9_5_growing_stalled_two_growers():
    rep = run(GROW_BOTH, horizon=20)
    row = pool(rep, "mem")
    # §9.5: "two sessions each holding 4 of a cap-10 pool and both growing by 4 report
    # growing_at_end 2, growing_stalled true" (verified 0.1.5, fn main text, seed 1, horizon 20)
    assert_pool(row, "growing both", growing_at_end=2, growing_stalled=True)
    # verified 0.1.3 and 0.1.5: mean_used 8, mean_holders 2, admissions 2, nothing observed
    assert_pool(row, "growing both", mean_used=8, mean_holders=2, admissions=2, preemptions=0)
    assert obs(rep, "grown") == [] and obs(rep, "done") == []
    j = json_pool(rep, "mem")
    assert j["growing_at_end"] == 2 and j["growing_stalled"] is True


def test_p06_9_5_growing_behind_running_holder():
    rep = run(GROW_ONE, horizon=20)
    row = pool(rep, "mem")
    # §9.5: "one grower behind a holder still running reports 1, false" (verified 0.1.5)
    assert_pool(row, "growing one", growing_at_end=1, growing_stalled=False)
    assert_pool(row, "growing one", mean_used=8, mean_holders=2, admissions=2)
    j = json_pool(rep, "mem")
    assert j["growing_at_end"] == 1 and j["growing_stalled"] is False


@requires("0.1.5")
@pytest.mark.parametrize("flat, main, at_end, stalled", [
    (GROW_BOTH, GROW_BOTH_MAIN, 2, True),
    (GROW_ONE, GROW_ONE_MAIN, 1, False),
], ids=["two_growers", "one_grower"])
def test_p06_9_5_growing_against_015(flat, main, at_end, stalled):
    # The fn-main text in pyserq 0.1.5 reports the §9.5 numbers; serq-simpy's flat text must
    # give the same pool row (0.1.5 counts a turn per server run, so only the pool row and
    # the stage rows are compared).
    ref = run_reference(main, "0.1.5", horizon=20)
    (rp,) = ref["pools"]
    assert (rp["growing_at_end"], rp["growing_stalled"]) == (at_end, stalled)
    mine = json_pool(run(flat, horizon=20), "mem")
    for k, v in rp.items():
        if isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool)):
            assert math.isclose(mine[k], v, rel_tol=1e-9), f"{k}: {mine[k]} != {v}"
        else:
            assert mine[k] == v, f"{k}: {mine[k]!r} != {v!r}"


# ---------------------------------------------------------------- Part 06 §10 text report

_SCRIPT = shutil.which("serq-simpy")


def cli(*args, cwd=None, timeout=300):
    cmd = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "serq.cli"]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                          encoding="utf-8", cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return p


def pool_section(stdout):
    """The lines from the pool table's header to the next blank line (the table, then
    the stuck/rej/over lines, then idle lines; the warnings follow a blank line)."""
    lines = stdout.rstrip("\n").split("\n")
    starts = [i for i, l in enumerate(lines) if l.startswith("pool ")]
    assert len(starts) == 1, f"expected one pool table in:\n{stdout}"
    i = starts[0]
    assert lines[i - 1] == "", "the pool section is preceded by one blank line (§10)"
    rest = lines[i:]
    return rest[:rest.index("")] if "" in rest else rest


# the text report writes figures with the significant digits they need (issue 13)
HEADER = "pool  used  cached  queue  holders  wait  admits  evict(n)  evict(u)  preempt  spill  rej  stuck"
RULE = "----  ----  ------  -----  -------  ----  ------  --------  --------  -------  -----  ---  -----"

STUCK = """
pool mem { cap 10; preempt lifo; }
stage svc : delay;
workload { arrive batch(1); session { request; } }
server {
  hold mem (6) { observe adm = now; run svc (1); grow mem (6); observe grown = now; }
  observe done = now;
}
"""


def test_p06_10_pool_table_p12(tmp_path):
    f = write(tmp_path, "p12.sq", P12)
    out = cli("run", f, "--horizon", 10)
    assert out.returncode == 0, out.stderr
    # §10: pool label, used, cached, queue, holders, wait (4 significant digits), admits,
    # evict(n), evict(u), preempt, spill, rej, stuck; widths = widest cell, two spaces,
    # first column left, others right. Numbers: Part 03 §12 P-12.
    assert pool_section(out.stdout) == [
        HEADER,
        RULE,
        "P      3.6     2.4    0.3      0.6   1.5       2         1         6        0      0    0      0",
    ]
    first = out.stdout.split("\n", 1)[0]
    assert first.startswith("run: horizon 10 end 10 warmup 0 seed 1 events ")
    # verified 0.1.3: 2 arrivals, 2 ended, mean live 0.9 (§10: 3 decimals)
    assert first.endswith(" arrivals 2 ended 2 turns 0 mean live 0.900")


def test_p06_10_pool_table_nan_wait(tmp_path):
    f = write(tmp_path, "p12.sq", P12)
    out = cli("run", f, "--horizon", 10, "--warmup", 4)
    assert out.returncode == 0, out.stderr
    # an undefined figure prints as `–` (mean_wait null with warm-up 4, Part 03 §12 P-12)
    assert pool_section(out.stdout) == [
        HEADER,
        RULE,
        "P        2       4      0   0.3333     –       2         1         6        0      0    0      0",
    ]


def test_p06_10_pool_table_two_pools(tmp_path):
    f = write(tmp_path, "p9.sq", P9)
    out = cli("run", f, "--horizon", 20)
    assert out.returncode == 0, out.stderr
    # §10: one row per pool in declaration order (numbers: P-9, verified 0.1.3)
    assert pool_section(out.stdout) == [
        HEADER,
        RULE,
        "P        5      15      0      0.5     0       2         0         0        0      0    0      0",
        "Q      0.6     3.2      0     0.05     0       1         0         0        0      0    0      0",
    ]


def test_p06_10_rej_line(tmp_path):
    f = write(tmp_path, "p3.sq", P3_REJECT)
    out = cli("run", f, "--horizon", 20)
    assert out.returncode == 0, out.stderr  # §11.3: rejection is not an error
    # §10: if rejected > 0:
    # "rej: N session(s) ended at pool `LABEL` asking for more than its cap" (P-3: rejected 2)
    assert pool_section(out.stdout) == [
        HEADER,
        RULE,
        "mem    0.2       0      0     0.05     0       1         0         0        0      0    2      0",
        "rej: 2 session(s) ended at pool `mem` asking for more than its cap",
    ]


def test_p06_10_stuck_line_and_exit_status(tmp_path):
    # One session whose hold can never fit its growth (6 + 6 > 10) under preempt lifo: it
    # preempts itself every time unit. Verified 0.1.3 (horizon 5): admissions 6,
    # preemptions 5, stuck 1, mean_used 6, mean_holders 1.
    f = write(tmp_path, "stuck.sq", STUCK)
    out = cli("run", f, "--horizon", 5)
    # §11.3: `run` finishes with a stuck session: exit 1, the report printed first
    assert out.returncode == 1, (out.returncode, out.stderr)
    assert out.stdout.startswith("run: horizon 5 end 5 warmup 0 seed 1 events ")
    assert pool_section(out.stdout) == [
        HEADER,
        RULE,
        "mem      6       0      0        1     0       6         0         0        5      0    0      1",
        "stuck: 1 session(s) preempted again at pool `mem` without passing the position of "
        "their previous preemption",
    ]


def test_p03_stuck_counters_api():
    rep = run(STUCK, horizon=5)  # Part 03 §7.5; numbers verified 0.1.3 (seed 1)
    assert_pool(pool(rep, "mem"), "stuck", admissions=6, preemptions=5, stuck=1, mean_used=6,
                mean_holders=1, mean_wait=0)
    assert_obs(rep, "adm", [(0, t, t) for t in (0, 1, 2, 3, 4, 5)])
    assert obs(rep, "grown") == [] and obs(rep, "done") == []


def test_p06_10_over_line(tmp_path):
    f = write(tmp_path, "p3b.sq", P3_OVER_CAP)
    out = cli("run", f, "--horizon", 20)
    assert out.returncode == 0, out.stderr  # §11.3: over_cap does not change the status
    sec = pool_section(out.stdout)
    assert sec[:3] == [
        HEADER,
        RULE,
        "mem      0       0      2        0     –       0         0         0        0      0    0      0",
    ]
    # §10: an `over:` line naming the waiting queue's pool, this pool and the amount (its
    # wording is not normative)
    assert len(sec) == 4 and sec[3].startswith("over:"), sec
    assert "mem" in sec[3] and "204" in sec[3]


def test_p06_9_5_json_over_cap_via_cli(tmp_path):
    import json
    f = write(tmp_path, "p3b.sq", P3_OVER_CAP)
    out = cli("run", f, "--horizon", 20, "--json")
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    (p,) = rep["pools"]
    # Part 06 §9.5 key order, and Part 03 §12 P-3's values
    assert list(p) == ["name", "index", "mean_used", "mean_cached", "mean_queue",
                       "mean_holders", "mean_wait", "admissions", "evicted_entries",
                       "evicted_units", "preemptions", "spills", "rejected", "stuck",
                       "over_cap", "growing_at_end", "growing_stalled"]
    assert p["over_cap"] == {"queue": "mem", "need": 204}
    assert p["mean_wait"] is None and p["admissions"] == 0 and p["mean_queue"] == 2
    assert p["index"] is None
