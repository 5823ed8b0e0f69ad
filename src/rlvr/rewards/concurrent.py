"""A batch of reward calls made concurrently, answered in the batch's order.

A reward function that waits (an HTTP judge, a remote sandbox, a database) or computes for
tens of milliseconds makes a step's scoring serial: 512 completions x 50 ms = 26 s. `call_all`
makes the calls of one batch on `workers` at once:

- `pool = "thread"`: a thread pool, for functions that wait on I/O (and C code that releases
  the GIL); pure-Python CPU work gains nothing here because of the GIL.
- `pool = "process"`: a pool of spawned processes, for CPU-bound Python. The function must be
  picklable (a module-level function, or an object of a module-level class); it is refused
  with one line otherwise. A worker process that dies fails the calls it had, and the pool is
  made anew for the next batch.
- an `async def` function (or an object whose `__call__` is one) is awaited on one event loop,
  `workers` calls in flight at once, whichever pool is set.

`timeout_s` (> 0) limits each call from its own start: past it the call fails with
`VerifierTimeout` (rewards/time_limit.py: a thread cannot be killed, so a timed-out call in a
thread runs on unobserved; in a process it is interrupted at its next bytecode; an async call
is cancelled).

Whatever the pool, the outcome of call i is outcomes[i] = (output, None) or (None, exception),
exactly what the serial loop would have got: the caller turns them into verdicts in order, so
the scores, the errors and the counts are those of the serial path (bit for bit:
tests/orchestrate/test_concurrent_scoring.py).
"""

from __future__ import annotations

import asyncio
import atexit
import inspect
import multiprocessing
import pickle
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from rlvr.errors import ConfigError, RewardError
from rlvr.rewards.calling import call_reward, describe_error, function_name
from rlvr.rewards.time_limit import VerifierTimeout, run_with_time_limit

Call = tuple[str, Any, str, "dict | None"]  # (response, gold, prompt, extra)
Outcome = tuple[Any, "BaseException | None"]


@dataclass(frozen=True)
class Concurrency:
    workers: int = 1  # calls at once; 1 = the serial loop
    pool: str = "thread"  # "thread" | "process"
    timeout_s: float = 0.0  # per call; 0 = no limit


SERIAL = Concurrency()


def is_async(fn: Callable) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


def call_all(fn: Callable, calls: list[Call], how: Concurrency, on_done: Callable[[], None] = lambda: None,
             stop_at_error: bool = False) -> list[Outcome]:
    """The outcome of `fn` on each call, in order; `on_done()` after each (the watchdog's beat).
    With `stop_at_error` the list ends at the first failed call (the calls after it are not
    made, or are cancelled if they have not started)."""
    if is_async(fn):
        outcomes = asyncio.run(_await_all(fn, calls, how))
        for _ in outcomes:
            on_done()
        return _up_to_error(outcomes) if stop_at_error else outcomes
    if how.workers == 1:
        outcomes = []
        for call in calls:
            outcomes.append(_outcome(fn, call, how.timeout_s))
            on_done()
            if stop_at_error and outcomes[-1][1] is not None:
                break
        return outcomes
    return _on_pool(fn, calls, how, on_done, stop_at_error)


def call_all_checked(fn: Callable, calls: list[Call], how: Concurrency, wheres: list[str]) -> list[Any]:
    """`call_all` for callers without an error policy of their own (evaluation): the outputs in
    order, or, at the first call that failed, SystemExit included, one RewardError naming the
    function and `wheres[i]` (its sample): never a traceback, never an exit with status 0. A
    RewardError of the function's own (a gold it rejects) passes through as it is."""
    outcomes = call_all(fn, calls, how, stop_at_error=True)
    for (_, error), where in zip(outcomes, wheres):
        if isinstance(error, RewardError):
            raise error
        if error is not None:
            raise RewardError(f"reward function {function_name(fn)} raised {describe_error(error)}"
                              + (f" ({where})" if where else "")) from None
    return [out for out, _ in outcomes]


def _up_to_error(outcomes: list[Outcome]) -> list[Outcome]:
    failed = [i for i, (_, e) in enumerate(outcomes) if e is not None]
    return outcomes[:failed[0] + 1] if failed else outcomes


def call_one(fn: Callable, call: Call, timeout_s: float) -> Any:
    """One call under the time limit (run in a pool thread or worker process as well)."""
    out = run_with_time_limit(call_reward, timeout_s, fn, *call) if timeout_s > 0 else call_reward(fn, *call)
    if inspect.isawaitable(out):  # a sync wrapper that returned a coroutine
        out = asyncio.run(_with_timeout(out, timeout_s))
    return out


def _outcome(fn: Callable, call: Call, timeout_s: float) -> Outcome:
    try:
        return call_one(fn, call, timeout_s), None
    except (Exception, SystemExit) as e:  # user code: reported by the caller, like the serial loop's
        return None, e


def _on_pool(fn: Callable, calls: list[Call], how: Concurrency, on_done: Callable[[], None],
             stop_at_error: bool) -> list[Outcome]:
    if how.pool == "process":
        _require_picklable(fn)
    pool = _pool(how.pool, how.workers)
    futures: list[Future] = [pool.submit(call_one, fn, call, how.timeout_s) for call in calls]
    outcomes: list[Outcome] = []
    for future in futures:  # in order: the order of the answers is the batch's
        try:
            outcomes.append((future.result(), None))
        except (Exception, SystemExit) as e:
            outcomes.append((None, e))
        on_done()
        if stop_at_error and outcomes[-1][1] is not None:
            for rest in futures:
                rest.cancel()
            break
    if how.pool == "process" and any(type(e).__name__ == "BrokenProcessPool" for _, e in outcomes):
        _POOLS.pop((how.pool, how.workers)).shutdown(wait=False, cancel_futures=True)
    return outcomes


async def _await_all(fn: Callable, calls: list[Call], how: Concurrency) -> list[Outcome]:
    gate = asyncio.Semaphore(how.workers)

    async def one(call: Call) -> Outcome:
        async with gate:
            try:
                return await _with_timeout(call_reward(fn, *call), how.timeout_s), None
            # Caught here: asyncio re-raises a task's SystemExit out of the loop.
            except (Exception, SystemExit) as e:
                return None, e

    return list(await asyncio.gather(*(one(c) for c in calls)))


async def _with_timeout(awaitable: Any, timeout_s: float) -> Any:
    if timeout_s <= 0:
        return await awaitable
    try:
        return await asyncio.wait_for(awaitable, timeout_s)
    except asyncio.TimeoutError:
        raise VerifierTimeout(timeout_s) from None


def _require_picklable(fn: Callable) -> None:
    try:
        pickle.dumps(fn)
    except Exception as e:
        raise ConfigError(f"reward.score_pool = 'process' needs a picklable reward function (a module-level "
                          f"function or class instance); {fn!r} is not ({type(e).__name__}: {e})") from None


_POOLS: dict[tuple[str, int], Executor] = {}


def _pool(kind: str, workers: int) -> Executor:
    """One pool per (kind, workers), kept for the process's life: spawning workers each step
    would cost more than the scoring."""
    if (kind, workers) not in _POOLS:
        if kind == "process":
            # spawn, not fork: the parent holds torch's threads and locks.
            pool: Executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        else:
            pool = ThreadPoolExecutor(workers, thread_name_prefix="rlvr-reward")
        _POOLS[(kind, workers)] = pool
    return _POOLS[(kind, workers)]


@atexit.register
def _shut_pools() -> None:
    for pool in _POOLS.values():
        pool.shutdown(wait=False, cancel_futures=True)
