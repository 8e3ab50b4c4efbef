"""serQ's replay records (`pd_replay.py`'s `*_rounds.jsonl`): one JSON
object a line with `session`, `turn`, `prompt_len` (or `new`), `out`,
`sent`, `first`, `done` (seconds from the replay's start), `generated`,
`status`, `cached_tokens`. A request without a first token (an HTTP error)
keeps its row with NaN times."""
from __future__ import annotations

from .errors import measured_error
from .frame import build_frame
from .jsonl import json_lines, number, read_text

#: The keys that identify a rounds record (format detection).
SIGNATURE = ("session", "turn", "sent")


def read_rounds(path: str):
    """The tidy frame of a rounds JSONL file."""
    text = read_text(path)
    records = []
    for no, obj in json_lines(path, text):
        num = lambda k, optional=False: number(obj, k, path, no, text, optional=optional)
        sess = num("session")
        num("turn")
        sent = num("sent")
        prompt = num("prompt_len", optional=True)
        if prompt is None:
            prompt = num("new")
        first, done = num("first", optional=True), num("done", optional=True)
        gen = num("generated", optional=True)
        out = gen if gen is not None else num("out")
        if first is not None and first < sent:
            raise measured_error(path, f"the first token ({first:g} s) comes before the "
                                 f"send ({sent:g} s)", line=no, text=text,
                                 help="`sent`, `first` and `done` are seconds from the "
                                 "replay's start, in that order")
        if first is not None and done is None:
            raise measured_error(path, "the record has a first token but no `done`",
                                 line=no, text=text, help="give `done` its number")
        ok = first is not None and int(obj.get("status", 200) or 0) == 200
        records.append({
            "line": no, "session": int(sess), "request": f"{int(sess)}/{int(obj['turn'])}",
            "arrival": sent, "prompt_tokens": prompt, "output_tokens": out,
            "cached_tokens": num("cached_tokens", optional=True),
            "ttft": first - sent if ok else None, "e2e": done - sent if ok else None,
            "done": done})
    return build_frame(records, path, text)
