"""The bad-program corpus: each file's first line is
`// expect: LINE:COL: MESSAGE-SUBSTRING` (`0:0` for an error without a
position). Loading must raise ParseError/LinkError with that position, a
message containing the substring, and (with a position) the caret line."""
from __future__ import annotations

import glob
import os
import re

import pytest

from serq.core.errors import LinkError, ParseError
from serq.frontend import load

HERE = os.path.dirname(__file__)
FILES = sorted(glob.glob(os.path.join(HERE, "bad_programs", "*.sq")))
EXPECT = re.compile(r"// expect: (\d+):(\d+): (.*)")


def test_corpus_is_large_enough():
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(f) for f in FILES])
def test_bad_program(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = EXPECT.match(text.split("\n", 1)[0])
    assert m, "first line must be `// expect: LINE:COL: MESSAGE`"
    line, col, needle = int(m.group(1)), int(m.group(2)), m.group(3).strip()
    with pytest.raises((ParseError, LinkError)) as info:
        load(path)
    err = info.value
    assert needle in err.message, err.format()
    if line == 0:
        assert err.pos is None, err.format()
        return
    assert err.pos is not None, err.format()
    assert (err.pos.line, err.pos.col) == (line, col), err.format()
    shown = err.format().split("\n")
    source_line = text.split("\n")[line - 1]
    assert shown[1] == f"{line} | {source_line}"
    caret = shown[2].split(" | ", 1)[1]
    assert caret.startswith(" " * (col - 1) + "^"), err.format()
    header = f"{path}:{line}:{col}: " + ("link error: " if isinstance(err, LinkError) else "")
    assert shown[0].startswith(header)
