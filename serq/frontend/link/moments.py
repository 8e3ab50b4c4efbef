"""The moments of step stages and claims (Part 04 §10, Part 06 §8.2): what an
expression of a `budget`, `cost`, serve key, `only` predicate, iteration
body, claim or claim condition may read. Each is an `resolve.Moment`; the
step-stage moments are specialised per stage (its registers, its own
`budget_left`)."""
from __future__ import annotations

from dataclasses import replace

from ..syntax.names import POOL_OBSERVABLES, STAGE_OBSERVABLES, STEP_OBSERVABLES
from .resolve import Moment

ALL_OBS = frozenset(STAGE_OBSERVABLES) | frozenset(POOL_OBSERVABLES) | \
    frozenset(STEP_OBSERVABLES)
QUIET = "an engine that schedules nothing waits for an event, and the clock moving is none"

BUDGET = Moment("budget", hidden=False, obs=ALL_OBS - {"budget_left"},
                no_obs="a step stage's budget or chunk may not read `budget_left(…)`: "
                       "`budget_left` plans an iteration from a step stage's budget, so a "
                       "budget that reads it could read itself")
STEP = Moment("step", hidden=False)
SERVE = Moment("serve", draws=False, hidden=False,
               no_draw="a `serve by` key may not draw (`~`): it is read for every resident "
                       "at every iteration; sample into an attribute first")
ONLY = Moment("only", ctx="serve", draws=False, hidden=False, now=False,
              obs=ALL_OBS - {"work"},
              no_obs="an `only` predicate may not read `work(…)`: " + QUIET,
              no_draw="an `only` predicate may not draw (`~`): it is read for every "
                      "resident at every iteration; sample into an attribute first")
PLAN = Moment("plan", draws=False, hidden=False, now=False, obs=ALL_OBS - {"work"},
              no_obs="a step stage's iteration body may not read `work(…)`: " + QUIET,
              no_draw="a step stage's iteration body may not draw (`~`): it is read at "
                      "every iteration")

CLAIM_DRAW = ("a claim may not draw (`~`): it reads and does not act, and a draw would "
              "move the run's streams")
ITERATION = Moment("iteration", draws=False, attrs=False, hidden=False, const_index=True,
                   obs=frozenset({"queue", "busy", "used", "free", "holders", "queued"}),
                   no_obs="a claim over iterations may not read `{fn}(…)`: it reads the "
                          "deployment as the iteration starts through `queue`, `busy`, "
                          "`used`, `free`, `holders` and `queued`",
                   no_draw=CLAIM_DRAW)
END = Moment("end", draws=False, attrs=False, hidden=False, observables=False,
             no_obs="`{fn}(…)` reads the deployment's state, and a claim `at end` reads "
                    "the constants, `now`, registers and the aggregates of the "
                    "observations (`total(o)`, `count(o)`, …)",
             no_draw=CLAIM_DRAW)
GIVEN = Moment("given", draws=False, now=False, observables=False,
               no_obs="a claim's `given` reads one session's attributes and the "
                      "constants, not `{fn}(…)`",
               no_draw=CLAIM_DRAW)


def of_stage(m: Moment, stage: str, registers) -> Moment:
    """`m` for the expressions of step stage `stage` (its registers readable;
    at the Plan moment its own `budget_left` refused)."""
    return replace(m, registers=frozenset(registers),
                   own=stage if m.name == "plan" else None)
