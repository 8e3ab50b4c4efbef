"""The vocabulary of the language: functions, observables, distributions,
keywords, context variables and their moments (Part 01 §4, §6; Part 04 §10)."""
from __future__ import annotations

ARITH = {"min": 2, "max": 2, "abs": 1, "floor": 1, "ceil": 1, "sqrt": 1,
         "exp": 1, "ln": 1, "pow": 2}
DRAWS = {"exp": 1, "det": 1, "uniform": 2, "erlang": 2, "h2": 2, "bernoulli": 1}
STAGE_OBSERVABLES = {"queue": 1, "busy": 1, "work": 1, "est_lambda": 1,
                     "est_rho": 1, "est_wait": 1, "price": 3}
POOL_OBSERVABLES = {"used": 1, "free": 1, "cachedin": 1, "holders": 1,
                    "queued": 1, "blocksize": 1}
STEP_OBSERVABLES = {"budget_left": 1}
OBSERVABLES = {**STAGE_OBSERVABLES, **POOL_OBSERVABLES, **STEP_OBSERVABLES}
AGGREGATES = ("sum", "max", "min")
OBS_AGGREGATES = ("total", "count", "largest", "smallest", "prefix_total")

KEYWORDS = set("""admission admit arrivals arrive at batch bernoulli block branch
budget by cache cap choose chunk claim closed cost decode def delay det device drop
else end engine erlang evict exclusive exp fifo first fn from gauge given grow
growing h2 hidden hold horizon if in init latency lease let lifo link load loop lru
mark maxmin memory nic none observe on only ordered poisson pool preempt prefill ps
pull queue release renewal request reserve reuse run schedule seed serve server
session set share spill stage step sum tool to trace transfer turn uniform use via
warmup when while with workload advance bottleneck each every execute gateway granule
head held iteration most of requeue route self some state tail scheduler worker
forward running waiting""".split())
WORDS = KEYWORDS | set(ARITH) | set(OBSERVABLES) | set(DRAWS) | set(AGGREGATES) | \
    set(OBS_AGGREGATES)

# moment -> how a message names it
MOMENTS = {
    "session": "a session statement, a run or a hold's cache",
    "admit": "a hold's header, read at admission",
    "select": "a pool's `queue by` keys",
    "evict": "an eviction key or a spill clause",
    "ps": "a ps stage's capacity",
    "budget": "a step stage's budget or chunk",
    "step": "a step stage's cost, after the iteration",
    "serve": "a `serve by` key or an `only` predicate",
    "only": "an `only` predicate",
    "victim": "a pool's `preempt by` keys",
    "plan": "a step stage's iteration body, read as the iteration is planned",
    "gauge": "a gauge",
    "given": "a claim's `given`",
    "iteration": "a claim over iterations, read when an iteration starts",
    "end": "a claim `at end`",
    "constant": "a constant",
    "renewal": "a renewal gap",
}
_SBSPI = ("budget", "step", "serve", "plan", "iteration")
CONTEXT = {
    "waited": ("select",),
    "size": ("evict",), "age": ("evict",), "last": ("evict",),
    "waiting": ("evict",),
    "present": ("ps",),
    "residents": _SBSPI, "decoders": _SBSPI, "kv_decode": _SBSPI,
    "kv_prefill": _SBSPI,
    "tokens": ("step", "plan", "iteration"),
    "prefilled": ("step", "plan", "iteration"),
    "admitted": ("plan",), "preempted": ("plan",),
    "attention": ("step", "iteration"),
    "decoding": ("serve", "victim"), "admission": ("serve", "victim"),
    "remaining": ("serve",), "position": ("victim",),
    "demand": ("iteration",), "served": ("iteration",), "arrived": ("iteration",),
}
ENGINE_LISTS = ("running", "waiting", "batch")
RESERVED = {"inf", "now"} | set(CONTEXT) | set(ENGINE_LISTS)


def moments_text(moments) -> str:
    """`a, b or c` over the descriptions of moments."""
    texts = [MOMENTS[m] for m in moments]
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " or " + texts[-1]


def reserved_message(name: str, what: str) -> str:
    """The message for a reserved name used as the name of `what`."""
    if name in CONTEXT:
        where = moments_text(CONTEXT[name])
    elif name in ENGINE_LISTS:
        where = "an engine's schedule"
    else:
        where = "every expression"
    return (f"`{name}` is a name the language supplies, read in {where}; "
            f"{what} named `{name}` would be read there instead")


MAX_SUGGEST = 64  # names longer than this get no did-you-mean


def levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def suggest(name: str, candidates) -> str | None:
    """The one nearest candidate within the distance rule of Part 01 §8.3."""
    limit = 1 if len(name) < 4 else 2
    if len(name) > MAX_SUGGEST:
        return None  # no name that long is a typo of a declared one worth the search
    # the distance is at least the difference in length: skip the far ones unmeasured
    scored = sorted((levenshtein(name, c), c) for c in set(candidates)
                    if c != name and abs(len(c) - len(name)) <= limit)
    if not scored or scored[0][0] > limit:
        return None
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        return None
    return scored[0][1]
