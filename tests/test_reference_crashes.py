"""The differential runner and a reference that crashes.

pyserq is Rust; a panic reaches Python as `pyo3_runtime.PanicException`,
which is a BaseException and no Exception. The runner's driver caught only
Exception, so a panic ended its process, and the runner, finding no
answer, counted the program as one the reference does not end: a finding
against serq-simpy (generator seed 88548 against 0.1.3, where pyserq
panics with "no entry found for key" in a `serve only` guard). A crash is
now its own outcome, "reference crashes": a defect of the reference,
with nothing to compare.
"""
from __future__ import annotations

import sys
import textwrap

import differential_fuzz as df
from differential_fuzz import Outcome, classify
from oracle import requires

# generator seed 88548, its lines removed one by one while pyserq 0.1.3
# still panics
PANICS_013 = """\
stage E : step { budget 16; cost 1 + 0.01 * kv_decode + 0.005 * kv_prefill; serve only (decoders > 0 ? decoding : 1 - decoding); }
pool reqs { cap 6; preempt by (admission) requeue tail; admit via E; }
stage thk : delay;
queue P : prefill { pool kv { cap 1000; } serve ps(1); nic ps(100); prefill (n) { hold kv ((n)) { run ((n / 100)); } lease kv (inf); } }
queue D : decode { pool kv { cap 1000; } serve ps(1); nic ps(100); decode (n) { hold kv ((n)) { run ((n / 100)); } } decode (n) from src { hold kv ((n)) { transfer ((n)) from src to kv ((n)); run ((n / 100)); } } }
D pull P latency 0.25 share bottleneck;
workload { arrive batch(2); init { set u = serial == 0 ? 2 : 1; } session { turn; request; run thk ((0.5)); turn; request; run thk ((1)); turn; request; end; } }
server {
  hold reqs ((min(u, 2) + 1)) { grow reqs ((1)); run E prefill ((9)); run E decode ((1)); }
  P.prefill (200);
  D.decode (200) from P;
}
run { horizon 30; }
"""

# a stand-in for pyserq whose run panics on a program that says so
_FAKE_PYSERQ = textwrap.dedent("""\
    class PanicException(BaseException):
        pass

    class _Report:
        def json(self):
            return '{"events": 1}'

    def compile(source, **kw):
        return source

    def run(prog):
        if "panic" in prog:
            raise PanicException("no entry found for key")
        return _Report()
    """)


def _fake_reference(monkeypatch, tmp_path, driver=None):
    (tmp_path / "pyserq.py").write_text(_FAKE_PYSERQ, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(df, "interpreter", lambda _v: sys.executable)
    monkeypatch.setattr(df, "REF_BOUND", 10.0)
    if driver is not None:
        monkeypatch.setattr(df, "_DRIVER", driver)


def test_a_panic_is_a_crash_and_the_next_program_still_runs(monkeypatch, tmp_path):
    _fake_reference(monkeypatch, tmp_path)
    outs = df.run_reference_batch("0.1.3", [{"source": "panic"}, {"source": "fine"}])
    assert [(o.status, o.message) for o in outs] == [
        ("crash", "panic: no entry found for key"), ("report", "")]
    assert outs[1].report == {"events": 1}


def test_a_process_that_ends_without_an_answer_is_a_crash(monkeypatch, tmp_path):
    _fake_reference(monkeypatch, tmp_path, driver="import sys\nsys.exit(3)\n")
    (out,) = df.run_reference_batch("0.1.3", [{"source": "x"}])
    assert (out.status, out.message) == ("crash", "the reference's process ended without an answer")


def test_a_crash_is_no_finding_unless_serq_simpy_does_not_end():
    crash = Outcome("crash", message="panic: no entry found for key")
    assert classify(Outcome("report", {"events": 1}), crash, "") == \
        ("reference crashes", ["panic: no entry found for key"])
    assert classify(Outcome("stopped", message="x"), crash, "")[0] == "reference crashes"
    assert classify(Outcome("hang", message="bound"), crash, "")[0] == \
        "finding: serq-simpy does not end"


@requires("0.1.3")
def test_the_panic_of_generator_seed_88548():
    """pyserq 0.1.3 panics; serq-simpy runs the program to its horizon (both
    sessions end up waiting in `reqs`: the run reports them stuck)."""
    job = df.job_of(PANICS_013, "0.1.3")
    (ref,) = df.run_reference_batch("0.1.3", [job])
    assert (ref.status, ref.message) == ("crash", "panic: no entry found for key")
    ours = df.run_ours(PANICS_013, job["horizon"], job["trace"], job["warmup"])
    assert ours.status == "report" and ours.report["ended"] == 0
    assert classify(ours, ref, PANICS_013)[0] == "reference crashes"
