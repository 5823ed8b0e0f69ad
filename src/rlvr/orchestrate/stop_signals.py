"""Ctrl-C and SIGTERM during a run: stop after the step in progress, checkpoint, exit naming the
folder (rlvr.orchestrate.run turns what happened into the message).

Cluster schedulers (SLURM, Kubernetes, Ray's autoscaler) send SIGTERM and kill a grace period
later (30 s by default in SLURM's KillWait and Kubernetes' terminationGracePeriodSeconds).
SIGTERM therefore asks for the same stop as a first Ctrl-C, but with a deadline: when the step
and its checkpoint are not done `run.sigterm_grace_s` after the signal, the run stops at once,
as a second Ctrl-C does, so that it still exits with its line (from the last checkpoint) before
the kill. A second Ctrl-C or SIGTERM stops at once.
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager

SIGTERM_EXIT = 128 + signal.SIGTERM  # the status a shell reports for a process ended by SIGTERM


class StopRequest:
    """What the handlers saw: `signal_name` of the first stop signal (None: none yet)."""

    def __init__(self, loop, grace_s: float):
        self.loop, self.grace_s = loop, grace_s
        self.signal_name: str | None = None
        self.deadline_passed = False
        self.timer: threading.Timer | None = None
        self.active = True
        self.lock = threading.Lock()

    @property
    def exit_status(self) -> int:
        return SIGTERM_EXIT if self.signal_name == "SIGTERM" else 130

    def first(self, signum, frame) -> None:
        self.signal_name = signal.Signals(signum).name
        self.loop.stop_requested = True
        for sig in (signal.SIGINT, signal.SIGTERM):  # the next one interrupts at once
            signal.signal(sig, signal.default_int_handler)
        if signum == signal.SIGTERM:
            self.timer = threading.Timer(self.grace_s, self.past_deadline)
            self.timer.daemon = True
            self.timer.start()
            message = (f"rlvr: SIGTERM: stopping after this step to write a checkpoint (at most "
                       f"run.sigterm_grace_s = {self.grace_s:g} s; then at once)\n")
        else:
            message = "rlvr: stopping after this step to write a checkpoint (Ctrl-C again: stop now)\n"
        # os.write, not print: a handler that prints while the loop prints raises "reentrant call"
        os.write(2, message.encode())

    def past_deadline(self) -> None:
        with self.lock:
            if self.active:
                self.deadline_passed = True
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    def end(self) -> None:
        with self.lock:
            self.active = False
        if self.timer is not None:
            self.timer.cancel()


@contextmanager
def stop_after_the_step(loop, grace_s: float, enabled: bool = True):
    """Yields the `StopRequest`. Off the main thread nothing is installed. Under FSDP
    (`enabled` False) ranks would see a signal at different steps and the checkpoint, a
    collective, would hang: Ctrl-C and SIGTERM stop at once (with the message)."""
    request = StopRequest(loop, grace_s)
    if threading.current_thread() is not threading.main_thread():
        yield request
        return
    handler = request.first if enabled else _at_once(request)
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield request
    finally:
        request.end()
        for sig, old in previous.items():
            signal.signal(sig, old)


def _at_once(request: StopRequest):
    def handler(signum, frame):
        request.signal_name = signal.Signals(signum).name
        raise KeyboardInterrupt

    return handler
