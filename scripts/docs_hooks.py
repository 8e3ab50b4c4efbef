"""MkDocs hooks of the documentation site (mkdocs.yml: `hooks:`).

`on_files` adds two generated pages. `cli.md`, the command-line
reference, from serq-simpy's argparse parser at build time: every command,
its usage line and every option with its help text. `policy-classes.md`,
from the policy classes of `serq.policies`: each class's members (its
decisions, with their signatures and docstrings) and the state a policy
may read (`serq.policies.READABLE`). Neither is written by hand, so neither
can fall behind the code. `render_cli_reference()` and
`render_policy_classes()` are also what the tests check.
"""
from __future__ import annotations

import argparse
from typing import Any, Iterator

INTRO = """\
# Command-line reference

This page is generated from the parser of `serq-simpy` when the site is
built: it lists every command and every option with its help line. The
same text is printed by `serq-simpy COMMAND --help`; `python -m serq` is
the same command as `serq-simpy`.

Program inputs declared with `std/args` (`args.number("rate", 1)`) are
given after a `--` that follows the options:
`serq-simpy run FILE --horizon 1000 -- --rate 0.5`.
"""


def _parser() -> argparse.ArgumentParser:
    """The CLI's parser (serq.cli.commands builds it in a function)."""
    from serq.cli import commands as cli
    return cli._parser()  # noqa: SLF001 - the one parser the CLI uses


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of every subcommand, in the parser's order."""
    for action in parser._actions:  # noqa: SLF001 - argparse has no public walk
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            helps = {a.dest: a.help or "" for a in action._choices_actions}  # noqa: SLF001
            for name, sub in action.choices.items():
                yield name, helps.get(name, ""), sub


def _cell(text: str) -> str:
    """Text for one table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _options_table(parser: argparse.ArgumentParser) -> list[str]:
    """A Markdown table of the parser's arguments (help and subcommands aside)."""
    rows = ["| argument | help | default |", "|---|---|---|"]
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):  # noqa: SLF001
            continue
        if action.option_strings:
            names = ", ".join(action.option_strings)
            if action.nargs != 0:
                metavar = action.metavar or action.dest.upper()
                names += f" {metavar}"
        else:
            names = action.metavar or action.dest
        helptext = action.help if action.help not in (None, argparse.SUPPRESS) else ""
        if isinstance(action, argparse._VersionAction):  # noqa: SLF001
            helptext = helptext or "print the version and exit"
        default = action.default
        shown = "" if default in (None, False, [], argparse.SUPPRESS) else f"`{default}`"
        rows.append(f"| `{_cell(names)}` | {_cell(helptext)} | {shown} |")
    return rows


def _usage(parser: argparse.ArgumentParser) -> str:
    """The usage line, without argparse's `usage: ` prefix."""
    return " ".join(parser.format_usage().replace("usage: ", "", 1).split())


def render_cli_reference() -> str:
    """The Markdown of the CLI reference page."""
    parser = _parser()
    out = [INTRO, "## `serq-simpy`", "", parser.description or "", "",
           "```text", _usage(parser), "```", ""]
    out += _options_table(parser)
    for name, helptext, sub in _subcommands(parser):
        out += ["", f"## `serq-simpy {name}`", "", (helptext[:1].upper() + helptext[1:] + ".") if helptext else "",
                "", "```text", _usage(sub), "```", ""]
        out += _options_table(sub)
    return "\n".join(out) + "\n"


POLICY_INTRO = """\
# The policy classes

This page is generated from `serq.policies` when the site is built: every
member a policy subclass inherits, and the state of the resource it may
read. [Policies in Python](policies.md) explains binding, the checks and
three worked examples.

A policy subclass inherits only the members below; the runtime's resource
class (its SimPy machinery, statistics and fast paths) is joined to the
policy when it is bound, not inherited. Read only the state listed for a
class: everything else on a running resource is the runtime's own.
"""


def policy_members(cls: type) -> list[str]:
    """The members a subclass of `cls` inherits (object's aside)."""
    return sorted(n for n in dir(cls) if n not in dir(object)
                  and not (n.startswith("__") and n.endswith("__")))


def render_policy_classes() -> str:
    """The Markdown of the policy classes page."""
    import inspect

    import serq.policies as P
    out = [POLICY_INTRO]
    for cls in (P.Fifo, P.Ps, P.Delay, P.Pool, P.StepStage):
        out += [f"## `{cls.__name__}`", "", inspect.getdoc(cls) or "", ""]
        members = policy_members(cls)
        decisions = P.POLICY_METHODS[cls]
        out += ["**Members:** " + (", ".join(f"`{m}`" for m in members) or "none") + ".", ""]
        state = P.readable_state(cls)
        if state:
            out += ["| state | what it is |", "|---|---|"]
            out += [f"| `{name}` | {_cell(text)} |" for name, text in state.items()]
            out.append("")
        for name in members:
            fn = getattr(cls, name)
            kind = "decision" if name in decisions else "read-only helper"
            sig = str(inspect.signature(fn)).replace("(self, ", "(").replace("(self)", "()")
            sig = sig.replace("'", "")
            out += [f"### `{cls.__name__}.{name}{sig}`", "", f"*{kind}*", "",
                    inspect.getdoc(fn) or "", ""]
    return "\n".join(out) + "\n"


def on_files(files: Any, config: Any) -> Any:
    """Add the generated `cli.md` and `policy-classes.md` to the site's files."""
    from mkdocs.structure.files import File
    files.append(File.generated(config, "cli.md", content=render_cli_reference()))
    files.append(File.generated(config, "policy-classes.md", content=render_policy_classes()))
    return files
