"""`@node`: a dataclass whose methods are compiled when first used.

`@dataclass` processes each class's fields and compiles three methods
(`__init__`, `__repr__`, `__eq__`), one `exec` each, as the class is
created: for the IR's fifty classes and the syntax tree's sixty that is
most of the time `serq-simpy` spends importing them, although a run whose
program comes from the cache (`serq.cli.program_cache`) makes no node with
`__init__` (unpickling does not call it) and rarely prints or compares
one. `@node` records the fields as `@dataclass` does and installs stand-in
methods; the first call of one has `@dataclass` itself write that method
for a class of the same name and fields, puts it in place of the stand-in
and goes on. The classes are dataclasses to the
`dataclasses` module (`fields`, `replace`, `asdict`, `is_dataclass`; and
`copy.replace` from Python 3.13),
unhashable as `@dataclass` makes them, and their methods, once compiled,
are `@dataclass`'s own.

Differences: a class without a docstring keeps none (`@dataclass` writes
the signature there), and until the first call `inspect.signature` shows
the stand-in's `(*args, **kw)`. Supported: annotated fields with any
`field(...)` options and inheritance; refused: `ClassVar`, `InitVar`,
`KW_ONLY`, a class's own `__init__`, `__repr__`, `__eq__`, `__hash__` or
`__post_init__` (use `@dataclass` for those). A class whose annotations
are evaluated lazily (Python 3.14 without `from __future__ import
annotations`) is handed to `@dataclass` as it is.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, TypeVar

T = TypeVar("T", bound=type)


@dataclasses.dataclass
class _Template:
    """Lends its `__dataclass_params__` (the defaults of `@dataclass`)."""


_FIELD = getattr(dataclasses, "_FIELD", None)   # a field that is neither ClassVar nor InitVar
_REPLACE = getattr(dataclasses, "_replace", None)  # `__replace__` (Python 3.13 on)
_METHODS = ("__init__", "__repr__", "__eq__")
_ANNOTATE = ("__annotate__", "__annotate_func__")  # deferred annotations (PEP 649)


def node(cls: T) -> T:
    """`@dataclass`, with `__init__`, `__repr__` and `__eq__` compiled on first use."""
    own = cls.__dict__
    if _FIELD is None or ("__annotations__" not in own and any(a in own for a in _ANNOTATE)):
        # a Python whose dataclasses differ, or annotations made only when asked for
        # (Python 3.14 in a module without `from __future__ import annotations`,
        # where the class's own `__annotations__` is not in its dictionary): the real thing
        return dataclasses.dataclass(cls)
    if "__post_init__" in own or any(m in own for m in _METHODS + ("__hash__",)):
        raise TypeError(f"{cls.__name__}: @node makes __init__, __repr__ and __eq__ "
                        "and takes no __post_init__ or __hash__")
    fields: dict[str, dataclasses.Field] = {}
    for base in cls.__mro__[-1:0:-1]:
        fields.update(getattr(base, "__dataclass_fields__", {}))
    for name, kind in own.get("__annotations__", {}).items():
        if any(word in str(kind) for word in ("ClassVar", "InitVar", "KW_ONLY")):
            raise TypeError(f"{cls.__name__}.{name}: @node has no {kind}")
        value = own.get(name, dataclasses.MISSING)
        f = value if isinstance(value, dataclasses.Field) else dataclasses.field(default=value)
        f.name, f.type, f._field_type = name, kind, _FIELD  # type: ignore[attr-defined]
        if f.kw_only is dataclasses.MISSING:  # type: ignore[attr-defined]
            f.kw_only = False  # type: ignore[attr-defined]
        if isinstance(value, dataclasses.Field):  # the class keeps the default, as @dataclass
            if value.default is dataclasses.MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, value.default)
        fields[name] = f
    positional = [f for f in fields.values() if f.init and not f.kw_only]  # type: ignore[attr-defined]
    for before, f in zip(positional, positional[1:]):  # as @dataclass refuses it
        if _has_default(before) and not _has_default(f):
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    cls.__dataclass_fields__ = fields  # type: ignore[attr-defined]
    cls.__dataclass_params__ = _Template.__dataclass_params__  # type: ignore[attr-defined]
    cls.__match_args__ = tuple(f.name for f in positional)  # type: ignore[attr-defined]
    cls.__hash__ = None  # type: ignore[assignment]  # @dataclass(eq=True) is unhashable
    if _REPLACE is not None and "__replace__" not in own:  # for copy.replace, as @dataclass
        cls.__replace__ = _REPLACE  # type: ignore[attr-defined]
    for m in _METHODS:
        setattr(cls, m, _first_use(cls, m))
    return cls


def _has_default(f: dataclasses.Field) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


def _first_use(cls: type, name: str) -> Callable[..., Any]:
    """A stand-in for the method `name`: compiles the class's own, then calls it."""
    def method(self: Any, *args: Any, **kw: Any) -> Any:
        return _compile(cls, name)(self, *args, **kw)
    method.__qualname__ = f"{cls.__qualname__}.{name}"
    method.__name__ = name
    return method


def _compile(cls: type, name: str) -> Callable[..., Any]:
    """The method `name` (`__init__`, `__repr__` or `__eq__`) that
    `@dataclass` writes for the fields of `cls`, made by `@dataclass` itself
    on a class of the same name and fields, and installed in `cls`."""
    fields = dataclasses.fields(cls)
    body: dict[str, Any] = {"__annotations__": {f.name: f.type for f in fields},
                            "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                            "__doc__": ""}
    for f in fields:
        body[f.name] = dataclasses.field(
            default=f.default, default_factory=f.default_factory, init=f.init, repr=f.repr,
            hash=f.hash, compare=f.compare, metadata=f.metadata,
            kw_only=f.kw_only)  # type: ignore[attr-defined]
    made = dataclasses.dataclass(type(cls.__name__, (), body), init=name == "__init__",
                                 repr=name == "__repr__", eq=name == "__eq__")
    method = made.__dict__[name]
    setattr(cls, name, method)
    return method
