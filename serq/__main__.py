"""`python -m serq`: the `serq-simpy` command."""
import sys

from .cli.commands import main

sys.exit(main())
