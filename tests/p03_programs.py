"""Part 03 §12's worked examples P-1 … P-12 as test_frontend_p03.py loads
them: each in the flat 0.1.3 form (the spec's text) and in the `fn main`
form (checked with pyserq 0.1.5, which needs `cost(…)` on amounts and `if`
for `branch`), with the number of pools each declares."""

# The flat forms observe `adm` where the spec's 0.1.3 examples observe
# `admitted`, a supplied name refused as an observation name (Part 01 §6.2;
# pyserq 0.1.5 refuses it too); the spec's `fn main` forms write `adm`.
P1 = """
pool mem { cap 10; }
stage svc : delay;
workload { arrive batch(3);
  init { set u = serial == 0 ? 6 : serial == 1 ? 5 : 2; set d = serial == 0 ? 5 : 1; }
  session { request; } }
server { hold mem (u) { observe adm = now; run svc (d); } observe done = now; }
"""

P1_MAIN = """
fn main() {
  pool mem { cap 10; }
  stage svc : delay;
  workload { arrive batch(3);
    init { set u = serial == 0 ? 6 : serial == 1 ? 5 : 2; set d = serial == 0 ? 5 : 1; } }
  server {
    hold mem (cost(mem, u)) { observe adm = now; run svc (cost(svc, d)); }
    observe done = now;
  }
}
"""

P2 = """
pool mem { cap 10; block 4; }
stage svc : delay;
workload { arrive batch(3);
  init { set u = serial == 0 ? 5 : 1; set r = serial == 1 ? 6 : 0; }
  session { request; } }
server {
  hold mem (u) reserve (r) { observe adm = now; observe usedin = used(mem);
                             run svc (serial == 0 ? 4 : 1); }
  observe done = now;
}
"""

P2_MAIN = """
fn main() {
  pool mem { cap 10; block 4; }
  stage svc : delay;
  workload { arrive batch(3);
    init { set u = serial == 0 ? 5 : 1; set r = serial == 1 ? 6 : 0; } }
  server {
    hold mem (cost(mem, u)) reserve (cost(mem, r)) {
      observe adm = now; observe usedin = used(mem);
      run svc (cost(svc, serial == 0 ? 4 : 1));
    }
    observe done = now;
  }
}
"""

P3 = """
pool mem { cap 10; }
stage svc : delay;
workload { arrive batch(2); session { request; } }
server { hold mem (4 + queued(mem) * 100) { run svc (1); } }
"""

P3_MAIN = """
fn main() {
  pool mem { cap 10; }
  stage svc : delay;
  workload { arrive batch(2); }
  server { hold mem (cost(mem, 4 + queued(mem) * 100)) { run svc (cost(svc, 1)); } }
}
"""

P4 = """
pool kv { cap 100; block 4; }
stage svc : delay;
workload { arrive batch(1); session { request; } }
server {
  hold kv (10) { run svc (1); } cache (7);                                    // keeps rd(min(7,12)) = 4
  observe c_after1 = cachedin(kv);
  hold kv (20) { observe c2 = cached; run svc (1); } cache (18);             // consumes 4, keeps 16
  observe c_after2 = cachedin(kv);
  hold kv (20) reuse (9) { observe c3 = cached; run svc (1); } cache (0);     // consumes 8, 8 dead
  observe c_after3 = cachedin(kv);
  hold kv (5) { observe c4 = cached; run svc (1); } cache (30);               // keeps min(30, 8) = 8
  observe c_after4 = cachedin(kv);
  hold kv (5) { run svc (1); }                                                // no clause: entry untouched
  observe c_after5 = cachedin(kv);
  drop kv;
  observe c_after6 = cachedin(kv);
}
"""

P4_MAIN = """
fn main() {
  pool kv { cap 100; block 4; }
  stage svc : delay;
  workload { arrive batch(1); }
  server {
    hold kv (cost(kv, 10)) { run svc (cost(svc, 1)); } cache (cost(kv, 7));
    observe c_after1 = cachedin(kv);
    hold kv (cost(kv, 20)) { observe c2 = cached; run svc (cost(svc, 1)); } cache (cost(kv, 18));
    observe c_after2 = cachedin(kv);
    hold kv (cost(kv, 20)) reuse (cost(kv, 9)) { observe c3 = cached; run svc (cost(svc, 1)); } cache (cost(kv, 0));
    observe c_after3 = cachedin(kv);
    hold kv (cost(kv, 5)) { observe c4 = cached; run svc (cost(svc, 1)); } cache (cost(kv, 30));
    observe c_after4 = cachedin(kv);
    hold kv (cost(kv, 5)) { run svc (cost(svc, 1)); }
    observe c_after5 = cachedin(kv);
    drop kv;
    observe c_after6 = cachedin(kv);
  }
}
"""

P5 = """
pool kv { cap 20; block 2; evict lru; }
stage svc : delay;
workload { arrive batch(4); session { request; } }
server {
  branch (serial < 3) {
    run svc (serial);
    hold kv (6) { run svc (1); } cache (6);      // A, B, C release at 1, 2, 3
    run svc (10 - serial);
    hold kv (6) { observe found = cached; run svc (1); } cache (6);
  } else {
    run svc (4);
    hold kv (10) { observe used_at_d = used(kv); run svc (1); }
  }
}
"""

P5_MAIN = """
fn main() {
  pool kv { cap 20; block 2; evict lru; }
  stage svc : delay;
  workload { arrive batch(4); }
  server {
    if (serial < 3) {
      run svc (cost(svc, serial));
      hold kv (cost(kv, 6)) { run svc (cost(svc, 1)); } cache (cost(kv, 6));
      run svc (cost(svc, 10 - serial));
      hold kv (cost(kv, 6)) { observe found = cached; run svc (cost(svc, 1)); } cache (cost(kv, 6));
    } else {
      run svc (cost(svc, 4));
      hold kv (cost(kv, 10)) { observe used_at_d = used(kv); run svc (cost(svc, 1)); }
    }
  }
}
"""

P6 = """
pool kv { cap 20; evict by (waiting, size); }
pool gate { cap 1; }
stage svc : delay;
workload { arrive batch(4); session { request; } }
server {
  run svc (serial);
  branch (serial < 3) {
    hold kv (serial == 0 ? 4 : serial == 1 ? 6 : 8) { run svc (1); } cache (20);
    branch (serial == 0) { hold gate (1) { run svc (10); } }
    else { run svc (serial == 1 ? 2 : 10); hold gate (1) { run svc (1); } }
    observe kept = cachedin(kv);
  } else {
    run svc (2);
    hold kv (10) { run svc (1); }
  }
}
"""

P6_MAIN = """
fn main() {
  pool kv { cap 20; evict by (waiting, size); }
  pool gate { cap 1; }
  stage svc : delay;
  workload { arrive batch(4); }
  server {
    run svc (cost(svc, serial));
    if (serial < 3) {
      hold kv (cost(kv, serial == 0 ? 4 : serial == 1 ? 6 : 8)) { run svc (cost(svc, 1)); } cache (cost(kv, 20));
      if (serial == 0) { hold gate (cost(gate, 1)) { run svc (cost(svc, 10)); } }
      else { run svc (cost(svc, serial == 1 ? 2 : 10)); hold gate (cost(gate, 1)) { run svc (cost(svc, 1)); } }
      observe kept = cachedin(kv);
    } else {
      run svc (cost(svc, 2));
      hold kv (cost(kv, 10)) { run svc (cost(svc, 1)); }
    }
  }
}
"""

P7 = """
pool kv { cap 10; block 2; evict lru; spill host via link (size * 0.5) when (size >= 2); }
pool host { cap 100; }
stage link : fifo(1);
stage svc : delay;
workload { arrive batch(2); session { request; } }
server {
  branch (serial == 0) {
    hold kv (6) { run svc (1); } cache (6);
    run svc (5);
    observe in_kv = cachedin(kv);
    observe in_host = cachedin(host);
  } else {
    run svc (2);
    hold kv (9) { run svc (1); }
  }
}
"""

P7_MAIN = """
fn main() {
  pool kv { cap 10; block 2; evict lru; spill host via link (size * 0.5) when (size >= 2); }
  pool host { cap 100; }
  stage link : fifo(1);
  stage svc : delay;
  workload { arrive batch(2); }
  server {
    if (serial == 0) {
      hold kv (cost(kv, 6)) { run svc (cost(svc, 1)); } cache (cost(kv, 6));
      run svc (cost(svc, 5));
      observe in_kv = cachedin(kv);
      observe in_host = cachedin(host);
    } else {
      run svc (cost(svc, 2));
      hold kv (cost(kv, 9)) { run svc (cost(svc, 1)); }
    }
  }
}
"""

P8 = """
pool mem { cap 10; preempt lifo; }
stage svc : delay;
workload { arrive batch(2); session { request; } }
server {
  hold mem (serial == 0 ? 6 : 3) {
    observe adm = now; observe comp = computed;
    run svc (1);
    grow mem (serial == 0 ? 3 : 0);
    observe grown_at = now;
    run svc (serial == 0 ? 4 : 2);
  } cache (10);
  observe done = now;
}
"""

P8_MAIN = """
fn main() {
  pool mem { cap 10; preempt lifo; }
  stage svc : delay;
  workload { arrive batch(2); }
  server {
    hold mem (cost(mem, serial == 0 ? 6 : 3)) {
      observe adm = now; observe comp = computed;
      run svc (cost(svc, 1));
      grow mem (cost(mem, serial == 0 ? 3 : 0));
      observe grown_at = now;
      run svc (cost(svc, serial == 0 ? 4 : 2));
    } cache (cost(mem, 10));
    observe done = now;
  }
}
"""

P9 = """
pool P { cap 100; }
pool Q { cap 100; block 4; }
stage svc : delay;
workload { arrive batch(2); session { request; } }
server {
  hold P (10) { run svc (1); } cache (10) lease P (serial == 0 ? 5 : inf);
  observe used_after = used(P);  observe cached_after = cachedin(P);
  run svc (2);
  branch (serial == 1) {
    hold Q (12) { run svc (1); load Q (7); release P;
                  observe p_used = used(P); observe p_cached = cachedin(P); } cache (20);
    observe q_cached = cachedin(Q);
  } else {
    run svc (5);
    observe p0_used = used(P); observe p0_cached = cachedin(P);
  }
}
"""

P9_MAIN = """
fn main() {
  pool P { cap 100; }
  pool Q { cap 100; block 4; }
  stage svc : delay;
  workload { arrive batch(2); }
  server {
    hold P (cost(P, 10)) { run svc (cost(svc, 1)); } cache (cost(P, 10)) lease P (serial == 0 ? 5 : inf);
    observe used_after = used(P);  observe cached_after = cachedin(P);
    run svc (cost(svc, 2));
    if (serial == 1) {
      hold Q (cost(Q, 12)) { run svc (cost(svc, 1)); load Q (cost(Q, 7)); release P;
                    observe p_used = used(P); observe p_cached = cachedin(P); } cache (cost(Q, 20));
      observe q_cached = cachedin(Q);
    } else {
      run svc (cost(svc, 5));
      observe p0_used = used(P); observe p0_cached = cachedin(P);
    }
  }
}
"""

P10 = """
pool slot { cap 1; queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3, serial); }
stage gate : delay;
stage svc : fifo(1);
workload { arrive batch(6);
  init { set arrive = serial == 0 ? 0 : serial == 1 ? 0 : serial == 2 ? 1 : serial == 3 ? 2 : 3;
         set prompt = serial == 1 || serial == 5 ? 500 : 100;
         set immediate = serial == 4; }
  session { request; } }
server { run gate (arrive); hold slot (1) { observe adm = now; run svc (serial == 0 ? 4 : 1); } }
"""

P10_MAIN = """
fn main() {
  pool slot { cap 1; queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3, serial); }
  stage gate : delay;
  stage svc : fifo(1);
  workload { arrive batch(6);
    init { set arrive = serial == 0 ? 0 : serial == 1 ? 0 : serial == 2 ? 1 : serial == 3 ? 2 : 3;
           set prompt = serial == 1 || serial == 5 ? 500 : 100;
           set immediate = serial == 4; } }
  server {
    run gate (cost(gate, arrive));
    hold slot (cost(slot, 1)) { observe adm = now; run svc (cost(svc, serial == 0 ? 4 : 1)); }
  }
}
"""

P11 = """
pool mem { cap 10; reserve held; }
stage svc : delay;
workload { arrive batch(3); session { request; } }
server {
  run svc (serial);
  branch (serial == 0) {
    hold mem (2) reserve (6) { observe adm = now; run svc (3); grow mem (4);
                               observe grown = now; run svc (3); }
  } else {
    hold mem (serial == 1 ? 3 : 2) { observe adm = now; run svc (5); }
  }
  observe done = now;
}
"""

P11_MAIN = """
fn main() {
  pool mem { cap 10; reserve held; }
  stage svc : delay;
  workload { arrive batch(3); }
  server {
    run svc (cost(svc, serial));
    if (serial == 0) {
      hold mem (cost(mem, 2)) reserve (cost(mem, 6)) {
        observe adm = now; run svc (cost(svc, 3)); grow mem (cost(mem, 4));
        observe grown = now; run svc (cost(svc, 3));
      }
    } else {
      hold mem (cost(mem, serial == 1 ? 3 : 2)) { observe adm = now; run svc (cost(svc, 5)); }
    }
    observe done = now;
  }
}
"""

P12 = """
pool P { cap 10; }
stage s : delay;
workload { arrive batch(2); session { request; } }
server { hold P (6) { run s (2); } cache (6) lease P (1); run s (1); }
"""

P12_MAIN = """
fn main() {
  pool P { cap 10; }
  stage s : delay;
  workload { arrive batch(2); }
  server { hold P (cost(P, 6)) { run s (cost(s, 2)); } cache (cost(P, 6)) lease P (1); run s (cost(s, 1)); }
}
"""

EXAMPLES = {f"P{i}": (globals()[f"P{i}"], globals()[f"P{i}_MAIN"]) for i in range(1, 13)}
POOLS = {"P1": 1, "P2": 1, "P3": 1, "P4": 1, "P5": 1, "P6": 2, "P7": 2, "P8": 1, "P9": 2,
         "P10": 1, "P11": 1, "P12": 1}
