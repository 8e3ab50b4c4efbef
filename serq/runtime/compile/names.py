"""The names generated code reads from its globals, declared once.

The code generator writes these names into the code it generates, and the
runtime binds them in the generated code's globals (`Namespace.globals`);
both sides take them from here, so that a rename cannot leave the two apart.
`tests/test_generated_names.py` compiles programs and fails if generated
code reads a global that is not declared here (or bound by
`Namespace.bind`/`function`, whose names are numbered).

May import: nothing.
"""
from __future__ import annotations

# -- bound by the expression compiler (`exprs.Namespace`) --------------------------------
ENV = "_env"  # the run's calendar (`_env.now`)
INF = "_INF"
NAN = "_NAN"
SIM_ERROR = "_SimErr"  # `SimulationError`
LOG = "_log"  # `math.log` (an exponential draw inline)
DIV = "_div"  # Part 01 division
POW = "_pow"  # Part 01 power
DET = "_d_det"  # `det(x)`
INDEX = "_ix"  # a family member's index, checked
FUNCTION = "_f_"  # + a built-in function's name (`numeric.FUNCTIONS`)
DISTRIBUTION = "_d_"  # + a distribution's name (`distributions.DISTRIBUTIONS`)
AGGREGATE = "_agg_"  # + an observation aggregate's name (`sim.claims`)

# -- bound by the session compiler's hooks (`codegen.SessionCompiler`) -------------------
GUARD_ERROR = "_guard_err"
AMOUNT_ERROR = "_amount_err"
COUNT_ERROR = "_count_err"
SPIN_ERROR = "_spin_err"
REQUEUE = "_requeue"  # a run of zero work

# -- bound by the simulation (`sim.simulation`, `sim.legs`, `sim.sessions`) --------------
HOLD_BEGIN = "_hold_begin"
HOLD_END = "_hold_end"
GROW = "_grow"
LOAD = "_load"
RELEASE = "_release"
DROP = "_drop"
PREEMPTED = "_Preempted"  # the exception a preempted hold's body gets
END = "_end"  # the session ends
RESPONSE = "_resp"  # a `response` row
REQUEST_BEGIN = "_rqb"  # a request starts (token log)
TRACE_LOAD = "_trace_load"  # a trace session's next turn
WORKLOAD_STREAM = "_wstream"  # a session's workload stream for a turn
ARRIVAL_STREAM = "_arrival_rng"  # the renewal gap's stream
MACHINE_STREAM = "_machine"  # the step stages' machine stream
EVICT_STREAM = "_evict_rng"  # an eviction rule's stream
FORK = "_fork"
LEG_END = "_leg_end"
JOIN = "_join"
SESSION_CLASS = "_Session"
SESSION_FUNCTION = "_session"  # the session's generator function
INIT_FUNCTION = "_init"  # the workload's `init` block

#: every name above that is one global (the three families are prefixes)
GLOBALS = frozenset(v for k, v in dict(globals()).items()
                    if k.isupper() and isinstance(v, str) and not v.endswith("_"))
#: the prefixes of the families of globals
PREFIXES = (FUNCTION, DISTRIBUTION, AGGREGATE)

# -- locals that the session compiler and the simulation's turn code share ---------------
REQUEST_START = "_rq"  # the time the current request started
WORKLOAD_DRAWS = "_w"  # the stream a workload block draws from


def declared(name: str) -> bool:
    """Whether `name` is a global that generated code may read."""
    return name in GLOBALS or name.startswith(PREFIXES)
