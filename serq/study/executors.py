"""Where the runs of a study execute: this process, local worker processes
(`concurrent.futures`), or a Dask distributed cluster.

An executor here is anything with `submit(fn, *args)` returning a future and
a way to iterate futures as they finish; `resolve` turns the user's
`executor=` (None, a job count, a `concurrent.futures.Executor`, a
`distributed.Client` or its scheduler address) into one.
"""
from __future__ import annotations

import os
from concurrent.futures import Executor, Future
from typing import Any, Callable, Iterable, Iterator, Optional


#: Seconds `--dask ADDRESS` waits for the scheduler to answer.
CONNECT_TIMEOUT = 5.0


def max_jobs() -> int:
    """Most local worker processes a study starts: twice the cores, at
    least 4 (each worker holds a run's memory; more only queue for the cores)."""
    return max(4, 2 * default_jobs())


def default_jobs() -> int:
    """The machine's cores (the default of `--jobs`)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class _Deferred(Future):
    """A task of `Inline`, run in this process when its result is asked for."""

    def __init__(self, fn: Callable[..., Any], args: tuple) -> None:
        super().__init__()
        self._task: Optional[tuple] = (fn, args)

    def run(self) -> None:
        """Run the task (once)."""
        if self._task is None:
            return
        fn, args = self._task
        self._task = None
        try:
            self.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            self.set_exception(exc)

    def result(self, timeout: Optional[float] = None) -> Any:
        self.run()
        return super().result(timeout)


def end_with_parent(parent: int) -> None:
    """In a worker process: end when the process `parent` that started it
    ends, even by `kill -9` (Linux: the kernel's parent-death signal; else
    a thread that looks at the parent twice a second)."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, signal.SIGKILL, 0, 0, 0) == 0:  # PR_SET_PDEATHSIG
            if os.getppid() != parent:  # the parent ended before the call
                os._exit(1)
            return
    except (OSError, AttributeError):
        pass
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)
    threading.Thread(target=watch, name="serq-parent-watch", daemon=True).start()


class Inline:
    """Runs the tasks in this process, one by one as the caller iterates
    them (`--jobs 1`): a sweep keeps each run as soon as it is done."""

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        return _Deferred(fn, args)

    def as_completed(self, futures: Iterable[Future]) -> Iterator[Future]:
        for fut in list(futures):
            if isinstance(fut, _Deferred):
                fut.run()
            yield fut

    def close(self, abort: bool = False) -> None:
        pass


class Local:
    """A pool of local worker processes (or a user's `Executor`)."""

    def __init__(self, jobs: Optional[int] = None, pool: Optional[Executor] = None):
        self.owned = pool is None
        if pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            # fork where there is one: a worker starts with serq imported and
            # the programs the client compiled (a fresh interpreter would spend
            # about a second importing and compiling before its first run)
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
            pool = ProcessPoolExecutor(max_workers=jobs or default_jobs(), mp_context=ctx,
                                       initializer=end_with_parent, initargs=(os.getpid(),))
        self.pool = pool

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        return self.pool.submit(fn, *args)

    def as_completed(self, futures: Iterable[Future]) -> Iterator[Future]:
        from concurrent.futures import as_completed
        return as_completed(list(futures))

    def close(self, abort: bool = False) -> None:
        """Wait for the pool's workers to end; with `abort` (an interrupt),
        end them at once."""
        if not self.owned:
            return
        if abort:
            for proc in list((getattr(self.pool, "_processes", None) or {}).values()):
                try:
                    proc.kill()
                except (OSError, AttributeError):
                    pass
            self.pool.shutdown(wait=False, cancel_futures=True)
            return
        self.pool.shutdown(wait=True, cancel_futures=True)


class Dask:
    """A Dask distributed cluster: a `distributed.Client` or a scheduler address."""

    def __init__(self, client: Any):
        self.owned = isinstance(client, str)
        self.address = client if self.owned else None
        if self.owned:
            try:
                from distributed import Client
            except ImportError:
                raise RuntimeError("--dask needs the `distributed` package: "
                                   "`pip install distributed` (in a clone of serq-simpy: "
                                   "`pip install -e '.[dask]'`)") from None
            try:
                _probe(client)  # (the client itself waits forever for a silent peer)
                client = Client(client, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as exc:
                raise RuntimeError(f"--dask {self.address}: no Dask scheduler answered within "
                                   f"{CONNECT_TIMEOUT:g} s ({type(exc).__name__}: {exc}); "
                                   "start one with `dask scheduler`, or check the "
                                   "address") from None
        self.client = client

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self.client.submit(fn, *args, pure=False)

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        from distributed import as_completed
        return iter(as_completed(list(futures)))

    def close(self, abort: bool = False) -> None:
        if self.owned:
            self.client.close()


def _probe(address: str) -> None:
    """Connect to the scheduler at `address` and complete Dask's handshake
    within `CONNECT_TIMEOUT` seconds, or raise `TimeoutError`/`OSError`."""
    import asyncio

    from distributed.comm import connect

    async def handshake() -> None:
        comm = await asyncio.wait_for(connect(address, timeout=CONNECT_TIMEOUT),
                                      CONNECT_TIMEOUT)
        await comm.close()
    asyncio.run(handshake())


def _is_dask_client(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "distributed" and hasattr(obj, "submit")


def resolve(executor: Any = None, jobs: Optional[int] = None, tasks: int = 2) -> Any:
    """The executor for `executor=` (see the module text); `jobs=1`, or a
    single task, runs in this process."""
    if executor is None:
        n = min(jobs or default_jobs(), max_jobs())
        if n <= 1 or tasks <= 1:
            return Inline()
        return Local(min(n, tasks))
    if isinstance(executor, int) and not isinstance(executor, bool):
        return resolve(None, executor, tasks)
    if isinstance(executor, (Inline, Local, Dask)):
        return executor
    if isinstance(executor, str):
        return Dask(executor)
    if _is_dask_client(executor):
        return Dask(executor)
    if isinstance(executor, Executor):
        return Local(pool=executor)
    raise TypeError(f"executor={executor!r}: expected None, a job count, a "
                    "concurrent.futures.Executor, a distributed.Client or a "
                    "scheduler address")
