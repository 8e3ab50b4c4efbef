"""serq-simpy's version: the one place it is written (pyproject.toml reads it
from here, `serq.__version__`, `--version`, the JSON report's `serq_simpy`
block and the program cache's key read it from here)."""

__version__ = "0.1.0"
