"""Expansion of definitions (Part 01 §2.5).

Every use of a `def` is replaced by its body with the parameters
substituted; the result is an item list without `def`s. All the restrictions
of §2.5 are parse errors reported here, in the reference's words.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ...core.errors import LinkError, ParseError
from ...core.ir import Pos
from ..syntax import tree as S
from ..parse.build import parse_expression
from ..syntax.hints import STATEMENT_KEYWORDS, did_you_mean
from ..syntax.names import OBSERVABLES, WORDS
from .reserved import check_reserved
from ..syntax.walk import EXPR_TYPES, nodes, size, stmts_in

MAX_TOKENS = 100_000
TURN_ASSIGNS = {"turn_no", "new", "out", "think", "forced", "more"}


def draws(e) -> bool:
    return any(isinstance(n, S.EDraw) for n in nodes(e))


def count_reads(body, name: str) -> int:
    return sum(1 for n in nodes(body) if isinstance(n, S.EName) and n.name == name)


def assigned(stmts: list) -> set[str]:
    """Names a list of statements assigns with `set` or `choose`."""
    return {s.name for s in stmts_in(stmts) if isinstance(s, (S.SSet, S.SChoose))}


def bound(body) -> set[str]:
    """Aggregate variables bound anywhere in a body."""
    return {n.var for n in nodes(body) if isinstance(n, S.EAgg)}


def body_positions(body) -> frozenset:
    """(file, line, col) of every node of a definition's body."""
    out = set()
    for n in nodes(body):
        for attr in ("pos", "name_pos", "var_pos"):
            p = getattr(n, attr, None)
            if isinstance(p, Pos):
                out.add((p.file, p.line, p.col))
    return frozenset(out)


def substitute(node, mapping: dict, source: Optional[str]):
    """A copy of `node` with parameters replaced by their arguments."""
    if isinstance(node, S.EName) and node.name in mapping:
        arg = mapping[node.name]
        index = substitute(node.index, mapping, source) if node.index is not None else None
        if index is None and not node.fields:
            return substitute(arg, {}, source)
        if isinstance(arg, S.EName) and (arg.index is None or index is None):
            return S.EName(arg.name, arg.pos, index if index is not None else arg.index,
                           arg.fields + node.fields)
        raise ParseError(f"`{node.name}` is indexed in the definition, so its argument "
                         "must be a name", node.pos, source=source)
    if isinstance(node, list):
        return [substitute(n, mapping, source) for n in node]
    if not dataclasses.is_dataclass(node) or isinstance(node, Pos):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, list) or (dataclasses.is_dataclass(value)
                                       and not isinstance(value, Pos)):
            changes[f.name] = substitute(value, mapping, source)
    return dataclasses.replace(node, **changes)


class Expander:
    """Expands the definitions of a flat item list, in order."""

    def __init__(self, items: list, sources: dict, overrides: Optional[dict] = None):
        self.items = items
        self.sources = sources
        self.defs: dict[str, S.IDef] = {}
        self.all_defs: dict[str, S.IDef] = {}
        for item in items:
            if isinstance(item, S.IDef):
                self.all_defs.setdefault(item.name, item)
        self.lets = {i.name for i in items if isinstance(i, S.ILet)}
        self.stages = {i.name for i in items if isinstance(i, (S.IStage, S.IEngine))}
        self.pools = {i.name for i in items if isinstance(i, S.IPool)}
        self.total = 0
        self.pending: list = []   # expression-definition uses in the statement at hand
        self.spans: dict[str, frozenset] = {}
        self.overrides = overrides or {}
        self.server_sets: set[str] = set()
        self.turn_sets: set[str] = set()
        self.route_sets: dict[str, set[str]] = {}  # gateway -> what its route assigns
        for item in items:
            if isinstance(item, S.IQueue):
                for e in item.entries:
                    if e.verb == "route":
                        self.route_sets[item.name] = assigned(e.body)
            if isinstance(item, S.IBlock) and item.kind == "server":
                self.server_sets = assigned(item.body)
            if isinstance(item, S.IWorkload):
                for c in item.clauses:
                    if isinstance(c, S.CBlock) and c.kind == "turn":
                        self.turn_sets = assigned(c.body)

    def perr(self, message: str, pos: Pos, help: Optional[str] = None) -> ParseError:
        return ParseError(message, Pos(pos.file, pos.line, pos.col, 1), help=help,
                          source=self.sources.get(pos.file))

    # ------------------------------------------------------------ overrides
    def apply_overrides(self) -> None:
        for name, text in self.overrides.items():
            targets = [d for d in self.items if isinstance(d, S.IDef) and d.name == name]
            if not targets:
                declared = ", ".join(dict.fromkeys(self.all_defs)) or "none"
                raise LinkError(f"unknown `def` override `{name}`",
                                help="an override replaces the body of a declared "
                                     f"expression `def`; declared definitions: {declared}")
            if targets[0].expr is None:
                raise LinkError(f"the `def` override `{name}`: `{name}` is statements; "
                                "an override replaces an expression definition")
            value = parse_expression(str(text), f"--def {name}")
            check_reserved(value, {f"--def {name}": str(text)})
            for d in targets:
                d.expr = value

    # ----------------------------------------------------------------- run
    def run(self) -> list:
        """The items with every definition use expanded and `def`s removed."""
        self.apply_overrides()
        out = []
        for item in self.items:
            if isinstance(item, S.IDef):
                self.define(item)
            elif isinstance(item, S.IUse):
                continue
            else:
                out.append(self.item(item))
        return out

    def define(self, d: S.IDef) -> None:
        if d.name in self.defs:
            raise self.perr(f"`{d.name}` is defined twice", d.name_pos)
        if d.name in WORDS:
            raise self.perr(f"`{d.name}` is a word of the language", d.name_pos)
        for kind, names in (("constant", self.lets), ("stage", self.stages),
                            ("pool", self.pools)):
            if d.name in names:
                raise self.perr(f"`{d.name}` is defined, and is also a {kind}", d.name_pos)
        seen: set[str] = set()
        for p, ppos in zip(d.params, d.param_pos or [d.name_pos] * len(d.params)):
            if p in seen:
                raise self.perr(f"`{p}` is a parameter twice", ppos)
            if p in WORDS:
                raise self.perr(f"`{p}` is a word of the language", ppos)
            seen.add(p)
        taken = bound(d.expr if d.expr is not None else d.stmts) | (assigned(d.stmts) if d.expr is None else set())
        for p in d.params:
            if p in taken:
                raise self.perr(f"`{p}` is a parameter, and the body names with it what "
                                "it assigns or binds", d.name_pos)
        if d.expr is not None:
            d.expr = self.expr(d.expr, d)
        else:
            d.stmts = self.stmts(d.stmts, d)
        self.spans[d.name] = body_positions(d.expr if d.expr is not None else d.stmts)
        self.defs[d.name] = d

    # ---------------------------------------------------------------- items
    def item(self, item):
        if isinstance(item, S.IBlock):
            return dataclasses.replace(item, body=self.stmts(item.body))
        if isinstance(item, S.IWorkload):
            clauses = [dataclasses.replace(c, body=self.stmts(c.body))
                       if isinstance(c, S.CBlock) else self.generic(c) for c in item.clauses]
            return dataclasses.replace(item, clauses=clauses)
        if isinstance(item, S.ISettings):
            return dataclasses.replace(item, settings=[(k, self.expr(e), p)
                                                       for k, e, p in item.settings])
        if isinstance(item, S.IQueue):
            entries = [dataclasses.replace(e, body=self.stmts(e.body)) for e in item.entries]
            return dataclasses.replace(self.deep(dataclasses.replace(item, entries=[])),
                                       entries=entries)
        if isinstance(item, (S.IPool, S.IStage, S.IDevice, S.IEngine, S.IClaim, S.IPull)):
            return self.deep(item)
        return self.generic(item)

    def deep(self, node):
        """Expand every expression inside a declaration (nested clauses too)."""
        if isinstance(node, EXPR_TYPES):
            return self.expr(node)
        if isinstance(node, list):
            return [self.deep(n) for n in node]
        if not dataclasses.is_dataclass(node) or isinstance(node, Pos):
            return node
        return dataclasses.replace(node, **{f.name: self.deep(getattr(node, f.name))
                                            for f in dataclasses.fields(node)})

    def generic(self, node):
        """Expand the expression fields of an item or clause."""
        changes = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if isinstance(value, EXPR_TYPES):
                changes[f.name] = self.expr(value)
        return dataclasses.replace(node, **changes) if changes else node

    # ---------------------------------------------------------- expressions
    def later(self, name: str, inside: Optional[S.IDef]) -> None:
        if inside is not None and name in self.all_defs and name not in self.defs:
            raise self.perr(f"`{inside.name}` uses `{name}`, which is defined after it: "
                            "a definition uses the ones before it",
                            self.all_defs[name].name_pos)

    def expr(self, e, inside: Optional[S.IDef] = None):
        if isinstance(e, S.ECall):
            args = [self.expr(a, inside) for a in e.args]
            d = self.defs.get(e.fn)
            if d is None:
                self.later(e.fn, inside)
                return S.ECall(e.fn, args, e.pos)
            if d.expr is None:
                raise self.perr(f"`{e.fn}` is statements (`def {e.fn}(…) {{ … }}`), "
                                "not an expression", e.pos)
            self.pending.append((f"in `{d.name}`, used at {e.pos.line}:{e.pos.col}",
                                 self.spans[d.name]))
            return self.apply(d, args, e.pos, d.expr)
        if isinstance(e, S.ENum):
            return e
        changes = {}
        for f in dataclasses.fields(e):
            value = getattr(e, f.name)
            if isinstance(value, list):
                changes[f.name] = [self.expr(v, inside) for v in value]
            elif dataclasses.is_dataclass(value) and not isinstance(value, Pos):
                changes[f.name] = self.expr(value, inside)
        return dataclasses.replace(e, **changes)

    def stmts(self, stmts: list, inside: Optional[S.IDef] = None) -> list:
        out: list = []
        for s in stmts:
            if isinstance(s, S.SUse):
                out.extend(self.use(s, inside))
                continue
            changes = {}
            self.pending = []
            for f in dataclasses.fields(s):
                value = getattr(s, f.name)
                if f.name == "via":
                    continue
                if f.name in ("then", "other", "body"):
                    changes[f.name] = self.stmts(value, inside)
                elif isinstance(value, list):
                    changes[f.name] = [self.expr(v, inside) for v in value]
                elif dataclasses.is_dataclass(value) and not isinstance(value, Pos):
                    changes[f.name] = self.expr(value, inside)
            done = dataclasses.replace(s, **changes)
            done.via = s.via + tuple(self.pending)
            self.pending = []
            out.append(done)
        return out

    def use(self, s: S.SUse, inside: Optional[S.IDef]) -> list:
        args = [self.expr(a, inside) for a in s.args]
        d = self.defs.get(s.fn)
        if d is None:
            self.later(s.fn, inside)
            raise self.perr(f"unknown statement `{s.fn}`", s.pos,
                            did_you_mean(s.fn, [*STATEMENT_KEYWORDS, *self.defs]))
        if d.expr is not None:
            spelling = "= …;" if d.eq_form else "{ … }"
            raise self.perr(f"`{s.fn}` is an expression (`def {s.fn}(…) {spelling}`), "
                            "not statements", s.pos)
        self.check_statement_args(d, args, s.pos)
        out = self.apply(d, args, s.pos, d.stmts)
        self.tag(out, d, s.pos)
        return out

    def tag(self, stmts: list, d: S.IDef, pos: Pos) -> None:
        """Record on each statement the expansion of `d` it came through."""
        entry = (f"in `{d.name}`, used at {pos.line}:{pos.col}", self.spans[d.name])
        for s in stmts_in(stmts):
            s.via = s.via + (entry,)
            if isinstance(s, S.SServing):
                s.site = pos  # a serving form is resolved where it is used (Part 05 §1.3)

    def check_statement_args(self, d: S.IDef, args: list, pos: Pos) -> None:
        body_sets = assigned(d.stmts)
        kinds = {type(x) for x in stmts_in(d.stmts)}
        if S.STurn in kinds:
            body_sets |= TURN_ASSIGNS | self.turn_sets
        for r in stmts_in(d.stmts):
            if isinstance(r, S.SRequest):
                body_sets |= (self.server_sets if r.gateway is None
                              else self.route_sets.get(r.gateway, set()))
        for p, arg in zip(d.params, args):
            for n in nodes(arg):
                if isinstance(n, S.EName) and n.name == "now" or (
                        isinstance(n, S.ECall) and n.fn in OBSERVABLES):
                    what = "now" if isinstance(n, S.EName) else n.fn + "(…)"
                    help = ("`set` the value first (`set t = now;`) and pass the name"
                            if what == "now" else "`set` the value first and pass the name")
                    raise self.perr(f"an argument of `{d.name}` reads `{what}`, which "
                                    "changes while statements run: the body would read "
                                    "it where it reads the parameter, not here", pos, help)
                if isinstance(n, S.EName) and n.name in body_sets:
                    raise self.perr(
                        f"the argument for `{p}` reads `{n.name}`, which `{d.name}` "
                        f"assigns: it would read the body's `{n.name}`, not this one",
                        pos, "`set` the value under another name first and pass that")

    def apply(self, d: S.IDef, args: list, pos: Pos, body):
        if len(args) != len(d.params):
            raise self.perr(f"`{d.name}` takes {len(d.params)} argument(s), got "
                            f"{len(args)}", pos)
        predicted = size(body)
        for p, arg in zip(d.params, args):
            reads = count_reads(body, p)
            if reads > 1 and draws(arg):
                raise self.perr(f"the argument for `{p}` draws, and `{d.name}` reads "
                                f"`{p}` {reads} times: it would draw {reads} times", pos,
                                "`set` the draw first and pass the name")
            predicted += reads * (size(arg) - 1)
        self.total += predicted
        if predicted > MAX_TOKENS or self.total > MAX_TOKENS:
            raise self.perr(f"the program expands to more than {MAX_TOKENS} tokens "
                            f"(at this use of `{d.name}`)", pos)
        mapping = dict(zip(d.params, args))
        source = self.sources.get(pos.file)
        return substitute(body, mapping, source)


def expand(items: list, sources: dict, overrides: Optional[dict] = None) -> list:
    """Expand every definition use; returns the items without `def`/`use`."""
    return Expander(items, sources, overrides).run()
