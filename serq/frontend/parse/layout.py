"""Program layout (Part 01 §2.1–2.3, §2.6, §2.8): flat or `fn main`,
libraries, the separate workload file, repeated items, `args.number`
placement. The result is the flat item list of the program, with library
definitions spliced in at their `use`."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

from .source import read_source
from ...core.errors import ParseError
from ...core.ir import Pos
from ..syntax import tree as S
from .build import parse_file_text

ITEM_WORD = {S.IUse: "use", S.ILet: "let", S.IDef: "def", S.IStage: "stage", S.IPool: "pool",
             S.IShare: "share", S.IWorkload: "workload", S.ISettings: "run",
             S.IGauge: "gauge", S.IFnMain: "fn", S.IDevice: "device", S.IEngine: "engine",
             S.IClaim: "claim", S.IQueue: "queue", S.IPull: "pull"}


def item_word(item) -> str:
    """The keyword an item starts with."""
    if isinstance(item, S.IBlock):
        return item.kind
    return ITEM_WORD[type(item)]


def perr(message: str, pos: Pos, source: str, help: Optional[str] = None) -> ParseError:
    return ParseError(message, Pos(pos.file, pos.line, pos.col, 1), help=help,
                      source=source)


@dataclass
class Flat:
    """The flat item list, and what the layout pass learnt on the way."""

    items: list = field(default_factory=list)
    sources: dict = field(default_factory=dict)  # file label -> text
    std_args: bool = False
    workload_file_items: list = field(default_factory=list)


class Layout:
    """Reads a program (and its libraries) into one flat item list."""

    def __init__(self) -> None:
        self.flat = Flat()
        self.seen_paths: set[str] = set()

    # ---------------------------------------------------------------- files
    def read(self, path: str, label: str, use: Optional[S.IUse], src: str) -> str:
        try:  # a library a program names is a regular file (a pipe would block)
            return read_source(path, label, pipes=use is None)
        except ParseError as e:
            if use is None or e.pos is not None:
                raise
            raise ParseError(e.message.replace(f"`{label}`", f"`{use.path}`", 1), use.pos,
                             source=src) from None

    def parse(self, text: str, label: str, path: Optional[str]) -> S.SourceFile:
        self.flat.sources[label] = text
        sf = parse_file_text(text, label)
        sf.path = os.path.realpath(path) if path else None
        if sf.path:
            self.seen_paths.add(sf.path)
        return sf

    # --------------------------------------------------------------- layout
    def unfold_main(self, sf: S.SourceFile) -> list:
        """The items of a flat or `fn main` file as one list (Part 01 §2.1)."""
        tops = sf.items
        mains = [i for i in tops if isinstance(i, S.IFnMain)]
        for m in mains:
            self.check_main(m, sf.text)
        if not mains:
            return tops
        if len(mains) > 1:
            raise perr("a program has exactly one `fn main()`; nested or duplicate "
                       "entry points are not allowed", mains[1].name_pos, sf.text)
        main = mains[0]
        k = tops.index(main)
        for item in tops[:k]:
            if not isinstance(item, (S.IUse, S.ILet, S.IDef)):
                raise perr("executable declarations belong inside `fn main() { … }`; "
                           "only `use`, `def` and constants belong outside it",
                           item.pos, sf.text)
        if k + 1 < len(tops):
            raise perr("declarations belong before `fn main()`; its local names are "
                       "not visible after it", tops[k + 1].pos, sf.text)
        return tops[:k] + main.items

    def check_main(self, m: S.IFnMain, text: str) -> None:
        if m.name != "main":
            raise perr("the entry point is `fn main()`; reusable definitions use `def`",
                       m.name_pos, text)
        if m.semi is not None:
            raise perr("`fn main() { … }` is not followed by `;`", m.semi, text)
        for item in m.items:
            if isinstance(item, S.IFnMain):
                raise perr("a program has exactly one `fn main()`; nested or duplicate "
                           "entry points are not allowed", item.name_pos, text)

    def check_args(self, items: list, sf: S.SourceFile, main_layout: bool,
                   library: bool) -> None:
        """`args.number` placement and external names (Part 01 §2.6)."""
        has_use = False
        seen: set[str] = set()
        for item in items:
            if isinstance(item, S.IUse) and item.path == "std/args":
                has_use = True
            if not isinstance(item, S.ILet) or item.ext is None:
                continue
            if library or not has_use or (main_layout and not item.in_main):
                raise perr('`args.number` needs `use "std/args";` and a `let` inside '
                           '`fn main()`', item.args_pos, sf.text)
            if not item.ext.isidentifier() or not item.ext:
                raise perr(f"invalid argument name `{item.ext}`; expected an identifier",
                           item.ext_pos, sf.text)
            if item.ext in seen:
                raise perr(f"argument `{item.ext}` is declared twice; read it once and "
                           "reuse its binding", item.ext_pos, sf.text)
            seen.add(item.ext)

    # ------------------------------------------------------------ libraries
    def splice(self, items: list, sf: S.SourceFile) -> list:
        """Replace each `use "file"` by the library's items (definitions)."""
        out = []
        for item in items:
            out.append(item)
            if not isinstance(item, S.IUse):
                continue
            if item.path == "std/args":
                self.flat.std_args = True
                continue
            out.extend(self.library(item, sf))
        return out

    def library(self, use: S.IUse, sf: S.SourceFile) -> list:
        if sf.path is None:
            raise perr(f'`use "{use.path}"` reads a file next to the program, and this '
                       "program was given as text", use.pos, sf.text)
        path = os.path.join(os.path.dirname(sf.path), use.path)
        if os.path.realpath(path) in self.seen_paths:
            return []
        label = os.path.normpath(os.path.join(os.path.dirname(sf.label), use.path))
        text = self.read(path, label, use, sf.text)
        lib = self.parse(text, label, path)
        for item in lib.items:
            if not isinstance(item, (S.IDef, S.IUse)):
                raise perr(f"a library holds definitions: found `{item_word(item)}` "
                           "where `def` or `use` goes", item.pos, lib.text)
        self.check_args(lib.items, lib, False, True)
        return self.splice(lib.items, lib)

    # ------------------------------------------------------------ one file
    def file_items(self, sf: S.SourceFile) -> list:
        items = self.unfold_main(sf)
        main_layout = any(isinstance(i, S.IFnMain) for i in sf.items)
        self.check_args(items, sf, main_layout, False)
        return self.splice(items, sf)


def check_repeats(items: list, sources: dict) -> None:
    """Repeated items and clauses are parse errors (Part 01 §2.2, Part 02 §2)."""
    seen: dict[str, object] = {}
    for item in items:
        word = item_word(item)
        if word in ("workload", "session", "server", "run"):
            if word in seen:
                what = {"workload": "workload", "session": "`session` block",
                        "server": "`server` block", "run": "`run { … }` settings block"}[word]
                raise perr(f"duplicate {what}", item.pos, sources.get(item.pos.file))
            seen[word] = item
        if isinstance(item, S.ISettings):
            keys: set[str] = set()
            for key, _, pos in item.settings:
                if key in keys:
                    raise perr(f"duplicate setting `{key}`", pos, sources.get(pos.file))
                keys.add(key)
        if isinstance(item, S.IWorkload):
            words: set[str] = set()
            for c in item.clauses:
                w = {S.CArrive: "arrive", S.CTrace: "trace"}.get(type(c))
                if isinstance(c, S.CBlock):
                    w = c.kind
                if w is None:
                    continue
                if w in words:
                    pos = c.clause_pos if isinstance(c, S.CArrive) else c.pos
                    raise perr(f"duplicate `{w}` in workload", pos, sources.get(pos.file))
                words.add(w)


def read_program(text: str, label: str, path: Optional[str],
                 workload: Optional[tuple[str, str, str]] = None) -> Flat:
    """The flat program: `workload` is (text, label, path) of a --workload file."""
    lay = Layout()
    sf = lay.parse(text, label, path)
    items = lay.file_items(sf)
    check_repeats(items, lay.flat.sources)
    if workload is not None:
        wtext, wlabel, wpath = workload
        wf = lay.parse(wtext, wlabel, wpath)
        witems = workload_items(lay, wf)
        for item in witems:
            if isinstance(item, S.IWorkload):
                item.base = os.path.dirname(os.path.abspath(wpath))
        check_repeats(witems, lay.flat.sources)
        lay.flat.workload_file_items = witems
        items = witems + items
    base = os.path.dirname(os.path.abspath(path)) if path else os.getcwd()
    for item in items:
        if isinstance(item, S.IWorkload) and not item.base:
            item.base = base
    lay.flat.items = items
    return lay.flat


def workload_items(lay: Layout, wf: S.SourceFile) -> list:
    """Items of a --workload file (Part 01 §2.8)."""
    allowed = (S.IUse, S.ILet, S.IDef, S.IStage, S.IPool, S.IWorkload)
    for item in wf.items:
        if not isinstance(item, allowed):
            raise perr(f"a workload file holds `use`, `let`, `def`, `stage` and `pool` "
                       f"items and one `workload`: found `{item_word(item)}`",
                       item.pos, wf.text)
    loads = [i for i in wf.items if isinstance(i, S.IWorkload)]
    if len(loads) != 1:
        pos = loads[1].pos if loads else Pos(wf.label, 1, 1, 1)
        raise perr("a workload file contains exactly one `workload { … }` block",
                   pos, wf.text)
    return lay.file_items(wf)
