"""Pool policies that escape the run (issue 26 items 3 and 8)."""
import threading
import time

from serq.policies import Pool


class ExitsZero(Pool):
    """Raises SystemExit(0) from its fit rule."""

    def has_room(self, units, frame=None):
        raise SystemExit(0)


class ExitsInInit(Pool):
    """Raises SystemExit(0) while it is made."""

    def __init__(self, *args):
        raise SystemExit(0)


class Sleeps(Pool):
    """Its fit rule sleeps for a day."""

    def has_room(self, units, frame=None):
        time.sleep(86400)
        return super().has_room(units, frame)


class Spins(Pool):
    """Its fit rule never returns."""

    def has_room(self, units, frame=None):
        while True:
            pass


class StartsThread(Pool):
    """Starts a non-daemon thread that never ends."""

    def __init__(self, *args):
        super().__init__(*args)
        threading.Thread(target=time.sleep, args=(86400,), name="policy-thread",
                         daemon=False).start()
