"""Two engines whose iteration ends alternate (serq/runtime/leapfrog.py):
the loop that handles both must leave every report as the event loop does,
end by end. The invariant checker turns bursts (and with them the loop) off,
so a checked run is the per-event path; the programs below are made for the
loop to run often, to grow holds inside it, and to leave it both ways (the
next iteration launched, or left to `_closed` after a block)."""
from __future__ import annotations

import json

import pytest

import serq
from serq.report.json_report import to_dict
from serq.runtime import burst, leapfrog
from serq.runtime.simulation import Simulation


def source(cap: int = 3000, lam: float = 3, c1: str = "0.0011") -> str:
    """Two decode engines on one KV pool (fractional tokens, holds grown by
    16-token blocks, a cost that reads `kv_decode`, so it changes with every
    block); sessions go to either at random."""
    return f"""
let lam = {lam};
pool kv {{ cap {cap}; block 16; evict lru; preempt lifo; }}
stage E0 : step {{ budget 64; cost 0.001 + 1e-7 * kv_decode; memory kv; }}
stage E1 : step {{ budget 64; cost {c1} + 1e-7 * kv_decode; memory kv; }}
workload {{
  arrive poisson(lam);
  turn {{ set n = ~uniform(20, 300); set o = 2 + ~exp(200); set e = floor(~uniform(0, 2)); }}
  session {{ turn; request; end; }}
}}
server {{
  set t0 = now;
  branch (e < 1) {{
    hold kv (n) {{ run E0 prefill (n) growing kv; run E0 decode (o - 1) growing kv; }} cache (n + o);
  }} else {{
    hold kv (n) {{ run E1 prefill (n) growing kv; run E1 decode (o - 1) growing kv; }} cache (n + o);
  }}
  observe response = now - t0;
}}
run {{ horizon 30; warmup 2; }}
"""


def _report(prog, check: bool) -> str:
    return json.dumps(to_dict(Simulation(prog, check_invariants=check).run()), sort_keys=True)


@pytest.mark.parametrize("kw", [{}, {"c1": "0.0005"}, {"lam": 6, "cap": 2500}])
def test_alternating_engines_report_as_the_event_loop(kw, monkeypatch):
    seen = {"handled": 0, "launched": 0, "left": 0}
    frog = leapfrog.leapfrog

    def counting(a, b):
        before = a.sim.events
        out = frog(a, b)
        if out is not None:
            seen["handled"] += a.sim.events - before
            seen["launched" if out[1] else "left"] += 1
        return out

    prog = serq.load(source=source(**kw))
    slow = _report(prog, True)
    monkeypatch.setattr(burst, "leapfrog", counting)
    fast = _report(prog, False)
    assert fast == slow
    # the loop does run, and leaves both ways (counts at seed 1: 1514 / 95 / 5,
    # 454 / 364 / 21, 7232 / 473 / 24 ends handled / launched / left to `_closed`)
    assert seen["handled"] > 400 and seen["launched"] > 50 and seen["left"] > 3, seen
