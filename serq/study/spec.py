"""What a worker receives: a program's text and its settings, never runtime
objects; and the rule that gives each replication its seed.

Seed rule: replication `i` (counted from 0) of a study with base seed `s`
runs with seed `s + i`. `serq-simpy run model.sq --seed s+i` (with the
study's other settings) therefore reproduces replication `i` byte for byte.
In a sweep every point uses the same seeds (common random numbers).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from typing import Any, Optional

#: The largest seed the language accepts (Part 07: seeds are integers 0 … 2^53).
MAX_SEED = 2 ** 53
#: Most runs one study may plan (a sweep's points × replications, or a
#: study's replications): a larger plan is refused before anything runs.
MAX_RUNS = 100_000


def replication_seed(base: int, index: int) -> int:
    """The seed of replication `index` (0-based) of a study with base seed `base`."""
    seed = int(base) + int(index)
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"replication {index} of base seed {base} gives seed {seed}, "
                         f"outside 0 … 2^53")
    return seed


@dataclass(frozen=True)
class ProgramSpec:
    """A program as text plus everything `serq.load`/`serq.run` take.

    `path` is where the text came from (error messages, `use` and trace
    paths relative to it); a worker that can read the same text at `path`
    loads the file, otherwise it compiles `text` itself. `sets` values are
    expression texts (as `--set NAME=EXPR`). `policies` maps a stage or pool
    name to a `"package.module:Class"` string. `structural`: `sets` may change
    a constant that sizes a stage or pool array (the program is built again
    with the new size, `serq.load(structural=True)`); a sweep's points are.
    It does not change a run's results, so it is not part of `key`. `reads`
    are the (path, digest) of the other files a run reads
    (`serq.study.inputs.with_reads`), part of its key."""

    text: str
    path: Optional[str] = None
    sets: tuple[tuple[str, str], ...] = ()
    defs: tuple[tuple[str, str], ...] = ()
    workload: Optional[str] = None
    trace: Optional[str] = None
    horizon: Optional[float] = None
    warmup: Optional[float] = None
    arrivals: Optional[int] = None
    policies: tuple[tuple[str, str], ...] = field(default=())
    structural: bool = False
    reads: tuple[tuple[str, str], ...] = ()

    @classmethod
    def make(cls, program: Any = None, *, source: Optional[str] = None,
             sets: Optional[dict[str, Any]] = None, defs: Optional[dict[str, str]] = None,
             policies: Optional[dict[str, str]] = None, **settings: Any) -> "ProgramSpec":
        """A spec from a path (or a `ProgramSpec`) or `source=` text; `sets`
        values may be numbers or expression texts."""
        if isinstance(program, ProgramSpec):
            base = program
        elif source is not None:
            base = cls(text=source)
        elif isinstance(program, (str, os.PathLike)):
            path = os.fspath(program)
            with open(path, encoding="utf-8") as fh:
                base = cls(text=fh.read(), path=path)
        else:
            raise TypeError("give the program as a path, a ProgramSpec or source= text, "
                            "and its overrides as sets=/defs= here (workers compile the "
                            "text themselves; a loaded program is not sent to them)")
        spec = base.with_sets(sets or {})
        if defs:
            spec = replace(spec, defs=tuple(sorted({**dict(spec.defs), **defs}.items())))
        if policies:
            spec = replace(spec, policies=tuple(sorted(
                {**dict(spec.policies), **{k: _policy_text(v) for k, v in policies.items()}}
                .items())))
        kinds = {"horizon": float, "warmup": float, "arrivals": int}
        return replace(spec, **{k: kinds.get(k, _same)(v) for k, v in settings.items()
                                if v is not None})

    def with_sets(self, sets: dict[str, Any]) -> "ProgramSpec":
        """This spec with more `--set` overrides (later values win)."""
        if not sets:
            return self
        merged = dict(self.sets)
        merged.update({k: expr_text(v) for k, v in sets.items()})
        return replace(self, sets=tuple(sorted(merged.items())))

    def with_structure(self, sets: dict[str, Any]) -> "ProgramSpec":
        """This spec with overrides that may size arrays (`{"R": 16}` for
        `stage engine[R]`): each run builds the program again with them. For a
        study over fleet sizes (a sweep's points, a capacity search's
        configurations); `serq.replicate`, `serq.sweep` and the study workers
        take the result as any spec."""
        return replace(self.with_sets(sets), structural=True)

    def key(self, seed: int) -> str:
        """The hash naming one run: program text, every setting, the files
        it reads (`reads`) and the seed."""
        blob = json.dumps({"text": self.text, "sets": self.sets, "defs": self.defs,
                           "workload": self.workload, "trace": self.trace,
                           "horizon": self.horizon, "warmup": self.warmup,
                           "arrivals": self.arrivals, "policies": self.policies,
                           "reads": self.reads, "seed": int(seed)}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _same(value: Any) -> Any:
    return value


def expr_text(value: Any) -> str:
    """A `--set` value as expression text (`repr` of a number is exact)."""
    if isinstance(value, bool):
        raise TypeError("a --set value is a number or an expression text")
    if isinstance(value, (int, float)):
        return repr(value)
    return str(value)


def _policy_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return f"{value.__module__}:{value.__qualname__}"

