"""Differential-test helper: run the pyserq reference wheel in a subprocess.

The reference implementation (``pyserq``, Rust in a wheel) exists in three
versions that speak different dialects (language reference, Part 01 §10):

* ``0.1.3`` — flat layout, ``run { … }`` block, shapes K/R/N, ``--set`` on
  any ``let``; the dialect of the seeds;
* ``0.1.4`` — ``fn main() { … }``, ``std/args``, ``cost(…)`` amounts, shape
  T, no ``run`` block (pass ``horizon=``);
* ``0.1.5`` — as 0.1.4, ``if`` instead of ``branch``; its random streams are
  the ones serq-simpy follows (Part 07), so stochastic programs can be
  compared *exactly* only against 0.1.5.

Each version lives in its own interpreter, so every call runs a short
driver script in a subprocess of the interpreter that has that version and
returns the parsed ``--json`` report.

Locating an interpreter for version ``0.1.X`` (first match wins; every
candidate is probed once and must really import that pyserq version):

1. ``$SERQ_ORACLE_01X`` — path to a python that has it (e.g. printed by
   ``scripts/install_oracles.sh``);
2. ``<repo>/.oracle/pyserq-0.1.X/bin/python`` (the default location of
   ``scripts/install_oracles.sh``) if it exists;
3. the current interpreter, if it can ``import pyserq`` at that version.

Usage in a test module::

    import pytest
    from oracle import available, run_reference, requires, compare_reports

    @requires("0.1.3")
    def test_p02_w1_against_reference():
        ref = run_reference(SOURCE, "0.1.3", horizon=10)
        assert ref["observes"]["response"]["mean"] == 3

``requires(v)`` marks the test ``@pytest.mark.oracle`` and skips it when
version ``v`` is not available. Seeds: in 0.1.3/0.1.4 the session streams
of seed ``s`` are those of seed ``s + 1`` shifted by one serial (Part 07
§9.2), so replications over consecutive seeds are correlated there; use
0.1.5 (or widely spaced seeds and short runs) for statistical comparisons.
"""

from __future__ import annotations

import functools
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = [
    "VERSIONS",
    "OracleError",
    "available",
    "interpreter",
    "describe",
    "run_reference",
    "requires",
    "compare_reports",
    "assert_reports_match",
    "assert_samples_match",
]

VERSIONS = ("0.1.3", "0.1.4", "0.1.5")

REPO_ROOT = Path(__file__).resolve().parent.parent

# Fields whose value is an implementation's own and never compared
# (Part 06 §9.1 and §9.7).
UNCOMPARED = ("serq_version", "events", "serq_simpy")

_DEFAULT_TIMEOUT = 900.0


class OracleError(RuntimeError):
    """The reference refused the program or stopped the run.

    ``message`` is the reference's own text (``str`` of its ``ValueError``:
    ``LINE:COL: message`` plus the source excerpt for load errors, the
    run-time message otherwise); ``stage`` is ``"compile"`` or ``"run"``.
    """

    def __init__(self, message: str, stage: str, version: str):
        super().__init__(f"pyserq {version} ({stage}): {message}")
        self.message = message
        self.stage = stage
        self.version = version


# --------------------------------------------------------------------------
# Locating interpreters


def _normalise(version: str) -> str:
    """Accept "0.1.3", "013", "13", "v0.1.3"; return "0.1.3"."""
    v = str(version).strip().lstrip("vV")
    if v in VERSIONS:
        return v
    digits = v.replace(".", "")
    if digits.isdigit():
        digits = digits.lstrip("0")
        if len(digits) == 2 and digits[0] == "1":
            cand = f"0.1.{digits[1]}"
            if cand in VERSIONS:
                return cand
    raise ValueError(f"unknown pyserq version {version!r}; expected one of {', '.join(VERSIONS)}")


def _tag(version: str) -> str:
    """"0.1.3" -> "013"."""
    return version.replace(".", "")


_PROBE = "import pyserq, sys; sys.stdout.write(pyserq.__version__)"


@functools.lru_cache(maxsize=None)
def _probe(python: str) -> str | None:
    """The pyserq version importable by ``python``, or None."""
    try:
        out = subprocess.run(
            [python, "-c", _PROBE],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def _candidates(version: str) -> list[tuple[str, str]]:
    tag = _tag(version)
    cands: list[tuple[str, str]] = []
    env = os.environ.get(f"SERQ_ORACLE_{tag}")
    if env:
        cands.append((f"$SERQ_ORACLE_{tag}", env))
    local = REPO_ROOT / ".oracle" / f"pyserq-{version}" / "bin" / "python"
    if local.exists():
        cands.append((".oracle", str(local)))
    cands.append(("current interpreter", sys.executable))
    return cands


@functools.lru_cache(maxsize=None)
def _locate(version: str) -> tuple[str | None, tuple[str, ...]]:
    notes = []
    for label, python in _candidates(version):
        found = _probe(python)
        if found == version:
            return python, tuple(notes)
        notes.append(f"{label} ({python}): " + (f"has pyserq {found}" if found else "no pyserq"))
    return None, tuple(notes)


def interpreter(version: str) -> str | None:
    """Path of a python that imports pyserq ``version``, or None."""
    return _locate(_normalise(version))[0]


def available(version: str) -> bool:
    """Whether pyserq ``version`` can be run (see the module docstring)."""
    try:
        return interpreter(version) is not None
    except ValueError:
        return False


def describe(version: str) -> str:
    """One line saying which interpreter runs ``version`` or why none does."""
    v = _normalise(version)
    python, notes = _locate(v)
    if python:
        return f"pyserq {v}: {python}"
    return (
        f"pyserq {v} not available (set SERQ_ORACLE_{_tag(v)} or run "
        f"scripts/install_oracles.sh); tried: " + "; ".join(notes)
    )


def requires(version: str):
    """Decorator: mark a test ``oracle`` and skip it without ``version``."""
    import pytest  # only needed by tests

    v = _normalise(version)
    skip = pytest.mark.skipif(not available(v), reason=describe(v))

    def decorate(fn):
        return pytest.mark.oracle(skip(fn))

    return decorate


# --------------------------------------------------------------------------
# Running the reference

_DRIVER = r"""
import json, math, os, sys
req = json.loads(sys.stdin.read())
import pyserq

def out(obj):
    sys.stdout.write("\n" + json.dumps(obj) + "\n")
    sys.stdout.flush()

if pyserq.__version__ != req["version"]:
    out({"ok": False, "stage": "probe",
         "error": "this interpreter has pyserq %s, not %s" % (pyserq.__version__, req["version"])})
    sys.exit(0)

kw = {}
for k in ("seed", "horizon", "warmup", "arrivals", "trace"):
    if req.get(k) is not None:
        kw[k] = req[k]
if req.get("sets"):
    kw["sets"] = req["sets"]
if req.get("defs"):
    kw["defs"] = req["defs"]
if req.get("path") is not None:
    kw["path"] = req["path"]
else:
    kw["source"] = req["source"]
try:
    prog = pyserq.compile(**kw)
except Exception as e:
    out({"ok": False, "stage": "compile", "error": str(e)})
    sys.exit(0)
try:
    rep = pyserq.run(prog)
except Exception as e:
    out({"ok": False, "stage": "run", "error": str(e)})
    sys.exit(0)
except BaseException as e:  # a Rust panic (PanicException is no Exception)
    out({"ok": False, "stage": "panic", "error": str(e)})
    sys.exit(0)
res = {"ok": True, "report": json.loads(rep.json())}
if req.get("samples"):
    obs = {}
    for name, o in rep.observes.items():
        obs[name] = {"values": list(o.samples), "times": list(o.times),
                     "sessions": list(o.sessions), "turns": list(o.turns)}
    gauges = {}
    for name, g in rep.gauges.items():
        gauges[name] = {"times": list(g.times), "values": list(g.values)}
    res["samples"] = {"observes": obs, "gauges": gauges}
out(res)
"""


def _setting(value: Any) -> Any:
    """A ``sets``/``defs`` value as pyserq takes it: expression text."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    return str(value)


def run_reference(
    source: str | None,
    version: str,
    *,
    seed: int | None = 1,
    horizon: float | None = None,
    warmup: float | None = None,
    arrivals: int | None = None,
    sets: Mapping[str, Any] | None = None,
    defs: Mapping[str, str] | None = None,
    trace: str | os.PathLike | None = None,
    path: str | os.PathLike | None = None,
    samples: bool = False,
    timeout: float = _DEFAULT_TIMEOUT,
) -> dict:
    """Run a program under pyserq ``version`` and return its JSON report.

    ``source`` is the program text; ``path`` the file it lives in. With
    only ``path`` (``source=None``) the file is read by the reference. With
    both, ``path`` says where the text belongs: relative ``trace`` and
    ``use`` paths resolve against its directory (the text is written to a
    temporary file there, or, when that directory is read-only, passed as
    text with the directory as the working directory, which serves traces
    but not ``use`` of a library). With only ``source``, relative paths
    resolve against the current directory.

    ``seed``, ``horizon``, ``warmup``, ``arrivals``, ``trace`` override the
    program's settings as the CLI flags do; ``sets`` maps a name to a value
    or constant-expression text (``--set``; 0.1.3 takes any ``let``, 0.1.4+
    only ``args.number`` inputs); ``defs`` maps an expression definition to
    its new body text (``--def``). ``seed=None`` keeps the program's own.

    Returns the report as ``json.loads`` gives it (``null`` -> ``None``);
    keys are exactly those the version writes (0.1.3 has no ``client`` and
    no pool ``growing_*`` keys). With ``samples=True`` the dict also has a
    key ``"_samples"``: ``{"observes": {name: {"values", "times",
    "sessions", "turns"}}, "gauges": {name: {"times", "values"}}}`` — every
    observation's samples after warm-up in recording order, and every
    gauge's change points (what ``--dump`` writes).

    Raises ``OracleError`` (with the reference's message) when the program
    does not load or the run stops with an error, and ``RuntimeError`` when
    the version is not available or the subprocess fails.
    """
    v = _normalise(version)
    python = interpreter(v)
    if python is None:
        raise RuntimeError(describe(v))
    if source is None and path is None:
        raise ValueError("run_reference needs a source text or a path")

    req: dict[str, Any] = {
        "version": v,
        "seed": seed,
        "horizon": horizon,
        "warmup": warmup,
        "arrivals": arrivals,
        "sets": {k: _setting(x) for k, x in (sets or {}).items()},
        "defs": {k: str(x) for k, x in (defs or {}).items()},
        "trace": os.path.abspath(trace) if trace is not None else None,
        "samples": bool(samples),
        "path": None,
        "source": None,
    }
    cwd = None
    tmp_file = None
    if path is not None:
        path = os.path.abspath(path)
        if source is None:
            req["path"] = path
        else:
            directory = os.path.dirname(path)
            try:
                fd, tmp_file = tempfile.mkstemp(
                    prefix=".oracle-", suffix=".sq", dir=directory
                )
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(source)
                req["path"] = tmp_file
            except OSError:
                tmp_file = None
                req["source"] = source
                cwd = directory
    else:
        req["source"] = source

    try:
        proc = subprocess.run(
            [python, "-c", _DRIVER],
            input=json.dumps(req),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=timeout,
            cwd=cwd,
        )
    finally:
        if tmp_file is not None:
            try:
                os.unlink(tmp_file)
            except OSError:
                pass

    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"pyserq {v} driver failed (exit {proc.returncode}) under {python}:\n"
            f"{proc.stderr.strip() or proc.stdout.strip()}"
        )
    try:
        res = json.loads(lines[-1])
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"pyserq {v} driver printed no result: {lines[-1][:200]!r}") from exc
    if not res.get("ok"):
        if res.get("stage") == "probe":
            raise RuntimeError(res.get("error", "wrong pyserq version"))
        raise OracleError(res.get("error", ""), res.get("stage", "?"), v)
    report = res["report"]
    if samples:
        report["_samples"] = res["samples"]
    return report


# --------------------------------------------------------------------------
# Comparing reports


def _close(a: Any, b: Any, rel: float, abs_tol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)
    return a == b


def compare_reports(
    actual: Mapping[str, Any],
    expected: Mapping[str, Any],
    *,
    rel: float = 1e-9,
    abs_tol: float = 0.0,
    ignore: Iterable[str] = UNCOMPARED,
) -> list[str]:
    """Differences between two JSON reports, as readable lines.

    Walks the keys of ``expected`` (normally the reference's report, whose
    key set depends on its version) and compares each with ``actual``:
    integers and strings exactly, other numbers to ``rel``/``abs_tol``
    (deterministic programs: counts equal, everything else to a relative 1e-9),
    ``None`` only with ``None``. Keys named in ``ignore`` are skipped at
    every depth (by default ``serq_version``, ``events`` and
    ``serq_simpy``); so are keys starting with ``_`` (``_samples``). Lists
    must have equal lengths. An empty list means the reports match.
    """
    ignored = set(ignore)
    diffs: list[str] = []

    def walk(a: Any, e: Any, where: str) -> None:
        if isinstance(e, Mapping):
            if not isinstance(a, Mapping):
                diffs.append(f"{where}: expected an object, got {a!r}")
                return
            for k, ev in e.items():
                if k in ignored or str(k).startswith("_"):
                    continue
                if k not in a:
                    diffs.append(f"{where}.{k}: missing (expected {ev!r})")
                    continue
                walk(a[k], ev, f"{where}.{k}")
        elif isinstance(e, list):
            if not isinstance(a, list):
                diffs.append(f"{where}: expected a list, got {a!r}")
                return
            if len(a) != len(e):
                diffs.append(f"{where}: {len(a)} entries, expected {len(e)}")
            for i, (av, ev) in enumerate(zip(a, e)):
                walk(av, ev, f"{where}[{i}]")
        elif not _close(a, e, rel, abs_tol):
            diffs.append(f"{where}: {a!r} != expected {e!r}")

    walk(actual, expected, "report")
    return diffs


def assert_reports_match(actual: Mapping[str, Any], expected: Mapping[str, Any], **kw: Any) -> None:
    """``assert`` that ``compare_reports`` finds no difference."""
    diffs = compare_reports(actual, expected, **kw)
    assert not diffs, "reports differ:\n  " + "\n  ".join(diffs[:40]) + (
        f"\n  … and {len(diffs) - 40} more" if len(diffs) > 40 else ""
    )


def assert_fields_match(ours: Mapping[str, Any], ref: Mapping[str, Any], table: str,
                        skip: Iterable[str] = ()) -> None:
    """``assert`` that every observation's count, mean, min and max and
    every field the reference reports of each row of ``table`` (``pools``,
    ``stages``) agree, numbers to a relative 1e-12 (deterministic
    programs): the small hand-derived programs' check against pyserq.
    Fields named in ``skip`` are left out of the rows."""
    import pytest  # (only tests call this)

    skipped = set(skip)
    assert ours["observes"].keys() == ref["observes"].keys()
    for name, theirs in ref["observes"].items():
        mine = ours["observes"][name]
        for key in ("count", "mean", "min", "max"):
            if theirs.get(key) is None:
                assert mine.get(key) is None, (name, key)
            else:
                assert mine[key] == pytest.approx(theirs[key], rel=1e-12, abs=0), (name, key)
    for mine, theirs in zip(ours[table], ref[table]):
        for key, value in theirs.items():
            if key in skipped:
                continue
            if isinstance(value, float):
                value = pytest.approx(value, rel=1e-12, abs=0)
            assert mine[key] == value, (mine.get("name"), key)


def _sample_close(a: Any, b: Any) -> bool:
    """A sample value or time against the reference's (null: non-finite)."""
    if b is None:
        return a is None or (isinstance(a, float) and not math.isfinite(a))
    if isinstance(b, float) and math.isnan(b):
        return isinstance(a, float) and math.isnan(a)
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _first_diff(m: Any, s: Mapping[str, Any]) -> str:
    """Where a series first differs from the reference's samples."""
    mine = list(zip([int(x) for x in m.sessions], m.times, m.values))
    ref = list(zip(s["sessions"], s["times"], s["values"]))
    for i, (a, b) in enumerate(zip(mine, ref)):
        if a[0] != b[0] or not _sample_close(a[1], b[1]) or not _sample_close(a[2], b[2]):
            return f"#{i}: mine (session, time, value) {a} vs reference {b}"
    n = min(len(mine), len(ref))
    return f"#{n}: mine {mine[n:n + 2]} vs reference {ref[n:n + 2]}"


def assert_samples_match(rep, ref_samples, *, skip=(), turns=True):
    """Every observation's samples (values and times to 1e-9; sessions and,
    with `turns`, turn tags exactly) and every gauge's change points equal
    the reference's; observations named in `skip` are not compared."""
    problems = []
    for name, s in ref_samples["observes"].items():
        if name in skip:
            continue
        m = rep.observes.get(name)
        if m is None:
            problems.append(f"observe {name}: missing")
            continue
        if len(m.values) != len(s["values"]):
            problems.append(f"observe {name}: {len(m.values)} samples, expected "
                            f"{len(s['values'])}; first difference " + _first_diff(m, s))
            continue
        if [int(x) for x in m.sessions] != s["sessions"]:
            problems.append(f"observe {name}: sessions differ; " + _first_diff(m, s))
        if turns and [int(x) for x in m.turns] != s["turns"]:
            problems.append(f"observe {name}: turns {list(m.turns)[:8]} != {s['turns'][:8]}")
        for i, (a, b) in enumerate(zip(m.values, s["values"])):
            if not _sample_close(a, b):
                problems.append(f"observe {name}[{i}] (session {s['sessions'][i]}, t "
                                f"{s['times'][i]}): value {a!r} != {b!r}")
                break
        for i, (a, b) in enumerate(zip(m.times, s["times"])):
            if not _sample_close(a, b):
                problems.append(f"observe {name}[{i}] (session {s['sessions'][i]}): time "
                                f"{a!r} != {b!r}")
                break
    for name, g in ref_samples["gauges"].items():
        pts = rep.gauges[name].points if name in rep.gauges else None
        if pts is None:
            problems.append(f"gauge {name}: missing")
            continue
        ok = len(pts) == len(g["times"]) and all(
            _sample_close(t, et) and _sample_close(v, ev)
            for (t, v), et, ev in zip(pts, g["times"], g["values"]))
        if not ok:
            ref_pts = list(zip(g["times"], g["values"]))
            k = next((i for i, (a, b) in enumerate(zip(pts, ref_pts))
                      if not (_sample_close(a[0], b[0]) and _sample_close(a[1], b[1]))), min(len(pts), len(ref_pts)))
            problems.append(f"gauge {name}: {len(pts)} points vs {len(ref_pts)}; first "
                            f"difference #{k}: {pts[k:k + 2]} != {ref_pts[k:k + 2]}")
    assert not problems, "samples differ:\n  " + "\n  ".join(problems[:30])
