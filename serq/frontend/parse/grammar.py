"""The textX metamodel of the language, built once per installation.

The grammar (`*.tx`) ships inside the package as `serq/grammar/` (the
repository keeps it in `metamodel/`, mapped there by `pyproject.toml`).
Building the metamodel from it takes textX a few tenths of a second, so the
built metamodel is pickled into the user's cache directory, keyed by a hash
of the grammar files, the textX, Arpeggio and Python versions and this
module's format; later runs load it in a few milliseconds. Parsing is still
textX's own: only the construction of the metamodel is skipped.

textX creates a Python class per rule and a parser class inside functions,
which plain `pickle` cannot name; `_Pickler` writes each of them as a
recipe (the class is re-created by textX's own code, then its attributes
are set back). Any failure to read or write the cache falls back to
building the metamodel (the cache is an optimisation, never a requirement).

`SERQ_CACHE_DIR` chooses the cache directory (`serq.core.caches.cache_dir`);
set to an empty string it turns the cache off.
"""
from __future__ import annotations

import hashlib
import io
import os
import pickle
import sys
import types
from typing import Any

from ...core.caches import cache_dir, grammar_dir, write_atomic

__all__ = ["build", "cache_dir", "cache_key", "grammar_dir", "load"]

#: Bump when the pickled form changes.
_FORMAT = 1


def build(root: str) -> Any:
    """Build the metamodel whose root rule is in `<grammar>/<root>.tx` (textX)."""
    from textx import metamodel_from_file
    return metamodel_from_file(os.path.join(grammar_dir(), f"{root}.tx"),
                               autokwd=True, memoization=True)


def cache_key(root: str) -> str:
    """A hash of everything the built metamodel depends on."""
    import arpeggio
    import textx
    h = hashlib.sha256()
    h.update(repr((_FORMAT, root, sys.version, textx.__version__,
                   arpeggio.__version__)).encode())
    folder = grammar_dir()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".tx"):
            h.update(name.encode() + b"\0")
            with open(os.path.join(folder, name), "rb") as f:
                h.update(f.read() + b"\0")
    return h.hexdigest()[:32]


def load(root: str = "program") -> Any:
    """The metamodel of `root`: from the cache when present, else built (and cached)."""
    folder = cache_dir()
    if folder is None:
        return build(root)
    try:
        path = os.path.join(folder, f"{root}-{cache_key(root)}.pickle")
    except OSError:
        return build(root)
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except Exception:  # missing, truncated or stale: build it afresh
        pass
    mm = build(root)
    _store(mm, folder, path)
    return mm


def _store(mm: Any, folder: str, path: str) -> None:
    """Write the pickled metamodel atomically; give up silently on any error."""
    try:
        buf = io.BytesIO()
        _Pickler(buf, mm).dump(mm)
    except Exception:
        return
    write_atomic(folder, path, buf.getvalue())


# ---------------------------------------------------------------------------
# Pickling textX's dynamic classes
# ---------------------------------------------------------------------------

def _canonical(value: str) -> str:
    """textX compares rule types and multiplicities by identity (`is`)."""
    from textx import const
    for name in ("RULE_MATCH", "RULE_ABSTRACT", "RULE_COMMON", "MULT_ONE",
                 "MULT_OPTIONAL", "MULT_ZEROORMORE", "MULT_ONEORMORE"):
        v = getattr(const, name)
        if v == value:
            return v
    return value


def _rule_class(name: str) -> type:
    """A fresh rule class made by textX's own `_new_class` (attributes set later)."""
    from textx.metamodel import TextXMetaModel
    holder = types.SimpleNamespace(_init_class=lambda *a, **k: None)
    return TextXMetaModel._new_class(holder, name, None, 0)


def _set_class_state(cls: type, state: dict[str, Any]) -> type:
    for key, value in state.items():
        setattr(cls, key, _canonical(value) if key == "_tx_type" else value)
    return cls


def _meta_attr() -> Any:
    from textx.metamodel import MetaAttr
    return MetaAttr.__new__(MetaAttr)


def _set_attr_state(obj: Any, state: dict[str, Any]) -> Any:
    obj.__dict__.update(state)
    obj.mult = _canonical(obj.mult)
    return obj


_PARSER_CLASS: list[type] = []


def _model_parser(state: dict[str, Any]) -> Any:
    """The metamodel's parser blueprint, its class made by textX's `get_model_parser`."""
    if not _PARSER_CLASS:
        from textx.model import get_model_parser
        _PARSER_CLASS.append(type(get_model_parser(None, None)))
    cls = _PARSER_CLASS[0]
    obj = cls.__new__(cls)
    obj.__dict__.update(state)
    return obj


_DEFAULT_PROCESSORS: dict[str, Any] = {}


def _default_processor(key: str) -> Any:
    """textX's built-in conversion of a base type (a lambda of its metamodel)."""
    if not _DEFAULT_PROCESSORS:
        from textx.metamodel import TextXMetaModel
        _DEFAULT_PROCESSORS.update(TextXMetaModel()._default_obj_processors)
    return _DEFAULT_PROCESSORS[key]


def _stream(name: str) -> Any:
    return getattr(sys, name)


class _Pickler(pickle.Pickler):
    """Pickles a textX metamodel, writing its dynamic classes as recipes."""

    def __init__(self, file: Any, mm: Any):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        from textx.metamodel import MetaAttr, TextXMetaClass
        self._meta_class = TextXMetaClass
        self._meta_attr = MetaAttr
        self._parser_class = type(mm._parser_blueprint)
        self._processors = {id(v): k for k, v in mm._default_obj_processors.items()}

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, self._meta_class):
            state = {k: v for k, v in vars(obj).items() if k.startswith("_tx_")}
            return (_rule_class, (obj.__name__,), state, None, None, _set_class_state)
        if type(obj) is self._meta_attr:
            return (_meta_attr, (), dict(vars(obj)), None, None, _set_attr_state)
        if type(obj) is self._parser_class:
            return (_model_parser, (dict(vars(obj)),))
        if isinstance(obj, types.FunctionType) and id(obj) in self._processors:
            return (_default_processor, (self._processors[id(obj)],))
        if obj is sys.stdout:
            return (_stream, ("stdout",))
        if obj is sys.stderr:
            return (_stream, ("stderr",))
        return NotImplemented
