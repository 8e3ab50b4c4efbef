"""`python -m serq`: the `serq-simpy` command."""
import sys

from .cli import main

sys.exit(main())
