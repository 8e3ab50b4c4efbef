"""LLMServingSim's recorded vLLM runs (`bench/examples/<GPU>/<model>/vllm/`):
`requests.jsonl`, one JSON object a line with `request_id`, `input_toks`,
`output_toks`, `queued_ts`, `first_token_ts`, `last_token_ts` (the engine's
monotonic clock, seconds), and beside it `meta.json` (vLLM's engine
arguments, KV-cache geometry, hardware).

Times are taken on the engine's clock, as LLMServingSim's own comparison
does: arrival = `queued_ts`, TTFT = `first_token_ts − queued_ts`, E2E =
`last_token_ts − queued_ts` (`arrival_time` is the client's wall clock, a
different clock). Every request is a session of one turn."""
from __future__ import annotations

import json
import os

from .errors import measured_error
from .frame import build_frame
from .jsonl import json_lines, number, read_text

#: The keys that identify a requests record (format detection).
SIGNATURE = ("request_id", "input_toks", "queued_ts")


def read_requests(path: str):
    """(frame, meta) of an LLMServingSim run: `path` is its `requests.jsonl`
    or the directory holding it; `meta` is meta.json's object ({} without one)."""
    if os.path.isdir(path):
        path = os.path.join(path, "requests.jsonl")
    text = read_text(path)
    records = []
    for no, obj in json_lines(path, text):
        num = lambda k, optional=False: number(obj, k, path, no, text, optional=optional)
        queued = num("queued_ts")
        first, last = num("first_token_ts", optional=True), num("last_token_ts", optional=True)
        rid = obj.get("request_id", f"line{no}")
        for name, t in (("first_token_ts", first), ("last_token_ts", last)):
            if t is not None and t < queued:
                raise measured_error(path, f"`{name}` ({t:.6f}) comes before `queued_ts` "
                                     f"({queued:.6f})", line=no, text=text,
                                     help="the engine's times of a request are queued, "
                                     "first token, last token, in that order")
        records.append({
            "line": no, "request": str(rid), "session": str(rid), "arrival": queued,
            "prompt_tokens": num("input_toks"), "output_tokens": num("output_toks"),
            "ttft": None if first is None else first - queued,
            "e2e": None if last is None else last - queued})
    return build_frame(records, path, text), read_meta(os.path.join(os.path.dirname(path),
                                                                    "meta.json"))


def read_meta(path: str) -> dict:
    """meta.json's object, or {} when there is no such file; a file that is
    not a JSON object is an error naming its line."""
    if not os.path.exists(path):
        return {}
    text = read_text(path)
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise measured_error(path, f"not valid JSON: {exc.msg}", line=exc.lineno,
                             col=exc.colno, text=text, help="fix meta.json or remove it")
    if not isinstance(meta, dict):
        raise measured_error(path, "meta.json is a JSON object", line=1, text=text)
    return meta


def engine_settings(meta: dict) -> dict:
    """The engine settings a program of the run needs, from meta.json:
    max_num_seqs, max_num_batched_tokens, block size and GPU blocks (when
    recorded), prefix caching, parallelism."""
    kw = meta.get("engine_kwargs") or {}
    kv = meta.get("kv_cache") or {}
    out = {k: kw.get(k) for k in ("max_num_seqs", "max_num_batched_tokens",
                                  "tensor_parallel_size", "data_parallel_size",
                                  "enable_expert_parallel")}
    out.update(block_size=kv.get("block_size"), num_gpu_blocks=kv.get("num_gpu_blocks"),
               enable_prefix_caching=kv.get("enable_prefix_caching"),
               model=meta.get("model"), vllm_version=meta.get("vllm_version"))
    return out
