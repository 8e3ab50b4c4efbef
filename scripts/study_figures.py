"""The study figures of the README and the studies guide (docs/img/*.png),
made with the study layer as a user would:

1. `sweep_ttft_p99.png` — p99 TTFT of vLLM v1 (examples/single-turn/
   vllm_single_turn.sq) over the arrival rate, one line per max_num_seqs,
   3 replications per point, Student-t bars, the points that do not settle
   crossed out;
2. `warmup_mser5.png` — M/M/1 at ρ = 0.9 started empty: response-time
   samples, running mean with its batch-means band, MSER-5's warm-up;
3. `ttft_ecdf.png` — the ECDF of TTFT at 17 requests/s with p50 and p99;
4. `ttft_hist.png` — the histogram of the same samples;
5. `gauges.png` — the KV pool's occupancy over time (examples/tutorial/
   04_step_engine.sq with `gauge kv_used = used(kv);` declared).

    python scripts/study_figures.py [--jobs N]      (about 5 minutes on 2 cores)
"""
from __future__ import annotations

import argparse
import os

import serq
import serq.study as study
from serq.study.plots import series_figure
from serq.study.warmup import choose

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMG = os.path.join(ROOT, "docs", "img")
VLLM = os.path.join(ROOT, "examples", "single-turn", "vllm_single_turn.sq")
MG1 = os.path.join(ROOT, "examples", "single-turn", "mg1.sq")
STEP = os.path.join(ROOT, "examples", "tutorial", "04_step_engine.sq")
#: Every figure this script draws (tests/test_docs_usability.py: the site shows each).
FIGURES = ("sweep_ttft_p99.png", "warmup_mser5.png", "ttft_ecdf.png", "ttft_hist.png",
           "gauges.png")


def main() -> None:
    ap = argparse.ArgumentParser(description="draw the README's study figures")
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args()
    os.makedirs(IMG, exist_ok=True)
    res = study.sweep(VLLM, {"Lambda": "8:20:3", "max_seqs": [8, 16, 32]}, replications=3,
                      horizon=30, warmup=5, jobs=args.jobs,
                      out=os.path.join(ROOT, "build", "study-figures"))
    res.plot("client.ttft:p99", x="Lambda", by="max_seqs",
             path=os.path.join(IMG, "sweep_ttft_p99.png"))
    mm1 = serq.load(MG1, sets={"lam": "0.9"})
    pilot = serq.run(mm1, seed=2, horizon=20000, warmup=0)
    choice = choose(pilot, "response")
    series_figure(pilot, "response", warmup=choice.time, method=choice.method,
                  path=os.path.join(IMG, "warmup_mser5.png"))
    one = serq.run(serq.load(VLLM, sets={"Lambda": "17"}), seed=1, horizon=30, warmup=5)
    one.plot("ecdf", "ttft", path=os.path.join(IMG, "ttft_ecdf.png"))
    one.plot("hist", "ttft", path=os.path.join(IMG, "ttft_hist.png"))
    with open(STEP, encoding="utf-8") as fh:
        gauged = fh.read() + "\ngauge kv_used = used(kv);\n"
    step = serq.run(serq.load(source=gauged), seed=1, horizon=120, warmup=0)
    step.plot("gauges", path=os.path.join(IMG, "gauges.png"))
    print(choice.describe())


if __name__ == "__main__":
    main()
