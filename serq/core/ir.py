"""The kernel IR: what the front end produces and the runtime consumes.

Every sugar form (definitions, aggregates, `cost(...)`, shapes R and T,
`branch with`, `if`/`else if`) is gone by the time a program is in this
form: constants are folded into numbers, aggregates are written out,
definitions are expanded, and each name is resolved to what it denotes.
The IR is plain data (dataclasses), built once and never mutated by a run.

Positions (`Pos`) travel with the nodes that can fail at run time, so
that the runtime can say where an error comes from.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Optional, Union

from .nodes import node


@dataclass(frozen=True)
class Pos:
    """A source position: file as given, 1-based line and column, length."""

    file: str
    line: int
    col: int
    length: int = 1


# --------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------


@node
class Expr:
    """Base class of expressions."""


@node
class Num(Expr):
    """A number (a literal, a folded constant, `inf`)."""

    value: float


@node
class Now(Expr):
    """The simulation clock."""


@node
class Attr(Expr):
    """A session attribute of the session evaluating the expression."""

    name: str


@node
class Ctx(Expr):
    """A context variable supplied at the expression's moment (`present`, ...)."""

    name: str


@node
class Unary(Expr):
    """Prefix operator: `-` (negation) or `!` (logical not, 0/1)."""

    op: str
    operand: Expr


@node
class Binary(Expr):
    """Infix operator: + - * / ^ < <= > >= == != && ||."""

    op: str
    left: Expr
    right: Expr


@node
class Cond(Expr):
    """`c ? a : b`: only the chosen branch is evaluated."""

    cond: Expr
    then: Expr
    other: Expr


@node
class Call(Expr):
    """An arithmetic function: min max abs floor ceil sqrt exp ln pow."""

    fn: str
    args: list[Expr]


@node
class Draw(Expr):
    """`~dist(args)`: dist is exp det uniform erlang h2 bernoulli."""

    dist: str
    args: list[Expr]


@node
class Ref:
    """A reference to a stage or a pool family member.

    `kind` is "stage" or "pool"; `index` is None for a single (non-array)
    declaration, otherwise an expression (a `Num` when constant).
    """

    kind: str
    name: str
    index: Optional[Expr] = None
    pos: Optional[Pos] = None


@node
class Observable(Expr):
    """A read of live state: queue busy work est_lambda est_rho est_wait price
    (stages), used free cachedin holders queued (pools), budget_left.

    `args` holds the extra expression arguments (price's s_hit and ds)."""

    fn: str
    target: Ref
    args: list[Expr] = field(default_factory=list)


@node
class ObsAggregate(Expr):
    """An `at end` claim's aggregate of an observation (Part 06 §8.2):
    fn is total, count, largest, smallest or prefix_total."""

    fn: str
    name: str


# --------------------------------------------------------------------------
# Statements
# --------------------------------------------------------------------------


@node
class Stmt:
    """Base class of statements; `pos` is where the statement is written."""


@node
class Set(Stmt):
    """`set name = value;`: assign a session attribute."""

    name: str
    value: Expr
    pos: Optional[Pos] = None


@node
class Observe(Stmt):
    """Record a sample. `is_test` marks an outermost comparison/&&/||/! (text
    report note, Part 06 §2)."""

    name: str
    value: Expr
    is_test: bool = False
    pos: Optional[Pos] = None


@node
class Turn(Stmt):
    """`turn;`: increment turn_no, count, load the trace turn, run the
    workload's turn block (the server statements of shape T follow as
    ordinary statements after it)."""

    pos: Optional[Pos] = None


@node
class End(Stmt):
    """`end;`: the session ends here."""

    pos: Optional[Pos] = None


@node
class If(Stmt):
    """`branch (g)` / `if (g)`: the guard must be exactly 0 or 1 at run time.

    `text` is the guard as written (for the run-time error message) and
    `keyword` the spelling used (`branch`, `if`)."""

    guard: Expr
    then: list[Stmt]
    other: list[Stmt]
    text: str = ""
    keyword: str = "branch"
    pos: Optional[Pos] = None


@node
class Loop(Stmt):
    """`loop { … }`: the body repeated until an `end` (or the horizon)."""

    body: list[Stmt]
    pos: Optional[Pos] = None


@node
class While(Stmt):
    """`while (guard) { … }`; `text` is the guard as written (for run-time errors)."""

    guard: Expr
    body: list[Stmt]
    text: str = ""
    pos: Optional[Pos] = None


@node
class Fork(Stmt):
    """`fork { … }`: `body` runs as a leg of the session, beside it, on a copy
    of its attributes and a stream of its own; `number` counts the program's
    forks (each compiles into a generator of its own)."""

    body: list[Stmt]
    number: int = 0
    pos: Optional[Pos] = None


@node
class Join(Stmt):
    """`join;`: wait until every leg the session forked so far has ended."""

    pos: Optional[Pos] = None


@node
class Choose(Stmt):
    """`choose name in count by (keys...)`."""

    name: str
    count: Expr
    keys: list[Expr]
    text: str = ""
    pos: Optional[Pos] = None


@node
class Run(Stmt):
    """A job: `run S (w)` (one stage) or `run A, B (w)` (a flow over several
    ps stages). `mode` is None, "prefill" or "decode" (step stages);
    `growing` the pool a step run grows (issue 4)."""

    stages: list[Ref]
    work: Expr
    mode: Optional[str] = None
    growing: Optional[Ref] = None
    text: str = ""
    pos: Optional[Pos] = None


@node
class RequestBegin(Stmt):
    """Start of one request (a `request;` expansion, or the server statements
    after a `turn;` in shape T): the client series start here."""

    pos: Optional[Pos] = None


@node
class RequestEnd(Stmt):
    """End of the request opened by the matching RequestBegin."""

    pos: Optional[Pos] = None


@node
class HoldPool:
    """One pool of a hold: `P (units) [reserve (r)]` (Admit moment; `ref`'s
    index is evaluated at the Session moment, when the hold is reached).

    `static` is True when the demand (units and reserve) reads no deployment
    state: only constants and attributes (`cached` and `computed` included),
    no observable, `now` or context variable. Then the join check of Part 03
    §4.2 step 1 may reject the session. A constant demand above the cap is
    already a link error."""

    ref: Ref
    units: Expr
    reserve: Optional[Expr] = None
    static: bool = True


@node
class Lease:
    """`lease P (t)`: P's allocation outlives the scope for t (Session moment,
    read at scope end)."""

    ref: Ref
    duration: Expr


@node
class Hold(Stmt):
    """`hold P (u) [reserve (r)], … [reuse (ρ)] { body } [cache (ℓ)] [lease P (t)]`.

    `at admission` bindings are already substituted into the header, cache
    and lease expressions; a binding the body reads is a `Set` at the start
    of `body` (Part 03 §4.7). `reuse` is only present with `cache`. `text` is
    the header as written, in backticks, for run-time messages, e.g.
    "`hold kv (n) reserve (r), reqs (1)`"."""

    pools: list[HoldPool]
    body: list[Stmt]
    reuse: Optional[Expr] = None
    cache: Optional[Expr] = None
    lease: Optional[Lease] = None
    text: str = ""
    pos: Optional[Pos] = None


@node
class Grow(Stmt):
    """`grow P (d)`: the innermost hold on P grows by d. `text` is the
    statement as written, in backticks ("`grow kv (d)`")."""

    ref: Ref
    amount: Expr
    text: str = ""
    pos: Optional[Pos] = None


@node
class Drop(Stmt):
    """`drop P`: remove the session's own cache entry from P."""

    ref: Ref
    pos: Optional[Pos] = None


@node
class Release(Stmt):
    """`release P`: the innermost hold on P releases it, or a lease of P ends."""

    ref: Ref
    pos: Optional[Pos] = None


@node
class Load(Stmt):
    """`load P (n)`: the innermost hold's position on P advances by n. `text`
    is the statement as written, in backticks ("`load kv (n)`")."""

    ref: Ref
    amount: Expr
    text: str = ""
    pos: Optional[Pos] = None


# --------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------


@node
class Spill:
    """`spill T via L (w) when (p)` (Evict moment expressions)."""

    tier: Ref
    link: Ref
    work: Expr
    when: Expr


@node
class Pool:
    """A pool family (Part 03 §2). `size` None for a single pool.

    evict: None for `lru`, else the `evict by` keys (Evict moment, may draw
    on the evict stream, context size/age/last/waiting).
    preempt: "none" | "by" (`lifo` is lowered to `by (-admission)` with
    requeue "head"); preempt_keys at the Victim moment (context decoding,
    admission, position). queue: None for `fifo`, else the `queue by` keys
    (Select moment, context waited). admit_via: the step stage serving the
    queue (a family reference; member pairing per Part 03 §2.3); always None
    while step stages are not implemented (`admit via` is then a link
    error). spill: tier (a pool Ref, index at the Evict moment) and link (a
    stage Ref)."""

    name: str
    size: Optional[int] = None
    cap: float = float("inf")
    block: Optional[float] = None
    evict: Optional[list[Expr]] = None
    preempt: str = "none"
    preempt_keys: list[Expr] = field(default_factory=list)
    requeue: str = "head"
    queue: Optional[list[Expr]] = None
    reserve_held: bool = False
    admit_via: Optional[Ref] = None
    spill: Optional[Spill] = None
    pos: Optional[Pos] = None


@node
class IterStmt:
    """Base class of the statements of an `iteration { … }` body (Part 04 §9)."""


@node
class IServe(IterStmt):
    """`serve [only (p)] [order]`: keys None for admission order."""

    only: Optional[Expr] = None
    keys: Optional[list[Expr]] = None


@node
class IAdmit(IterStmt):
    """`admit [only (p)] [while (e)]`."""

    only: Optional[Expr] = None
    cond: Optional[Expr] = None


@node
class IIf(IterStmt):
    """`branch (e) { … } [else { … }]` in an iteration body (Plan moment)."""

    guard: Expr
    then: list[IterStmt]
    other: list[IterStmt]
    text: str = ""


@node
class ISet(IterStmt):
    """`set x = e` on a register (Plan moment)."""

    name: str
    value: Expr


@node
class Step:
    """The clauses of a step stage (Part 04 §5).

    serve: "order" (keys: None = admission order, else `by` keys; `decode
    first` is keys [decoding ? 0 : 1]) or "exclusive" (exclusive prefill);
    `only` the `serve only (p)` predicate. `iteration` replaces the default
    procedure `serve; admit while (!preempted);` when given. Registers are
    (name, initial value) pairs, read as Ctx(name)."""

    cost: Expr
    budget: Expr = field(default_factory=lambda: Num(float("inf")))
    chunk: Expr = field(default_factory=lambda: Num(0.0))
    serve: str = "order"
    keys: Optional[list[Expr]] = None
    only: Optional[Expr] = None
    memory: Optional[Ref] = None
    granule: Optional[float] = None
    registers: list[tuple[str, float]] = field(default_factory=list)
    iteration: Optional[list[IterStmt]] = None


@node
class Stage:
    """A stage family. `size` is None for a single stage, N for `S[N]`.

    kind: "fifo" (servers c), "ps" (capacity expression at the Ps moment,
    may read Ctx("present") and draw on the machine stream), "delay",
    "step" (issue 4). `shared` marks a ps stage held by a multi-stage run."""

    name: str
    kind: str
    size: Optional[int] = None
    servers: int = 1
    capacity: Optional[Expr] = None
    shared: bool = False
    step: Optional[Step] = None
    pos: Optional[Pos] = None


@node
class Claim:
    """`claim NAME [given (g)] : every|some iteration of S (e)` or `at end (e)`.

    kind: "every_iteration" | "some_iteration" | "at_end". An iteration
    claim reads the Iteration moment (Ctx tokens, prefilled, decoders,
    residents, kv_decode, kv_prefill, attention, demand, served, arrived;
    the stage's registers as Ctx; Now = the iteration's start); `given`
    reads a session's attributes once its init has run."""

    name: str
    kind: str
    value: Expr
    stage: Optional[Ref] = None
    given: Optional[Expr] = None
    pos: Optional[Pos] = None


@node
class Gauge:
    """`gauge name = value;`: a function of the deployment's state, reported over time."""

    name: str
    value: Expr
    pos: Optional[Pos] = None


@node
class TraceTurn:
    """One turn of a trace corpus row: new and output tokens, think time, forced."""

    new: float
    out: float
    think: float
    forced: float


@node
class Trace:
    """A trace corpus, read at link time: `sessions` is the list of corpus
    sessions, each a list of turns in file order."""

    path: str
    ordered: bool
    sessions: list[list[TraceTurn]]


@node
class Workload:
    """The arrival process and the workload blocks.

    arrival: "none" | "poisson" (rate) | "renewal" (gap expr) | "closed" (n)
    | "batch" (n)."""

    arrival: str = "none"
    rate: float = 0.0
    gap: Optional[Expr] = None
    count: int = 0
    trace: Optional[Trace] = None
    init: list[Stmt] = field(default_factory=list)
    turn: list[Stmt] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    pos: Optional[Pos] = None  # the `arrive` clause


@node
class Settings:
    """The `run { … }` settings: horizon, warm-up, seed, arrivals limit."""

    horizon: Optional[float] = None
    warmup: float = 0.0
    seed: int = 1
    arrivals: Optional[int] = None


@node
class Program:
    """A linked kernel program.

    `session` is the (expanded) session code, None for shape N (sessions
    arrive and end at once). `observations` lists every observe name in
    report order (Part 06 §2). `attributes` lists every user attribute name
    (set/choose targets) besides the built-ins. `has_requests` tells whether
    the program has requests (client series). `pools` lists the pool
    declarations in declaration order (an array is one `Pool`)."""

    file: str
    stages: list[Stage] = field(default_factory=list)
    workload: Workload = field(default_factory=Workload)
    session: Optional[list[Stmt]] = None
    observations: list[str] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)
    gauges: list[Gauge] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    share: Optional[str] = None
    settings: Settings = field(default_factory=Settings)
    has_requests: bool = False
    pools: list[Pool] = field(default_factory=list)


BUILTIN_ATTRIBUTES = ("serial", "turn_no", "cached", "computed", "new", "out",
                      "think", "more", "forced")

Node = Union[Expr, Stmt]


def walk(root: Any) -> Iterator[Any]:
    """Every IR node in `root` (a node, or lists and tuples of nodes), itself
    included; the order is unspecified (callers look for kinds of node)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, (list, tuple)):
            stack.extend(node)
        elif hasattr(node, "__dataclass_fields__"):
            yield node
            stack.extend(getattr(node, f) for f in node.__dataclass_fields__)
