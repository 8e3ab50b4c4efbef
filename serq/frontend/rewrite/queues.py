"""Queues and the pull relation (Part 05 §2): the declarations.

`rewrite_queues` is the front-end pass that removes every queue construct
from the item list (§2.11): it checks the queue declarations (§2.1–2.3, §2.9,
§2.10), emits each queue's pools and stages (`Q.p`, `Q`, `Q.latency`,
`Q.nic`) at the queue's position and each relation's `D.nic.latency` and
`share` at its position, and hands every code block to the statement
rewriter (entries.py), which expands `request Q;`, calls, `mark`, `transfer`
and the dotted reads. The runtime never sees a queue.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Optional

from ...core.errors import ParseError
from ...core.ir import Pos
from ..syntax import tree as S
from ..syntax.names import OBSERVABLES
from ..syntax.show import show
from ..syntax.walk import nodes, rewrite, stmts_in

ROLES = ("gateway", "prefill", "decode", "link")
SERVING_WORDS = ("prefill", "decode", "tool", "transfer", "link", "gateway")
# role -> its entries: (verb, has `from`) -> (parameter count, required)
ROLE_ENTRIES = {
    "gateway": {("route", False): (0, True)},
    "prefill": {("prefill", False): (1, True)},
    "decode": {("decode", False): (1, True), ("decode", True): (1, False)},
    "link": {("transfer", False): (1, False)},
}
VERBS = {verb for entries in ROLE_ENTRIES.values() for verb, _ in entries}


MAX_MEMBERS = 10_000
FOLD = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
        "/": lambda a, b: a / b if b else None}


def fold_size(e: S.Expr, lets: dict, depth: int = 0) -> Optional[float]:
    """The value of a family size over numbers and `let`s, or None when it
    needs more (the kernel's array-size rules then decide)."""
    if depth > 50:
        return None
    if isinstance(e, S.ENum):
        return e.value
    if isinstance(e, S.EName) and not e.fields and e.index is None and e.name in lets:
        return fold_size(lets[e.name], lets, depth + 1)
    if isinstance(e, S.EBinary) and e.op in FOLD:
        a, b = fold_size(e.left, lets, depth + 1), fold_size(e.right, lets, depth + 1)
        return FOLD[e.op](a, b) if a is not None and b is not None else None
    if isinstance(e, S.ECall) and e.fn in ("min", "max") and len(e.args) == 2:
        a, b = (fold_size(x, lets, depth + 1) for x in e.args)
        return (min if e.fn == "min" else max)(a, b) if a is not None and b is not None \
            else None
    return None


def entry_label(verb: str, has_from: bool) -> str:
    return f"`{verb} (…) from …`" if has_from else f"`{verb}`"


@dataclass
class Queue:
    """A checked queue declaration and what its entries tell about it."""

    decl: S.IQueue
    roles: set[str]
    entries: dict[tuple[str, bool], S.QEntry]
    pools: dict[str, S.IPool]
    marks: set[str] = field(default_factory=set)    # names its entries `mark`
    sets: set[str] = field(default_factory=set)     # names its entries set/choose/bind
    pull: Optional[S.IPull] = None                  # the relation it reads by
    one: bool = False                               # a family of one (`Q[1]`)

    @property
    def name(self) -> str:
        return self.decl.name

    @property
    def family(self) -> bool:
        return self.decl.size is not None

    @property
    def gateway(self) -> bool:
        return "gateway" in self.roles

    def stage_kind(self) -> Optional[str]:
        return self.decl.serve.kind if self.decl.serve is not None else None


class QueueDecls:
    """Checks and records the queue declarations and pull relations."""

    def __init__(self, items: list, sources: dict):
        self.sources = sources
        self.queues: dict[str, Queue] = {}
        self.pulls: list[S.IPull] = []
        self.items = items
        self.lets = {i.name: i.value for i in items if isinstance(i, S.ILet)}
        for item in items:
            if isinstance(item, S.IQueue):
                self.declare(item)
            elif isinstance(item, S.IPull):
                self.relation(item)
        shares = [i for i in items if isinstance(i, S.IShare)]
        if self.pulls and shares:
            raise self.err("`share` is given twice: the pull relation is the program's "
                           "`share`", shares[0].pos,
                           "remove the `share` item, or name the policy in the relation")

    def err(self, message: str, pos: Pos, help: Optional[str] = None) -> ParseError:
        return ParseError(message, Pos(pos.file, pos.line, pos.col, 1), help=help,
                          source=self.sources.get(pos.file))

    # -------------------------------------------------------------- queues
    def declare(self, q: S.IQueue) -> None:
        if q.name in SERVING_WORDS:
            raise self.err(f"`{q.name}` is a serving word: a queue may not be named with "
                           "it", q.name_pos, "name the queue after the deployment's part "
                           "(`P`, `D`, `gw`)")
        if q.name in self.queues:
            first = self.queues[q.name].decl.name_pos
            raise ParseError(f"duplicate queue `{q.name}`", q.name_pos,
                             source=self.sources.get(q.name_pos.file),
                             notes=[f"`{q.name}` declared at {first.line}:{first.col}"])
        roles: set[str] = set()
        for r, rpos in q.roles:
            if r not in ROLES:
                raise self.err(f"unknown role `{r}`", rpos,
                               "the roles are " + ", ".join(f"`{x}`" for x in ROLES))
            if r in roles:
                raise self.err(f"role `{r}` is listed twice", rpos)
            roles.add(r)
        if "gateway" in roles and q.size is not None:
            raise self.err(f"a gateway is one queue: `{q.name}[…]` cannot play `gateway`",
                           q.size.pos, f"write `queue {q.name} : gateway`")
        if q.size is not None:
            n = fold_size(q.size, self.lets)
            if n is not None and n > MAX_MEMBERS:
                raise self.err(f"queue `{q.name}[{show(q.size)}]` has {n:g} members, more "
                               f"than a family holds ({MAX_MEMBERS}): every member is a "
                               "pool or stage of its own", q.size.pos)
        self.item_order(q)
        pools: dict[str, S.IPool] = {}
        for p in q.pools:
            if p.name in pools:
                raise self.err(f"queue `{q.name}` has pool `{p.name}` twice", p.name_pos)
            pools[p.name] = p
        entries: dict[tuple[str, bool], S.QEntry] = {}
        for e in q.entries:
            key = self.entry_key(q, roles, e)
            if key in entries:
                raise self.err(f"queue `{q.name}` has {entry_label(*key)} twice", e.pos)
            entries[key] = e
        for r in sorted(roles):
            for key, (_, required) in ROLE_ENTRIES[r].items():
                if required and key not in entries:
                    raise self.err(f"queue `{q.name}` plays `{r}` and has no "
                                   f"{entry_label(*key)} entry", q.name_pos,
                                   f"add `{key[0]} (…) {{ … }}`" if r != "gateway"
                                   else "add `route { … }`")
        if "link" in roles and q.serve is None and ("transfer", False) not in entries:
            raise self.err(f"link `{q.name}` has neither a `serve` nor a `transfer` entry: "
                           "nothing says what a transfer over it costs", q.name_pos,
                           "add `serve ps(…);` or `transfer (n) { run (…); }`")
        if q.latency is not None:
            if "link" not in roles:
                raise self.err("`latency` belongs to the `serve` of a queue that plays "
                               "`link`", q.latency.pos,
                               f"declare `queue {q.name} : link`, or wait with a `delay` "
                               "stage")
            if ("transfer", False) in entries:
                raise self.err("a called link's time is its entry's: write the latency "
                               "in the entry body", q.latency.pos)
            self.constant_latency(q.latency, "a link's")
        self.queues[q.name] = Queue(q, roles, entries, pools,
                                    one=q.size is not None and fold_size(q.size, self.lets) == 1)
        self.learn(self.queues[q.name])

    def item_order(self, q: S.IQueue) -> None:
        """Pools first, `serve`/`nic` before the entries, each at most once."""
        seen: dict[str, Pos] = {}
        for kind, pos in q.parts:
            if kind == "pool" and ("serve" in seen or "entry" in seen or "nic" in seen):
                raise self.err(f"a pool after `serve` or an entry: queue `{q.name}` "
                               "declares its pools first", pos)
            if kind in ("serve", "nic"):
                if kind in seen:
                    raise self.err(f"`{kind}` twice in queue `{q.name}`", pos)
                if "entry" in seen:
                    raise self.err(f"`{kind}` after an entry: queue `{q.name}` declares "
                                   f"its `{kind}` before its entries", pos)
            seen.setdefault(kind, pos)

    def entry_key(self, q: S.IQueue, roles: set[str], e: S.QEntry) -> tuple[str, bool]:
        key = (e.verb, e.src is not None)
        owners = [r for r, es in ROLE_ENTRIES.items() if key in es]
        if e.verb not in VERBS:
            raise self.err(f"`{e.verb}` is not an entry of any role", e.pos,
                           "the entries are `route`, `prefill`, `decode`, `decode … from`"
                           " and `transfer`")
        if not owners:
            raise self.err(f"`{e.verb}` takes no `from`", e.pos)
        if not roles & set(owners):
            raise self.err(f"queue `{q.name}` has a `{e.verb}` entry but does not play "
                           f"`{owners[0]}`", e.pos,
                           f"declare `queue {q.name} : {owners[0]}`")
        count = ROLE_ENTRIES[owners[0]][key][0]
        if len(e.params) != count:
            raise self.err(f"`{e.verb}` takes {count} parameter(s), as the role says",
                           e.pos)
        if e.verb == "route" and e.params:
            raise self.err("`route` takes no parameters", e.pos)
        return key

    def learn(self, q: Queue) -> None:
        """The names the entries of `q` mark and set (its `Q.x` attributes)."""
        for e in q.entries.values():
            for s in stmts_in(e.body):
                if isinstance(s, S.SMarkTime):
                    q.marks.add(s.name)
                elif isinstance(s, (S.SSet, S.SChoose)):
                    q.sets.add(s.name)
                elif isinstance(s, S.SHold):
                    q.sets.update(b.name for b in s.bindings)

    def constant_latency(self, e: S.Expr, whose: str) -> None:
        """A `latency` is a number or a constant expression over `let`s."""
        lets = {i.name for i in self.items if isinstance(i, S.ILet)}
        for n in nodes(e):
            if isinstance(n, (S.EDraw, S.EAgg)) or (isinstance(n, S.ECall) and
                                                   n.fn in OBSERVABLES) or \
                    (isinstance(n, S.EName) and (n.fields or n.name not in lets)):
                raise self.err(f"{whose} `latency` is a number or a constant over `let`s",
                               n.pos, "declare the value with `let`")

    # ----------------------------------------------------------- relations
    def relation(self, r: S.IPull) -> None:
        for name, pos in ((r.reader, r.pos), (r.source, r.source_pos)):
            if name not in self.queues:
                raise self.err(f"`{r.text}`: no queue `{name}` is declared above the "
                               "relation", pos)
        reader, source = self.queues[r.reader], self.queues[r.source]
        if r.reader == r.source:
            raise self.err(f"`{r.reader}` pulls from itself" if r.kind == "pull" else
                           f"`{r.source}` pushes to itself", r.reader_pos or r.pos,
                           "a relation names a reader and another queue")
        for q in (source, reader):
            if q.decl.nic is None:
                raise self.err(f"queue `{q.name}` has no `nic`; a copy runs over the "
                               "source's NIC and the reader's", r.pos,
                               f"add `nic ps(…);` to queue `{q.name}`")
        if reader.pull is not None:
            raise self.err(f"queue `{r.reader}` pulls twice: one relation per reader"
                           if r.kind == reader.pull.kind == "pull" else
                           f"queue `{r.reader}` reads by two relations "
                           f"(`{reader.pull.text}`, `{r.text}`): one relation per reader",
                           r.pos)
        if r.kind == "push" and r.latency is not None:
            for other in self.pulls:
                if other.kind == "push" and other.source == r.source and \
                        other.latency is not None:
                    raise self.err(f"`{r.source}` waits before the copies of another "
                                   f"relation already (`{other.text}`): a queue posts the "
                                   "copies of one relation with a `latency`",
                                   r.latency.pos)
        if self.pulls and self.pulls[0].policy != r.policy:
            raise self.err(f"the relations name two `share` policies "
                           f"(`{self.pulls[0].policy}`, `{r.policy}`): the program has one",
                           r.pos)
        if r.latency is not None:
            self.constant_latency(r.latency, "a relation's")
        reader.pull = r
        self.pulls.append(r)

    # -------------------------------------------------------- declarations
    def generated(self, item) -> list:
        """The kernel declarations an IQueue or IPull item stands for."""
        if isinstance(item, S.IPull):
            out: list = []
            waiter = self.queues[item.waiter].decl
            if item.latency is not None:
                out.append(S.IStage(f"{waiter.name}.nic.latency", waiter.size, "delay",
                                    None, item.pos, item.pos))
            if item is self.pulls[0]:
                out.append(S.IShare(item.policy, item.pos))
            return out
        q = self.queues[item.name]
        d = q.decl
        out = [dataclasses.replace(self.own(p, q), name=f"{d.name}.{p.name}", size=d.size)
               for p in d.pools]
        if d.serve is not None:
            out.append(dataclasses.replace(self.own(d.serve, q), name=d.name, size=d.size))
            if d.latency is not None:
                out.append(S.IStage(f"{d.name}.latency", d.size, "delay", None, d.pos,
                                    d.name_pos))
        if d.nic is not None:
            out.append(dataclasses.replace(self.own(d.nic, q), name=f"{d.name}.nic",
                                           size=d.size))
        return out

    def own(self, decl, q: Queue):
        """A pool or stage declaration of queue `q` with the queue's own names
        resolved: `kv` is `Q.kv`, `Q` its stage (families join member for
        member)."""
        def fix(n):
            if isinstance(n, S.EName) and not n.fields and n.index is None and \
                    n.name in q.pools:
                return dataclasses.replace(n, name=f"{q.name}.{n.name}")
            if isinstance(n, S.EName) and n.fields and n.name in self.queues:
                raise self.err(f"`{n.name}.{'.'.join(n.fields)}`: a queue's declarations "
                               "read its own pools and stage", n.pos)
            return n
        return rewrite(decl, fix)
