"""Every fenced code block of the site (docs/**/*.md) and of README.md is a
test (the conventions of docs/index.md's last section):

* `sq` — a complete program: it must load (`serq.load`); a block that is
  one snippet include loads the included file by its path, so `use` paths
  resolve as they do for the file;
* `sq-refused` — a program that must be refused: the `text` block right
  after it shows the error, and its first line's `line:col: message`
  (after the file name) must be the error's;
* `sq-run-error` — a program that loads but whose run stops with the error
  shown in the `text` block right after it: the diagnosis after
  `run-time error at t=…:` (up to the next colon) must be the run's;
* `console` — every `$ ` line runs with bash from (a mirror of) the
  repository root and must exit 0 within the timeout; output lines are
  shown, not checked. `pip install` commands are not run (the test runs
  in an installed environment): the extras they name must exist; a
  `pytest` command (the one that runs this suite) only collects
  (`--collect-only`), which fails as the command would on an error;
* `python` — executed, from the repository root;
* `text`, `json`, `toml` — shown only. Any other kind (or none) fails.

Blocks marked `<!-- docs-test: slow -->` run only with `-m slow`.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

import serq
from serq.core.errors import SerqError

from docs_blocks import CHECKED, ROOT, SHOWN, Block, all_blocks, block_after, commands
from test_policy_examples import SCRIPTS as POLICY_SCRIPTS

BLOCKS = all_blocks()
#: Seconds a console command may take before it counts as hung. A slow
#: block gets more: the slowest, the mutation sample of docs/contributing.md,
#: takes about 3 minutes on 2 idle cores and took over 10 in CI, where it
#: shares the cores with the rest of the slow step.
TIMEOUT = 600
SLOW_TIMEOUT = 1800


def _params(kind: str) -> list:
    return [pytest.param(b, id=b.id, marks=[pytest.mark.slow] if b.slow else [])
            for b in BLOCKS if b.lang == kind]


def test_every_block_has_a_known_kind() -> None:
    unknown = [f"{b.id}: ```{b.lang}" for b in BLOCKS if b.lang not in CHECKED | SHOWN]
    assert not unknown, ("blocks without a kind the docs test knows "
                         f"({sorted(CHECKED | SHOWN)}):\n" + "\n".join(unknown))


def test_the_pages_have_blocks_of_every_checked_kind() -> None:
    # the test can fail: a parser that found no block would pass everything
    kinds = {b.lang for b in BLOCKS}
    assert CHECKED <= kinds, CHECKED - kinds


@pytest.mark.parametrize("block", _params("sq"))
def test_sq_block_loads(block: Block) -> None:
    if block.include:
        serq.load(os.path.join(ROOT, block.include))
    else:
        serq.load(source=block.text)


def _position_and_message(first_line: str) -> str:
    """`line:col: message` of an error's first line (the file name dropped)."""
    m = re.match(r"^.*?:(\d+:\d+: .*)$", first_line.strip())
    assert m, f"not an error line `file:line:col: message`: {first_line!r}"
    return m.group(1)


@pytest.mark.parametrize("block", _params("sq-refused"))
def test_sq_refused_block_is_refused_with_the_shown_message(block: Block) -> None:
    shown = block_after(block)
    assert shown is not None and shown.lang == "text", \
        f"{block.id}: an sq-refused block must be followed by a text block with the error"
    with pytest.raises(SerqError) as err:
        serq.load(source=block.text)
    got = _position_and_message(str(err.value).split("\n", 1)[0])
    want = _position_and_message(shown.text.split("\n", 1)[0])
    assert got == want


def _diagnosis(first_line: str) -> str:
    """What a run-time error says went wrong: the words after `run-time
    error at t=…:` up to the next colon (counts and times vary by machine)."""
    m = re.search(r"run-time error at t=[^:]*: ([^:]*)", first_line)
    assert m, f"not a run-time error line: {first_line!r}"
    return m.group(1).strip()


@pytest.mark.parametrize("block", _params("sq-run-error"))
def test_sq_run_error_block_stops_with_the_shown_diagnosis(block: Block) -> None:
    shown = block_after(block)
    assert shown is not None and shown.lang == "text", \
        f"{block.id}: an sq-run-error block must be followed by a text block with the error"
    program = serq.load(source=block.text)
    with pytest.raises(SerqError) as err:
        serq.run(program)
    assert _diagnosis(str(err.value).split("\n", 1)[0]) == \
        _diagnosis(shown.text.split("\n", 1)[0])


def _extras() -> set[str]:
    """The optional extras pyproject.toml declares."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([A-Za-z0-9_-]+)\s*=", section, re.M))


def _check_install(command: str) -> None:
    """A `pip install` command names this project and existing extras only."""
    words = shlex.split(command)
    targets = [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
    assert targets, command
    for target in targets:
        m = re.fullmatch(r"\.(?:\[([A-Za-z0-9_,-]+)\])?", target)
        assert m, f"`{command}` installs {target!r}, not this project"
        for extra in (m.group(1) or "").split(","):
            assert not extra or extra in _extras(), f"`{command}`: no extra {extra!r} in pyproject.toml"


def _is_install(part: str) -> bool:
    return bool(re.match(r"^(python3? -m )?pip install\b", part.strip()))


#: Commands of the docs that another test runs as written and checks more
#: closely (their output, not only their exit status): each policy example
#: script (`tests/test_policy_examples.py`, slow). They are not run twice.
RUN_ELSEWHERE = {f"python examples/policies/{script}" for script in POLICY_SCRIPTS}


def _bare(part: str) -> str:
    """A command without its surrounding blanks and trailing `# comment`."""
    return re.sub(r"\s+#.*$", "", part.strip())


def _run_elsewhere(part: str) -> bool:
    return _bare(part) in RUN_ELSEWHERE


def test_the_commands_left_to_other_tests_are_in_the_docs() -> None:
    shown = {_bare(p) for b in BLOCKS if b.lang == "console"
             for cmd in commands(b.text) for p in cmd.split("&&")}
    assert RUN_ELSEWHERE <= shown, RUN_ELSEWHERE - shown


def _runnable(part: str) -> str:
    """The command as run: a pytest run of this suite only collects it."""
    part = part.strip()
    if re.match(r"^(python3? -m )?pytest\b", part):
        return part + " --collect-only"
    return part


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A directory that looks like the repository root (a symlink per entry),
    so commands that write files (`--dump out/`) leave the repository clean."""
    d = tmp_path_factory.mktemp("repo")
    for name in os.listdir(ROOT):
        if name not in (".git", "site"):
            os.symlink(os.path.join(ROOT, name), d / name)
    return str(d)


@pytest.mark.parametrize("block", _params("console"))
def test_console_block_runs(block: Block, mirror: str) -> None:
    cmds = commands(block.text)
    assert cmds, f"{block.id}: a console block without a `$ ` line"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.setdefault("NO_MKDOCS_2_WARNING", "1")
    for cmd in cmds:
        parts = [p for p in cmd.split("&&")]
        for p in parts:
            if _is_install(p):
                _check_install(p)
        runnable = " && ".join(_runnable(p) for p in parts
                               if not _is_install(p) and not _run_elsewhere(p))
        if not runnable:
            continue
        done = subprocess.run(["bash", "-c", runnable], cwd=mirror, env=env, capture_output=True,
                              text=True, timeout=SLOW_TIMEOUT if block.slow else TIMEOUT,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, (f"{block.id}: `{cmd}` exited {done.returncode}\n"
                                      f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")


@pytest.mark.parametrize("block", _params("python"))
def test_python_block_executes(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(ROOT)
    code = compile(block.text, f"{block.id}", "exec")
    exec(code, {"__name__": "docs_block"})  # noqa: S102 - the block is the test
