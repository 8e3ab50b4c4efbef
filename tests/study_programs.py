"""A small program for the study tests: M/M/1 through a pool of 2 tokens,
with two gauges, so that every section a study summarises (observation,
stage, pool, gauge) has rows."""

GAUGED = """
let lam = 0.8;
pool tok { cap 2; }
stage svc : fifo;
gauge q = queue(svc);
gauge held = used(tok);
workload { arrive poisson(lam); }
session {
  turn;
  set t0 = now;
  hold tok (1) { run svc (~exp(1)); }
  observe response = now - t0;
}
run { horizon 400; warmup 50; seed 7; }
"""
