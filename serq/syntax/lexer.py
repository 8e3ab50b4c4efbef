"""A Pygments lexer for serQ programs (`.sq`).

Registered with Pygments by the entry point `pygments.lexers` (pyproject.toml),
so `pygmentize -l sq model.sq`, MkDocs' ```sq code blocks and any other
Pygments user colour `stage`, `run`, `pool`, `hold` … as keywords. This
module imports Pygments and nothing of the simulator (the word lists below
are the grammar's; tests/test_syntax_tools.py checks them against
`metamodel/*.tx` and `serq.frontend.syntax.names`).
"""
from __future__ import annotations

from pygments.lexer import RegexLexer, words
from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, String,
                            Text, Whitespace)

__all__ = ["SerqLexer", "DECLARATIONS", "KEYWORDS", "BUILTINS", "SUPPLIED"]

#: Words that start a top-level item (Part 01 §2).
DECLARATIONS = ("claim", "def", "device", "engine", "fn", "gauge", "let", "pool", "queue",
                "server", "session", "share", "stage", "use", "workload")

#: Every other word the grammar matches literally (`metamodel/*.tx`): statements,
#: clauses, stage kinds, policies, settings.
KEYWORDS = (
    "admission", "admit", "advance", "args", "arrivals", "arrive", "at", "batch", "block",
    "bottleneck", "branch", "budget", "by", "cache", "cap", "choose", "chunk", "closed",
    "cost", "decode", "delay", "drop", "each", "else", "end", "every", "evict", "exclusive",
    "execute", "fifo", "first", "fork", "forward", "from", "given", "granule", "grow",
    "growing", "head", "held", "hidden", "hold", "horizon", "if", "in", "init", "iteration",
    "join", "latency", "lease", "lifo", "load", "loop", "lru", "mark", "max", "maxmin",
    "memory", "min", "most", "nic", "none", "number", "observe", "of", "on", "only",
    "ordered", "poisson", "preempt", "prefill", "ps", "pull", "push", "release", "renewal",
    "request", "requeue", "reserve", "reuse", "run", "running", "schedule", "scheduler",
    "seed", "serve", "set", "some", "spill", "state", "step", "sum", "tail", "to", "tokens",
    "tool", "trace", "transfer", "turn", "via", "waiting", "warmup", "when", "while",
    "with", "worker")

#: Functions, distributions and observables a call may name (Part 01 §4, §6).
BUILTINS = ("abs", "bernoulli", "blocksize", "budget_left", "busy", "cachedin", "ceil",
            "count", "det", "erlang", "est_lambda", "est_rho", "est_wait", "exp", "floor",
            "free", "h2", "holders", "largest", "ln", "pow", "prefix_total", "price",
            "queued", "smallest", "sqrt", "total", "uniform", "used", "work")

#: Names the language supplies: the clock, infinity and the context variables.
SUPPLIED = ("inf", "now", "waited", "size", "age", "last", "present", "residents",
            "decoders", "kv_decode", "kv_prefill", "prefilled", "admitted", "preempted",
            "attention", "decoding", "remaining", "position", "demand", "served", "arrived")

_WORD_END = r"\b(?!\s*=[^=])"  # `let size = …` binds a name, it is no keyword there


class SerqLexer(RegexLexer):
    """serQ, the serving-specification language run by serq-simpy."""

    name = "serQ"
    aliases = ["sq", "serq"]
    filenames = ["*.sq"]
    mimetypes = ["text/x-serq"]
    url = "https://github.com/servingQ/serQ"

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r"/\*", Comment.Multiline, "comment"),
            (r'"[^"]*"', String.Double),
            (r"(\d|\.\d)[\d_]*\.[\d_]*([eE][+-]?\d+)?|(\d|\.\d)[\d_]*[eE][+-]?\d+",
             Number.Float),
            (r"\d[\d_]*", Number.Integer),
            (words(DECLARATIONS, suffix=r"\b"), Keyword.Declaration),
            (words(KEYWORDS, suffix=r"\b"), Keyword),
            (words(SUPPLIED, suffix=_WORD_END), Name.Builtin.Pseudo),
            (words(BUILTINS, suffix=r"\b(?=\s*\()"), Name.Builtin),
            (r"[^\W\d]\w*", Name),
            (r"<=|>=|==|!=|&&|\|\||[~?+\-*/^<>!=]", Operator),
            (r"[{}()\[\],;:.]", Punctuation),
            (r".", Text),
        ],
        "comment": [
            (r"[^*]+", Comment.Multiline),
            (r"\*/", Comment.Multiline, "#pop"),
            (r"\*", Comment.Multiline),
        ],
    }
