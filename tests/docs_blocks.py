"""The fenced code blocks of the documentation (docs/**/*.md and README.md).

Shared by tests/test_docs.py and tests/test_docs_site.py. A block is a
fence of three or more backticks with a language word; its text has the
site's snippet includes (`--8<-- "path"`, pymdownx.snippets, paths from
the repository root) expanded, so a page that includes a program is
checked against the file itself. An HTML comment `<!-- docs-test: slow -->`
on the line right before a fence marks the block as slow (its test runs
only with `-m slow`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterator, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")

#: The languages a block may have and what the test does with each.
CHECKED = {"sq", "sq-refused", "sq-run-error", "console", "python"}
SHOWN = {"text", "json", "toml", "mermaid"}

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,})(?P<info>[^`]*)$")
_SNIPPET = re.compile(r'^\s*--8<--\s+"(?P<path>[^"]+)"\s*$')
SLOW_MARK = "<!-- docs-test: slow -->"


@dataclass
class Block:
    """One fenced block of a page."""

    page: str                 # path relative to the repository root
    line: int                 # 1-based line of the opening fence
    lang: str                 # the info string's first word ("" if none)
    text: str                 # the content, snippets expanded
    include: Optional[str]    # the included file when the block is one include
    slow: bool

    @property
    def id(self) -> str:
        """`page:line`, the test id."""
        return f"{self.page}:{self.line}"


def pages() -> list[str]:
    """Every Markdown page of the site, and README.md (relative paths, sorted)."""
    found = ["README.md"]
    for base, dirs, files in os.walk(DOCS):
        dirs.sort()
        found += sorted(os.path.relpath(os.path.join(base, f), ROOT)
                        for f in files if f.endswith(".md"))
    return found


def _expand(lines: list[str]) -> tuple[str, Optional[str]]:
    """The block's text with snippet lines replaced by the files' text."""
    out, included = [], []
    for line in lines:
        m = _SNIPPET.match(line)
        if m:
            path = m.group("path")
            included.append(path)
            with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
                out.append(fh.read().rstrip("\n"))
        else:
            out.append(line)
    only = included[0] if len(included) == 1 and len([ln for ln in lines if ln.strip()]) == 1 else None
    return "\n".join(out) + "\n", only


def blocks(page: str) -> Iterator[Block]:
    """The fenced blocks of one page, in order."""
    with open(os.path.join(ROOT, page), encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks = m.group("indent"), m.group("ticks")
        info = m.group("info").strip()
        lang = info.split()[0] if info else ""
        start = i
        body = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(ticks)
                                      and lines[i].strip() == "`" * len(lines[i].strip())):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1
        prev = next((lines[k].strip() for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        text, include = _expand(body)
        yield Block(page, start + 1, lang, text, include, prev == SLOW_MARK)


def all_blocks() -> list[Block]:
    """Every block of every page."""
    return [b for page in pages() for b in blocks(page)]


def block_after(block: Block) -> Optional[Block]:
    """The block that follows `block` on its page, if any."""
    seq = list(blocks(block.page))
    for k, b in enumerate(seq):
        if b.line == block.line:
            return seq[k + 1] if k + 1 < len(seq) else None
    return None


def commands(text: str) -> list[str]:
    """The commands of a console block: each `$ ` line, with the lines that
    continue it (after a trailing `\\`, lines starting `> `, and the body of
    a `<<'TAG'` here-document up to its `TAG` line)."""
    cmds: list[str] = []
    heredoc: Optional[str] = None
    for line in text.split("\n"):
        if heredoc is not None:
            cmds[-1] += "\n" + line
            if line.strip() == heredoc:
                heredoc = None
            continue
        if cmds and cmds[-1].endswith("\\"):
            cmds[-1] = cmds[-1][:-1].rstrip() + " " + line.strip()
        elif cmds and line.startswith("> "):
            cmds[-1] += "\n" + line[2:]
        elif line.startswith("$ "):
            cmds.append(line[2:].strip())
        else:
            continue
        m = re.search(r"<<-?\s*'?(\w+)'?\s*$", line)
        if m:
            heredoc = m.group(1)
    return cmds
