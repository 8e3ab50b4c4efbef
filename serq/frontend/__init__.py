"""The serq-simpy front end: `.sq` text to the kernel IR (`serq.core.ir.Program`).

The passes, in the order `_load` below runs them, one module each, grouped
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

import os
from typing import Optional, Union

from ..core import ir
from ..core.deep import call_deep
from ..core.errors import LinkError, ParseError, SerqError, UsageError
from .syntax import tree as S
from .link.consts import Constants, settings
from .rewrite.engines import lower_engines
from .rewrite.entries import rewrite_queues
from .rewrite.expand import expand
from .syntax.kernel_text import KernelText
from .link.serving import find_stages
from .parse.layout import Flat, read_program
from .link.lower import Lowerer, ir_stmts
from .rewrite.reserved import check_reserved
from .link.resolve import Resolver
from .link.shapes import shape_program
from .parse.source import MAX_SOURCE_BYTES, read_source, too_large

__all__ = ["load", "summary", "kernel_text", "ParseError", "LinkError"]

Value = Union[str, float, int]


def _read(path: str, label: str) -> str:
    return read_source(path, label)


def _names_declared(items: list) -> dict[tuple[str, str], S.Item]:
    """Declared names by namespace: stages and pools have their own (a stage,
    a pool and a constant may share a name, Part 01 §6.1)."""
    out: dict[tuple[str, str], S.Item] = {}
    for i in items:
        if isinstance(i, (S.ILet, S.IDef, S.IStage, S.IPool)):
            space = {S.IStage: "stage", S.IPool: "pool"}.get(type(i), "value")
            out.setdefault((space, i.name), i)
    return out


def _check_workload_file(flat: Flat) -> None:
    """A name declared in both files, or two workloads, is a link error (§2.8)."""
    if not flat.workload_file_items:
        return
    n = len(flat.workload_file_items)
    theirs, ours = flat.items[:n], flat.items[n:]
    if any(isinstance(i, S.IWorkload) for i in ours):
        item = next(i for i in ours if isinstance(i, S.IWorkload))
        raise LinkError("the program has its own `workload` block and a workload file "
                        "as well", item.pos, source=flat.sources.get(item.pos.file))
    w = _names_declared(theirs)
    for key, item in _names_declared(ours).items():
        name = key[1]
        if key in w:
            pos = getattr(item, "name_pos", item.pos)
            raise LinkError(f"`{name}` is declared in the program and in the workload "
                            "file", pos, source=flat.sources.get(pos.file),
                            notes=[f"`{name}` declared at {w[key].pos.file}:"
                                   f"{w[key].pos.line}:{w[key].pos.col}"])


def _load(text: str, label: str, path: Optional[str], opts: dict,
          keep: Optional[dict] = None) -> ir.Program:
    workload = None
    if opts["workload"] is not None:
        wpath = opts["workload"]
        workload = (_read(wpath, wpath), wpath, wpath)
    flat = read_program(text, label, path, workload)
    _check_workload_file(flat)
    check_reserved(flat.items, flat.sources)
    items = expand(flat.items, flat.sources, opts["defs"])
    items = rewrite_queues(items, flat.sources)
    res = Resolver(flat.sources)
    if workload is not None:
        res.file_rank[workload[1]] = 0
    items = lower_engines(res, items)
    if keep is not None:
        keep.update(items=items, res=res)
    consts = Constants(items, res, opts["sets"], opts.get("structural", False))
    consts.run()
    shaped = shape_program(items, flat.sources)
    program = Lowerer(label, items, shaped, res, consts, opts["trace"]).run()
    program.settings = settings(items, res, program.workload.arrival,
                                horizon=opts["horizon"], warmup=opts["warmup"],
                                seed=opts["seed"], arrivals=opts["arrivals"],
                                need_horizon=opts["need_horizon"])
    return program


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
    return _load_checked(path, source, sets, defs, workload, trace, horizon, warmup, seed,
                         arrivals, need_horizon, file_label, structural=structural)


def _load_checked(path, source, sets, defs, workload, trace, horizon, warmup, seed,
                  arrivals, need_horizon, file_label, keep=None,
                  structural: bool = False) -> ir.Program:
    if (path is None) == (source is None):
        raise UsageError("load() takes a path or source=, not both")
    label = file_label or path or "<program>"
    text = source if source is not None else _read(path, label)
    if source is not None and len(source) * 4 > MAX_SOURCE_BYTES:  # a character is ≤ 4 bytes
        size = len(source.encode("utf-8", "surrogatepass"))
        if size > MAX_SOURCE_BYTES:  # in bytes, as a file's size is
            raise too_large(label, size)
    opts = dict(sets=sets or {}, defs=defs or {}, workload=workload, trace=trace,
                horizon=horizon, warmup=warmup, seed=seed, arrivals=arrivals,
                need_horizon=need_horizon, structural=structural)
    try:
        return call_deep(_load, text, label, os.path.abspath(path) if path else None,
                         opts, keep)
    except SerqError:
        raise
    except RecursionError:
        raise ParseError("the program nests too deeply", ir.Pos(label, 1, 1),
                         source=text) from None


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
    _load_checked(path, source, sets, defs, workload, None, None, None, None, None,
                  False, None, keep)
    res = keep["res"]
    steps = {n for n, i in res.stages.items() if i.kind == "step"}
    return KernelText(lambda s: find_stages(res, s), steps).render(keep["items"])
