"""The front end's pass order: `.sq` text to the kernel IR, one pass after another.

`run_passes` is the whole order, each pass one call of its own module:

1. `parse.layout.read_program` — lex, parse and build the syntax tree of the
   program, its libraries and the workload file (`Flat`);
2. `check_workload_file` (here) — a name declared in the program and in the
   workload file (Part 01 §2.8);
3. `rewrite.reserved.check_reserved` — reserved names;
4. `rewrite.expand.expand` — definitions (`def`, `--def`) expanded;
5. `rewrite.entries.rewrite_queues` — Part 05's queues, calls, `transfer`,
   serving forms, `request Q;`;
6. `rewrite.engines.lower_engines` — the engine-on-device form (with the
   `link.resolve.Resolver` that the link passes share);
7. `link.consts.Constants` — constants folded, `--set` applied;
8. `link.shapes.shape_program` — the shapes K/R/T/N;
9. `link.lower.Lowerer` — pools, bindings, statements, holds, steps,
   claims and traces, to `ir.Program`;
10. `link.consts.settings` — the `run { … }` settings and their overrides.

`load_checked` runs them on a deep stack (`core.deep`) with the front end's
input checks; `serq.frontend.load` and `kernel_text` call it.

May import: `serq.core` and the front end's packages.
"""
from __future__ import annotations

import os
from typing import Optional

from ..core import ir
from ..core.deep import call_deep
from ..core.errors import LinkError, ParseError, SerqError, UsageError
from .link.consts import Constants, settings
from .link.lower import Lowerer
from .link.resolve import Resolver
from .link.shapes import shape_program
from .parse.layout import Flat, read_program
from .parse.source import MAX_SOURCE_BYTES, read_source, too_large
from .rewrite.engines import lower_engines
from .rewrite.entries import rewrite_queues
from .rewrite.expand import expand
from .rewrite.reserved import check_reserved
from .syntax import tree as S

__all__ = ["run_passes", "load_checked", "check_workload_file"]


def _names_declared(items: list) -> dict[tuple[str, str], S.Item]:
    """Declared names by namespace: stages and pools have their own (a stage,
    a pool and a constant may share a name, Part 01 §6.1)."""
    out: dict[tuple[str, str], S.Item] = {}
    for i in items:
        if isinstance(i, (S.ILet, S.IDef, S.IStage, S.IPool)):
            space = {S.IStage: "stage", S.IPool: "pool"}.get(type(i), "value")
            out.setdefault((space, i.name), i)
    return out


def check_workload_file(flat: Flat) -> None:
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


def run_passes(text: str, label: str, path: Optional[str], opts: dict,
               keep: Optional[dict] = None) -> ir.Program:
    """The passes in order (the module text), on the program `text` read from
    `path` (shown as `label`); `opts` holds `load`'s options. `keep`, if given,
    receives the rewritten syntax items and the resolver (`kernel_text`)."""
    workload = None
    if opts["workload"] is not None:
        wpath = opts["workload"]
        workload = (read_source(wpath, wpath), wpath, wpath)
    flat = read_program(text, label, path, workload)
    check_workload_file(flat)
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


def load_checked(path, source, sets, defs, workload, trace, horizon, warmup, seed,
                 arrivals, need_horizon, file_label, keep=None,
                 structural: bool = False) -> ir.Program:
    """`run_passes` on a file `path` or the text `source`, after the input
    checks (one of the two, the size limit), on a deep stack; a too-deep
    nesting is a ParseError (the arguments are `serq.frontend.load`'s)."""
    if (path is None) == (source is None):
        raise UsageError("load() takes a path or source=, not both")
    label = file_label or path or "<program>"
    text = source if source is not None else read_source(path, label)
    if source is not None and len(source) * 4 > MAX_SOURCE_BYTES:  # a character is ≤ 4 bytes
        size = len(source.encode("utf-8", "surrogatepass"))
        if size > MAX_SOURCE_BYTES:  # in bytes, as a file's size is
            raise too_large(label, size)
    opts = dict(sets=sets or {}, defs=defs or {}, workload=workload, trace=trace,
                horizon=horizon, warmup=warmup, seed=seed, arrivals=arrivals,
                need_horizon=need_horizon, structural=structural)
    try:
        return call_deep(run_passes, text, label, os.path.abspath(path) if path else None,
                         opts, keep)
    except SerqError:
        raise
    except RecursionError:
        raise ParseError("the program nests too deeply", ir.Pos(label, 1, 1),
                         source=text) from None
