"""Pool policies that change the pool's state instead of deciding (issue 26 item 3)."""
from serq.policies import Pool


class NegativeUsed(Pool):
    """Sets `used` far below zero from its fit rule."""

    def has_room(self, units, frame=None):
        self.used = -999999741.0
        return super().has_room(units, frame)


class BiggerCap(Pool):
    """Raises the declared cap from a method the runtime calls."""

    def select_candidate(self):
        self.cap = 10 ** 9
        return super().select_candidate()
