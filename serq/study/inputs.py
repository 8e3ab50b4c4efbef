"""Everything a run reads besides its program text, for its key: the files
the front end reads while loading it (libraries of `use`, a workload file,
a trace) and the source files of its policy classes.

A sweep's run key (`ProgramSpec.key`) hashes these files' bytes, so an
edit of a library, a trace or a policy changes the keys of exactly the
runs that read it, and a store never hands back a run of the old files.
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import replace
from typing import Any, Optional

from ..core.caches import digest, file_digest, recording, stop_recording
from .spec import ProgramSpec

#: A file read as a stream (a pipe): its bytes cannot be hashed again.
UNKNOWN = "unknown"


def with_reads(spec: ProgramSpec, point: Optional[dict] = None) -> ProgramSpec:
    """`spec` with `reads`: the (path, digest) of every file loading it at
    `point` reads, and of its policies' source files. A program that does
    not load still gets the files read up to its error."""
    from ..core.errors import SerqError
    from .worker import load_spec
    reads, token = recording()
    try:
        load_spec(spec.with_sets(point or {}))
    except SerqError:
        pass  # the run reports it; its key still covers what was read
    finally:
        stop_recording(token)
    files = {(path, known or UNKNOWN) for path, _real, known in reads}
    for _name, target in spec.policies:
        source = policy_source(target)
        if source is not None:
            files.add((source, file_digest(source) or UNKNOWN))
    if spec.path is not None:  # the program's own text is in the key already
        files.discard((os.path.abspath(spec.path), digest(spec.text.encode())))
    return replace(spec, reads=tuple(sorted(files)))


def policy_source(target: str) -> Optional[str]:
    """The source file of the module of a `module:Class` or `file.py:Class`
    policy, found without running it (None when it cannot be found)."""
    module = target.rpartition(":")[0]
    if module.endswith(".py"):
        return os.path.abspath(module)
    try:
        found: Any = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = getattr(found, "origin", None)
    return os.path.abspath(origin) if origin and os.path.isfile(origin) else None
