"""The old import paths of the policy classes (before issue 21's layout),
kept for one release: each old module's `__getattr__` is `moved(...)`."""
from __future__ import annotations

import warnings
from importlib import import_module
from typing import Any, Callable


def moved(module: str, names: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `module`: each name of `names` (name → the
    module that has it now, relative to serq.runtime) with a
    `DeprecationWarning` pointing to serq.policies."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is deprecated: import it from serq.policies",
                      DeprecationWarning, stacklevel=2)
        return getattr(import_module(names[name], "serq.runtime"), name)

    return __getattr__
