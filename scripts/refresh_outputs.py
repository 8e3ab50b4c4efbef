"""Rerun the commands of the documentation's console blocks and write
their current output into the pages.

    python scripts/refresh_outputs.py docs/index.md docs/tutorial/*.md

A console block is refreshed when it has one `$ ` command followed by
output lines (a block of commands alone is left as it is): the output
lines are replaced by what the command prints now, run from the
repository root. Run it after a change to the report's layout or numbers;
the docs test checks that the commands run, not what they print.
(The examples gallery is written by scripts/gallery.py.)
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BLOCK = re.compile(r"^```console\n\$ (?P<cmd>[^\n]*)\n(?P<out>(?:(?!\$ |```)[^\n]*\n)+)```$", re.M)


def _output(command: str) -> str:
    run = command.replace("serq-simpy run ", "serq-simpy run --no-progress ", 1)
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run(["bash", "-c", run], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"`{command}` exited {done.returncode}:\n{done.stderr}")
    return done.stdout if done.stdout.endswith("\n") else done.stdout + "\n"


def refresh(page: str) -> bool:
    """Rewrite one page; True if it changed."""
    with open(page, encoding="utf-8") as fh:
        text = fh.read()
    new = _BLOCK.sub(lambda m: f"```console\n$ {m.group('cmd')}\n{_output(m.group('cmd'))}```", text)
    if new != text:
        with open(page, "w", encoding="utf-8") as fh:
            fh.write(new)
    return new != text


def main() -> None:
    """Refresh the pages named on the command line."""
    for page in sys.argv[1:]:
        print(("updated " if refresh(page) else "unchanged ") + page, file=sys.stderr)


if __name__ == "__main__":
    main()
