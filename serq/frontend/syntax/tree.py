"""The syntax tree the front end works on between parsing and lowering.

It is built from the textX model (build.py) and rewritten by the expansion
passes (library `use`, `def` uses); names are still plain identifiers here.
Every node carries the source position (`ir.Pos`) it was written at.
"""
from __future__ import annotations

from dataclasses import field
from typing import Optional, Union

from ...core.ir import Pos
from ...core.nodes import node


# ----------------------------------------------------------------- expressions
@node
class ENum:
    value: float
    pos: Pos


@node
class EName:
    """A name, an indexed member `s[j]`, or a dotted read `Q.x` (fields)."""

    name: str
    pos: Pos
    index: Optional["Expr"] = None
    fields: tuple[str, ...] = ()


@node
class ECall:
    fn: str
    args: list["Expr"]
    pos: Pos


@node
class EDraw:
    dist: str
    args: list["Expr"]
    pos: Pos


@node
class EAgg:
    op: str
    var: str
    count: "Expr"
    body: "Expr"
    pos: Pos
    var_pos: Pos


@node
class EUnary:
    op: str
    operand: "Expr"
    pos: Pos


@node
class EBinary:
    op: str
    left: "Expr"
    right: "Expr"
    pos: Pos


@node
class ECond:
    cond: "Expr"
    then: "Expr"
    other: "Expr"
    pos: Pos


Expr = Union[ENum, EName, ECall, EDraw, EAgg, EUnary, EBinary, ECond]


# ------------------------------------------------------------------ statements
@node
class SBase:
    """Base of statements. `via` lists the definition expansions a statement
    came through: (note, positions of the definition's body), innermost first,
    so that an error inside a body can say `in `f`, used at 4:29`."""

    via: tuple = field(default=(), kw_only=True, compare=False)


@node
class SSet(SBase):
    name: str
    value: Expr
    pos: Pos
    name_pos: Pos


@node
class SObserve(SBase):
    name: str
    value: Expr
    pos: Pos
    name_pos: Pos


@node
class STurn(SBase):
    pos: Pos


@node
class SRequest(SBase):
    """`request;` or `request GW;`; `route` is the gateway's route once the
    queue pass has expanded it (Part 05 §2.7)."""

    gateway: Optional[str]
    pos: Pos
    route: Optional[list] = None


@node
class SEnd(SBase):
    pos: Pos


@node
class SIf(SBase):
    """`branch (g)`, `branch with (p)` (with_=True) or `if (g)`."""

    keyword: str
    guard: Expr
    then: list["Stmt"]
    other: list["Stmt"]
    pos: Pos
    with_: bool = False


@node
class SLoop(SBase):
    body: list["Stmt"]
    pos: Pos


@node
class SWhile(SBase):
    guard: Expr
    body: list["Stmt"]
    pos: Pos


@node
class SChoose(SBase):
    name: str
    count: Expr
    keys: list[Expr]
    pos: Pos
    name_pos: Pos


@node
class SRun(SBase):
    stages: list[EName]
    mode: Optional[str]
    work: Expr
    growing: Optional[EName]
    pos: Pos


@node
class SMark(SBase):
    """Start ("begin") or end ("end") of a request's server statements."""

    kind: str
    pos: Pos


@node
class SUse(SBase):
    """A statement `f(args);`: a use of a statement definition."""

    fn: str
    args: list[Expr]
    pos: Pos


@node
class SHoldPool:
    """One pool of a hold header: `P (units) [reserve (r)]`."""

    ref: EName
    units: Expr
    reserve: Optional[Expr] = None


@node
class SBinding:
    """`x = e` of `at admission (…)`."""

    name: str
    value: Expr
    pos: Pos


@node
class SHold(SBase):
    """`hold P (u) [reserve (r)], … [reuse (ρ)] [at admission (…)] { body }
    [cache (ℓ)] [lease P (t)]` (Part 03 §4.1)."""

    pools: list[SHoldPool]
    reuse: Optional[Expr]
    bindings: list[SBinding]
    body: list["Stmt"]
    cache: Optional[Expr]
    lease: Optional[EName]
    lease_time: Optional[Expr]
    pos: Pos
    text: str = ""  # the header as written, set before bindings are substituted


@node
class SPoolStmt(SBase):
    """`grow P (d);`, `load P (n);`, `drop P;` or `release P;` (Part 03 §5);
    `amount` is None for drop and release."""

    keyword: str
    ref: EName
    amount: Optional[Expr]
    pos: Pos


@node
class SServing(SBase):
    """A serving form `prefill W;`, `decode[j] W growing P;`, `tool on S (W);`
    (Part 05 §1). `site` is where the form is resolved: the position of the
    outermost definition use it came through (its own position otherwise)."""

    role: str
    index: Optional[Expr]
    on: Optional[EName]
    work: Expr
    growing: Optional[EName]
    pos: Pos
    site: Optional[Pos] = None
    ons: list = field(default_factory=list)     # `transfer on a, b, …`: b, …
    src: Optional[EName] = None                 # `transfer … from src to dst (amount)`
    dst: Optional[EName] = None
    amount: Optional[Expr] = None
    entry: Optional["EntryContext"] = None      # set when expanded from a queue entry


@node
class EntryContext:
    """What a serving form expanded from a queue entry resolves against
    (Part 05 §1.3 rule 2): the queue's own stage as a member reference, and
    whether that stage is a `step` stage (None when the queue has no serve)."""

    queue: str
    stage: Optional[EName]
    step: bool


@node
class SCall(SBase):
    """`Q[i].verb (args) [from S[k]] [to P (m)];` (Part 05 §2.5)."""

    queue: str
    index: Optional[Expr]
    verb: str
    args: list
    src: Optional[EName]
    dst: Optional[EName]
    amount: Optional[Expr]
    pos: Pos
    queue_pos: Pos
    verb_pos: Pos


@node
class SMarkTime(SBase):
    """`mark x;`: `set Q.x = now;` in queue `Q`'s entry (Part 05 §2.8)."""

    name: str
    pos: Pos
    name_pos: Pos


@node
class SFork(SBase):
    """`fork { … }`: the body runs as a leg beside the session."""

    body: list["Stmt"]
    pos: Pos


@node
class SJoin(SBase):
    """`join;`: wait for every leg forked so far."""

    TEXT = "join;"  # (its kernel text: syntax/derive.py)

    pos: Pos


Stmt = Union[SSet, SObserve, STurn, SRequest, SEnd, SIf, SLoop, SWhile, SChoose,
             SRun, SUse, SMark, SHold, SPoolStmt, SServing, SCall, SMarkTime, SFork, SJoin]


# ------------------------------------------- step stages, schedules (Part 04)
@node
class SOrder:
    """A serving order: `admission`, `decode first` ("first") or `by (keys)`."""

    kind: str
    keys: list[Expr]
    pos: Pos


@node
class TServe:
    """`serve [only (p)] [order]` (kernel) or `advance running …` (engine)."""

    keyword: str
    only: Optional[Expr]
    order: Optional[SOrder]
    at_most: Optional[Expr]
    pos: Pos


@node
class TAdmit:
    """`admit [only (p)] [while (e)]` (kernel) or `admit waiting …` (engine)."""

    keyword: str
    only: Optional[Expr]
    cond: Optional[Expr]
    at_most: Optional[Expr]
    pos: Pos


@node
class TExclusive:
    """`exclusive prefill [each at most (c)];` of an engine's schedule."""

    at_most: Optional[Expr]
    pos: Pos


@node
class TIf:
    """`branch (g) { … } [else { … }]` or `if …` in an iteration body."""

    keyword: str
    guard: Expr
    then: list
    other: list
    pos: Pos


@node
class TSet:
    """`set x = e;` on a register."""

    name: str
    value: Expr
    pos: Pos
    name_pos: Pos


TStmt = Union[TServe, TAdmit, TExclusive, TIf, TSet]


@node
class StepClause:
    """A clause of a step stage (`budget`, `cost`, `chunk`, `granule`,
    `memory`, `state`, `serve`, `iteration`) or of an engine (`tokens`,
    `granule`, `state`, `schedule`, `execute`). `at_most` marks a chunk
    written as an engine's `each at most` (Part 04 §11.2)."""

    key: str
    pos: Pos
    value: Optional[Expr] = None
    ref: Optional[EName] = None
    name: str = ""
    name_pos: Optional[Pos] = None
    exclusive: bool = False
    only: Optional[Expr] = None
    order: Optional[SOrder] = None
    stmts: list = field(default_factory=list)
    lets: list = field(default_factory=list)   # SBinding, a schedule's `let`s
    at_most: bool = False


# ----------------------------------------------------------------------- items
@node
class IUse:
    path: str
    pos: Pos


@node
class ILet:
    """`let x = e;` or `let x = args.number("ext", default);` (ext set)."""

    name: str
    value: Expr
    pos: Pos
    name_pos: Pos
    ext: Optional[str] = None
    ext_pos: Optional[Pos] = None
    args_pos: Optional[Pos] = None
    in_main: bool = False


@node
class IDef:
    """A definition: `expr` for an expression definition, else `stmts`."""

    name: str
    params: list[str]
    expr: Optional[Expr]
    stmts: list[Stmt]
    pos: Pos
    name_pos: Pos
    eq_form: bool = False
    param_pos: list = field(default_factory=list)


@node
class EngineOf:
    """What a step stage generated from `engine E on D` remembers of it."""

    device: str
    device_size: Optional[Expr]
    device_pos: Pos


@node
class IStage:
    """A stage declaration; a step stage's clauses are in `clauses`."""

    name: str
    size: Optional[Expr]
    kind: str
    arg: Optional[Expr]
    pos: Pos
    name_pos: Pos
    clauses: list = field(default_factory=list)
    kind_pos: Optional[Pos] = None
    engine: Optional[EngineOf] = None


@node
class POption:
    """One pool option (Part 03 §2.1). `key` is cap, block, evict, preempt,
    queue, reserve, admit or spill; `form` the variant (`lru`/`by`,
    `none`/`lifo`/`by`, `fifo`/`by`); `exprs` the value or keys, or the spill
    work and condition; `refs` the admitting stage, or the spill tier and link."""

    key: str
    pos: Pos
    form: str = ""
    exprs: list = field(default_factory=list)
    refs: list = field(default_factory=list)
    requeue: str = "head"


@node
class IPool:
    """A pool; `on` (and `on_device`) for `pool P on D` / `pool P on E.D`."""

    name: str
    size: Optional[Expr]
    options: list[POption]
    pos: Pos
    name_pos: Pos
    on: Optional[str] = None
    on_device: Optional[str] = None
    on_pos: Optional[Pos] = None


@node
class IShare:
    policy: str
    pos: Pos


@node
class CArrive:
    """`arrive KIND(arg);`: `pos` is the kind's, `clause_pos` the keyword's."""

    kind: str
    arg: Optional[Expr]
    pos: Pos
    clause_pos: Optional[Pos] = None


@node
class CTrace:
    path: str
    ordered: bool
    pos: Pos
    path_pos: Pos


@node
class CBlock:
    """`init { … }`, `turn { … }` or `session { … }` inside a workload."""

    kind: str
    body: list[Stmt]
    pos: Pos


@node
class CHidden:
    names: list[tuple[str, Pos]]
    pos: Pos


@node
class IWorkload:
    clauses: list
    pos: Pos
    base: str = ""  # directory that relative trace paths are resolved from


@node
class IBlock:
    """A top-level `session { … }` or `server { … }`."""

    kind: str
    body: list[Stmt]
    pos: Pos


@node
class ISettings:
    settings: list[tuple[str, Expr, Pos]]
    pos: Pos


@node
class IGauge:
    name: str
    value: Expr
    pos: Pos
    name_pos: Pos


@node
class DevCap:
    """`NAME [[N]] cap c;` of a device or an engine."""

    name: str
    size: Optional[Expr]
    value: Expr
    pos: Pos


@node
class DevResource:
    """`NAME(params) = e;`: a device's time resource (inlined in `execute`)."""

    name: str
    params: list[str]
    value: Expr
    pos: Pos
    param_pos: list = field(default_factory=list)


@node
class IDevice:
    name: str
    size: Optional[Expr]
    caps: list[DevCap]
    resources: list[DevResource]
    pos: Pos
    name_pos: Pos


@node
class IEngine:
    """`engine E [[N]] on D { … }`: `clauses` are StepClauses keyed
    tokens, granule, state, schedule, execute."""

    name: str
    size: Optional[Expr]
    device: str
    device_pos: Pos
    caps: list[DevCap]
    clauses: list[StepClause]
    pos: Pos
    name_pos: Pos


@node
class IClaim:
    """`claim NAME [given (g)] : every|some iteration of S (e);` or `at end (e)`;
    kind is every_iteration, some_iteration or at_end."""

    name: str
    kind: str
    stage: Optional[EName]
    value: Expr
    given: Optional[Expr]
    pos: Pos
    name_pos: Pos


@node
class IFnMain:
    name: str
    items: list
    semi: Optional[Pos]
    pos: Pos
    name_pos: Pos
    close_pos: Pos


@node
class QEntry:
    """An entry of a queue: `verb [(params)] [from src] { body }`."""

    verb: str
    params: list[str]
    param_pos: list
    src: Optional[str]
    body: list
    pos: Pos
    parens: bool = False
    src_pos: Optional[Pos] = None


@node
class IQueue:
    """`queue Q[[N]] [: roles] { pools; serve; nic; entries }` (Part 05 §2.1).
    `serve`/`nic` are stage declarations named after the queue (their
    `name` is filled by the queue pass); `parts` lists the items' kinds and
    positions in source order for the order checks."""

    name: str
    size: Optional[Expr]
    roles: list[tuple[str, Pos]]
    pools: list[IPool]
    serve: Optional[IStage]
    latency: Optional[Expr]
    nic: Optional[IStage]
    entries: list[QEntry]
    parts: list[tuple[str, Pos]]
    pos: Pos
    name_pos: Pos


@node
class IPull:
    """`D pull P [latency x] share s;` (Part 05 §2.10), or `P push D …`
    (kind "push": the source posts the copies and waits `latency` before each
    at its own stage `P.nic.latency`)."""

    reader: str
    source: str
    latency: Optional[Expr]
    policy: Optional[str]
    pos: Pos
    source_pos: Pos
    kind: str = "pull"
    reader_pos: Optional[Pos] = None   # `P push D`: where `D` is written

    @property
    def text(self) -> str:
        """The relation as written: `D pull P` or `P push D`."""
        return (f"{self.source} push {self.reader}" if self.kind == "push"
                else f"{self.reader} pull {self.source}")

    @property
    def waiter(self) -> str:
        """The queue whose `nic.latency` stage the copies wait at."""
        return self.source if self.kind == "push" else self.reader


Item = Union[IUse, ILet, IDef, IStage, IPool, IShare, IWorkload, IBlock, ISettings,
             IGauge, IFnMain, IDevice, IEngine, IClaim, IQueue, IPull]


@node
class SourceFile:
    """A parsed file: its label (as shown in messages), text and items."""

    label: str
    text: str
    items: list = field(default_factory=list)
    path: Optional[str] = None  # canonical path when read from disk
