"""Shortest-prompt-first admission for vLLM's request path.

vLLM admits waiting requests first come, first served. This policy admits
the waiting request with the shortest prompt first (a preempted request,
re-queued at the head, still goes first), like shortest-job-first: short
prompts stop waiting behind long ones, and the mean time to first token
falls when requests queue for a running slot.

The engine admits from the `reqs` pool (`pool reqs { cap max_seqs; admit
via engine; }`), so the policy is the pool's `select_candidate`:

    serq-simpy run examples/single-turn/vllm_single_turn.sq \\
        --policy reqs=examples/policies/shortest_prompt_first.py:ShortestPromptFirst
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
