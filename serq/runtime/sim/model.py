"""A simulation built but not run: the SimPy seam (docs/guide/simpy.md).

`serq.build(program, …)` returns a `Model`: the program's simulation with its
`simpy.Environment` (`model.env`), its stages and pools by name
(`model.stage("S")`, `model.pool("P", 1)`), room for the user's own SimPy
processes beside the sessions (`model.process(generator)`) and `run()`,
which simulates to the horizon and returns the `Report` `serq.run` would.

A process meets a resource through a handle, never through the runtime
object itself, and changes it only through the handle's checked changes (as
a policy's decisions are checked): a `fifo` stage's number of servers
(`stage.servers = c`), a server taken out of service with SimPy's protocol
(`with stage.request() as req: yield req; …`, released at the block's end),
a step engine paused the same way (`with engine.pause() as p: yield p; …`)
and a pool's capacity (`pool.capacity = units`). A change that breaks its
rule stops the run with a `ChangeError` naming the resource, the change and
the rule.
"""
from __future__ import annotations

import math
from typing import Any, Generator, Optional

from simpy.events import Event

from ...core.errors import SimulationError, shortest
from ..policy.guards import PolicyError
from ..resources.engine import StepStage
from ..resources.pools import Pool
from ..resources.stages import Fifo, Stage


class ChangeError(PolicyError):
    """A process changed a resource against a rule: the run stops.

    Checked as a policy's decisions are: `resource` is the resource's label
    (`policy`), `change` what was changed (`method`), `rule` the rule broken."""

    @property
    def resource(self) -> str:
        """The label of the resource changed."""
        return self.policy

    @property
    def change(self) -> str:
        """What was changed (`servers`, `request`, `capacity`)."""
        return self.method


def _refuse(obj: Any, change: str, what: str, rule: str) -> ChangeError:
    kind = "pool" if isinstance(obj, Pool) else "stage"
    return ChangeError(f"{change} of {kind} `{obj.label}` {what}", obj.env.now,
                       help=f"the rule: {rule}", policy=obj.label, method=change, rule=rule)


class _Withdrawal(Event):
    """Something taken out of service at once (`_take`) and put back once
    (`_give`): by the subclass's own method or on leaving a `with` block."""

    def __init__(self, handle: "StageHandle"):
        super().__init__(handle.resource.env)
        self.handle = handle
        self.ended = False
        self._take()
        self.succeed()

    def __enter__(self) -> "_Withdrawal":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._end()

    def _end(self) -> None:
        if not self.ended:
            self.ended = True
            self._give()

    def _take(self) -> None:
        raise NotImplementedError

    def _give(self) -> None:
        raise NotImplementedError


class OutOfService(_Withdrawal):
    """A server of a `fifo` stage taken out of service (`StageHandle.request`).

    Succeeds at once: from then on the stage starts no new job on the
    server; a job in service on it finishes first (nothing is preempted).
    `release()` (or leaving a `with` block) puts the server back."""

    def _take(self) -> None:
        self.handle.servers = self.handle.servers - 1

    def _give(self) -> None:
        self.handle.servers = self.handle.servers + 1

    @property
    def released(self) -> bool:
        """Whether the server is back in service."""
        return self.ended

    def release(self) -> None:
        """Put the server back in service (once)."""
        self._end()


class Paused(_Withdrawal):
    """A step engine paused (`StageHandle.pause`).

    Succeeds at once: from then on the engine starts no iteration; the one
    running finishes first (nothing is preempted), sessions keep arriving
    and wait. `resume()` (or leaving a `with` block) lets the engine go on
    at once. Pauses may overlap: the engine goes on when the last ends."""

    def _take(self) -> None:
        self.handle.resource.pause()

    def _give(self) -> None:
        self.handle.resource.resume()

    @property
    def resumed(self) -> bool:
        """Whether this pause has ended."""
        return self.ended

    def resume(self) -> None:
        """Let the engine go on (once)."""
        self._end()


class StageHandle:
    """A declared stage (one member) as a SimPy process sees it."""

    def __init__(self, stage: Stage):
        self.resource = stage

    @property
    def label(self) -> str:
        """`name` or `name[index]`."""
        return self.resource.label

    @property
    def present(self) -> int:
        """Jobs at the stage (waiting and in service)."""
        return self.resource.n

    @property
    def servers(self) -> int:
        """A `fifo` stage's servers in service; setting it is a checked change."""
        return self._fifo("servers").servers

    @servers.setter
    def servers(self, count: int) -> None:
        stage = self._fifo("servers")
        rule = "a fifo stage has a whole number of servers, 0 or more"
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise _refuse(stage, "servers", f"set to {count!r}", rule)
        stage.set_servers(count)

    def request(self) -> OutOfService:
        """Take one server out of service (SimPy's `with res.request() as req:`)."""
        stage = self._fifo("request")
        if stage.servers < 1:
            raise _refuse(stage, "request", "asked for a server while none is in service",
                          "a request takes a server that is in service")
        return OutOfService(self)

    def pause(self) -> Paused:
        """Pause a step engine (SimPy's protocol: `with engine.pause() as p:
        yield p; …`): it starts no iteration until the pause ends."""
        stage = self.resource
        if not isinstance(stage, StepStage):
            raise _refuse(stage, "pause", f"is not offered by a `{stage.kind}` stage",
                          "a pause stops a step engine's iterations")
        return Paused(self)

    def release(self, request: OutOfService) -> None:
        """Put the server `request` took back in service."""
        request.release()

    def _fifo(self, change: str) -> Fifo:
        if not isinstance(self.resource, Fifo):
            raise _refuse(self.resource, change, f"is not offered by a `{self.resource.kind}` "
                          "stage", "servers are a fifo stage's")
        return self.resource


class PoolHandle:
    """A declared pool (one member) as a SimPy process sees it."""

    def __init__(self, pool: Pool):
        self.resource = pool

    @property
    def label(self) -> str:
        """`name` or `name[index]`."""
        return self.resource.label

    @property
    def used(self) -> float:
        """Units held."""
        return self.resource.used

    @property
    def waiting(self) -> int:
        """Holds waiting in the pool's queue."""
        return len(self.resource.queue)

    @property
    def capacity(self) -> float:
        """The pool's capacity in units; setting it is a checked change."""
        return self.resource.cap

    @capacity.setter
    def capacity(self, units: float) -> None:
        pool = self.resource
        rule = ("a pool's capacity is a finite number of units, at least the units held "
                "(holds are never shrunk)")
        if isinstance(units, bool) or not isinstance(units, (int, float)) or \
                not math.isfinite(units) or units < pool.used:
            shown = shortest(float(units)) if isinstance(units, (int, float)) and \
                not isinstance(units, bool) else repr(units)
            raise _refuse(pool, "capacity", f"set to {shown} with {shortest(pool.used)} "
                          "units held", rule)
        pool.set_capacity(float(units))


class Model:
    """A built simulation: run it with `run()`, after adding processes."""

    def __init__(self, sim: Any):
        self.sim = sim
        self.ran = False

    @property
    def env(self) -> Any:
        """The run's `simpy.Environment`."""
        return self.sim.env

    def stage(self, name: str, index: Optional[int] = None) -> StageHandle:
        """The stage `name` (member `index` of an array)."""
        return StageHandle(self._member("stage", name, index))

    def pool(self, name: str, index: Optional[int] = None) -> PoolHandle:
        """The pool `name` (member `index` of an array)."""
        return PoolHandle(self._member("pool", name, index))

    def process(self, generator: Generator) -> Any:
        """Start `generator` as a SimPy process beside the sessions."""
        if self.ran:
            raise SimulationError("the model has run: add processes before `run()`", 0.0)
        return self.sim.env.process(generator)

    def run(self) -> Any:
        """Simulate to the horizon; the `Report` (once: a model runs once)."""
        if self.ran:
            raise SimulationError("the model has run already: build another", 0.0)
        self.ran = True
        report = self.sim.run()
        report.name_series()
        return report

    def _member(self, kind: str, name: str, index: Optional[int]) -> Any:
        members = self.sim.directory.families.get((kind, name))
        if members is None:
            known = sorted(n for k, n in self.sim.directory.families if k == kind)
            raise KeyError(f"the program declares no {kind} `{name}` "
                           f"({', '.join(known) or 'none'})")
        if index is None:
            if len(members) != 1:
                raise KeyError(f"`{name}` is an array of {len(members)}: give an index")
            return members[0]
        return members[index]
