"""Progress beats: the long inner loops of a run (a decode step, a scored sample, a rollout
chunk) say "still moving" with `beat()`, without knowing whether anything watches.

The watchdog (`rlvr.orchestrate.watchdog`) opens a stage on a thread and reads its beats; a
beat marks the innermost stage open on the calling thread. With no stage open (the watchdog
off, or code run outside a training loop) `beat()` does nothing and costs one attribute read.
This module sits at the top of the package because engines and rewards may not import
`orchestrate` (DESIGN.md: imports run one way).
"""

from __future__ import annotations

import threading
import time

from rlvr.errors import RlvrError


class StallError(RlvrError):
    """A stage of the run made no progress for `run.stall_timeout_s` seconds."""


class StallInterrupt(BaseException):
    """Raised by the watchdog in the main thread to unwind the run; not an `Exception`, so that
    a reward function's or a scorer's `except Exception` cannot swallow it (the way
    KeyboardInterrupt gets through). The watchdog turns it into `StallError` at its exit."""


_local = threading.local()


def current():
    """The innermost stage open on this thread, if any: an object with a float `since` (the
    monotonic time of its last progress), which `beat` sets."""
    return getattr(_local, "stage", None)


def set_current(stage) -> None:
    _local.stage = stage


def beat() -> None:
    """Mark progress in the innermost stage open on this thread."""
    stage = getattr(_local, "stage", None)
    if stage is not None:
        stage.since = time.monotonic()
