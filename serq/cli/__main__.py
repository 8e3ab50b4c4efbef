"""`python -m serq.cli`: the `serq-simpy` command."""
import sys

from .commands import main

sys.exit(main())
