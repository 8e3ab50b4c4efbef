"""The `serq-simpy` command line (spec Part 06 §11): the top layer.

`commands` (the parser and the commands `run`, `check`, `ir`, … and
`main`), `study` (the study options of `run` and the commands `sweep`,
`summary`, `plot`), `guard` (`--max-live`, `--max-memory`, Ctrl-C, a closed
standard output) and `program_cache` (loaded programs kept between runs).

May import: every other layer (`serq.study`, `serq.api`, `serq.policies`,
`serq.frontend`, `serq.runtime`, `serq.report`, `serq.stats`, `serq.core`).
"""
from .commands import main

__all__ = ["main"]
