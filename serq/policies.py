"""The policy seam: the resource classes a user policy subclasses.

Every decision a scheduler makes is one method of one of these classes; a
subclass overrides the ones it changes and is bound to a declared stage or
pool by name: `serq.run(program, policies={"engine": MyEngine, "kv": MyPool})`
or `serq-simpy run FILE --policy engine=package.module:MyEngine`.

| class | declared as | method | decides |
|---|---|---|---|
| `Fifo` | `stage S : fifo(c)` | `select_next()` | which waiting job a freed server takes |
| `Ps` | `stage S : ps(φ)` | `finish_order(job)` | which of the jobs with equal finish tags finishes first |
| `Pool` | `pool P { … }` | `select_candidate()` | which waiting hold is tried next (admission) |
| `Pool` | | `has_room(units, frame)` | the fit rule |
| `Pool` | | `evict_victim(entries)` | which cache entry loses units next |
| `Pool` | | `preempt_victim(candidates)` | which holder a failed growth preempts |
| `StepStage` | `stage S : step { … }`, `engine S on …` | `serving_order(keys)` | the order residents are served in |
| `StepStage` | | `in_batch(job, plan, only)` | whether a resident gets tokens in this iteration |
| `StepStage` | | `admission_pool(plan)` | whether, and from which pool, the engine admits next |

Each method's docstring says what it receives, what it returns and which
rule the runtime checks after it (only for methods a subclass overrides;
`serq.runtime.policy.guards`). A broken rule stops the run with a `PolicyError`
naming the policy, the method and the rule. `Delay` has no decision; it is
listed so that a `delay` stage can be bound to a subclass too.

A session's attributes are read by their program names:
`session.attribute("prompt")` (for a `HoldFrame` `frame.session`, for a job
`job.session`, for a cache entry `entry.attrs()`).
"""
from __future__ import annotations

from .runtime.policy.classes import READABLE, Delay, Fifo, Pool, Ps, StepStage, readable_state
from .runtime.policy.guards import POLICY_METHODS, PolicyBindingError, PolicyError, load_policy
from .runtime.resources.steprun import Plan, StepJob
from .runtime.resources.holds import HoldFrame
from .runtime.resources.pools import CacheEntry
from .runtime.resources.stages import Job

__all__ = [
    "CacheEntry", "Delay", "Fifo", "HoldFrame", "Job", "POLICY_METHODS", "Plan",
    "PolicyBindingError", "PolicyError", "Pool", "Ps", "READABLE", "StepJob", "StepStage",
    "load_policy", "readable_state",
]
