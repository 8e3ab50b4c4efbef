"""Small random fleets of step engines, for tests that compare two ways of
running the same program and, without draws, serq-simpy with pyserq 0.1.3
(tests/test_fleet_programs.py).

`program(seed)` writes one: R replicas (2 to 6) as arrays -- a step engine
`E[R]` whose memory is the KV pool `kv[R]` member by member, a slot pool
`reqs[R]` admitted by the engine or held by the session, and sometimes a
pool `live[R]` that counts the sessions routed to each replica -- behind a
router in the session code: `choose` over the replicas' pools (fewest live
sessions, fewest waiting requests, least KV in use, in several orders), or
a random replica, once per session or afresh every turn. Sessions are
multi-turn conversations whose context grows turn by turn and stays in the
replica's prefix cache (`cache`, `reuse`, `at admission`), with tool calls
between turns. The engine's budget, chunk, cost and serve order, the KV
pool's block, eviction and cap, whole or fractional tokens and the load
per replica are drawn from the lists below. `pd_program(seed)` writes a
disaggregated fleet instead: prefill and decode engines (the queue
templates) behind a gateway, the decode engines pulling the KV of remote
prefills over the NICs; `mixed_program(seed)` a replica program with other
policies drawn on top (victims by keys, slot queues by keys, other serve
forms, cache leases, engine-admitted KV). `deterministic(text)` takes the
draws out of any of them, for an exact comparison with pyserq 0.1.3.

These are the programs on which the fast paths that only fleets reach do
their work: several engines whose iteration ends interleave (the relay,
`Burst._relay_kept`, and the loop over engines, `fast/leapfrog.py`),
engines that are idle with work while another runs (`sim/fleet.py`), and
admissions known to fail on each replica (`fast/blocked.py`).
"""
from __future__ import annotations

import random
import re

BUDGETS = ["64", "256", "decoders + 24", "48 + residents * 16", "max(decoders, 96 - kv_decode / 64)"]
CHUNKS = ["", "chunk 32;", "chunk 0;", "chunk residents > 1 ? 24 : 0;"]
COSTS = ["0.002 + 1e-4 * tokens",
         "max(0.004 + 1e-7 * (kv_decode + kv_prefill), tokens * 5e-5)",
         "0.001 + 1e-6 * attention + 2e-5 * prefilled + 1e-4 * decoders",
         "0.003 + 0.0005 * decoders + 2e-5 * tokens",
         "0.0025"]
ORDERS = ["", "", "serve decode first;", "serve by (remaining);", "serve by (-admission);",
          "serve only (decoding || remaining >= 6);"]
EVICTS = ["evict lru;", "evict lru;", "evict by (size);", "evict by (waiting, size);"]
#: routing keys over replica `j` (Part 02 §7.8: the least key tuple, ties to the lowest index)
KEYS = ["holders(live[j]) + queued(live[j]), queued(reqs[j]), used(kv[j])",
        "queued(reqs[j]) + holders(reqs[j]), used(kv[j])",
        "used(kv[j])",
        "holders(reqs[j]), -free(kv[j])",
        "queued(reqs[j]) * 1000 + used(kv[j]) / (used(kv[j]) + free(kv[j]) + 1)"]


def program(seed: int) -> str:
    """The source text of random fleet program number `seed`."""
    rng = random.Random(seed)
    pick = rng.choice
    r = pick([2, 2, 3, 4, 4, 6])
    block = pick(["block 16;", "block 16;", "block 8;", ""])
    grow = block != "" and rng.random() < 0.8
    admit_via = rng.random() < 0.7
    key = pick(KEYS)
    live = "live[j]" in key or rng.random() < 0.3
    sticky = rng.random() < 0.6
    routed = rng.random() < 0.8  # else a random replica
    cap = pick([1500, 3000, 6000])
    seqs = pick([2, 4, 8])
    load = pick([0.3, 0.6, 1.0, 1.6])
    lines = [f"let R = {r};", f"let Lambda = {load} * R;"]
    if live:
        lines.append("pool live[R] { }")
    via = " admit via E;" if admit_via else ""
    lines.append(f"pool reqs[R] {{ cap {seqs};{via} }}")
    preempt = "preempt lifo;" if grow else ""
    lines.append(f"pool kv[R] {{ cap {cap}; {block} {pick(EVICTS)} {preempt} }}")
    lines.append(f"stage E[R] : step {{ budget {pick(BUDGETS)}; {pick(CHUNKS)} "
                 f"cost {pick(COSTS)}; {pick(ORDERS)} memory kv; }}")
    lines.append("stage tool : delay;")
    floor = "floor" if rng.random() < 0.75 else ""
    first = pick([(200, 900), (50, 300), (400, 1500)])
    later = pick([60, 150])
    out = pick([12, 40, 90])
    hidden = "\n  hidden o;" if grow else ""  # (read in a hold's header otherwise)
    route = (f"choose j in R by ({key});" if routed else "set j = floor(~uniform(0, R));")
    session = ["turn;", route]
    if live:
        session.append("hold live[j] (1) { } lease live[j] (inf);")
    session.append("set r = j;")
    again = "" if sticky else route.replace("j", "q").replace("set q", "set q") + " set r = q;"
    session.append(f"loop {{ {again} request; set K = prompt + o; "
                   f"branch with ({pick([0.5, 0.8])}) {{ run tool (~exp({pick([0.5, 2])})); turn; }} "
                   "else { end; } }")
    lines.append(f"""workload {{
  arrive poisson(Lambda);{hidden}
  init {{ set K = 0; }}
  turn {{
    set n = K == 0 ? {floor}(~uniform({first[0]}, {first[1]})) : 1 + {floor}(~exp({later}));
    set o = 2 + {floor}(~exp({out}));
  }}
  session {{ {' '.join(session)} }}
}}""")
    reserve = "reserve (known)" if grow and rng.random() < 0.6 else ""
    first_kv = "min(known, hit + budget_left(E[r]))" if grow else "known + o"
    growing = " growing kv[r]" if grow else ""
    reuse = "floor(known / blocksize(kv[r])) * blocksize(kv[r])" if block else "known"
    lines.append(f"""server {{
  set t0 = now;
  set prompt = K + n;
  hold reqs[r] (1), kv[r] ({first_kv}) {reserve}
       reuse ({reuse})
       at admission (known = computed < prompt ? prompt : computed + 1,
                     hit = min(cachedin(kv[r]), known)) {{
    run E[r] prefill (known - cached){growing};
    branch (known == prompt) {{ observe ttft = now - t0; }}
    run E[r] decode (max(0, o - 1 - (known - prompt))){growing};
  }} cache (prompt + o);
  observe response = now - t0;
}}""")
    lines.append(f"run {{ horizon {pick([20, 30, 40])}; warmup 5; }}")
    return "\n".join(lines) + "\n"


#: the decode engine's pulled request holds a slot from the prefill on (the
#: llm-d program's form: `reqs (0) reserve (1)`, then an inner `hold reqs
#: (1)`), or in `pd_program`'s other form from the transfer on, in one hold
#: (pyserq 0.1.3 counts the inner hold's session twice, "holders counted as
#: sessions", which hides any other difference of such a program)
_INNER_SLOT = re.compile(r"      hold reqs \(1\) \{\n((?:        .*\n)+)      \}\n")


def pd_program(seed: int) -> str:
    """The source text of random disaggregated fleet number `seed`: NP
    prefill and ND decode engines (the queue templates of Part 05) behind a
    gateway that routes each request to a decode engine by its KV, and,
    when enough of the prompt is not cached there, first to a prefill engine
    whose KV the decode engine pulls over the NICs (`pull`, `transfer`)."""
    rng = random.Random(seed)
    pick = rng.choice
    np_, nd = pick([1, 2, 2, 3]), pick([1, 2, 2, 3])
    bs = pick([8, 16])
    seqs_p, seqs_d = pick([2, 4, 8]), pick([4, 8, 16])
    blocks_p, blocks_d = pick([100, 200, 400]), pick([100, 200, 400])
    cost_p, cost_d = pick(COSTS), pick(COSTS)
    thr = pick([0, 64, 256, 100000])
    bw = pick(["2e4", "2e5"])
    load = pick([1.0, 2.0, 4.0])
    floor = "floor" if rng.random() < 0.6 else ""
    first = pick([(100, 600), (300, 1500)])
    share = pick(["maxmin", "bottleneck"])
    text = f"""let NP = {np_};
let ND = {nd};
let bs = {bs};
let thr = {thr};
let Lambda = {load} * ND;
def reusable(x, bs) = floor((x - 1) / bs) * bs;
queue gw : gateway {{
  route {{
    set t0 = now;
    set prompt = K + n;
    choose j in ND by (holders(D[j].kv) + queued(D[j].kv){pick(["", ", used(D[j].kv)"])});
    set hitD = min(cachedin(D[j].kv), reusable(prompt, bs));
    set remote = prompt - hitD >= thr;
    branch (remote) {{
      choose i in NP by ({pick(["cachedin(P[i].kv) > 0 ? 0 : 1, work(P[i]) + queued(P[i].reqs)",
                                "queued(P[i].reqs), work(P[i])"])});
      P[i].prefill (prompt);
      D[j].decode (prompt) from P[i];
    }} else {{
      D[j].decode (prompt);
    }}
    observe ttft = D.first_token - t0;
    observe response = now - t0;
  }}
}}
queue P[NP] : prefill {{
  pool reqs {{ cap {seqs_p}; admit via P; }}
  pool kv {{ cap {blocks_p} * bs; block bs; evict lru; preempt lifo; }}
  serve step {{ budget {pick(BUDGETS)}; {pick(CHUNKS)} cost {cost_p}; memory kv; }}
  nic ps({bw});
  prefill (prompt) {{
    hold reqs (1), kv (min(prompt, hit + budget_left(P))) reserve (prompt)
         at admission (hit = min(cachedin(kv), reusable(prompt, bs))) {{
      set c = cached;
      prefill (prompt - c) growing kv;
    }} cache (prompt) lease kv (inf);
  }}
}}
queue D[ND] : decode {{
  pool reqs {{ cap {seqs_d}; admit via D; }}
  pool kv {{ cap {blocks_d} * bs; block bs; evict lru; preempt lifo; admit via D; }}
  serve step {{ budget {pick(BUDGETS)}; {pick(CHUNKS)} cost {cost_d}; {pick(ORDERS)} memory kv; }}
  nic ps({bw});
  decode (prompt) {{
    hold kv (min(known, hit + budget_left(D))) reserve (known), reqs (1)
         at admission (known = computed < prompt ? prompt : computed + 1,
                       hit = min(cachedin(kv), reusable(known, bs))) {{
      set c = min(cached, reusable(known, bs));
      prefill (known - c) growing kv;
      branch (known == prompt) {{ mark first_token; }}
      decode (max(0, o - 1 - (known - prompt))) growing kv;
    }} cache (prompt + o);
  }}
  decode (prompt) from src {{
    set transferred = 0;
    hold kv (known) reserve (known), reqs (0) reserve (1)
         reuse (reusable(known, bs))
         at admission (known = computed < prompt ? prompt : computed + 1) {{
      set c = cached;
      branch (!transferred) {{
        transfer (prompt - c) from src to kv (prompt - 1 - c);
        set transferred = 1;
        set c = prompt - 1;
      }}
      hold reqs (1) {{
        prefill (known - c) growing kv;
        branch (known == prompt) {{ mark first_token; }}
        decode (max(0, o - 1 - (known - prompt))) growing kv;
      }}
    }} cache (prompt + o);
  }}
}}
D pull P latency {pick(["0.002", "0.0005"])} share {share};
stage tool : delay;
workload {{
  arrive poisson(Lambda);
  hidden o;
  init {{ set K = 0; }}
  turn {{ set n = K == 0 ? {floor}(~uniform({first[0]}, {first[1]})) : 1 + {floor}(~exp({pick([50, 200])}));
         set o = 2 + {floor}(~exp({pick([12, 40])})); }}
  session {{
    turn;
    loop {{
      request gw;
      set K = prompt + o;
      branch with ({pick([0.5, 0.8])}) {{ run tool (~exp({pick([0.5, 2])})); turn; }} else {{ end; }}
    }}
  }}
}}
run {{ horizon {pick([20, 30])}; warmup 5; }}
"""
    if rng.random() < 0.5:  # the transfer takes a slot too: one hold, no inner one
        text = _INNER_SLOT.sub(r"\1", text.replace("reqs (0) reserve (1)", "reqs (1)"))
    return text


_DRAW = re.compile(r"~(uniform|exp)\(([^(),]+)(?:, ([^(),]+))?\)|branch with \(([^()]+)\)")


def deterministic(text: str) -> str:
    """`text` without a draw, for an exact comparison with the reference
    (pyserq 0.1.3, whose streams are not serq-simpy's): arrivals at the
    mean rate's intervals, and each draw site a number of the session's
    serial and turn count `k` spread over [0, 1) (a fractional part) in
    place of its random number -- a uniform over its range, an exponential
    the size of its mean times twice that number, a `branch with (p)` taken
    when it is below p."""
    counter = iter(range(1, 1000))

    def fraction() -> str:
        n = next(counter)
        x = f"(serial * {(n * 0.6180339887) % 1:.10f} + k * {(n * 0.7548776662) % 1:.10f})"
        return f"({x} - floor({x}))"

    def replace(m: re.Match) -> str:
        if m.group(4) is not None:
            return f"branch ({fraction()} < {m.group(4)})"
        if m.group(1) == "uniform":
            a, b = m.group(2), m.group(3)
            return f"({a} + ({b} - {a}) * {fraction()})"
        return f"(2 * {m.group(2)} * {fraction()})"

    text = _DRAW.sub(replace, text).replace("arrive poisson(Lambda);", "arrive renewal(1 / Lambda);")
    text = text.replace("init { set K = 0; }", "init { set K = 0; set k = 0; }")
    return re.sub(r"\bturn \{", "turn { set k = k + 1;", text, count=1)


#: policy variations of `mixed_program` (each applied with its probability)
PREEMPTS = ["preempt by (admission);", "preempt by (-admission) requeue tail;",
            "preempt by (position, decoding) requeue tail;", "preempt by (decoding, -position);"]
QUEUES = ["queue by (waited > 1 ? 0 : 1);", "queue by (-prompt);", "queue by (serial);"]
SERVES = ["serve exclusive prefill;", "granule 4;", "serve decode first;",
          "serve by (decoding, remaining);"]


def mixed_program(seed: int) -> str:
    """Replica program `seed` (`program`) with other policies drawn on top
    (a second stream, so `program(seed)` stays as it is): victims by keys
    and requeued at the tail, a slot queue ordered by keys, another serve
    form or a granule, a cache kept as a lease for a while after the
    request, the KV pool admitted by the engine as well, a closed
    population, and a `fork` leg that prefills the prompt's head on the
    next replica while the request runs."""
    text = program(seed)
    rng = random.Random(1_000_003 * (seed + 1))
    pick = rng.choice
    if "preempt lifo;" in text and rng.random() < 0.6:
        text = text.replace("preempt lifo;", pick(PREEMPTS))
    if rng.random() < 0.4:
        text = re.sub(r"(pool reqs\[R\] \{ cap \d+;)", r"\1 " + pick(QUEUES), text)
    if rng.random() < 0.5:
        text = re.sub(r"(cost [^;]*;) ([^;]*;)? ?memory kv;",
                      lambda m: f"{m.group(1)} {pick(SERVES)} memory kv;", text)
    if rng.random() < 0.3 and "growing" in text:
        text = text.replace("} cache (prompt + o);",
                            f"}} cache (prompt + o) lease kv[r] ({pick(['0.5', '2'])});")
    if rng.random() < 0.2 and "admit via E" not in text:
        text = text.replace("pool kv[R] { ", "pool kv[R] { admit via E; ")
    if rng.random() < 0.2:  # a closed population: each session's end lets the next one in
        text = text.replace("arrive poisson(Lambda);", f"arrive closed({pick([2, 4, 8])} * R);")
    if rng.random() < 0.3:  # a leg warms the next replica's cache with the prompt's head
        head = pick(["min(prompt, 64)", "min(prompt, 200)"])
        leg = (f"set q = r + 1 < R ? r + 1 : 0;\n  fork {{ hold reqs[q] (1), kv[q] ({head}) "
               f"{{ run E[q] prefill ({head}); }} cache ({head}); }}\n  hold reqs[r]")
        text = text.replace("hold reqs[r]", leg, 1).replace(
            "  observe response = now - t0;", "  join;\n  observe response = now - t0;")
    return text

FAMILIES = {"replica": program, "pd": pd_program, "mixed": mixed_program}


def compare(seed: int, family: str = "replica") -> str:
    """Run program `seed` of `family` (`FAMILIES`) both ways -- the fast paths and the event loop
    event by event (the invariant checker's run, which turns bursts off) --
    and return "equal", "different" or what stopped it."""
    import json

    import serq
    from serq.core.errors import SerqError
    from serq.report.json_report import to_dict
    from serq.runtime.sim.simulation import Simulation

    prog = serq.load(source=FAMILIES[family](seed))
    reports = []
    for check in (False, True):
        try:
            reports.append(json.dumps(to_dict(Simulation(prog, check_invariants=check).run()),
                                      sort_keys=True))
        except SerqError as e:
            reports.append(f"stopped: {e}")
    if reports[0] == reports[1]:
        return "equal" if not reports[0].startswith("stopped") else "both stop"
    return "different"


#: seconds of CPU time for one of serq-simpy's runs of a fleet program (the
#: generator's bound, 10 s, stopped program 3758: 171,621 events, 12 s on a
#: loaded machine, equal to pyserq's report when let run)
FLEET_CPU_BOUND = 120.0


def against_reference(seeds: list[int], family: str = "replica") -> list[tuple[int, str, list[str]]]:
    """The deterministic programs `seeds` of `family` (`deterministic`)
    against pyserq 0.1.3, as the differential runner compares and
    classifies them (tests/differential_fuzz.py: departures, emulations,
    "reference varies"): (seed, class, difference lines) for each."""
    from differential_fuzz import (classify, job_of, reference_varies, rerun, run_ours,
                                   run_reference_batch)

    texts = [deterministic(FAMILIES[family](seed)) for seed in seeds]
    jobs = [job_of(text, "0.1.3") for text in texts]
    out = []
    for seed, text, job, ref in zip(seeds, texts, jobs, run_reference_batch("0.1.3", jobs)):
        ours = run_ours(text, job["horizon"], job["trace"], job["warmup"], cpu_bound=FLEET_CPU_BOUND)
        cls, diffs = classify(ours, ref, text, rerun(text, job, FLEET_CPU_BOUND), "0.1.3")
        if cls.startswith("finding: numbers") and reference_varies(ours, text, job, "0.1.3"):
            cls = "reference varies"
        out.append((seed, cls, diffs))
    return out


def _against(args: tuple[list[int], str]) -> list[tuple[int, str, list[str]]]:
    return against_reference(*args)


def main(argv: list[str] | None = None) -> int:
    """A campaign: `python tests/fleet_programs.py --family F --start S
    --count N --jobs J` compares programs S to S + N - 1 of family F (see
    `compare`) and lists the seeds whose two runs differ; with
    `--reference`, their deterministic forms against pyserq 0.1.3
    (`against_reference`), listing the findings. Exit status 1 when there
    is one."""
    import argparse
    from collections import Counter
    from concurrent.futures import ProcessPoolExecutor

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", choices=sorted(FAMILIES), default="replica")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--reference", action="store_true",
                    help="the deterministic programs against pyserq 0.1.3 instead")
    args = ap.parse_args(argv)
    seeds = range(args.start, args.start + args.count)
    with ProcessPoolExecutor(args.jobs) as pool:
        if args.reference:
            chunks = [(list(seeds[k:k + 50]), args.family) for k in range(0, len(seeds), 50)]
            rows = [row for rows in pool.map(_against, chunks) for row in rows]
            print(dict(Counter(cls for _s, cls, _d in rows)))
            bad = [s for s, cls, _d in rows if cls.startswith("finding")]
            for s, cls, diffs in rows:
                if cls.startswith("finding"):
                    print(s, cls, *diffs[:3], sep="\n  ")
            return 1 if bad else 0
        outcomes = list(pool.map(compare, seeds, [args.family] * len(seeds), chunksize=4))
    print(dict(Counter(outcomes)))
    bad = [s for s, o in zip(seeds, outcomes) if o == "different"]
    if bad:
        print("different:", " ".join(map(str, bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
