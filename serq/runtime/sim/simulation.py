"""Build a SimPy model from a kernel program and run it (spec Part 02 §10–13).

`Simulation(program, ...)` translates the program once: stages become
resource objects, the session code becomes a generator function, `init`
a plain function, every expression Python source. `run()` drives SimPy's
calendar up to the horizon (or the drain of `arrivals N`) and returns the
`Report`.
"""
from __future__ import annotations

from dataclasses import replace
from heapq import heappop, heappush
from typing import Any, Callable, Optional

from ...core import ir
from ...core.errors import SimulationError, shortest
from ...report.model import GaugeRow, PoolRow, Report, Series, StageRow
from ...report.requests import RequestLog
from ...stats.gauges import GaugeTrace
from ..random import rng as rngmod
from .arrivals import OpenArrivals
from ..compile.codegen import SessionCompiler, CodeWriter
from ..compile.exprs import ExprCompiler, Namespace, Scope, StageDirectory
from .fleet import FleetIndex
from ..resources.flows import FlowNetwork
from .claims import Claims
from ..policy.guards import bind_policies
from ..fast.burst import with_fast_paths
from ..resources.decision import overridden
from ..resources.engine import DECISIONS, StepStage
from ..resources.holds import HoldManager, Preempted
from ..compile.schedule import StepCompiler
from .tokens import TokenLog
from ..resources.pools import Pool
from ..compile.poolspec import SpecCompiler, resolve_member
from ..kernel.collector import fewer_collections
from ..kernel.calendar import Calendar, is_ok, raise_failure, run_until
from ..kernel.instant import LATE, READY, Instant, timer
from .legs import Legs
from ..kernel.process import STARTED, AnnouncedSessionProcess, SessionProcess, unwatched_end
from .sessions import TraceCursor, attribute_slots, session_class
from ..resources.stages import Delay, Fifo, Ps, Stage
from ..watch.ticker import Ticker
from ..compile import names as N

#: `progress(now)` or `progress(now, events)`, called from a helper thread
#: about four times a second of wall time (`ticker.Ticker`).
ProgressFn = Callable[..., None]


class Simulation:
    """One run of one linked program.

    `policies` maps a declared stage name to a subclass of its built-in
    class (the policy seam); `scheme` selects the per-session stream
    derivation ("0.1.5", the default, or "0.1.3")."""

    def __init__(self, program: ir.Program, *, policies: Optional[dict[str, type]] = None,
                 scheme: str = "0.1.5", progress: Optional[ProgressFn] = None,
                 check_invariants: bool = False, max_live: Optional[int] = None,
                 max_memory: Optional[int] = None):
        from ..watch.watchdog import DEFAULT_MAX_LIVE
        st = program.settings
        if st.horizon is None:
            raise SimulationError("no horizon (run { horizon T; })", 0.0)
        self.program = program
        self.horizon = float(st.horizon)
        self.warmup = float(st.warmup)
        self.seed = int(st.seed)
        self.limit = st.arrivals
        self.scheme = scheme
        self.progress = progress
        self.policies = bind_policies(program, policies)
        self.check_invariants = check_invariants
        self.env = Calendar(0.0)
        self.instant = Instant(self.env)
        # counters of the run line
        self.events = 0
        # counts what happens besides step engines' own iterations (a closed
        # run's kept plan holds while it does not change: runtime/fast/closed.py)
        self.stamp = 0
        self.idle_stamp = -1  # the stamp at which `pools_idle` was found (`Burst._quiet`)
        self.pools_idle = False
        # the engines that may be idle with work, the pools a pass may act on (fleet.py)
        self.fleet = FleetIndex()
        self.arrivals = 0
        self.ended = 0
        self.turns = 0
        self.next_serial = 0
        self.live = 0
        self.live_t = 0.0
        self.live_int = 0.0
        self.replaced_at = -1.0
        self.replaced = 0
        self.drained: Optional[float] = None
        self.max_live = max_live or DEFAULT_MAX_LIVE  # live sessions before the run stops
        self.max_memory = max_memory  # bytes of memory in use before the run stops
        self._build()

    # -- construction --------------------------------------------------------
    def _build(self) -> None:
        prog = self.program
        env = self.env
        self.ns = ns = Namespace(env)
        self.directory = StageDirectory()
        self.stage_list: list[Stage] = []
        self.machine = rngmod.machine_stream(self.seed)
        self.exprs = ExprCompiler(ns, self.directory)
        self.flows = FlowNetwork(self, prog.share) if prog.share else None
        self.slots = attribute_slots(prog)
        self.tokens = TokenLog(self.warmup)
        self.step_list: list[StepStage] = []
        self.engine_ends: dict = {}  # iteration-end event -> engine (set by `_loop`)
        from ..compile.schedule import reads_any
        self.steps = StepCompiler(self.exprs, self.slots,
                                  claims_read_kv=reads_any(prog.claims, {"kv_decode", "kv_prefill"}))
        ns.globals[N.MACHINE_STREAM] = self.machine
        self._deferred: list[tuple[ir.Stage, list[Stage]]] = []
        for decl in prog.stages:
            self._make_stage(decl)
        self._register_names()
        self.pool_list: list[Pool] = []
        self.specs = SpecCompiler(self.exprs, self.slots)
        self.evict_rng = rngmod.evict_stream(self.seed)
        for decl in prog.pools:
            self._make_pool(decl)
        self._compile_stages()
        self.holds = HoldManager(self)
        self._resolve_spills(prog)
        self._bind_engines(prog)
        self.fleet.bind(self.step_list, self.pool_list)
        g = ns.globals
        g[N.HOLD_BEGIN] = self.holds.begin
        g[N.HOLD_END] = self.holds.end
        g[N.GROW] = self.holds.grow
        g[N.LOAD] = self.holds.load
        g[N.RELEASE] = self.holds.release
        g[N.DROP] = self.holds.drop
        g[N.PREEMPTED] = Preempted
        self.Session = session_class(self.slots, ns.globals, pools=bool(self.pool_list))
        self.series: dict[str, Series] = {}
        for name in prog.observations:
            self.series[name] = Series()
        for stmt_list in (prog.workload.init, prog.workload.turn, prog.session or []):
            self._mark_tests(stmt_list)
        self.response = Series()
        self.request_log = RequestLog()  # the rest of each `response` row's request
        self.legs: Optional[Legs] = None
        if any(isinstance(n, ir.Fork) for n in ir.walk(prog.session or [])):
            self.legs = Legs(self)
            ns.globals[N.END] = self.finish_session
        else:
            ns.globals[N.END] = self.end_session
        ns.globals[N.RESPONSE] = self._response
        ns.globals[N.REQUEST_BEGIN] = self.tokens.begin_request
        wl = prog.workload
        self.trace = None
        if wl.trace is not None:
            stream = None if wl.trace.ordered else rngmod.trace_stream(self.seed)
            self.trace = TraceCursor(wl.trace, stream)
            ns.globals[N.TRACE_LOAD] = TraceCursor.load
        self.compiler = SessionCompiler(
            ns, self.exprs, warmup=self.warmup, attrs=self.slots,
            observe_sink=self._sink, run_request=self._run_target,
            turn_hook=self._turn_code, request_sink=N.RESPONSE, hold_spec=self.specs.hold)
        self.compiler.tokens = bool(self.step_list)
        self.claims: Optional[Claims] = None
        if prog.claims:
            fams = self.directory.families
            self.claims = Claims(
                prog.claims, self.exprs, self.slots,
                stages=lambda ref: resolve_member(ref, fams[("stage", ref.name)], None,
                                                  "a claim"),
                registers=lambda st: list(st.registers) if st is not None else [])
            lists = self.claims.all_values
            self.compiler.observe_all = (
                lambda name: self.ns.bind(lists[name].append, "oall") if name in lists else None)
        scheme = self.scheme
        seed = self.seed
        workload_streams: dict[int, rngmod.SessionStreams] = {}

        def wstream(sid: int, turn: int) -> rngmod.Stream:
            factory = workload_streams.get(turn)
            if factory is None:
                factory = workload_streams[turn] = rngmod.SessionStreams(
                    seed, turn, rngmod.KIND_WORKLOAD, scheme)
            return factory(sid)

        ns.globals[N.WORKLOAD_STREAM] = wstream
        self.init_fn = None
        if wl.init:
            wscope = Scope("s", N.WORKLOAD_DRAWS, self.slots)
            pro = [f"{N.WORKLOAD_DRAWS} = {N.WORKLOAD_STREAM}(s.sid, 0)"] if _draws(wl.init) else []
            self.init_fn = self.compiler.function(N.INIT_FUNCTION, wl.init, wscope, pro)
        self.session_streams = rngmod.SessionStreams(seed, 0, rngmod.KIND_SESSION, scheme)
        self.session_draws = prog.session is not None and _draws(prog.session)
        self.body = None
        if prog.session is not None:
            scope = Scope("s", "s.rng", self.slots)
            self.body = self.compiler.generator(
                N.SESSION_FUNCTION, prog.session, scope, prologue=[], epilogue=[f"{N.END}(s)"])
        self.gauges: list[tuple[str, Callable[[], float], GaugeTrace]] = []
        for g in prog.gauges:
            fn = ns.function("", self.exprs.expr(g.value, Scope(None, None, {})), "gauge")
            self.gauges.append((g.name, fn, GaugeTrace()))
        self.arrival_proc: Optional[OpenArrivals] = None
        if wl.arrival in ("poisson", "renewal"):
            stream = rngmod.arrival_stream(seed)
            gap = None
            if wl.arrival == "renewal":
                ns.globals[N.ARRIVAL_STREAM] = stream
                gap = ns.function("", self.exprs.expr(wl.gap, Scope(None, N.ARRIVAL_STREAM, {})),
                                  "gap")
            self.arrival_proc = OpenArrivals(
                self, stream, rate=wl.rate if wl.arrival == "poisson" else None,
                gap=gap, limit=self.limit)
        self._track_estimates()
        #: a stage, or the flows of runs over several stages, re-evaluate
        #: after every settle (`ps`, `FlowNetwork`: `Instant.settle_each`)
        self.each_settle = self.flows is not None or \
            any(getattr(st, "each_settle", False) for st in self.stage_list)
        #: the plain event loop suffices: no pool, engine, gauge, drain or
        #: invariant check needs its end-of-event work (progress is a thread's;
        #: `ps` stages re-evaluate after every settle)
        self.simple = (not self.gauges and self.limit is None
                       and not self.pool_list and not self.check_invariants
                       and not self.step_list and not self.each_settle)
        self.process_class = SessionProcess if self.simple else AnnouncedSessionProcess

    def _make_stage(self, decl: ir.Stage) -> None:
        count = decl.size if decl.size is not None else 1
        members: list[Stage] = []
        cls = self.policies.get(decl.name)
        if decl.kind == "step":  # the fast paths, for the built-in decisions only
            cls = cls or StepStage
            if not any(overridden(cls, m) for m in DECISIONS):
                cls = with_fast_paths(cls)
        spec = None  # step specs and ps capacities compile once pools exist
        for k in range(count):
            index = k if decl.size is not None else None
            # a member's rank among all stages: declaration order, an array's
            # members in index order (what Part 02 §10.3 step 4 and Part 04 §6
            # visit in "declaration order"; pyserq 0.1.5, generator seed 1001864)
            order = len(self.stage_list) + len(members)
            if decl.kind == "step":
                stage = cls(self, decl.name, index, spec, self.instant, order)
                self.step_list.append(stage)
            elif decl.shared:
                stage = self.flows.add_stage(decl, index)
            elif decl.kind == "fifo":
                stage = (cls or Fifo)(self, decl.name, index, decl.servers)
            elif decl.kind == "ps":
                stage = (cls or Ps)(self, decl.name, index, None, self.instant)
            elif decl.kind == "delay":
                stage = (cls or Delay)(self, decl.name, index)
            else:
                raise SimulationError(f"stage kind `{decl.kind}` is not available", 0.0)
            stage.order = order
            members.append(stage)
        self.stage_list.extend(members)
        self.directory.add("stage", decl.name, members)
        self._deferred.append((decl, members))

    def _register_names(self) -> None:
        """Registers are read by name wherever they are visible."""
        for decl, members in self._deferred:
            if decl.kind == "step" and decl.step.registers and len(members) == 1:
                obj = self.ns.bind(members[0], "st")
                for name, _v in decl.step.registers:
                    self.exprs.registers[name] = f"{obj}.registers[{name!r}]"

    def _compile_stages(self) -> None:
        """Stage expressions may read pools: compile them once all exist."""
        for decl, members in self._deferred:
            if decl.kind == "step":
                spec = self.steps.compile(decl.step)
                for stage in members:
                    stage.spec = spec
                    stage.registers = dict(spec.registers)
            elif decl.kind == "ps" and not decl.shared:
                cap_scope = Scope(None, N.MACHINE_STREAM, {}, {"present": "float(present)"})
                cap = self.ns.function("present", self.exprs.expr(decl.capacity, cap_scope), "cap")
                for stage in members:
                    stage.capacity = cap

    def _make_pool(self, decl: ir.Pool) -> None:
        spec = self.specs.pool(decl, self.evict_rng)
        cls = self.policies.get(decl.name, Pool)  # bound and checked by `bind_policies`
        count = decl.size if decl.size is not None else 1
        members = [cls(self, decl.name, k if decl.size is not None else None, spec)
                   for k in range(count)]
        self.pool_list.extend(members)
        self.directory.add("pool", decl.name, members)

    def _resolve_spills(self, prog: ir.Program) -> None:
        """Bind each member's spill tier and link to runtime objects."""
        for pool in self.pool_list:
            sp = pool.spec.spill
            if sp is None or not isinstance(sp.tier, ir.Ref):
                continue
            tier = resolve_member(sp.tier, self.directory.families[("pool", sp.tier.name)],
                                  pool.index, f"`spill` of `{pool.label}`")
            link = resolve_member(sp.link, self.directory.families[("stage", sp.link.name)],
                                  pool.index, f"`spill` of `{pool.label}`")
            pool.spec = replace(pool.spec, spill=replace(sp, tier=tier, link=link))

    def _bind_engines(self, prog: ir.Program) -> None:
        """Memory pools of step stages, and the pools each stage admits from."""
        pools = self.directory.families
        for decl in prog.stages:
            if decl.kind != "step" or decl.step.memory is None:
                continue
            ref = decl.step.memory
            for stage in pools[("stage", decl.name)]:
                mem = resolve_member(ref, pools[("pool", ref.name)], stage.index,
                                     f"`memory` of `{stage.label}`")
                stage.memory = mem
                mem.memory_of.append(stage)
                mem.listing = None  # (its candidates are in the engine's order)
        for pool in self.pool_list:
            via = pool.spec.admit_via
            if via is not None:
                stage = resolve_member(via, pools[("stage", via.name)], pool.index,
                                       f"`admit via` of `{pool.label}`")
                stage.served_pools.append(pool)
                stage.served_queues.append(pool.queue)  # (the list itself: never replaced)

    def claims_iteration(self, stage: Any, plan: Any, decoders: int, residents: float,
                         kv_decode: float, kv_prefill: float) -> None:
        """An iteration starts: claims over its iterations read it (Part 06 §8.2)."""
        served = stage.served_tokens
        stage.served_tokens += plan.tokens
        if self.claims is None:
            return
        chunk = plan.chunk
        demand = 0.0
        for job in stage.residents:
            if job.mode == "decode":
                demand += min(1.0, job.remaining)
            else:
                demand += min(job.remaining, chunk) if chunk > 0 else job.remaining
        values = (plan.tokens, plan.prefilled, float(decoders), residents, kv_decode,
                  kv_prefill, plan.attention, demand, served, float(self.arrivals))
        self.claims.iteration(stage, self.env.now, values)

    def _track_estimates(self) -> None:
        """Online estimates, and the jobs in service for `work(S)`, are kept
        only for stages some expression reads."""
        est, work = set(), set()
        for node in ir.walk(self.program):
            if isinstance(node, ir.Observable):
                if node.fn.startswith(("est_", "price")):
                    est.add(node.target.name)
                elif node.fn == "work":
                    work.add(node.target.name)
        for stage in self.stage_list:
            stage.track = stage.name in est
            stage.track_work = stage.name in work

    def _mark_tests(self, stmts: list[ir.Stmt]) -> None:
        for node in ir.walk(stmts):
            if isinstance(node, ir.Observe) and node.is_test and node.name in self.series:
                self.series[node.name].is_test = True

    # -- code generation hooks ----------------------------------------------------
    def _sink(self, name: str) -> tuple[str, str, str, str]:
        s = self.series[name]
        b = self.ns.bind
        return (b(s.values.append, "ov"), b(s.times.append, "ot"),
                b(s.sessions.append, "os"), b(s.turns.append, "on"))

    def _run_target(self, st: ir.Run, scope: Scope, w: CodeWriter) -> str:
        if len(st.stages) > 1:
            objs = []
            for ref in st.stages:
                name = w.fresh("fs")
                w.emit(f"{name} = {self.exprs.ref(ref, scope)}")
                objs.append(name)
            flows = self.ns.bind(self.flows, "flows")
            target = w.fresh("fr")
            w.emit(f"{target} = {flows}.request_for(({', '.join(objs)},))")
            return target
        ref = st.stages[0]
        obj = self.exprs.ref(ref, scope)
        if ref.index is not None and not isinstance(ref.index, ir.Num):
            name = w.fresh("st")
            w.emit(f"{name} = {obj}")
            obj = name
        if st.mode is not None:
            grow = "None"
            if st.growing is not None:
                grow = self.exprs.ref(st.growing, scope)
            mode = self.ns.bind(st.mode, "mode")
            fn = w.fresh("rq")
            w.emit(f"{fn} = lambda s, w, _o={obj}, _g={grow}: _o.request(s, w, {mode}, _g)")
            return fn
        return f"{obj}.request"

    def _turn_code(self, comp: SessionCompiler, w: CodeWriter) -> None:
        w.emit("s.turn_no += 1.0")
        ctr = self.ns.bind(self, "sim")
        if self.warmup > 0:
            w.emit(f"if {N.ENV}.now >= {self.warmup!r}: {ctr}.turns += 1")
        else:
            w.emit(f"{ctr}.turns += 1")
        if self.trace is not None:
            w.emit(f"{N.TRACE_LOAD}(s)")
        block = self.program.workload.turn
        if block:
            if _draws(block):
                w.emit(f"{N.WORKLOAD_DRAWS} = {N.WORKLOAD_STREAM}(s.sid, int(s.turn_no))")
            comp.block(block, Scope("s", N.WORKLOAD_DRAWS, self.slots), w)

    def _response(self, s: Any, t0: float) -> None:
        now = self.env.now
        if s.tok is not None:
            self.tokens.end_request(s, now)
        if now >= self.warmup:
            r = self.response
            r.values.append(now - t0)
            r.times.append(now)
            r.sessions.append(s.sid)
            r.turns.append(s.turn_no)
            self.request_log.add(t0, s.tok)

    # -- sessions ------------------------------------------------------------------
    def _live(self, delta: int) -> None:
        now = self.env.now
        dt = now - self.live_t
        if dt:
            self.live_int += self.live * dt
            self.live_t = now
        self.live += delta

    def create_session(self, start_now: bool = False) -> None:
        """Create one session at the current instant (Part 02 §3.6).

        `start_now`: run it at once instead of through a start entry, when
        the caller knows that entry would be the next one handled (see
        `SessionProcess.unstarted`)."""
        sid = self.next_serial
        self.next_serial = sid + 1
        s = self.Session(sid)
        if self.trace is not None:
            self.trace.assign(s)
        self.arrivals += 1
        now = self.env.now
        if now != self.live_t:  # self._live(1), inline
            self.live_int += self.live * (now - self.live_t)
            self.live_t = now
        self.live += 1
        if self.live > self.max_live:
            from ..watch.watchdog import population_error
            raise population_error(self)
        if self.init_fn is not None:
            self.init_fn(s)
        if self.claims is not None:
            self.claims.session_created(s)
        body = self.body
        if body is None:
            self.end_session(s)
            return
        if self.session_draws:
            s.rng = self.session_streams(sid)
        if start_now:
            s.proc = proc = SessionProcess.unstarted(self.env, body(s))
            proc.resume(STARTED)  # proc.start(), inline
        else:
            s.proc = self.process_class(self.env, body(s))

    def finish_session(self, s: Any) -> None:
        """`end;` or the end of the code of a session that may fork legs."""
        self.legs.session_ends(s)
        self.end_session(s)

    def refuse(self, s: Any) -> None:
        """A hold of `s` (a session or a leg) was refused (Part 03 §4.2)."""
        if self.legs is not None:
            self.legs.refused(s)
            if s.parent is not None:
                return
        self.end_session(s)

    def end_session(self, s: Any) -> None:
        """`end;` or the end of the session code (Part 02 §7.5)."""
        now = self.env.now
        if s.ended:
            return
        if self.pool_list:
            self.holds.end_session(s)
        s.ended = True
        if now >= self.warmup:
            self.ended += 1
        if now != self.live_t:  # self._live(-1), inline
            self.live_int += self.live * (now - self.live_t)
            self.live_t = now
        self.live -= 1
        if self.pool_list:
            self.holds.pool_pass()
        if self.arrival_proc is not None and self.limit is None:
            return  # open arrivals without a count: nothing follows an end
        wl = self.program.workload
        if wl.arrival == "closed":
            if self.body is None:
                # (each replacement would end at once, inside the last one's end)
                raise SimulationError(
                    f"the instant t = {shortest(now)} does not settle: the sessions of the "
                    "closed population have no code, so each ends as it starts and is "
                    "replaced at once; give the workload a `server` block (or a `session` "
                    "block) with a `run` of positive work", now)
            if now != self.replaced_at:
                self.replaced_at = now
                self.replaced = 0
            self.replaced += 1
            if self.replaced > 1000 * wl.count:
                raise SimulationError(
                    f"the instant t = {shortest(now)} does not settle: more than "
                    f"{1000 * wl.count} closed-population replacements without time "
                    "passing (sessions end without a `run` of positive work)", now)
            self.create_session()
        elif (self.arrival_proc is not None and self.arrival_proc.done
              and self.live == 0 and self.drained is None):
            self.drained = now

    # -- the run ---------------------------------------------------------------------
    def _warmup_boundary(self, _ev: Any) -> None:
        self.events += 1
        now = self.env.now
        self._live(0)
        self.live_int = 0.0
        for stage in self.stage_list:
            stage.reset_measurement(now)
        for pool in self.pool_list:
            pool.reset_measurement(now)

    def run(self) -> Report:
        """Simulate to the horizon (or the drain) and build the report."""
        env = self.env
        if self.warmup > 0:
            timer(env, self.warmup, self._warmup_boundary)
        wl = self.program.workload
        if self.arrival_proc is not None:
            self.arrival_proc.start()
        elif wl.arrival in ("batch", "closed"):
            for _ in range(wl.count):
                self.create_session()
        ticker = None if self.progress is None else Ticker(self, self.progress).start()
        try:
            from ..watch.watchdog import watched_loop
            with fewer_collections():
                watched_loop(self)
        finally:
            if ticker is not None:
                ticker.stop()
        if self.legs is not None:
            self.legs.check_deadlock()
        end = self.horizon
        if self.limit is not None:
            end = self._check_drain()
        report = self._report(end)
        if ticker is not None:
            ticker.tick()  # the clock at the end of the run
        return report

    def _simple_loop(self) -> None:
        """`_loop` for a program none of whose parts needs the end-of-event work."""
        run_until(self.env, self.horizon)

    def _loop(self) -> None:
        """Handle calendar entries up to the horizon (SimPy's `step`, inlined)."""
        if self.simple:
            self._simple_loop()
            return
        env = self.env
        q = env.queue
        horizon = self.horizon
        gauges = self.gauges
        holds = self.holds if self.pool_list else None
        check = self.check_invariants
        steps = self.step_list
        instant = self.instant
        legs = self.legs
        fleet = self.fleet
        idle = fleet.idle
        each = self.each_settle  # (without such a stage, no per-settle ask)
        instant.inline = True  # the end of an instant is handled below
        if instant.pending:
            instant.pending = False  # an entry already queued finds nothing to do
        for st in steps:  # an engine may handle its own quiet iterations
            st.allow_burst(not check)
        # the engines by their iteration-end event (`leapfrog`)
        self.engine_ends = {st._end_ev: st for st in steps}
        last = 0.0
        while q:
            item = heappop(q)
            t = item[0]
            if t > horizon:
                heappush(q, item)
                break
            if self.drained is not None:
                heappush(q, item)
                break
            if t == last and unwatched_end(item[3]):
                # a session's end that nobody waits for is no event (pyserq):
                # those an event leaves are dropped after it (below, so that
                # they do not hold back the instant's settle); this one was
                # made later, by the settle itself (a session that an
                # engine's attempt preempted and its hold refused, fleet
                # program 28, pyserq 0.1.3): no pool pass follows it either
                continue
            if t != last:
                if gauges:
                    self._record_gauges(last)
                last = t
            env.now = t
            self.stamp += 1  # (an engine's iteration end takes it back: `Burst._end`)
            event = item[3]
            callbacks, event.callbacks = event.callbacks, None
            for callback in callbacks:
                callback(event)
            if not is_ok(event):
                raise_failure(event)
            if instant.closed:  # an engine's burst ended with a settle
                instant.closed = False
                last = env.now
                continue
            t = last = env.now  # a burst may have moved the clock
            if holds is not None and item[1] != LATE and holds.waiting():
                # the pool pass of a settle: once no ready session is left
                # (not after the end of an instant, which follows the settle)
                if not q or q[0][0] != t or q[0][1] != READY:
                    holds.pool_pass()
            if idle and item[1] != LATE:
                # any event may let an idle engine with work start: those the
                # fleet index may hold, in the engines' order (`FleetIndex`)
                for st in fleet.idle_engines():
                    instant.mark(st)
            while q and q[0][0] == t and unwatched_end(q[0][3]):
                heappop(q)  # a session's end that nobody waits for is no event (pyserq;
                # a session that failed keeps its entry: the loop raises its error)
            due = bool(q) and q[0][0] == t  # (judged before the `ps` stages re-evaluate)
            if due:
                if each and instant.dirty and item[1] != LATE and q[0][1] != READY:
                    # the settle of this event is over and the instant goes
                    # on: `ps` stages re-evaluate now (pyserq 0.1.3, issue 22)
                    instant.settle_each()
            elif instant.dirty:
                # the instant's last settle: the stages in declaration order,
                # engines attempting and `ps` stages re-evaluating (Part 02
                # §10.3 step 4), so an iteration end and a `ps` completion
                # that fall at one time are entered in the stages' order
                # (pyserq 0.1.3, generator seed 3070); what a `ps` stage
                # schedules at this instant does not hold back the attempts
                # (`due` was judged before; issue 22)
                instant.settled()
            if legs is not None and len(q) <= 2 and legs.joining and (
                    not q or q[0][0] != env.now):
                legs.check_deadlock()  # little left to happen: a cycle ends the run now
            if check:
                for pool in self.pool_list:
                    pool.check()
                fleet.check(steps, self.pool_list, env.now)
        if gauges:
            self._record_gauges(env.now if self.drained is None else self.drained)

    def record_gauges(self, t: float) -> None:
        """The clock leaves `t`, whose instant has settled: the gauges' values
        at `t` (a no-op without gauges)."""
        if self.gauges:
            self._record_gauges(t)

    def _record_gauges(self, t: float) -> None:
        for _name, fn, trace in self.gauges:
            trace.record(t, fn())

    def _check_drain(self) -> float:
        proc = self.arrival_proc
        if proc is None:
            raise SimulationError("arrivals applies only to poisson or renewal workloads", 0.0)
        h = shortest(self.horizon)
        if not proc.done:
            raise SimulationError(
                f"run: horizon {h} reached before requested arrivals: got "
                f"{proc.count}, requested {self.limit}", self.horizon)
        if self.drained is None:
            raise SimulationError(
                f"run: failed to drain {self.live} active sessions within horizon {h}",
                self.horizon)
        if self.drained <= self.warmup:
            raise SimulationError(
                f"run: arrivals drained at {shortest(self.drained)} before or at warmup "
                f"{shortest(self.warmup)}; no measurement interval", self.drained)
        return self.drained

    # -- the report ---------------------------------------------------------------------
    def partial_report(self, now: float) -> Optional[Report]:
        """The report of the time simulated up to `now` (a run stopped early);
        None before the warm-up ended."""
        if now <= self.warmup:
            return None
        rep = self._report(now)
        rep.name_series()
        return rep

    def _report(self, end: float) -> Report:
        self.env.now = end if self.env.now < end else self.env.now
        span = end - self.warmup
        dt = end - self.live_t
        live_int = self.live_int + self.live * dt if dt > 0 else self.live_int
        rep = Report(horizon=self.horizon, end=end, warmup=self.warmup, seed=self.seed,
                     events=self.events, arrivals=self.arrivals, ended=self.ended,
                     turns=self.turns, mean_live=live_int / span)
        for name, series in self.series.items():
            rep.observes[name] = series
        rep.client["response"] = self.response
        rep.request_log = self.request_log
        self.tokens.finish()
        self.tokens.series(self.tokens.ttft, rep.client["ttft"])
        self.tokens.series(self.tokens.tpot, rep.client["tpot"])
        for name, _fn, trace in self.gauges:
            rep.gauges[name] = GaugeRow.from_trace(trace, self.warmup, end)
        for stage in self.stage_list:
            stage.finish_measurement(end)
            rep.stages.append(StageRow(name=stage.name, index=stage.index,
                                       **stage.row_values(span)))
        for pool in self.pool_list:
            pool.finish_measurement(end)
            rep.pools.append(PoolRow(name=pool.name, index=pool.index, **pool.row_values(span)))
        if self.claims is not None:
            rep.claims = self.claims.rows(self.live, end)
        return rep


def _draws(stmts: list[ir.Stmt]) -> bool:
    return any(isinstance(n, ir.Draw) and n.dist != "det" for n in ir.walk(stmts))
