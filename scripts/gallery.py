"""Write the examples gallery of the documentation site: one page per
example program under docs/examples/, their index, and the gallery's part
of mkdocs.yml's nav.

    python scripts/gallery.py            # run every example, rewrite the pages
    python scripts/gallery.py --only NAME # one page (NAME: a program path)

Each page says what the program models, shows the command that runs it
and the report that command printed when the page was written, and
includes the program itself from its file (pymdownx.snippets), so the
program text on the site is always the file's. The reports are real runs;
rerun this script after a change that moves the numbers or the report's
layout. tests/test_docs_site.py checks that every example has a page and
that each page is what `render` makes of its entry (the report aside);
tests/test_docs.py loads the included programs and, with `-m slow`, runs
each page's command.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GALLERY = os.path.join(ROOT, "docs", "examples")
NAV_BEGIN = "      # gallery: begin (scripts/gallery.py writes this part)"
NAV_END = "      # gallery: end"


@dataclass
class Example:
    """One gallery page."""

    path: str                       # the program, relative to the repository root
    title: str
    summary: str                    # what it models (Markdown)
    args: Optional[str] = ""        # options after the file; None: a library, not run
    note: str = ""                  # said after the report
    policies: list[str] = field(default_factory=list)   # Python policy files for it

    @property
    def group(self) -> str:
        """The folder under examples/."""
        return self.path.split("/")[1]

    @property
    def page(self) -> str:
        """The page, relative to docs/."""
        name = os.path.splitext(os.path.basename(self.path))[0].replace("_", "-")
        return f"examples/{self.group}/{name}.md"

    @property
    def command(self) -> str:
        """The command the page shows and runs."""
        return f"serq-simpy run {self.path}" + (f" {self.args}" if self.args else "")


_FLAT = ("The same deployment as [`{0}`]({1}) written with kernel statements only "
         "(stages, pools, holds, runs) instead of queues and calls; the two programs "
         "give identical reports.")

EXAMPLES: list[Example] = [
    Example("examples/single-turn/mg1.sq", "M/M/1",
            "Poisson arrivals, one FIFO server, exponential service of mean 1: the "
            "textbook queue, with its closed forms in the header. It is also the "
            "benchmark model (`--horizon 250000`)."),
    Example("examples/single-turn/ps.sq", "M/G/1 processor sharing",
            "One processor-sharing server and a highly variable (hyperexponential) "
            "service: the mean response time depends only on the mean service time, "
            "whatever the variability (`--set cv2=1` or `--set cv2=16`)."),
    Example("examples/single-turn/arguments.sq", "Program inputs and definitions",
            "An M/M/1 queue parameterised by inputs given on the command line "
            "(`std/args`: `-- --rho 0.8 --mean 1`) and written with an expression "
            "`def` and a statement `def`.",
            "--horizon 20000 -- --rho 0.8",
            "The program has no `run` block, so `--horizon` is required."),
    Example("examples/single-turn/vllm_single_turn.sq", "vLLM, single-turn requests",
            "vLLM v1 on one step engine (`vllm_request` of the library "
            "[`lib/vllm.sq`](../lib/vllm.md)) serving Poisson single-turn requests "
            "with 1000–3000-token prompts."),
    Example("examples/multi-turn/closed.sq", "A closed multi-turn workload",
            "N users alternate think time and requests to one FIFO server; the "
            "closed network's exact mean-value analysis is in the header."),
    Example("examples/multi-turn/prefix_cache.sq", "Multi-turn chat with a prefix cache",
            "Multi-turn sessions share a KV pool (16-token blocks, LRU) whose prefix "
            "cache carries each conversation between turns; tutorial step 3 is a "
            "commented copy."),
    Example("examples/multi-turn/vllm.sq", "vLLM, multi-turn agent sessions",
            "vLLM v1 on one device serving multi-turn agent sessions: a growing "
            "context, a hidden output length, tool calls between turns.",
            "--horizon 400 --warmup 40",
            "The horizon is shortened from the program's 2000 s to keep the run short; "
            "the intervals are wider than with the program's own horizon."),
    Example("examples/multi-turn/replica.sq", "vLLM replicas behind a router",
            "Four vLLM replicas (stage and pool arrays) behind a router that picks a "
            "replica per session with `choose … by (…)`; `--set sticky=0` picks per "
            "turn and loses the prefix cache."),
    Example("examples/multi-turn/routing.sq", "Routing policies for multi-turn sessions",
            "J FIFO replicas behind a router that chooses a replica per turn with "
            "`choose` over the replicas' observables; `--set policy=0…4` selects "
            "affinity, least loaded, KV migration, myopic or lookahead routing.",
            "--horizon 5000 --warmup 500",
            "The horizon is shortened from the program's 20 000 to keep the run short."),
    Example("examples/multi-turn/parallel_tools.sq", "Agent turns with two tool calls at once",
            "Agent sessions on one vLLM-like step engine whose turns call a web search "
            "and a code sandbox at once: the search runs as a concurrent leg "
            "(`fork { … }`, then `join;`), so a turn waits for the slower call, not for "
            "both; `--set parallel=0` calls them one after the other."),
    Example("examples/lib/vllm.sq", "Library: vLLM v1's request path",
            "Definitions only: `vllm_request` models vLLM v1's scheduler — FCFS "
            "admission under `max_num_seqs` and the KV blocks, chunked prefill, "
            "prefix cache, preemption with recompute. The header maps each part of "
            "vLLM's scheduler to the line that models it. Programs `use` it; tutorial "
            "step 5 explains it.", None),
    Example("examples/lib/scheduling.sq", "Library: batching-policy comparison",
            "Definitions shared by the four programs of `examples/papers/`: the "
            "roofline iteration time and the common deployment and workload.", None),
    Example("examples/papers/fastertransformer.sq", "FasterTransformer batching",
            "One deployment and workload under FasterTransformer's scheduler: decodes "
            "first, never mixed with prefills (`serve only (…)`). "
            "[Batching policies side by side](../../scheduling.md) compares the four "
            "schedulers.",
            "--horizon 100 --warmup 10",
            "The horizon is shortened from the program's 300 s: this scheduler's "
            "queue grows through the run at the default load."),
    Example("examples/papers/vllm_exclusive.sq", "vLLM's original scheduler",
            "The same deployment under vLLM's scheduler before chunked prefill: a "
            "prefill runs alone, ahead of the decodes (`serve exclusive prefill`)."),
    Example("examples/papers/orca.sq", "Orca batching",
            "The same deployment under Orca's iteration-level scheduling: mixed "
            "batches, whole prefills (`granule inf`)."),
    Example("examples/papers/sarathi.sq", "Sarathi-Serve batching",
            "The same deployment under Sarathi-Serve's stall-free batching: a small "
            "token budget chunks prefills so that they ride along with decodes."),
    Example("examples/pd-disaggregation/llmd_nixl_pull.sq",
            "llm-d with NIXL pull (queues)",
            "llm-d's router, vLLM prefill and decode pods and NIXL pull over the pods' "
            "network cards, written with queues, calls and `D pull P`; "
            "`serq-simpy check --kernel` shows what the queues become.",
            "--horizon 400 --warmup 40",
            "The horizon is shortened from the program's 2000 s to keep the run short."),
    Example("examples/pd-disaggregation/llmd_nixl_pull_flat.sq",
            "llm-d with NIXL pull (kernel statements)",
            _FLAT.format("llmd_nixl_pull.sq", "llmd-nixl-pull.md"),
            "--horizon 400 --warmup 40",
            "The horizon is shortened from the program's 2000 s to keep the run short."),
    Example("examples/pd-disaggregation/vllm_nixl_push.sq", "vLLM with NIXL push (queues)",
            "One vLLM prefill and one decode instance, both requests sent at once: the "
            "prefill runs as a leg of the request (`fork`), the decoder parks its blocks "
            "and waits for it (`join;`), then the prefiller writes the KV over both "
            "network cards after a fixed wait (the push relation `P push D`); "
            "`--set concurrent=0` sends the decode request after the prefill's answer.",
            "--horizon 400 --warmup 40",
            "The horizon is shortened from the program's 2000 s to keep the run short."),
    Example("examples/pd-disaggregation/vllm_nixl_push_transfer.sq",
            "vLLM with NIXL push, one request after the other (queues)",
            "The push deployment with the decode request sent after the prefill's "
            "answer, written without the push relation: the writer's wait is a stage "
            "`wr` and the copy `transfer on P.nic, D.nic`; its report equals "
            "[`vllm_nixl_push.sq`](vllm-nixl-push.md)'s with `--set concurrent=0`.",
            "--horizon 400 --warmup 40",
            "The horizon is shortened from the program's 2000 s to keep the run short."),
    Example("examples/pd-disaggregation/vllm_nixl_push_flat.sq",
            "vLLM with NIXL push (kernel statements)",
            _FLAT.format("vllm_nixl_push_transfer.sq", "vllm-nixl-push-transfer.md"),
            "--horizon 400 --warmup 40",
            "The horizon is shortened from the program's 2000 s to keep the run short."),
    Example("examples/pd-disaggregation/pd_tandem.sq",
            "Aggregated vs disaggregated, closed load (queues)",
            "An aggregated server pool against a prefill → KV link → decode tandem "
            "under saturated closed load, in the queue form (`--set mode=0` for the "
            "aggregated pool).",
            "--horizon 5000 --warmup 500",
            "The horizon is shortened from the program's 20 000 to keep the run short."),
    Example("examples/pd-disaggregation/pd_tandem_flat.sq",
            "Aggregated vs disaggregated, closed load (kernel statements)",
            _FLAT.format("pd_tandem.sq", "pd-tandem.md"),
            "--horizon 5000 --warmup 500",
            "The horizon is shortened from the program's 20 000 to keep the run short."),
    Example("examples/pd-disaggregation/pd_open.sq",
            "Aggregated vs disaggregated, open load (queues)",
            "The tandem of `pd_tandem.sq` under Poisson arrivals; tutorial step 6 "
            "builds a smaller version."),
    Example("examples/pd-disaggregation/pd_open_flat.sq",
            "Aggregated vs disaggregated, open load (kernel statements)",
            _FLAT.format("pd_open.sq", "pd-open.md")),
    Example("examples/policies/vllm_prompt_mix.sq", "Policy: shortest prompt first",
            "vLLM's request path with a mix of short chat prompts and long documents, "
            "and a Python policy that admits the shortest prompt first instead of "
            "FCFS (a `Pool` subclass). [Policies in Python](../../policies.md) has "
            "the results.",
            policies=["examples/policies/shortest_prompt_first.py"]),
    Example("examples/policies/prefix_cache_tiers.sq", "Policy: premium sessions evicted last",
            "Multi-turn chat with a prefix cache and two service tiers, and a Python "
            "eviction policy that evicts premium conversations last (a `Pool` "
            "subclass) instead of LRU.",
            policies=["examples/policies/priority_eviction.py"]),
    Example("examples/policies/step_engine.sq", "Policy: shortest prefill first",
            "A step engine without pools and a prompt mix, and a Python serve order "
            "that serves decodes, then the shortest remaining prefill (a `StepStage` "
            "subclass), instead of admission order.",
            policies=["examples/policies/shortest_prefill_first.py"]),
    Example("examples/bench/two_resource_replica.sq", "Benchmark: a two-resource replica",
            "One device whose iterations last as long as reading the weights and the "
            "decoders' KV takes, prefills filling the compute this leaves, two session "
            "classes, a live-session pool and a KV pool with eviction: almost every "
            "iteration happens while nothing else moves, so `scripts/bench.py` times "
            "the engine's fast path with it."),
    Example("examples/measured/a6000_pull.sq", "Measured: serQ's A6000 testbed, pull mode",
            "The prefill/decode deployment serQ's authors measured on an A6000 testbed "
            "(llm-d/vLLM, NIXL pull, Qwen3-8B), replaying the measured run's trace with "
            "upstream's hand-calibrated constants; `serq-simpy validate` compares it with "
            "the measurement and `serq-simpy calibrate` fits it (see the guide "
            "[Held against measurements](../../guide/measured.md))."),
    Example("examples/measured/vllm_rtx4090_llama8b.sq", "Measured: vLLM on an RTX 4090",
            "vLLM serving Llama-3.1-8B on one RTX 4090, replaying LLMServingSim's recorded "
            "run of 300 ShareGPT requests, with the engine settings of its meta.json "
            "([Held against measurements](../../guide/measured.md))."),
    Example("examples/measured/vllm_rtxpro6000_llama8b.sq",
            "Measured: vLLM on an RTX PRO 6000, Llama-3.1-8B",
            "vLLM serving Llama-3.1-8B on one RTX PRO 6000, replaying LLMServingSim's "
            "recorded run ([Held against measurements](../../guide/measured.md))."),
    Example("examples/measured/vllm_rtxpro6000_qwen32b.sq",
            "Measured: vLLM on two RTX PRO 6000, Qwen3-32B (TP 2)",
            "vLLM serving Qwen3-32B with tensor parallelism 2, replaying LLMServingSim's "
            "recorded run ([Held against measurements](../../guide/measured.md))."),
    Example("examples/measured/vllm_rtxpro6000_qwen30b_a3b.sq",
            "Measured: vLLM on two RTX PRO 6000, Qwen3-30B-A3B (DP 2, EP)",
            "vLLM serving the mixture-of-experts Qwen3-30B-A3B with data parallelism 2 "
            "(two engines) and expert parallelism, replaying LLMServingSim's recorded run "
            "([Held against measurements](../../guide/measured.md))."),
]

GROUPS = {
    "single-turn": "Single-turn requests",
    "multi-turn": "Multi-turn sessions",
    "lib": "Libraries",
    "papers": "Batching policies from the literature",
    "pd-disaggregation": "Prefill/decode disaggregation",
    "measured": "Held against measurements",
    "policies": "Policies in Python",
    "bench": "Benchmark programs",
}

_REPORT = re.compile(r"```console\n\$ [^\n]*\n(?P<report>.*?)```", re.S)


def render(ex: Example, report: str) -> str:
    """The page of `ex`, with `report` (the command's output) under the command."""
    out = [f"# {ex.title}", "", ex.summary, "", f"File: `{ex.path}`", ""]
    if ex.args is not None:
        out += ["## Run it", "", "<!-- docs-test: slow -->", "```console", f"$ {ex.command}",
                report.rstrip("\n"), "```", ""]
        if ex.note:
            out += [ex.note, ""]
        for policy in ex.policies:
            cls = _policy_class(policy)
            out += [f"With the policy of `{policy}`:", "", "<!-- docs-test: slow -->", "```console",
                    f"$ serq-simpy run {ex.path} --policy {_bound_name(cls)}={policy}:{cls}",
                    "```", ""]
    else:
        out += ["A library has no run of its own: a program `use`s it.", ""]
    out += ["## The program", "", "```sq", f'--8<-- "{ex.path}"', "```", ""]
    for policy in ex.policies:
        out += [f"## The policy (`{os.path.basename(policy)}`)", "", "```python",
                f'--8<-- "{policy}"', "```", ""]
    return "\n".join(out)


def _policy_class(policy: str) -> str:
    """The first class a policy file defines."""
    with open(os.path.join(ROOT, policy), encoding="utf-8") as fh:
        return re.search(r"^class (\w+)", fh.read(), re.M).group(1)


def _bound_name(cls: str) -> str:
    """The stage or pool docs/policies.md binds the policy to."""
    with open(os.path.join(ROOT, "docs", "policies.md"), encoding="utf-8") as fh:
        m = re.search(rf"--policy (\w+)=\S*:{cls}\b", fh.read())
    if not m:
        raise SystemExit(f"docs/policies.md binds no `{cls}`")
    return m.group(1)


def render_index() -> str:
    """The gallery's index page: a table per group."""
    out = ["# Examples", "",
           "Every program in `examples/`, one page each: what it models, the command "
           "that runs it with the report it printed, and the program. The tutorial's "
           "programs (`examples/tutorial/`) are explained step by step in the "
           "[tutorial](../tutorial/index.md).", ""]
    for group, title in GROUPS.items():
        out += [f"## {title}", "", "| Program | Models |", "|---|---|"]
        for ex in EXAMPLES:
            if ex.group == group:
                rel = os.path.relpath(ex.page, "examples")
                out.append(f"| [`{ex.path[len('examples/'):]}`]({rel}) | {ex.title} |")
        out.append("")
    return "\n".join(out)


def render_nav() -> str:
    """The gallery's lines of mkdocs.yml's nav."""
    lines = [NAV_BEGIN, "      - examples/index.md"]
    for group, title in GROUPS.items():
        lines.append(f"      - {title}:")
        lines += [f"          - {ex.page}" for ex in EXAMPLES if ex.group == group]
    lines.append(NAV_END)
    return "\n".join(lines)


def report_of(page_text: str) -> str:
    """The report a page shows under its command ('' if none)."""
    m = _REPORT.search(page_text)
    return m.group("report") if m else ""


def _run(ex: Example) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT)
    command = ex.command.replace("serq-simpy run ", "serq-simpy run --no-progress ", 1)
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{ex.command}: exit {done.returncode}\n{done.stderr}")
    return done.stdout


def write_nav(path: str = os.path.join(ROOT, "mkdocs.yml")) -> None:
    """Replace the gallery's part of mkdocs.yml's nav."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    start, end = text.index(NAV_BEGIN), text.index(NAV_END) + len(NAV_END)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text[:start] + render_nav() + text[end:])


def main() -> None:
    """Run the examples and write the pages."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="write only this program's page")
    opts = ap.parse_args()
    for ex in EXAMPLES:
        if opts.only and ex.path != opts.only:
            continue
        report = _run(ex) if ex.args is not None else ""
        target = os.path.join(ROOT, "docs", ex.page)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(render(ex, report))
        print("wrote", ex.page, file=sys.stderr)
    with open(os.path.join(GALLERY, "index.md"), "w", encoding="utf-8") as fh:
        fh.write(render_index())
    write_nav()


if __name__ == "__main__":
    main()
