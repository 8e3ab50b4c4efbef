"""`@node` (serq/core/nodes.py): dataclasses whose methods are compiled on first use.

Each `@node` class must behave as the `@dataclass` class with the same
fields: the same `__init__` signature and defaults, `repr`, equality,
unhashability, `fields`, `replace`, `asdict`, `__match_args__`, pickling.
Checked on a class using every supported option, and on every class of
the IR and of the syntax tree against a `@dataclass` twin.
"""
from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field
from typing import Optional

import pytest

from serq.core import ir
from serq.frontend.syntax import tree as syntax
from serq.core.nodes import node


def _declare(decorate):
    """The same two classes, made by `decorate` (@node or @dataclass)."""
    @decorate
    class Base:
        """A base with a keyword-only field that takes no part in equality."""

        name: str
        via: tuple = field(default=(), kw_only=True, compare=False)

    @decorate
    class Node(Base):
        """Every kind of field."""

        value: float = 1.0
        items: list = field(default_factory=list)
        hidden: Optional[int] = field(default=None, init=False, repr=False)

    Node.__qualname__ = "Node"  # pickled by name: `Node` below
    return Node


Node = _declare(node)
Twin = _declare(dataclass)


def test_a_node_behaves_as_its_dataclass_twin():
    a, t = Node("x", 2.0, via=(1,)), Twin("x", 2.0, via=(1,))
    assert repr(a) == repr(t) == "Node(name='x', via=(1,), value=2.0, items=[])"
    assert str(inspect.signature(Node)) == str(inspect.signature(Twin))
    assert a == Node("x", 2.0) and a != Node("x", 3.0) and a != Twin("x", 2.0)
    assert (Node("y") == Node("y")) is True and Node("y").__eq__(3) is NotImplemented
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)
    assert [f.name for f in dataclasses.fields(Node)] == [f.name for f in dataclasses.fields(Twin)]
    assert Node.__match_args__ == Twin.__match_args__ == ("name", "value", "items")
    assert dataclasses.is_dataclass(a) and dataclasses.asdict(a) == dataclasses.asdict(t)
    b = dataclasses.replace(a, value=5.0)
    assert b.value == 5.0 and b.via == (1,) and b.items is a.items  # as replace() does
    assert Node("z").items is not Node("z").items  # a fresh list each time
    assert not hasattr(Node, "items") and Node.value == 1.0 and Node.hidden is None
    assert pickle.loads(pickle.dumps(a)) == a
    with pytest.raises(TypeError):
        Node()  # `name` is required
    match Node("m", 4.0):
        case Node(name, value):
            assert (name, value) == ("m", 4.0)


def test_methods_are_compiled_once_on_first_use():
    @node
    class Late:
        """A fresh class: its methods are stand-ins until used."""

        x: int

    stand_in = Late.__dict__["__init__"]
    assert Late(1).x == 1
    compiled = Late.__dict__["__init__"]
    assert compiled is not stand_in and compiled.__qualname__.endswith("Late.__init__")
    assert Late(2).x == 2 and Late.__dict__["__init__"] is compiled
    assert Late.__dict__["__repr__"].__name__ == "__repr__"  # repr not used yet: a stand-in
    assert repr(Late(3)) == "test_methods_are_compiled_once_on_first_use.<locals>.Late(x=3)"


def test_what_node_refuses():
    with pytest.raises(TypeError, match="non-default argument 'b'"):
        @node
        class Order:
            a: int = 0
            b: int
    with pytest.raises(TypeError, match="takes no __post_init__"):
        @node
        class Post:
            a: int

            def __post_init__(self):
                pass
    with pytest.raises(TypeError, match="ClassVar"):
        @node
        class Shared:
            a: "ClassVar[int]" = 0


def _classes(module):
    return [c for c in vars(module).values()
            if isinstance(c, type) and c.__module__ == module.__name__
            and "__dataclass_fields__" in c.__dict__ and c is not ir.Pos]


@pytest.mark.parametrize("module", [ir, syntax])
def test_every_class_matches_its_dataclass_twin(module):
    classes = _classes(module)
    assert len(classes) > 45
    for cls in classes:
        fields = dataclasses.fields(cls)
        declared: dict = {}  # the annotations of the class and its bases, as written
        for c in reversed(cls.__mro__):
            declared.update(inspect.get_annotations(c))
        assert [f.name for f in fields] == list(declared), cls  # the twin is made of these
        body = {"__annotations__": {f.name: f.type for f in fields},
                "__module__": cls.__module__, "__qualname__": cls.__qualname__}
        for f in fields:
            body[f.name] = dataclasses.field(default=f.default, default_factory=f.default_factory,
                                             init=f.init, repr=f.repr, compare=f.compare,
                                             kw_only=f.kw_only)
        twin = dataclass(type(cls.__name__, (), body))
        args = [f"v{i}" for i, f in enumerate(fields) if f.init and not f.kw_only
                and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        mine, theirs = cls(*args), twin(*args)
        assert repr(mine) == repr(theirs), cls
        assert str(inspect.signature(cls)) == str(inspect.signature(twin)), cls
        assert mine == cls(*args) and cls.__hash__ is None, cls
        assert cls.__match_args__ == twin.__match_args__, cls


@pytest.mark.skipif(not hasattr(__import__("copy"), "replace"), reason="copy.replace: Python 3.13")
def test_copy_replace_as_for_a_dataclass():
    # from Python 3.13 @dataclass gives each class `__replace__`, which copy.replace calls
    import copy
    a, t = Node("x", 2.0, via=(1,)), Twin("x", 2.0, via=(1,))
    b, u = copy.replace(a, value=5.0), copy.replace(t, value=5.0)
    assert type(b) is Node and repr(b) == repr(u)
    assert b.via == (1,) and b.items is a.items


def test_lazy_annotations_go_to_dataclass():
    # Python 3.14 keeps a class's annotations behind `__annotate__` (PEP 649) unless its
    # module imports `annotations` from __future__: `@node` would find no field in the
    # class's dictionary, so it hands such a class to @dataclass (here the 3.14 layout
    # is imitated: `__annotate__` and no `__annotations__` in the class's dictionary)
    def annotate(format):
        return {"x": int}
    Lazy = type("Lazy", (), {"__annotate__": annotate, "__module__": __name__})
    made = node(Lazy)
    assert made is Lazy and dataclasses.is_dataclass(made)
    assert made.__dict__["__init__"].__code__.co_name == "__init__"  # @dataclass's, no stand-in
