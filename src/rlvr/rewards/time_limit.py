"""Run a function under a wall-clock limit, in the main thread or any other.

Why our own instead of math-verify's: math-verify arms `signal.alarm` (whole seconds) inside
`parse` and `verify`, which fails outside the main thread and clobbers any alarm already armed
by the caller. We disable those and put one limit around the whole check instead.
"""

from __future__ import annotations

import concurrent.futures
import signal
import threading
import time
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_REPEAT_S = 0.05


class VerifierTimeout(Exception):
    """Raised by `run_with_time_limit` when the function ran past its limit."""

    def __init__(self, seconds: float):
        super().__init__(f"timed out after {float(seconds)} s")
        self.seconds = float(seconds)


class _AlarmFired(BaseException):
    """Raised by our SIGALRM handler inside the timed function.

    A `BaseException`, not an `Exception`, because libraries under the limit (math-verify,
    sympy) wrap their work in `except Exception:` and would swallow it, turning a timeout into
    a silent wrong answer. It never leaves this module: it becomes `VerifierTimeout`.
    """


def run_with_time_limit(fn: Callable[..., T], seconds: float, *args: Any, **kwargs: Any) -> T:
    """Return `fn(*args, **kwargs)`, or raise `VerifierTimeout` if it takes over `seconds`.

    In the main thread an interval timer (`setitimer`, sub-second) sends SIGALRM, whose handler
    interrupts `fn` at its next Python bytecode (not inside one long C call, such as a single
    huge integer power); the previous handler and timer are restored afterwards, even on error.
    Elsewhere signals are unavailable, so `fn` runs in a fresh daemon worker thread and we stop
    waiting after `seconds`. A thread cannot be killed: on timeout the worker runs on to its
    end in the background, using a CPU, and its result is abandoned.
    Exceptions raised by `fn` propagate unchanged.
    """
    if not seconds > 0:
        raise ValueError(f"time limit must be positive, got {seconds!r}")
    if threading.current_thread() is threading.main_thread():
        return _run_with_alarm(fn, seconds, args, kwargs)
    return _run_in_worker_thread(fn, seconds, args, kwargs)


def _raise_alarm_fired(signum: int, frame: object) -> None:
    raise _AlarmFired()


def _run_with_alarm(fn: Callable[..., T], seconds: float, args: tuple, kwargs: dict) -> T:
    """Main-thread path: SIGALRM after `seconds`, then restore the caller's handler and timer."""
    old_handler = signal.signal(signal.SIGALRM, _raise_alarm_fired)
    # After the first alarm, repeat: a bare `except:` in the timed code (mpmath has a few)
    # could swallow one alarm, but not every one.
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds, _REPEAT_S)
    start = time.monotonic()
    try:
        try:
            return fn(*args, **kwargs)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _AlarmFired:
        # Also reached when the alarm lands between `fn` returning and the timer being
        # disarmed: the call then took the whole limit anyway.
        raise VerifierTimeout(seconds) from None
    finally:
        # getsignal() gives None for a handler installed from C; SIG_DFL is the closest we have.
        signal.signal(signal.SIGALRM, signal.SIG_DFL if old_handler is None else old_handler)
        _rearm_previous_timer(old_delay, old_interval, time.monotonic() - start)


def _rearm_previous_timer(old_delay: float, old_interval: float, elapsed: float) -> None:
    """Give back the caller's pending timer, minus the time we spent.

    A timer that would have fired while we held it fires as soon as possible (1 microsecond)
    rather than being lost.
    """
    if old_delay > 0:
        signal.setitimer(signal.ITIMER_REAL, max(old_delay - elapsed, 1e-6), old_interval)


def _run_in_worker_thread(fn: Callable[..., T], seconds: float, args: tuple, kwargs: dict) -> T:
    """Non-main-thread path: run `fn` in a daemon thread and wait at most `seconds`.

    A bare daemon thread rather than a `ThreadPoolExecutor`: the executor's workers are joined
    at interpreter exit, so one hung computation would stop the process from exiting.
    """
    future: concurrent.futures.Future = concurrent.futures.Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to the waiting caller, which re-raises it
            future.set_exception(error)

    threading.Thread(target=work, name="rlvr-time-limit", daemon=True).start()
    # wait() rather than result(timeout=): a TimeoutError raised by `fn` itself must propagate
    # as it is, not be mistaken for ours.
    done, _ = concurrent.futures.wait([future], timeout=seconds)
    if not done:
        raise VerifierTimeout(seconds)
    return future.result()
