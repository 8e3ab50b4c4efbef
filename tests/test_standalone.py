"""The repository stands alone (issue 13).

(a) No tracked file names the developers' specification folder next to the
    repository, or a path of one machine (a home directory, a scratch or
    work folder): a fresh clone has neither.
(b) Every citation "Part NN §x.y" (or "Part NN sec. x.y") in a tracked file
    resolves to a heading of the language reference, `docs/language/NN-*.md`,
    whose text starts with the section number ("### 2.6 Program inputs").
"""
from __future__ import annotations

import re
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The forbidden strings are assembled from pieces so that this file does not
# contain them itself.
_SHARED = re.compile(r"\.\./" + "shared" + r"\b|\b" + "shared" + r"/(spec|seeds)\b")
_MACHINE = re.compile(r"(?<![\w.~])(?<!:-)/(?:" + "|".join(["work", "root", "home", "tmp", "Users"])
                      + r")/")
_CITATION = re.compile(r"Part (0[1-7]),? (?:§ ?|sec\. ?|section )(\d+(?:\.\d+)*)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$")


@lru_cache(maxsize=None)
def tracked_files() -> tuple[Path, ...]:
    """The text files git tracks (the test is skipped outside a git checkout)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    files = []
    for name in out.decode().split("\0"):
        path = ROOT / name
        if name and path.is_file():
            files.append(path)
    return tuple(files)


def text_of(path: Path) -> str | None:
    """The file's text, or None for a binary file."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def offending_lines(pattern: re.Pattern) -> list[str]:
    """`file:line: text` of every tracked line that matches `pattern`."""
    hits = []
    for path in tracked_files():
        text = text_of(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return hits


def test_no_reference_to_the_shared_folder():
    assert offending_lines(_SHARED) == []


def test_no_machine_paths():
    assert offending_lines(_MACHINE) == []


def test_the_patterns_can_fail():
    assert _SHARED.search("see ../" + "shared" + "/spec/README.md")
    assert _SHARED.search("the " + "shared" + "/seeds folder")
    assert _MACHINE.search("python at /" + "work/venvs/ref013/bin/python")
    assert _MACHINE.search("cd /" + "home/user")
    assert not _MACHINE.search("a tmp_path, docs/tmp/x, ~/" + "work/ and the /usr/bin/env shebang")
    # a shell default for the scratch folder names no machine
    assert not _MACHINE.search('venv="${TMPDIR:-/' + 'tmp}/ci-venv"')


@lru_cache(maxsize=None)
def headings(part: str) -> tuple[str, ...]:
    """The heading texts of the reference page of Part `part` ("01" … "07")."""
    pages = sorted((ROOT / "docs" / "language").glob(f"{part}-*.md"))
    assert len(pages) == 1, f"docs/language/{part}-*.md: expected one page, found {pages}"
    found = []
    for line in pages[0].read_text(encoding="utf-8").splitlines():
        m = _HEADING.match(line)
        if m:
            found.append(m.group(1))
    return tuple(found)


def resolves(part: str, section: str) -> bool:
    """True when a heading of Part `part` starts with `section` ("2.6 …", "2. …")."""
    start = re.compile(re.escape(section) + r"\.?(\s|$)")
    return any(start.match(text) for text in headings(part))


def citations() -> dict[tuple[str, str], str]:
    """Every (part, section) cited in a tracked file, with one place that cites it."""
    cited: dict[tuple[str, str], str] = {}
    for path in tracked_files():
        text = text_of(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for m in _CITATION.finditer(line):
                cited.setdefault((m.group(1), m.group(2)), f"{path.relative_to(ROOT)}:{number}")
    return cited


def test_every_citation_resolves_to_a_heading():
    cited = citations()
    assert len(cited) > 100  # the code, tests and examples cite about 130 sections
    missing = [f"{where}: Part {part} §{section}"
               for (part, section), where in sorted(cited.items()) if not resolves(part, section)]
    assert missing == []


def test_resolution_can_fail():
    assert resolves("01", "2.6")
    assert resolves("01", "2")
    assert not resolves("01", "2.61")
    assert not resolves("01", "99")
    assert _CITATION.search("Part 04 sec. 8.5").groups() == ("04", "8.5")
    assert _CITATION.search("(Part 02 §10.5).").groups() == ("02", "10.5")
