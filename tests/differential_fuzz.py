"""Differential fuzzing against the pyserq reference (issue 22).

Generated programs (tests/program_gen.py) run in serq-simpy and in a
reference version, and the outcomes are compared:

* deterministic programs against pyserq **0.1.3** (flat dialect) and
  **0.1.4** (`fn main`, `cost(…)`): the JSON reports field for field, counts
  exactly and every other number to a relative 1e-9 (`oracle.compare_reports`);
* drawing programs against **0.1.5** exactly (its streams are the ones
  serq-simpy follows, Part 07), when 0.1.5 reads them;
* a program one side runs and the other refuses or stops is a finding too;
  the reference refusing a construct of another dialect (serq-simpy reads
  the union, Part 01 §10) is counted as not accepted.

The reference runs in its own interpreter (tests/oracle.py locates it), one
subprocess per batch of programs. A difference that a departure of
docs/departures.md explains is counted under that departure; a difference
in numbers that another run of the reference (a new process) does not give
is "reference varies"; any other is a finding, and `shrink` reduces its
program to a small one that still differs the same way. Kept cases live in
tests/differential_cases/<version>/ (the program and the reference's
report, run by tests/test_differential_fuzz.py without the reference).

Command line (niced; prints the counts, the findings and the coverage table):

    python tests/differential_fuzz.py --count 200 [--start 0] [--versions 0.1.3,0.1.4,0.1.5]
        [--shrink] [--keep DIR]
"""
from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from contextlib import ExitStack
from typing import Any, Callable, ContextManager, Iterable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import serq  # noqa: E402
from serq.core.errors import SerqError  # noqa: E402
from serq.report.json_report import to_dict  # noqa: E402
from serq.runtime.watch.watchdog import RunStopped, interrupt_all  # noqa: E402

from fuzz_departures import DEPARTURES, OLD, Departure  # noqa: E402
from oracle import UNCOMPARED, compare_reports, interpreter  # noqa: E402
from program_gen import KINDS, TRACE_NAME, Program, generate, kinds  # noqa: E402

TRACE = os.path.join(HERE, "data", TRACE_NAME)
CASES = os.path.join(HERE, "differential_cases")
SEED = 1            # the run seed of every comparison
CPU_BOUND = 10.0    # seconds of CPU time for one of our runs
REF_BOUND = 20.0    # seconds of wall time for one reference run
DRAW_SEEDS = 1_000_000  # drawing programs use generator seeds from here on

# The reference refusing a construct of another dialect: not a finding
# (serq-simpy reads the union of the dialects, Part 01 §10).
DIALECT = re.compile(
    r"unknown statement `if`|is now `if|belongs inside `workload`|`step` is an engine's|"
    r"unexpected `fn`|executable declarations belong inside|replaced by `turn;`|"
    r"requires its cost type|resource use requires|unknown (statement|item|declaration)|"
    r"expected .*found|unexpected `|is not a (stage|pool|queue)|cost\(|"
    # 0.1.4's strict typing of `cost(…)` amounts, which serq-simpy does not
    # keep (Part 01 §10: only the check of §4.5)
    r"a resource cost is not an ordinary quantity")


# --------------------------------------------------------------------------- running

@dataclass
class Outcome:
    """What one implementation did with a program."""

    status: str                 # "report", "refused", "stopped", "hang", "crash" (reference),
                                # "error" (serq-simpy raised something else than its errors)
    report: Optional[dict] = None
    message: str = ""


def run_ours(text: str, horizon: Optional[float], trace: Optional[str],
             warmup: Optional[float] = None, cpu_bound: float = CPU_BOUND) -> Outcome:
    """Load and run `text` in serq-simpy (seed 1), stopped after `cpu_bound`
    seconds of CPU time."""
    try:
        program = serq.load(source=text, trace=trace, horizon=horizon, warmup=warmup, seed=SEED)
    except SerqError as e:
        return Outcome("refused", message=str(e))
    done = threading.Event()
    cpu0 = time.process_time()

    def deadline() -> None:
        while not done.wait(0.05):
            if time.process_time() - cpu0 > cpu_bound:
                interrupt_all()
                return
    threading.Thread(target=deadline, daemon=True).start()
    try:
        rep = serq.run(program, max_live=20_000)
        return Outcome("report", to_dict(rep))
    except RunStopped as e:
        if e.kind == "interrupt":
            return Outcome("hang", message=str(e))
        return Outcome("stopped", message=str(e))
    except SerqError as e:
        return Outcome("stopped", message=str(e))
    except Exception as e:  # a defect of serq-simpy: a finding, not the campaign's end
        return Outcome("error", message=f"{type(e).__name__}: {e}")
    finally:
        done.set()


_DRIVER = r"""
import json, sys, pyserq
for line in sys.stdin:
    r = json.loads(line)
    kw = {"source": r["source"], "seed": r["seed"]}
    for k in ("horizon", "warmup"):
        if r.get(k) is not None:
            kw[k] = r[k]
    if r.get("trace"):
        kw["trace"] = r["trace"]
    try:
        prog = pyserq.compile(**kw)
    except Exception as e:
        out = {"status": "refused", "message": str(e)}
    except BaseException as e:  # (a Rust panic is a BaseException: PanicException)
        out = {"status": "crash", "message": "panic: " + str(e)}
    else:
        try:
            out = {"status": "report", "report": json.loads(pyserq.run(prog).json())}
        except Exception as e:
            out = {"status": "stopped", "message": str(e)}
        except BaseException as e:
            out = {"status": "crash", "message": "panic: " + str(e)}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
"""


class ReferenceStream:
    """pyserq `version` answering `jobs` ({source, horizon, trace}) in
    order, in its own process, while the caller runs serq-simpy beside it
    (two cores: both sides at once). A program with no answer within
    REF_BOUND seconds of the caller asking is a "hang", one after which the
    process ended without answering a "crash"; the rest go on in a new
    process."""

    def __init__(self, version: str, jobs: list[dict]):
        self.python = interpreter(version)
        if self.python is None:
            raise RuntimeError(f"pyserq {version} is not available")
        self.jobs = jobs
        self.next_job = 0
        self.proc: Optional[subprocess.Popen] = None
        self.lines: queue.Queue = queue.Queue()

    def _start(self) -> None:
        self.proc = subprocess.Popen([self.python, "-c", _DRIVER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        todo = [json.dumps(dict(j, seed=SEED)) + "\n" for j in self.jobs[self.next_job:]]
        stdin = self.proc.stdin

        def feed() -> None:
            try:
                for line in todo:
                    stdin.write(line)
                stdin.close()
            except (BrokenPipeError, ValueError, OSError):
                pass
        threading.Thread(target=feed, daemon=True).start()
        # the answers, read by a thread of their own: a `select` on the pipe
        # misses a line already read into the stream's buffer (it reported a
        # job as not answering while its answer waited there and the
        # reference worked on a slow later job: generator seed 4546, 0.1.3)
        lines: queue.Queue = queue.Queue()
        stdout = self.proc.stdout

        def read() -> None:
            try:
                for line in stdout:
                    lines.put(line)
            except (ValueError, OSError):
                pass
            lines.put("")
        threading.Thread(target=read, daemon=True).start()
        self.lines = lines

    def next(self) -> Outcome:
        """The reference's outcome of the next job."""
        if self.proc is None:
            self._start()
        try:
            line = self.lines.get(timeout=REF_BOUND)
        except queue.Empty:
            line = None
        self.next_job += 1
        if not line:
            self.close()
            if line is None:
                return Outcome("hang", message=f"no answer within {REF_BOUND:g} s")
            return Outcome("crash", message="the reference's process ended without an answer")
        r = json.loads(line)
        return Outcome(r["status"], r.get("report"), r.get("message", ""))

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc.stdout.close()
            self.proc = None


#: how many more times a program whose numbers differ from serq-simpy's runs
#: in the reference, each time in a process of its own: pyserq 0.1.3 and
#: 0.1.4 give other last bits in some process runs (generator seed 142360:
#: an observation's `cv2` of 1.44e-30, one run in six another value)
REF_AGAIN = 3


def reference_varies(ours: Outcome, text: str, job: dict, version: str) -> bool:
    """Whether another run of the reference (up to `REF_AGAIN`) gives
    serq-simpy's report: then the difference is the reference's, from one
    of its processes to another, not a finding."""
    for _ in range(REF_AGAIN):
        ref = run_reference_batch(version, [job])[0]
        if classify(ours, ref, text, version=version)[0] == "equal":
            return True
    return False


def run_reference_batch(version: str, jobs: list[dict]) -> list[Outcome]:
    """Every outcome of `jobs` under pyserq `version` (ReferenceStream)."""
    stream = ReferenceStream(version, jobs)
    try:
        return [stream.next() for _ in jobs]
    finally:
        stream.close()


# --------------------------------------------------------------------------- comparing

def render(program: Program, version: str) -> str:
    """The program in `version`'s dialect."""
    if version == "0.1.3":
        return program.flat()
    return program.main(if_=version == "0.1.5")


def job_of(text: str, version: str) -> dict:
    """The run settings of a comparison: 0.1.4 and later take the horizon
    from outside; a trace is always passed as a path."""
    horizon = warmup = None
    if version != "0.1.3":
        m = re.search(r"// horizon (\S+)", text)
        horizon = float(m.group(1)) if m else 20.0
        m = re.search(r"// warmup (\S+)", text)
        warmup = float(m.group(1)) if m else None
    return {"source": text, "horizon": horizon, "warmup": warmup,
            "trace": TRACE if TRACE_NAME in text else None}


def with_horizon(text: str, program: Program, version: str) -> str:
    """A `fn main` text carries its horizon in a comment (for the shrinker
    and the kept cases, which see only the text)."""
    if version == "0.1.3":
        return text
    warm = f"// warmup {program.warmup:g}\n" if program.warmup else ""
    return f"// horizon {program.horizon:g}\n{warm}{text}"


def emulated_differences(source: str, emulate: Callable[[], ContextManager[None]],
                          version: str = "0.1.3") -> list[str]:
    """How serq-simpy's report of `source`, run under a departure's
    emulation, differs from the reference's (seed 1): none when the
    emulation explains the departure."""
    job = job_of(source, version)  # (a `fn main` text: its horizon from outside)
    ref = run_reference_batch(version, [job])[0]
    with emulate():
        ours = to_dict(serq.run(serq.load(source=source, seed=SEED), horizon=job["horizon"],
                                warmup=job["warmup"]))
    if ref.report is None:
        return [f"the reference: {ref.status} {ref.message}"]
    return compare_reports(ours, ref.report, ignore=UNCOMPARED)


#: serq-simpy's stale-state lint (Part 03 §4.7), which 0.1.3 and 0.1.4 apply
#: only to a `set` outside any hold's body
STALE_SET = re.compile(r"link error: `\w+` reads .* when the session reaches the `set`, "
                       r"and is used in the header of a hold")


#: serq-simpy's "does not settle" run-time error (Part 02 §10.5), where
#: pyserq runs on for ever at one instant
UNSETTLED = re.compile(r"the instant t = \S+ does not settle: (session \d+ became ready|"
                       r"more than \d+ closed-population replacements|"
                       r"the sessions of the closed population have no code)")


def rerun(text: str, job: dict, cpu_bound: float = CPU_BOUND) -> Callable[[], Outcome]:
    """`again` for `classify`: run `text` in serq-simpy as `job` says."""
    return lambda: run_ours(text, job["horizon"], job["trace"], job["warmup"], cpu_bound)


def _field(diff: str) -> str:
    """`report.stages[0].mean_itl: …` -> `stages.mean_itl`."""
    path = diff.split(":", 1)[0]
    path = re.sub(r"\[\d+\]", "", path)
    parts = path.split(".")[1:]
    if parts and parts[0] == "observes":
        return "observes"
    return ".".join(parts[:2] if parts and parts[0] in ("stages", "pools", "client") else parts[:1])


def classify(ours: Outcome, ref: Outcome, text: str,
             again: Optional[Callable[[], Outcome]] = None,
             version: Optional[str] = None) -> tuple[str, list[str]]:
    """The class of one comparison and its difference lines.

    `again` runs the program in serq-simpy once more (under a departure's
    emulation, `Departure.emulate`); without it such departures are not
    told apart. With `version`, only the departures that version shows
    (`Departure.versions`) explain a difference. Classes: "equal", "both
    refuse", "dialect" (the reference refuses a construct of another
    dialect), "both stop", "reference crashes" (a panic of pyserq: nothing
    to compare), a departure's name, or a finding: "accept/refuse",
    "refuse/accept", "run stop", "hang", "numbers:<field>", "serq-simpy
    raises" (an exception that is none of serq-simpy's errors)."""
    if ours.status == "error":
        return "finding: serq-simpy raises", [ours.message.splitlines()[0]]
    if ref.status == "refused":
        if ours.status == "refused":
            return "both refuse", []
        if DIALECT.search(ref.message):
            return "dialect", [ref.message.splitlines()[0]]
        return "finding: reference refuses", [ref.message.splitlines()[0]]
    if ref.status == "crash" and ours.status != "hang":
        # a defect of the reference (generator seed 88548, 0.1.3: a Rust
        # panic in a `serve only` guard), whatever serq-simpy did
        return "reference crashes", [ref.message.splitlines()[0] if ref.message else ""]
    deps = [d for d in DEPARTURES if version is None or version in d.versions]
    if ours.status == "refused":
        if STALE_SET.search(ours.message) and version in (None, *OLD):
            # Part 03 §4.7's lint; 0.1.3 and 0.1.4 miss a `set` that stands
            # in an earlier hold's body (docs/departures.md)
            return "departure: a stale-state set in a hold's body", [ours.message.splitlines()[0]]
        return "finding: serq-simpy refuses", [ours.message.splitlines()[0]]
    if "hang" in (ours.status, ref.status):
        if ours.status == ref.status:
            return "both stop", []
        if ref.status == "hang" and ours.status == "stopped" and UNSETTLED.search(ours.message):
            # Part 02 §10.5's run-time error; the reference loops for ever
            # (docs/departures.md)
            return "departure: an instant that does not settle", [ours.message.splitlines()[0]]
        who = "serq-simpy" if ours.status == "hang" else "reference"
        return f"finding: {who} does not end", [ours.message or ref.message]
    if ours.status == "stopped" or ref.status == "stopped":
        if ours.status == ref.status:
            return "both stop", []
        who = "serq-simpy" if ours.status == "stopped" else "reference"
        msg = ours.message if ours.status == "stopped" else ref.message
        line = msg.splitlines()[0] if msg else ""
        dep = _emulated(ref, text, again, deps)
        if dep is not None:
            return f"departure: {dep}", [f"{who} stops: {line}"]
        return f"finding: {who} stops", [line]
    diffs = compare_reports(ours.report, ref.report, ignore=UNCOMPARED)
    if not diffs:
        return "equal", []
    fields = {_field(d) for d in diffs}
    for dep in deps:
        if dep.fields and fields <= {f"pools.{f}" for f in dep.fields} and dep.applies(text):
            return f"departure: {dep.name}", diffs
    emulated = _emulated(ref, text, again, deps)
    if emulated is not None:
        return f"departure: {emulated}", diffs
    return "finding: numbers " + ",".join(sorted(fields)), diffs


def _emulated(ref: Outcome, text: str, again: Optional[Callable[[], Outcome]],
              known: list[Departure]) -> Optional[str]:
    """The departures among `known` whose emulation (`Departure.emulate`)
    makes serq-simpy end as the reference does (equal reports, but for the
    fields that field-told departures may change): one alone, else all that
    apply together ("a + b"); None when no emulation explains the difference."""
    if again is None:
        return None
    told = {f"pools.{f}" for d in known for f in d.fields}
    deps = [d for d in known if d.emulate is not None and d.applies(text)]
    tries = [[d] for d in deps] + ([deps] if len(deps) > 1 else [])
    for these in tries:
        with ExitStack() as stack:
            for d in these:
                stack.enter_context(d.emulate())  # type: ignore[misc]
            out = again()
        if out.status != ref.status:
            continue
        if out.status == "report":
            rest = {_field(x) for x in compare_reports(out.report, ref.report, ignore=UNCOMPARED)}
            if not rest <= told:
                continue
        return " + ".join(d.name for d in these)
    return None


# --------------------------------------------------------------------------- a campaign

@dataclass
class Result:
    """One comparison."""

    seed: int
    version: str
    text: str
    cls: str
    diffs: list[str]


def compared_class(cls: str) -> bool:
    """Whether a comparison of that class compared two reports (equal, a
    difference of numbers, a departure's, or the reference's own)."""
    return cls == "equal" or cls.startswith(("finding: numbers", "departure",
                                             "reference varies"))


@dataclass
class Campaign:
    """The counts and findings of a run of the differential fuzzer."""

    generated: int = 0
    results: list[Result] = field(default_factory=list)
    coverage: Counter = field(default_factory=Counter)

    @property
    def findings(self) -> list[Result]:
        return [r for r in self.results if r.cls.startswith("finding")]

    def counts(self) -> dict[str, Any]:
        by = Counter(r.cls for r in self.results)
        accepted = sum(n for c, n in by.items() if c not in ("dialect", "both refuse")
                       and not c.endswith("reference refuses"))
        compared = sum(n for c, n in by.items() if compared_class(c))
        return {"generated": self.generated, "comparisons": len(self.results),
                "accepted by the reference": accepted, "compared": compared,
                "equal": by["equal"], "classes": dict(sorted(by.items()))}


def programs(start: int, count: int, draws: bool) -> Iterable[tuple[int, Program]]:
    base = DRAW_SEEDS if draws else 0
    for s in range(start, start + count):
        yield base + s, generate(base + s, draws=draws)


def campaign(versions: Iterable[str], start: int, count: int, draw_count: Optional[int] = None,
             batch: int = 100, log: Optional[Callable[[str], None]] = None,
             jobs: int = 1, draw_start: Optional[int] = None) -> Campaign:
    """Generate and compare: `count` deterministic programs (generator
    seeds `start`…) against 0.1.3 and 0.1.4 (those in `versions`),
    `draw_count` (default count // 4) drawing programs (seeds DRAW_SEEDS +
    `draw_start`…, default `start`) against 0.1.5. `jobs` > 1 splits both
    ranges over that many worker processes (the same comparisons, merged)."""
    versions = list(versions)
    if draw_count is None:
        draw_count = count // 4
    if draw_start is None:
        draw_start = start
    if jobs > 1:
        return _parallel(versions, start, count, draw_count, draw_start, batch, jobs)
    out = Campaign()
    plans: list[tuple[str, bool, int]] = []
    det = [v for v in versions if v in ("0.1.3", "0.1.4")]
    if det:
        plans.append((",".join(det), False, count))
    if "0.1.5" in versions:
        plans.append(("0.1.5", True, draw_count))
    for vers, draws, n in plans:
        progs = list(programs(draw_start if draws else start, n, draws))
        out.generated += len(progs)
        for v in vers.split(","):
            for k in range(0, len(progs), batch):
                chunk = progs[k:k + batch]
                texts = [with_horizon(render(p, v), p, v) for _s, p in chunk]
                jobs = [job_of(t, v) for t in texts]
                stream = ReferenceStream(v, jobs)
                try:
                    for (s, _p), text, job in zip(chunk, texts, jobs):
                        ours = run_ours(text, job["horizon"], job["trace"], job["warmup"])
                        cls, diffs = classify(ours, stream.next(), text, rerun(text, job), v)
                        if cls.startswith("finding: numbers") and reference_varies(ours, text,
                                                                                   job, v):
                            cls = "reference varies"
                        out.results.append(Result(s, v, text, cls, diffs))
                        if compared_class(cls):
                            out.coverage.update(kinds(text))
                finally:
                    stream.close()
                if log:
                    log(f"{v}: {min(k + batch, len(progs))}/{len(progs)} "
                        f"{dict(Counter(r.cls for r in out.results if r.version == v))}")
    return out


def _worker(args: tuple) -> Campaign:
    versions, start, count, draw_count, draw_start, batch = args
    return campaign(versions, start, count, draw_count, batch=batch, draw_start=draw_start)


def _parallel(versions: list[str], start: int, count: int, draw_count: int, draw_start: int,
              batch: int, jobs: int) -> Campaign:
    """`campaign` over `jobs` worker processes (each pairs its own
    serq-simpy runs with its own reference process)."""
    import multiprocessing

    def split(n: int) -> list[tuple[int, int]]:
        size, extra = divmod(n, jobs)
        parts, at = [], 0
        for k in range(jobs):
            m = size + (k < extra)
            parts.append((at, m))
            at += m
        return parts
    tasks = [(versions, start + a, n, dn, draw_start + da, batch)
             for (a, n), (da, dn) in zip(split(count), split(draw_count))]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        parts = pool.map(_worker, tasks)
    out = Campaign()
    for part in parts:
        out.generated += part.generated
        out.results += part.results
        out.coverage.update(part.coverage)
    return out


def coverage_table(c: Campaign) -> str:
    """Markdown: every construct kind and the number of compared programs with it."""
    rows = ["| construct | compared programs |", "|---|---|"]
    rows += [f"| {k} | {c.coverage.get(k, 0)} |" for k in KINDS]
    return "\n".join(rows)


# --------------------------------------------------------------------------- shrinking

def _statements(text: str) -> list[tuple[int, int, Optional[tuple[int, int]]]]:
    """Every statement or item of `text`, at every depth: (start, end, the
    span of its first block's content or None)."""
    found: list[tuple[int, int, Optional[tuple[int, int]]]] = []
    n = len(text)

    def skip(i: int) -> int:
        while i < n and text[i].isspace():
            i += 1
        return i

    def block(i: int) -> int:
        """Statements from `i` to the `}` that closes the block (its index)."""
        while True:
            i = skip(i)
            if i >= n or text[i] == "}":
                return i
            start, inner = i, None
            while i < n:
                c = text[i]
                if c == '"':
                    i = text.index('"', i + 1) + 1
                elif c == "(":
                    depth = 0
                    while i < n:
                        depth += (text[i] == "(") - (text[i] == ")")
                        i += 1
                        if depth == 0:
                            break
                elif c == ";":
                    i += 1
                    break
                elif c == "{":
                    j = block(i + 1)
                    if inner is None:
                        inner = (i + 1, j)
                    i = j + 1
                    k = skip(i)
                    if text.startswith(("else", "cache", "lease"), k):
                        i = k
                        continue
                    if text.startswith(";", k):
                        i = k + 1
                    break
                elif c == "}":
                    break
                elif text.startswith("//", i):
                    i = text.find("\n", i)
                    i = n if i < 0 else i
                    break
                else:
                    i += 1
            found.append((start, i, inner))

    block(0)
    return found


def shrink(text: str, same: Callable[[str], bool], budget: int = 400) -> str:
    """Reduce `text` while `same(text)` holds: delete statements and items,
    or replace a block statement by its body, until no single step keeps the
    difference (or `budget` tries are spent)."""
    tries = 0
    changed = True
    while changed and tries < budget:
        changed = False
        spans = sorted(_statements(text), key=lambda s: s[0] - s[1])  # largest first
        for start, end, inner in spans:
            cands = [text[:start] + text[end:]]
            if inner is not None:
                cands.append(text[:start] + text[inner[0]:inner[1]] + text[end:])
            for cand in cands:
                tries += 1
                if cand != text and same(cand):
                    text = cand
                    changed = True
                    break
            if changed or tries >= budget:
                break
    return text


def same_difference(version: str, cls: str) -> Callable[[str], bool]:
    """A predicate for `shrink`: the text still differs in class `cls`."""
    def pred(text: str) -> bool:
        job = job_of(text, version)
        ref = run_reference_batch(version, [job])[0]
        ours = run_ours(text, job["horizon"], job["trace"], job["warmup"])
        return classify(ours, ref, text, rerun(text, job), version)[0] == cls
    return pred


def keep(text: str, version: str, name: str, directory: str = CASES) -> str:
    """Store a case: the program and the reference's report (path of the .sq)."""
    job = job_of(text, version)
    ref = run_reference_batch(version, [job])[0]
    folder = os.path.join(directory, version)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + ".sq")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    with open(os.path.join(folder, name + ".json"), "w", encoding="utf-8") as fh:
        json.dump({"status": ref.status, "message": ref.message, "report": ref.report},
                  fh, indent=1, sort_keys=False)
        fh.write("\n")
    return path


def main(argv: Optional[list[str]] = None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--draw-count", type=int, default=None)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--draw-start", type=int, default=None,
                    help="the first drawing program (default: --start)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--versions", default="0.1.3,0.1.4,0.1.5")
    ap.add_argument("--shrink", action="store_true", help="shrink one finding of each class")
    ap.add_argument("--keep", default=None, help="store the shrunk findings under DIR/<version>/")
    ap.add_argument("--findings", default=None,
                    help="write every comparison that is not `equal` (JSON lines) to FILE")
    a = ap.parse_args(argv)
    t0 = time.time()
    c = campaign([v for v in a.versions.split(",") if interpreter(v)], a.start, a.count,
                 a.draw_count, log=lambda s: print(s, file=sys.stderr, flush=True),
                 jobs=a.jobs, draw_start=a.draw_start)
    print(json.dumps(c.counts(), indent=1))
    print(f"time: {time.time() - t0:.0f} s")
    if a.findings:  # (before the shrinking, which may take long)
        with open(a.findings, "w", encoding="utf-8") as fh:
            for r in c.results:
                if r.cls != "equal":
                    fh.write(json.dumps(r.__dict__) + "\n")
    seen: set[tuple[str, str]] = set()
    for r in c.findings:
        print(f"\n== {r.version} seed {r.seed}: {r.cls}\n  " + "\n  ".join(r.diffs[:6]))
        if a.shrink and (r.version, r.cls) not in seen:
            seen.add((r.version, r.cls))
            small = shrink(r.text, same_difference(r.version, r.cls))
            print("-- shrunk:\n" + small)
            if a.keep:
                print("kept", keep(small, r.version, f"seed{r.seed}", a.keep))
    print("\n" + coverage_table(c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
