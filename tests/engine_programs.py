"""Small random step-engine programs, for tests that compare two ways of
running the same program (tests/test_closed_runs.py).

`program(seed)` writes one: a Poisson workload of single- or multi-turn
sessions served by one or two step engines (sharing one KV pool when there
are two), with a serve order, a budget, a chunk and a cost drawn from the
lists below -- built-in orders, `only` filters, budgets and costs that read
the context variables (`kv_decode`, `tokens`, `decoders`, …) and the pools,
a cost that draws on the machine stream --, whole or fractional tokens, KV
held whole or grown by blocks, eviction by LRU or by keys, admission through
an `admit via` pool or in the session, and a live-session pool whose queue
often cannot enter.
"""
from __future__ import annotations

import random

ORDERS = ["", "serve decode first;", "serve admission;", "serve by (remaining);",
          "serve by (-remaining);", "serve by (-admission);",
          "serve only (decoding || remaining >= 6);",
          "serve only (decoders > 0 ? decoding : !decoding);",
          "serve only (decoders < residents ? !decoding : decoding) by (remaining);"]
BUDGETS = ["64", "512", "max(decoders, (w + beta * kv_decode) / a)", "48 + residents * 32",
           "decoders + 24", "max(16, 400 - kv_decode / 32)", "24 + 8 * holders(kv)"]
CHUNKS = ["", "chunk 32;", "chunk residents > 1 ? 48 : 0;", "chunk 16 + 8 * queued(kv);"]
COSTS = ["0.002 + 1e-4 * tokens",
         "max(w + beta * kv_decode, tokens * a)",
         "0.001 + 1e-6 * attention + 2e-5 * prefilled + 1e-4 * decoders",
         "0.0005 + 0.001 * decoders + 1e-7 * (kv_decode + kv_prefill) + 5e-5 * tokens",
         "0.001 + 1e-4 * tokens + ~exp(0.0002)",
         "0.002 + 1e-4 * tokens + 1e-8 * used(kv)"]
EVICTS = ["evict lru;", "evict by (size);", "evict by (waiting, size);"]


def program(seed: int) -> str:
    """The source text of random engine program number `seed`."""
    rng = random.Random(seed)
    pick = rng.choice
    engines = 2 if rng.random() < 0.3 else 1
    block = pick(["", "block 16;", "block 8;"])
    grow = block != "" and rng.random() < 0.7
    admit_via = grow and engines == 1 and rng.random() < 0.5
    live = engines == 1 and rng.random() < 0.5
    cap = rng.choice([2000, 4000, 16000])
    preempt = "preempt lifo;" if grow else ""
    lines = [
        f"let lam = {rng.choice([2, 5, 12])};",
        "let a = 2e-5; let w = 2e-4; let beta = 2e-9;",
        f"pool kv {{ cap {cap}; {block} {pick(EVICTS)} {preempt} }}",
    ]
    if admit_via:
        lines.append(f"pool reqs {{ cap {rng.choice([2, 4, 8])}; admit via E; }}")
    else:
        lines.append(f"pool reqs {{ cap {rng.choice([2, 4, 8])}; }}")
    if live:
        lines.append(f"pool live {{ cap {rng.choice([2, 3, 6])}; }}")
    clauses = f"budget {pick(BUDGETS)}; {pick(CHUNKS)} cost {pick(COSTS)}; {pick(ORDERS)}"
    names = ["E"] if engines == 1 else ["E0", "E1"]
    for name in names:  # two engines: the same clauses, one KV pool
        lines.append(f"stage {name} : step {{ {clauses} memory kv; }}")
    lines.append("stage think : delay;")
    turns = rng.random() < 0.5
    body = "turn; request;"
    if turns:
        body = "turn; loop { request; branch with (0.6) { run think (~exp(0.5)); turn; } else { end; } }"
    if live:
        body = f"hold live (1) {{ {body} }}"
    route = "set e = floor(~uniform(0, 2));" if engines == 2 else ""
    lines.append(f"""workload {{
  arrive poisson(lam);
  turn {{ set n = FLOOR(~uniform(20, {rng.choice([80, 300, 900])})); set o = 2 + FLOOR(~exp({rng.choice([10, 40])})); {route} }}
  session {{ {body} end; }}
}}""")

    def hold(eng: str) -> str:
        if grow:
            return (f"hold reqs (1), kv (n) {{ run {eng} prefill (n) growing kv; "
                    f"observe ttft = now - t0; run {eng} decode (o - 1) growing kv; }} cache (n + o);")
        return (f"hold reqs (1), kv (n + o) {{ run {eng} prefill (n); "
                f"observe ttft = now - t0; run {eng} decode (o - 1); }} cache (n + o);")
    # (two engines are two stages, not `E[2]` with `run E[e]`: the programs
    # were written while that raised an UnboundLocalError, fixed since (commit
    # 4bf57a5, tests/test_runtime_ir.py); kept so that their seeds stay theirs)
    serve = hold("E") if engines == 1 else f"branch (e < 1) {{ {hold('E0')} }} else {{ {hold('E1')} }}"
    lines.append(f"server {{ set t0 = now; {serve} observe response = now - t0; }}")
    lines.append("run { horizon 20; warmup 2; }")
    # fractional tokens in some programs (drawn last: the choices above stay
    # those of the same seed without it)
    floor = "" if rng.random() < 0.25 else "floor"
    return "\n".join(lines).replace("FLOOR", floor) + "\n"
