"""“Did you mean …?” for a misspelt keyword (Part 01 §8.3's distance rule):
the words that may start a top-level item and a statement, and the hint
for a word near one of them."""
from __future__ import annotations

from typing import Iterable, Optional

from .names import suggest

#: Words that start a top-level item (program.tx `Item`, `FnMain`).
ITEM_KEYWORDS = ("use", "let", "def", "stage", "pool", "share", "workload", "session",
                 "server", "run", "gauge", "device", "engine", "claim", "queue", "fn")
#: Words that start a statement of session code (stmt.tx `StmtKeyword`).
STATEMENT_KEYWORDS = ("set", "observe", "turn", "request", "end", "branch", "if", "loop",
                      "while", "choose", "run", "hold", "grow", "drop", "release", "load",
                      "prefill", "decode", "tool", "transfer", "mark", "fork", "join")


def did_you_mean(word: str, candidates: Iterable[str]) -> Optional[str]:
    """"did you mean `stage`?" when `word` is a near miss of one candidate."""
    near = suggest(word, candidates)
    return f"did you mean `{near}`?" if near else None
