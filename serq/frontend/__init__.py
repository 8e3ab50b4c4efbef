"""The serq-simpy front end: `.sq` text to the kernel IR (`serq.core.ir.Program`).

The passes, in the order `pipeline.run_passes` runs them, one module each, grouped
by what they turn into what: `parse/` (text to syntax tree: lexer, parser +
build, layout of flat / `fn main` programs, libraries, the workload file),
`rewrite/` (syntax to syntax: reserved names, expand definitions, queues,
engines), `link/` (syntax to kernel IR: consts, shapes K/R/T/N, pools,
bindings, resolve + statements + holds + steps, claims, trace, lower), over
the syntax tree of `syntax/`.

May import: `serq.core` only (never `serq.runtime`: the kernel IR is the
interface between the two).
"""
from __future__ import annotations

from typing import Optional, Union

from ..core import ir
from ..core.errors import LinkError, ParseError
from .link.lower import ir_stmts
from .link.serving import find_stages
from .pipeline import load_checked
from .syntax.kernel_text import KernelText

__all__ = ["load", "summary", "kernel_text", "ParseError", "LinkError"]

Value = Union[str, float, int]


def load(path: Optional[str] = None, *, source: Optional[str] = None,
         sets: Optional[dict[str, Value]] = None, defs: Optional[dict[str, str]] = None,
         workload: Optional[str] = None, trace: Optional[str] = None,
         horizon: Optional[Value] = None, warmup: Optional[Value] = None,
         seed: Optional[Value] = None, arrivals: Optional[Value] = None,
         need_horizon: bool = True, file_label: Optional[str] = None,
         structural: bool = False) -> ir.Program:
    """Parse, expand, link and lower a program to the kernel IR.

    Give the program as a file `path` or as text `source` (then `use` of a
    library path is refused and relative trace paths are relative to the
    current directory). `sets`/`defs` are the `--set`/`--def` overrides,
    `workload` a separate workload file, `trace` a replacement trace corpus
    (relative to the current directory); `horizon`, `warmup`, `seed`,
    `arrivals` replace the `run { … }` settings. `structural`: `sets` may
    change a constant that sizes a stage or pool array (the program is
    built with the new size; without it that override is refused, Part 01
    §2.4). Raises ParseError or
    LinkError (with `.source` set for the caret line), never another error
    type for bad input.
    """
    return load_checked(path, source, sets, defs, workload, trace, horizon, warmup, seed,
                         arrivals, need_horizon, file_label, structural=structural)


def count_blocks(program: ir.Program) -> int:
    """Statement blocks of the kernel program: the session code, non-empty
    `init`/`turn` blocks, and every branch arm, loop, while and hold body in
    them."""
    code = program.workload.init + program.workload.turn + (program.session or [])
    n = (program.session is not None) + bool(program.workload.init) + \
        bool(program.workload.turn)
    for s in ir_stmts(code):
        if isinstance(s, ir.If):
            n += 1 + bool(s.other)
        elif isinstance(s, (ir.Loop, ir.While, ir.Hold, ir.Fork)):
            n += 1
    return n


def summary(program: ir.Program) -> str:
    """The `check` line: `OK: P pool(s), S stage(s), A attribute(s), B block(s)`.

    P counts pool declarations and S stage declarations (an array is one),
    A the user attributes, B the statement blocks of `count_blocks`."""
    return (f"OK: {len(program.pools)} pool(s), {len(program.stages)} stage(s), "
            f"{len(program.attributes)} attribute(s), {count_blocks(program)} block(s)")


def kernel_text(path: Optional[str] = None, *, source: Optional[str] = None,
                sets: Optional[dict[str, Value]] = None,
                defs: Optional[dict[str, str]] = None,
                workload: Optional[str] = None) -> str:
    """The program after the Part 05 rewrites (queues, calls, `transfer`,
    serving forms, `request Q;`) and the engine rewrite, as source text
    (`serq-simpy check --kernel`). Loads the program completely first, so a
    bad program raises its ParseError/LinkError."""
    keep: dict = {}
    load_checked(path, source, sets, defs, workload, None, None, None, None, None,
                  False, None, keep)
    res = keep["res"]
    steps = {n for n, i in res.stages.items() if i.kind == "step"}
    return KernelText(lambda s: find_stages(res, s), steps).render(keep["items"])
