"""The visitor contract (issue 21, docs/add-a-statement.md): every pass that
dispatches on the kind of a node (`getattr(self, prefix + kind)`) handles
each kind of the syntax tree or the kernel IR it visits, or says in its
`IGNORES` that the kind is gone before it runs. A kind added to
`tree.Stmt`, `tree.Expr`, `tree.Item` or under `ir.Stmt`/`ir.Expr` without
a handler in every pass (or an entry in its `IGNORES`) fails here, naming
the pass and the method to write.
"""
from __future__ import annotations

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


def unhandled(cls: type, prefix: str, kinds: list[str]) -> list[str]:
    """The kinds `cls` neither visits nor ignores, as the methods to write."""
    ignores = getattr(cls, "IGNORES", frozenset())
    return [f"{cls.__name__}.{prefix}{k}" for k in kinds
            if not hasattr(cls, prefix + k) and k not in ignores]


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


def test_a_new_statement_kind_is_reported_for_every_pass():
    # what adding `SPause` to tree.Stmt without writing its visits gives
    kinds = _union(S.Stmt) + ["SPause"]
    missing = [m for cls, prefix, k in PASSES if k == _union(S.Stmt)
               for m in unhandled(cls, prefix, kinds)]
    assert missing == ["Rewriter.s_SPause", "KernelText.s_SPause", "StatementLinker.l_SPause"]
