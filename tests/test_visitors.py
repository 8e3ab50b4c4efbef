"""The visitor contract (issue 21, docs/add-a-statement.md): every pass that
dispatches on the kind of a node (`getattr(self, prefix + kind)`) handles
each kind of the syntax tree or the kernel IR it visits, derives its
handling (a plain statement kind: `syntax/derive.py`, the pass's
`derives`), or says in its `IGNORES` that the kind is gone before it runs.
A kind added to `tree.Stmt`, `tree.Expr`, `tree.Item` or under
`ir.Stmt`/`ir.Expr` without a handler in every pass (or an entry in its
`IGNORES`) fails here, naming the pass and the method to write.
"""
from __future__ import annotations

import gc
import typing

import pytest

from serq.core import ir
from serq.frontend.link.resolve import Resolver
from serq.frontend.link.statements import StatementLinker
from serq.frontend.rewrite.entries import Rewriter
from serq.frontend.syntax import tree as S
from serq.frontend.syntax.kernel_text import KernelText
from serq.runtime.compile.codegen import SessionCompiler
from serq.runtime.compile.exprs import ExprCompiler


Expr = S.Expr
Pos = ir.Pos


def _union(u: typing.Any) -> list[str]:
    return sorted(t.__name__ for t in typing.get_args(u))


def _below(base: type) -> list[str]:
    out, todo = set(), [base]
    while todo:
        for sub in todo.pop().__subclasses__():
            out.add(sub.__name__)
            todo.append(sub)
    return sorted(out)


#: (pass, the prefix of its visit methods, the kinds it visits)
PASSES = [
    (Rewriter, "s_", _union(S.Stmt)),
    (KernelText, "s_", _union(S.Stmt)),
    (KernelText, "i_", _union(S.Item)),
    (StatementLinker, "l_", _union(S.Stmt)),
    (Resolver, "r_", _union(S.Expr)),
    (SessionCompiler, "_", _below(ir.Stmt)),
    (ExprCompiler, "_", _below(ir.Expr)),
]


def _derived(cls: type, kind: str) -> bool:
    derives = getattr(cls, "derives", None)
    node = getattr(S, kind, None)
    return derives is not None and isinstance(node, type) and derives(node)


def unhandled(cls: type, prefix: str, kinds: list[str]) -> list[str]:
    """The kinds `cls` neither visits, derives nor ignores, as the methods to write."""
    ignores = getattr(cls, "IGNORES", frozenset())
    return [f"{cls.__name__}.{prefix}{k}" for k in kinds
            if not hasattr(cls, prefix + k) and k not in ignores and not _derived(cls, k)]


@pytest.mark.parametrize("cls,prefix,kinds", PASSES,
                         ids=[f"{c.__name__}.{p}" for c, p, _ in PASSES])
def test_every_pass_visits_or_ignores_every_kind(cls, prefix, kinds):
    assert kinds and unhandled(cls, prefix, kinds) == []


@pytest.mark.parametrize("cls,prefix,kinds", PASSES,
                         ids=[f"{c.__name__}.{p}" for c, p, _ in PASSES])
def test_an_ignored_kind_is_a_kind_and_has_no_visit_method(cls, prefix, kinds):
    every = set(_union(S.Stmt)) | set(_union(S.Item)) | set(_union(S.Expr))
    for kind in getattr(cls, "IGNORES", frozenset()):
        assert kind in every, kind
        assert not hasattr(cls, prefix + kind), kind


@pytest.fixture
def pause(monkeypatch):
    """`SPause`, the example of docs/add-a-statement.md, added to the syntax
    tree (with its kernel text) and `Pause` to the IR, as its steps 2 and 3
    write them (the grammar rule is step 1)."""
    from serq.core.nodes import node

    @node
    class SPause(S.SBase):
        TEXT = "pause ({e});"
        e: Expr  # (as tree.py spells it)
        pos: Pos

    @node
    class Pause(ir.Stmt):
        e: ir.Expr
        pos: ir.Pos

    monkeypatch.setattr(S, "SPause", SPause, raising=False)
    monkeypatch.setattr(ir, "Pause", Pause, raising=False)
    yield SPause, Pause
    del SPause, Pause
    gc.collect()  # (so that no later `ir.Stmt.__subclasses__()` finds `Pause`)


def test_a_new_plain_statement_needs_only_its_runtime(pause, monkeypatch):
    # `SPause` in tree.Stmt and `Pause` under ir.Stmt: the syntax passes
    # derive it; only the code generator's `_Pause` is to write
    kinds = _union(S.Stmt) + ["SPause"]
    now = {SessionCompiler: _below(ir.Stmt), ExprCompiler: _below(ir.Expr)}
    missing = [m for cls, prefix, k in PASSES
               for m in unhandled(cls, prefix, kinds if k == _union(S.Stmt) else now.get(cls, k))]
    assert missing == ["SessionCompiler._Pause"]
    # without its `TEXT` the kernel text is to write; without `ir.Pause` the link
    monkeypatch.delattr(pause[0], "TEXT")
    monkeypatch.delattr(ir, "Pause")
    missing = [m for cls, prefix, k in PASSES if k == _union(S.Stmt)
               for m in unhandled(cls, prefix, kinds)]
    assert missing == ["KernelText.s_SPause", "StatementLinker.l_SPause"]


def test_the_passes_derive_a_plain_statement(pause):
    SPause, Pause = pause
    pos = ir.Pos("<t>", 1, 1)
    s = SPause(S.EBinary("+", S.ENum(1.0, pos), S.ENum(2.0, pos), pos), pos)
    # the kernel text: its TEXT
    assert KernelText.derived(s) == "pause (1 + 2);"
    # the link: the IR node of its name, the expression resolved (and folded)
    linker = StatementLinker(Resolver({}))
    linked = linker.stmt(s)
    assert type(linked) is Pause and linked.pos == pos
    assert isinstance(linked.e, (ir.Num, ir.Binary))
    # the rewrite: each expression through `expr`, each block through `block`
    from serq.frontend.syntax.derive import rebuild
    seen = []
    out = rebuild(s, lambda e: seen.append(e) or S.ENum(3.0, pos), lambda b: b)
    assert seen == [s.e] and out.e == S.ENum(3.0, pos) and type(out) is SPause


def test_the_page_lists_the_files_a_plain_statement_touches():
    """docs/add-a-statement.md's table: the grammar, the two node modules and
    the module of the one pass that does not derive a plain kind (the code
    generator: `test_a_new_plain_statement_needs_only_its_runtime`)."""
    import inspect
    import os
    import re

    from serq.frontend.parse.build import Builder

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "docs", "add-a-statement.md"), encoding="utf-8") as fh:
        page = fh.read()
    files = re.findall(r"^\| \d+\. [^|]+\| `([^`]+)` \|", page, re.M)

    def rel(obj) -> str:
        return os.path.relpath(inspect.getsourcefile(obj), root).replace(os.sep, "/")

    assert files == ["metamodel/stmt.tx", rel(S), rel(ir), rel(SessionCompiler)]
    assert all(os.path.exists(os.path.join(root, f)) for f in files)
    # the passes that derive a plain kind, where the page says their methods are
    for cls in (Builder, Rewriter, StatementLinker, KernelText):
        assert f"`{cls.__name__}.s_" in page or f"`{cls.__name__}.l_" in page, cls
        assert f"(`{rel(cls)}`)" in page, cls
