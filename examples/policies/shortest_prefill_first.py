"""A custom serve order for the step engine: decodes first, then the
prefill with the fewest tokens left.

An engine with a small token budget (Sarathi-Serve's 512 tokens) serves
its residents in admission order: the decodes, then the prefills in the
order their requests were admitted, so a short prompt admitted after a
long one waits for the long one's chunks. This order serves every decode
first (each takes one token) and then the prefills by the tokens they
have left, shortest first: shortest-remaining-processing-time on the
prefill, which lowers the mean time to first token.

It is the language's `serve by (decoding ? 0 : 1, decoding ? 0 :
remaining)`, written in Python (tests/test_policy_examples.py checks the
two give identical reports); a Python order can read anything the runtime
knows, such as the session's attributes (`job.session.attribute(...)`).

    serq-simpy run examples/policies/step_engine.sq \\
        --policy engine=examples/policies/shortest_prefill_first.py:ShortestPrefillFirst

`python examples/policies/shortest_prefill_first.py` runs the program in
admission order and in this order with the same seeds (paired replications) and compares the
time to first token (docs/policies.md has the numbers).
"""
from __future__ import annotations

from typing import Callable, Optional

from serq.policies import StepJob, StepStage


class ShortestPrefillFirst(StepStage):
    """`serving_order`: decodes in admission order, then prefills by
    remaining tokens (ties in admission order)."""

    def serving_order(self, keys: Optional[Callable[..., tuple]]) -> list[StepJob]:
        return sorted(self.residents, key=self.order_key)

    @staticmethod
    def order_key(job: StepJob) -> tuple[int, float]:
        """(0, 0) for a decode, (1, remaining) for a prefill."""
        if job.mode == "decode":
            return (0, 0.0)
        return (1, job.remaining)




def main() -> None:
    """Compare admission order and shortest prefill first over 10 paired replications
    (seeds 1–10, the program's horizon; `serq.compare`)."""
    from compare import compare, print_comparison, program_path
    rows = compare(program_path("step_engine.sq"), {"engine": ShortestPrefillFirst},
                   ["ttft_short", "ttft", "response"], seed=1)
    print_comparison("step_engine.sq: admission order vs shortest prefill first", rows)


if __name__ == "__main__":
    main()
