"""Programs that load but stop at run time: each file's first line is
`// expect-run: T: MESSAGE-SUBSTRING`, T the simulated time of the error.
The run must raise SimulationError with that time and message, and (the
programs being small) within a second of wall time, however far the
horizon."""
from __future__ import annotations

import glob
import os
import re
import time

import pytest

import serq
from serq.core.errors import SimulationError
from serq.frontend import load

HERE = os.path.dirname(__file__)
FILES = sorted(glob.glob(os.path.join(HERE, "bad_runs", "*.sq")))
EXPECT = re.compile(r"// expect-run: ([0-9.e+]+): (.*)")


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(f) for f in FILES])
def test_bad_run(path):
    with open(path, encoding="utf-8") as f:
        m = EXPECT.match(f.readline())
    assert m, "first line must be `// expect-run: T: MESSAGE`"
    prog = load(path)
    t0 = time.perf_counter()
    with pytest.raises(SimulationError) as info:
        serq.run(prog)
    assert time.perf_counter() - t0 < 1.0
    assert info.value.time == float(m.group(1))
    assert m.group(2).strip() in info.value.message, info.value.format()
