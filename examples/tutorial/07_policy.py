"""Tutorial step 7: a scheduling policy written in Python.

`ShortestJobFirst` replaces the order in which the FIFO stage `svc` of
07_mg1.sq takes waiting jobs: a freed server takes the job with the least
work instead of the oldest one (non-preemptive shortest job first).

    serq-simpy run examples/tutorial/07_mg1.sq \\
        --policy svc=examples/tutorial/07_policy.py:ShortestJobFirst
    python examples/tutorial/07_policy.py

The second command runs the program under FIFO and under the policy with
the same seed and prints both mean response times with their 95 %
intervals.
"""
from __future__ import annotations

import os

import serq
from serq.policies import Fifo, Job


class ShortestJobFirst(Fifo):
    """`select_next`: the waiting job with the least work (ties: oldest)."""

    def select_next(self) -> Job:
        job = min(self.waiting, key=lambda j: j.work)   # min keeps the first of equals
        self.waiting.remove(job)
        return job


def main() -> None:
    """Compare FIFO and shortest job first on 07_mg1.sq (seed 1)."""
    here = os.path.dirname(os.path.abspath(__file__))
    program = serq.load(os.path.join(here, "07_mg1.sq"))
    for label, policies in (("FIFO", {}), ("shortest job first", {"svc": ShortestJobFirst})):
        r = serq.run(program, seed=1, policies=policies).observe("response")
        print(f"{label:20s} response {r.mean:.3f} ± {r.ci:.3f} ({r.count} requests)")


if __name__ == "__main__":
    main()
