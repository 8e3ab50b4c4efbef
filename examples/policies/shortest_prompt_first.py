"""Shortest-prompt-first admission for vLLM's request path.

vLLM admits waiting requests first come, first served. This policy admits
the waiting request with the shortest prompt first (a preempted request,
re-queued at the head, still goes first), like shortest-job-first: short
prompts stop waiting behind long ones, and the mean time to first token
falls when requests queue for a running slot.

The engine admits from the `reqs` pool (`pool reqs { cap max_seqs; admit
via engine; }`), so the policy is the pool's `select_candidate`:

    serq-simpy run examples/policies/vllm_prompt_mix.sq \\
        --policy reqs=examples/policies/shortest_prompt_first.py:ShortestPromptFirst

`python examples/policies/shortest_prompt_first.py` runs the program under
FCFS and under this policy with the same seeds (paired replications) and compares the time to
first token (docs/policies.md has the numbers).
"""
from __future__ import annotations

from typing import Any

from serq.policies import Pool


class ShortestPromptFirst(Pool):
    """`select_candidate`: a preempted hold first, else the shortest `prompt`
    (ties: the earliest to join the queue)."""

    def select_candidate(self) -> Any:
        best = None
        best_key = None
        for frame in self.queue:
            if frame.front:  # a preempted request keeps its place at the head
                return frame
            key = (frame.session.attribute("prompt"), frame.enq_seq)
            if best is None or key < best_key:
                best, best_key = frame, key
        return best


def main() -> None:
    """Compare FCFS and shortest-prompt-first admission over 10 paired replications
    (seeds 1–10, the program's horizon; `serq.compare`)."""
    from compare import compare, print_comparison, program_path
    rows = compare(program_path("vllm_prompt_mix.sq"), {"reqs": ShortestPromptFirst},
                   ["ttft_short", "ttft", "response"], seed=1)
    print_comparison("vllm_prompt_mix.sq: FCFS admission vs shortest prompt first", rows)


if __name__ == "__main__":
    main()
