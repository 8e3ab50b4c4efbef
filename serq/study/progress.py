"""Progress bars on standard error: one for a run (simulated time against
the horizon, events per second, ETA), one over replications or sweep
points. tqdm draws them when installed; otherwise a one-line counter.
The caller decides whether to show one (a terminal, no --no-progress, no --json).
"""
from __future__ import annotations

import sys
import time
from typing import Any, Optional


def _tqdm() -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


class _Bar:
    """What both bars share: a tqdm bar (or None) on a stream."""

    bar: Any = None
    stream: Any = None

    def close(self) -> None:
        """Remove the bar from the terminal."""
        if self.bar is not None:
            self.bar.close()
        else:
            self.stream.write("\r\033[K")
            self.stream.flush()


class RunBar(_Bar):
    """`bar(now, events)`: a run's progress; `close()` clears it."""

    def __init__(self, horizon: float, stream: Any = None):
        self.horizon = float(horizon) if horizon and horizon > 0 else 0.0
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()
        tqdm = _tqdm()
        self.bar = None
        if tqdm is not None:
            self.bar = tqdm(total=self.horizon or None, unit="", leave=False,
                            file=self.stream, mininterval=0.0, dynamic_ncols=True,
                            bar_format="{l_bar}{bar}| t={n:.6g}/{total:.6g} "
                                       "[{elapsed}<{remaining}{postfix}]",
                            desc="simulating")

    def __call__(self, now: float, events: int = 0) -> None:
        wall = max(time.perf_counter() - self.start, 1e-9)
        rate = events / wall
        if self.bar is not None:
            self.bar.n = min(now, self.horizon) if self.horizon else now
            self.bar.set_postfix_str(f"{rate:,.0f} events/s", refresh=False)
            self.bar.refresh()
            return
        pct = 100.0 * min(now / self.horizon, 1.0) if self.horizon else 100.0
        eta = wall * (self.horizon - now) / now if self.horizon and now > 0 else 0.0
        self.stream.write(f"\rsimulating… t = {now:.6g} ({pct:5.1f}%), "
                          f"{rate:,.0f} events/s, ETA {eta:.0f} s\033[K")
        self.stream.flush()



class CountBar(_Bar):
    """`bar(done, total)`: replications or sweep points finished."""

    def __init__(self, total: int, desc: str, stream: Any = None):
        self.stream = stream or sys.stderr
        self.desc = desc
        tqdm = _tqdm()
        self.bar = None if tqdm is None else tqdm(total=total, desc=desc, leave=False,
                                                  file=self.stream, dynamic_ncols=True)

    def __call__(self, done: int, total: int) -> None:
        if self.bar is not None:
            self.bar.total = total
            self.bar.n = done
            self.bar.refresh()
            return
        self.stream.write(f"\r{self.desc}: {done}/{total}\033[K")
        self.stream.flush()



def wanted(quiet: bool, json_out: bool = False, stream: Optional[Any] = None) -> bool:
    """Whether to show a bar: standard error is a terminal, no --no-progress, no --json."""
    s = stream or sys.stderr
    return not quiet and not json_out and hasattr(s, "isatty") and s.isatty()
