"""The cyclic garbage collector while a run's event loop turns.

A run frees its objects by reference counting: sessions, jobs, hold frames
and cache entries form no cycles that outlive them (replica.sq at R = 256
ends with the same peak memory with the collector off). The collector's
work is then pure overhead, and it grows with the fleet: CPython counts a
generation-0 collection down by every tracked object freed, so with
sessions ending as fast as they start its youngest generation gathers
thousands of objects between collections, and each collection visits
what they point to across a heap far beyond the caches (at R = 64 a young
collection found 5,300 objects, its threshold being 700). Measured on
replica.sq at issue 28's load, horizon 150, R = 256: 3.8 s of the run
inside collections with CPython's thresholds, 0.5 s with generation 0
collected every 50,000 allocations, the peak memory the same (194 MB);
R = 4 (horizon 400): 0.01 s either way (docs/guide/performance.md).

`fewer_collections()` raises the first threshold to `YOUNG` for the
duration of a run (the others stay as they are), and puts back what it
found. Garbage cycles (a user's policy may make them) are still
collected: by a young collection once `YOUNG` more tracked objects have
been made than freed (700 by default), by the older generations' as
before (every ten of the generation below). Nested and
concurrent runs (threads of a study's workers) share one raise: the
first in sets it, the last out restores it unless the thresholds were
changed in between. A caller's own choice stands: automatic collection
turned off (threshold 0), or a first threshold of `YOUNG` or more.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator, Optional

#: generation 0's threshold during a run: net tracked allocations between
#: two young collections (CPython's default is 700)
YOUNG = 50_000

_lock = threading.Lock()
_runs = 0
_saved: Optional[tuple[int, ...]] = None  # the thresholds found by the first run in


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the body with generation 0 collected every `YOUNG` allocations."""
    global _runs, _saved
    with _lock:
        if _runs == 0:
            found = gc.get_threshold()
            # (0: automatic collection is off; a higher value: the caller's own)
            _saved = found if 0 < found[0] < YOUNG else None
            if _saved is not None:
                gc.set_threshold(YOUNG, *found[1:])
        _runs += 1
    try:
        yield
    finally:
        with _lock:
            _runs -= 1
            if _runs == 0 and _saved is not None:
                if gc.get_threshold()[0] == YOUNG:  # (not changed by the caller since)
                    gc.set_threshold(*_saved)
                _saved = None
