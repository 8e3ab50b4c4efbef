"""Binding user policy classes to a program, and checking what they decide.

A run's `policies` map a declared stage or pool name to a subclass of its
built-in resource class (`Fifo`, `Ps`, `Delay`, `StepStage`, `Pool`).
`bind_policies` checks each binding against the program (the name is
declared, the class is of the right kind) and returns the classes the
simulation instantiates.

Invariants are checked only where a user overrides a decision: for each
policy method the subclass overrides, the bound class is a thin subclass of
the user's class whose method calls the user's and then checks the rule
below (a broken rule stops the run with a `PolicyError` naming the class,
the method and the rule). A subclass that overrides nothing is bound as it
is, and built-in decisions are never checked, so they cost nothing.

| class | method | rule checked after the call |
|---|---|---|
| `Fifo` | `select_next()` | returns a job that was waiting, and removes exactly it from `waiting` |
| `Ps` | `finish_order(job)` | a key comparable with, and different from, every present job's |
| `Pool` | `select_candidate()` | returns a hold frame waiting in this pool's queue |
| `Pool` | `has_room(units, frame)` | returns a bool; never says units fit beyond the cap |
| `Pool` | `evict_victim(entries)` | returns one of the entries, cached in this pool |
| `Pool` | `preempt_victim(candidates)` | returns one of the candidates |
| `StepStage` | `serving_order(keys)` | returns every current resident exactly once |
| `StepStage` | `in_batch(job, plan, only)` | returns a bool |
| `StepStage` | `admission_pool(plan)` | None, or a pool this stage admits from with a waiting hold |

A policy method that raises stops the run the same way (the original
exception is chained as the cause).
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import FunctionType
from typing import Any, Callable, Mapping, Optional, Union

from ...core import ir
from ...core.errors import PolicyError, SerqError, SimulationError, UsageError, shortest
from ..resources.decision import overridden as decides
from ..resources.engine import StepStage
from ...core.tolerance import TOL
from ..resources.pools import CacheEntry, Pool
from ..resources.stages import Fifo, Ps
from ..watch.watchdog import STOPS
from . import classes
from .policy_watch import enter, leave

#: The decisions of each policy class a subclass may override (the seam).
POLICY_METHODS: dict[type, tuple[str, ...]] = classes.DECISIONS

#: The policy class of each declared stage kind.
STAGE_CLASSES: dict[str, type] = {"fifo": classes.Fifo, "ps": classes.Ps,
                                  "delay": classes.Delay, "step": classes.StepStage}


class PolicyBindingError(UsageError):
    """A policy bound to a name the program does not declare, or of the wrong kind."""


PolicySpec = Union[type, str]


def load_policy(target: str) -> type:
    """The class `package.module:Class` (or `path/to/file.py:Class`) names.

    Raises `PolicyBindingError` when the module or the name is not found."""
    module, _, name = target.rpartition(":")
    if not module or not name:
        raise PolicyBindingError(f"`{target}`: a policy is named package.module:Class "
                                 "or path/to/file.py:Class")
    try:
        obj: Any = _import(module)
    except Exception as exc:  # the user's module failed to import: say why, in one line
        raise PolicyBindingError(f"`{target}`: cannot import `{module}` "
                                 f"({type(exc).__name__}: {exc})") from None
    try:
        for part in name.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise PolicyBindingError(f"`{target}`: `{module}` has no `{name}`") from None
    return obj


def _import(module: str) -> Any:
    if not module.endswith(".py"):
        return importlib.import_module(module)
    path = os.path.abspath(module)
    if not os.path.isfile(path):
        raise ImportError(f"no file {module}")
    import hashlib  # only here: hashlib loads OpenSSL (2 ms of every start)
    key = "serq_policy_" + hashlib.sha1(path.encode()).hexdigest()[:12]
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[key] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[key]
        raise
    return mod


def _declared(program: ir.Program) -> tuple[dict[str, ir.Stage], dict[str, ir.Pool]]:
    return ({d.name: d for d in program.stages}, {d.name: d for d in program.pools})


def _names(kind: str, names: list[str]) -> str:
    if not names:
        return f"no {kind}s"
    return f"{kind}s " + ", ".join(f"`{n}`" for n in names)


def bind_policies(program: ir.Program,
                  policies: Optional[Mapping[str, PolicySpec]]) -> dict[str, type]:
    """Check `policies` against `program`; the class each name runs as (the
    policy, its overridden decisions checked, ahead of the runtime's class).

    A value is a class or a `package.module:Class` string. Raises
    `PolicyBindingError` for a name the program does not declare, a value
    that is not a class, a class that does not subclass the built-in class of
    the name's kind, or a stage whose kind takes no policy class."""
    out: dict[str, type] = {}
    if not policies:
        return out
    stages, pools = _declared(program)
    for name, spec in policies.items():
        cls = load_policy(spec) if isinstance(spec, str) else spec
        if name in stages:
            decl = stages[name]
            if decl.shared:
                raise PolicyBindingError(
                    f"policy for `{name}`: the stage is shared (`share`); its rates are the "
                    "flow policy's, and a shared stage takes no policy class")
            base = STAGE_CLASSES[decl.kind]
            what = f"`{name}` is a `{decl.kind}` stage"
        elif name in pools:
            base = classes.Pool
            what = f"`{name}` is a pool"
        else:
            raise PolicyBindingError(
                f"policy for `{name}`: the program declares no stage or pool `{name}` (it "
                f"declares {_names('stage', list(stages))} and {_names('pool', list(pools))})")
        if not isinstance(cls, type):
            raise PolicyBindingError(
                f"policy for `{name}`: {cls!r} is not a class; {what}, whose policy is a "
                f"subclass of serq.policies.{base.__name__}")
        if not issubclass(cls, (base, classes.RUNTIME[base])):
            raise PolicyBindingError(
                f"policy for `{name}`: {cls.__module__}.{cls.__qualname__} does not subclass "
                f"serq.policies.{base.__name__}; {what}, whose policy is a subclass of "
                f"serq.policies.{base.__name__}")
        out[name] = classes.runtime_class(guarded(cls, base))
    return out


def overridden(cls: type, base: type) -> list[str]:
    """The policy methods of `base` that `cls` overrides."""
    return [m for m in POLICY_METHODS[base] if decides(cls, m)]


def user_methods(cls: type, base: type) -> list[str]:
    """The methods of `base` (and `__init__`) that the user's classes in
    `cls`'s MRO define: the runtime calls them."""
    out: list[str] = []
    for klass in cls.__mro__:
        if klass.__module__.startswith("serq.") or klass is object:
            continue
        for name, value in vars(klass).items():
            if isinstance(value, FunctionType) and name not in out and (
                    name == "__init__" or (not name.startswith("__") and hasattr(base, name))):
                out.append(name)
    return out


def guarded(cls: type, base: type) -> type:
    """`cls` itself when it overrides nothing of the runtime's; else a
    subclass whose overridden methods are watched (an escape of any kind is
    a `PolicyError`, a call that does not return is diagnosed by the
    watchdog, a pool's invariants are checked after each) and whose
    overridden decisions are checked after each call."""
    names = overridden(cls, base)
    plain = [m for m in user_methods(cls, base) if m not in names]
    if not names and not plain:
        return cls
    g: type = type(cls.__name__, (cls,), {"__module__": cls.__module__,
                                          "__qualname__": cls.__qualname__,
                                          "__doc__": cls.__doc__})
    for m in plain:
        setattr(g, m, _caller(g, m))
    for m in names:
        setattr(g, m, _CHECKS[m](_caller(g, m), m))
    return g


def _origin(exc: BaseException) -> str:
    """` (at FILE:LINE)`: where in the user's code the exception was raised."""
    import traceback
    frames = traceback.extract_tb(exc.__traceback__)
    return f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def _caller(g: type, method: str) -> Callable[..., Any]:
    """Calls the user's method (the one `g` overrides), watched while it
    runs (`policy_watch`); anything it raises (even `SystemExit`) becomes a
    `PolicyError`, and a pool's invariants are checked after it."""

    def call(self: Any, *args: Any, **kw: Any) -> Any:
        token = enter(self, method)
        try:
            result = getattr(super(g, self), method)(*args, **kw)
        except (SerqError, KeyboardInterrupt) + STOPS:
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: the run's, not the policy's
            raise _error(self, method, f"raised {type(exc).__name__}: {exc}{_origin(exc)}",
                         "a policy method returns its decision; it does not raise") from exc
        finally:
            leave(token)
        if isinstance(self, Pool):
            _pool_invariants(self, method)
        return result
    return call


def _pool_invariants(pool: Pool, method: str) -> None:
    """0 ≤ used ≤ cap, the declared cap unchanged, cached ≥ 0; after a
    decision (the state is consistent there) also: the holds hold `used`."""
    rule = ("a policy decides; it does not change the pool's state: 0 ≤ used ≤ cap, the "
            "declared cap, and used = the units its holds hold")
    used, cap, cached = pool.used, pool.cap, pool.cached
    spec_cap = getattr(getattr(pool, "spec", None), "cap", cap)
    if not isinstance(cap, (int, float)) or cap != spec_cap:
        raise _error(pool, method, f"changed the pool's cap to {_show(cap)} (declared "
                     f"{_show(spec_cap)})", rule)
    if not isinstance(used, (int, float)) or not -TOL <= used <= cap + TOL:
        raise _error(pool, method, f"left the pool with {_show(used)} units used of its cap "
                     f"{_show(cap)}", rule)
    if not isinstance(cached, (int, float)) or not -TOL <= cached <= cap + TOL:
        raise _error(pool, method, f"left the pool with {_show(cached)} units cached of its "
                     f"cap {_show(cap)}", rule)
    if method in POLICY_METHODS[classes.Pool] and method != "evict_victim":
        held = sum(f.cells[f.pools.index(pool)].alloc for f in pool.frames)
        held += sum(lease.alloc for lease in pool.leases)
        if abs(held - used) > 1e-6:
            raise _error(pool, method, f"left the pool with {_show(used)} units used while "
                         f"its holds hold {_show(held)}", rule)


def _where(obj: Any) -> str:
    kind = "pool" if isinstance(obj, Pool) else "stage"
    try:
        return f"{kind} `{obj.label}`"
    except Exception:  # (an object its own constructor left half made)
        return f"a {kind}"


def _error(obj: Any, method: str, what: str, rule: str) -> PolicyError:
    name = type(obj).__name__
    env = getattr(obj, "env", None)
    return PolicyError(f"policy {name}.{method} of {_where(obj)} {what}",
                       getattr(env, "now", 0.0), help=f"the rule: {rule}", policy=name,
                       method=method, rule=rule)


def _show(x: Any) -> str:
    if isinstance(x, float):
        return shortest(x)
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


# -- the checks, one per decision --------------------------------------------------------

def _select_next(call: Callable[..., Any], m: str) -> Callable[..., Any]:
    rule = "select_next removes one waiting job from `self.waiting` and returns it"

    def select_next(self: Fifo) -> Any:
        before = list(self.waiting)
        job = call(self)
        if not any(j is job for j in before):
            raise _error(self, m, f"returned {_show(job)}, which is not a job waiting at the "
                         "stage", rule)
        if len(self.waiting) != len(before) - 1 or any(j is job for j in self.waiting):
            raise _error(self, m, "did not remove exactly the job it returned from "
                         "`self.waiting`", rule)
        return job
    return select_next


def _finish_order(call: Callable[..., Any], m: str) -> Callable[..., Any]:
    rule = ("finish_order returns a key that compares with every other job's key and "
            "differs from each")

    def finish_order(self: Ps, job: Any) -> Any:
        key = call(self, job)
        for _tag, other, _job in self.heap:
            try:
                equal = not (other < key or key < other)
            except TypeError:
                raise _error(self, m, f"returned {_show(key)}, which does not compare with "
                             f"the key {_show(other)} of a job present", rule) from None
            if equal:
                raise _error(self, m, f"returned {_show(key)}, the key of a job present", rule)
        return key
    return finish_order


def _select_candidate(call: Callable[..., Any], m: str) -> Callable[..., Any]:
    rule = "select_candidate returns one of the hold frames waiting in `self.queue`"

    def select_candidate(self: Pool) -> Any:
        frame = call(self)
        if not any(f is frame for f in self.queue):
            raise _error(self, m, f"returned {_show(frame)}, which is not a hold waiting in "
                         "its queue", rule)
        return frame
    return select_candidate


def _has_room(call: Callable[..., Any], m: str) -> Callable[..., Any]:
    rule = ("has_room returns True or False, and True only when used + units stays within "
            "the cap (a policy may be stricter than the built-in fit rule, never looser)")

    def has_room(self: Pool, units: float, frame: Any = None) -> bool:
        ok = call(self, units, frame)
        if ok is not True and ok is not False:
            raise _error(self, m, f"returned {_show(ok)}, not True or False", rule)
        if ok and self.used + units > self.cap + TOL:
            raise _error(self, m, f"said {shortest(units)} more units fit with "
                         f"{shortest(self.used)} of the cap {shortest(self.cap)} used: it "
                         "admits more than fits", rule)
        return ok
    return has_room


def _evict_victim(call: Callable[..., Any], m: str) -> Callable[..., Any]:
    rule = ("evict_victim returns one of the cache entries it receives; only cached units "
            "are evicted, never units a hold holds")

    def evict_victim(self: Pool, entries: list[CacheEntry]) -> CacheEntry:
        victim = call(self, entries)
        if not any(e is victim for e in entries) or self.entries.get(
                getattr(victim, "key", None)) is not victim:
            held = " (a hold, whose units are held)" if hasattr(victim, "alloc") else ""
            raise _error(self, m, f"returned {_show(victim)}{held}, which is not a cache "
                         "entry of the pool: it evicts a unit that is not cached", rule)
        return victim
    return evict_victim


def _preempt_victim(call: Callable[..., Any], m: str) -> Callable[..., Any]:
    rule = "preempt_victim returns one of the candidate hold frames it receives"

    def preempt_victim(self: Pool, candidates: list[Any]) -> Any:
        victim = call(self, candidates)
        if not any(f is victim for f in candidates):
            raise _error(self, m, f"returned {_show(victim)}, which is not one of the "
                         f"{len(candidates)} candidates", rule)
        return victim
    return preempt_victim


def _serving_order(call: Callable[..., Any], m: str) -> Callable[..., Any]:
    rule = "serving_order returns every current resident exactly once"

    def serving_order(self: StepStage, keys: Any) -> list[Any]:
        order = call(self, keys)
        try:
            order = list(order)
        except TypeError:
            raise _error(self, m, f"returned {_show(order)}, not a list of residents",
                         rule) from None
        present = {id(j) for j in self.residents}
        seen: set[int] = set()
        for j in order:
            if id(j) not in present:
                raise _error(self, m, f"returned {_show(j)}, a resident that does not exist "
                             "at the stage", rule)
            if id(j) in seen:
                raise _error(self, m, f"returned the resident {_show(j)} twice", rule)
            seen.add(id(j))
        if len(seen) != len(present):
            raise _error(self, m, f"left out {len(present) - len(seen)} of the "
                         f"{len(present)} residents", rule)
        return order
    return serving_order


def _in_batch(call: Callable[..., Any], m: str) -> Callable[..., Any]:
    rule = "in_batch returns True or False"

    def in_batch(self: StepStage, job: Any, plan: Any, only: Any) -> bool:
        ok = call(self, job, plan, only)
        if ok is not True and ok is not False:
            raise _error(self, m, f"returned {_show(ok)}, not True or False", rule)
        return ok
    return in_batch


def _admission_pool(call: Callable[..., Any], m: str) -> Callable[..., Any]:
    rule = ("admission_pool returns None or one of the pools that name this stage in "
            "`admit via` (`self.served_pools`) with a hold waiting in its queue")

    def admission_pool(self: StepStage, plan: Any) -> Optional[Pool]:
        pool = call(self, plan)
        if pool is None:
            return None
        if not any(p is pool for p in self.served_pools):
            raise _error(self, m, f"returned {_show(pool)}, which is not a pool this stage "
                         "admits from", rule)
        if not pool.queue:
            raise _error(self, m, f"returned pool `{pool.label}`, whose queue is empty", rule)
        return pool
    return admission_pool


_CHECKS: dict[str, Callable[[Callable[..., Any], str], Callable[..., Any]]] = {
    "select_next": _select_next,
    "finish_order": _finish_order,
    "select_candidate": _select_candidate,
    "has_room": _has_room,
    "evict_victim": _evict_victim,
    "preempt_victim": _preempt_victim,
    "serving_order": _serving_order,
    "in_batch": _in_batch,
    "admission_pool": _admission_pool,
}
