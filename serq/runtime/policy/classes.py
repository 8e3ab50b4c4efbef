"""The policy classes (`serq.policies`): what a policy author subclasses.

Each class has only its decisions (methods a subclass may override; the
built-in one is the language's rule, reached with `super()`) and, listed in
`READABLE`, the state of the resource a decision may read. Nothing else is
inherited: the runtime's machinery (the SimPy resource, its statistics, the
step engine's fast paths) is not in a policy subclass's inheritance. When a
policy is bound (`guards.bind_policies`), the runtime makes the class it
runs as `runtime_class(policy)`: the policy first, then the runtime's
resource class, so the policy's decisions replace the built-in ones and the
state it reads is the resource's own. The fast paths of a step engine are
mixed in by the simulation only when no decision is overridden.

A built-in decision here calls the resource's own rule; its docstring is
that rule's (one text, written where the rule is).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ..resources import engine, pools, stages
from ..resources.decision import decision

#: The state of each resource a policy may read (attribute: what it is).
#: Everything else on a running resource is the runtime's and may change.
READABLE: dict[str, dict[str, str]] = {
    "Stage": {
        "name": "the declared name",
        "index": "the member index of a stage array (None for a single stage)",
        "label": "`name` or `name[index]`, as reports and errors write it",
        "env": "the run's `simpy.Environment` (`env.now` is the current time)",
        "n": "jobs present (waiting and in service)",
    },
    "Fifo": {
        "servers": "the number of servers `c`",
        "busy": "servers busy",
        "waiting": "the waiting `Job`s, a deque in arrival order (`job.work`, "
                   "`job.arrival`, `job.session`)",
    },
    "Ps": {
        "seq": "jobs that joined before the arriving one (the default key)",
        "heap": "the present jobs as `(tag, key, job)` entries",
    },
    "Delay": {},
    "Pool": {
        "name": "the declared name",
        "index": "the member index of a pool array (None for a single pool)",
        "label": "`name` or `name[index]`",
        "env": "the run's `simpy.Environment`",
        "cap": "the capacity in units",
        "block": "the block size (None without `block`)",
        "used": "units held (allocated to holds)",
        "cached": "units cached (released, kept for reuse)",
        "queue": "the waiting `HoldFrame`s (`frame.session`, `frame.front`, "
                 "`frame.enq_time`, `frame.enq_seq`)",
        "frames": "the `HoldFrame`s holding this pool, in admission order",
        "entries": "the cache's `CacheEntry`s by key (`size`, `last`, `rseq`, "
                   "`session`, `attrs()`)",
    },
    "StepStage": {
        "residents": "the `StepJob`s admitted, in admission order (`mode`, "
                     "`remaining`, `adm`, `session`)",
        "served_pools": "the pools naming this stage in `admit via`, in "
                        "declaration order",
        "registers": "the stage's registers (`state`) by name",
    },
}


def _rule(runtime: type, name: str) -> Callable[..., Any]:
    """The resource's own rule `name`, with its docstring, as a built-in decision."""
    fn = getattr(runtime, name)

    def built_in(self: Any, *args: Any) -> Any:
        return fn(self, *args)

    built_in.__name__ = name
    built_in.__doc__ = fn.__doc__
    built_in.__wrapped__ = fn  # type: ignore[attr-defined]  # signature and source
    return decision(built_in)


class Stage:
    """A stage's policy class: the state every stage kind offers (`READABLE`)."""

    __slots__ = ()


class Fifo(Stage):
    """`stage S : fifo(c)`: c servers; the policy chooses which waiting job a
    freed server takes."""

    __slots__ = ()
    select_next = _rule(stages.Fifo, "select_next")


class Ps(Stage):
    """`stage S : ps(φ)`: processor sharing; the policy orders the jobs
    whose finish tags are equal."""

    __slots__ = ()
    finish_order = _rule(stages.Ps, "finish_order")


class Delay(Stage):
    """`stage S : delay`: no decision (listed so that a `delay` stage can be
    bound to a subclass too)."""

    __slots__ = ()


class Pool:
    """`pool P { … }`: the admission order, the fit rule, eviction and
    preemption are the policy's."""

    __slots__ = ()
    select_candidate = _rule(pools.Pool, "select_candidate")
    has_room = _rule(pools.Pool, "has_room")
    evict_victim = _rule(pools.Pool, "evict_victim")
    preempt_victim = _rule(pools.Pool, "preempt_victim")


class StepStage(Stage):
    """`stage S : step { … }` or `engine S on …`: the serve order, the batch
    and the admissions of each iteration are the policy's."""

    __slots__ = ()
    serving_order = _rule(engine.StepStage, "serving_order")
    in_batch = _rule(engine.StepStage, "in_batch")
    admission_pool = _rule(engine.StepStage, "admission_pool")

    def serve_context(self, job: Any) -> tuple:
        """The values a compiled serve key or `only` predicate takes for
        resident `job` (the Serve moment of Part 04 §10): `keys(*ctx)`."""
        return engine.StepStage._serve_ctx(self, job)  # type: ignore[arg-type]


#: The runtime's resource class of each policy class.
RUNTIME: dict[type, type] = {Fifo: stages.Fifo, Ps: stages.Ps, Delay: stages.Delay,
                             Pool: pools.Pool, StepStage: engine.StepStage}

#: The decisions of each policy class, in the order of its documentation.
DECISIONS: dict[type, tuple[str, ...]] = {
    Fifo: ("select_next",),
    Ps: ("finish_order",),
    Delay: (),
    StepStage: engine.DECISIONS,
    Pool: ("select_candidate", "has_room", "evict_victim", "preempt_victim"),
}


def policy_class(cls: type) -> Optional[type]:
    """The policy class `cls` is a kind of (a subclass of it, or of its
    runtime class), or None."""
    for policy, runtime in RUNTIME.items():
        if issubclass(cls, (policy, runtime)):
            return policy
    return None


def readable_state(policy: type) -> dict[str, str]:
    """The state a policy of class `policy` may read (its own and its base's)."""
    out: dict[str, str] = {}
    for klass in reversed(policy.__mro__):
        if klass.__module__ == __name__:
            out.update(READABLE.get(klass.__name__, {}))
    return out


def runtime_class(cls: type) -> type:
    """The class a policy runs as: `cls` ahead of its resource's runtime
    class (`cls` itself when it already subclasses the runtime class)."""
    policy = policy_class(cls)
    if policy is None:
        raise TypeError(f"{cls!r} is not a policy class")
    runtime = RUNTIME[policy]
    if issubclass(cls, runtime):
        return cls
    return type(cls.__name__, (cls, runtime), {
        "__module__": cls.__module__, "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__})
