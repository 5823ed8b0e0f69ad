"""The watchdog: a run that stops making progress fails loudly instead of hanging in silence.

The loops open a stage around each phase (`with watchdog.stage("generate", step):` sample,
generate, score, train, sync, checkpoint, eval), on whichever thread runs it: the async
producer's stages are watched beside the trainer's. Inside a stage, `rlvr.heartbeat.beat()`
(called per decode step by the HF engine, per scored sample, per finished Ray chunk) and the
end of a nested stage count as progress, so a slow but moving generation never trips it; only
a stage silent for `run.stall_timeout_s` seconds does.

On a stall the monitor thread
1. prints the stuck stage, its step and thread, and every thread's stack (with thread names)
   to stderr, and appends the same to `runs/<name>/stall.txt`;
2. raises `StallInterrupt` in the main thread (a real SIGUSR1 sent to it, so a main thread
   blocked in `sleep`, a lock or a socket wakes up). It derives from BaseException, so a
   reward function's `except Exception` does not swallow it; it unwinds the loop through its
   `finally` blocks (TensorBoard, the producer, the run folder) and leaves the watchdog's
   `with` as `StallError`, which the CLI prints in one line, exit status 2. A main thread inside a critical stage (a checkpoint write) that is not the
   stalled one gets it when that stage ends, so a checkpoint is never cut short by a stall
   elsewhere; if the write itself is the stalled stage, the atomic rename of
   `rlvr.train.checkpoint` leaves the previous checkpoint intact;
3. if the process is still alive `grace_s` later (the stuck thread holds the main thread in C
   code that no signal interrupts), prints one line and ends it with `os._exit(2)`, again only
   once no critical stage is still making progress.
The run resumes from its folder (`rlvr train --resume`) like after any stop.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

from rlvr import heartbeat
from rlvr.heartbeat import StallError, StallInterrupt

STALL_FILE = "stall.txt"
EXIT_STATUS = 2  # the CLI's status for every rlvr error
_SIGNAL = getattr(signal, "SIGUSR1", None)  # absent on Windows: the os._exit path remains


def default_grace_s(timeout_s: float) -> float:
    """Time the main thread gets to unwind after the interrupt: a tenth of the timeout, in
    [2 s, 60 s] (unwinding closes files and joins threads; it needs seconds, not minutes)."""
    return min(60.0, max(2.0, timeout_s / 10))


class _Stage:
    __slots__ = ("watchdog", "name", "step", "critical", "thread", "started", "since", "outer")

    def __init__(self, watchdog: Watchdog, name: str, step: int, critical: bool):
        self.watchdog, self.name, self.step, self.critical = watchdog, name, step, critical

    def __enter__(self) -> _Stage:
        self.thread = threading.current_thread()
        self.started = self.since = time.monotonic()
        self.outer = heartbeat.current()
        heartbeat.set_current(self)
        with self.watchdog.lock:
            self.watchdog.open[self.thread.ident] = self
            self.watchdog.last_change, self.watchdog.last_step = self.started, self.step
        return self

    def __exit__(self, *exc) -> None:
        heartbeat.set_current(self.outer)
        with self.watchdog.lock:
            if isinstance(self.outer, _Stage):
                self.outer.since = time.monotonic()  # a finished inner stage is progress
                self.watchdog.open[self.thread.ident] = self.outer
            else:
                self.watchdog.open.pop(self.thread.ident, None)
            self.watchdog.last_change = time.monotonic()
        if self.critical and exc[0] is None:
            self.watchdog.raise_if_deferred()

    def chain(self):
        stage = self
        while isinstance(stage, _Stage):
            yield stage
            stage = stage.outer

    def describe(self, now: float) -> str:
        return (f"stage {self.name!r} of step {self.step} on thread {self.thread.name}: "
                f"open {now - self.started:.1f} s, last progress {now - self.since:.1f} s ago")


class _Off:
    """The stage of a watchdog that is off: nothing recorded, nothing checked."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


_OFF = _Off()


class Watchdog:
    """Watches the stages opened with `stage`; `timeout_s = 0` turns it off. `dump_dir`: where
    stall.txt goes (None: stderr only). `exit` is `os._exit` except in tests."""

    def __init__(self, timeout_s: float, dump_dir: Path | None, *, grace_s: float | None = None,
                 poll_s: float | None = None, setting: str = "run.stall_timeout_s", exit=os._exit):
        self.timeout_s, self.dump_dir, self.setting, self.exit = timeout_s, dump_dir, setting, exit
        self.grace_s = default_grace_s(timeout_s) if grace_s is None else grace_s
        self.poll_s = poll_s if poll_s is not None else min(10.0, max(0.05, timeout_s / 10))
        self.lock = threading.Lock()
        self.open: dict[int, _Stage] = {}  # thread ident -> its innermost open stage
        self.stalled: str | None = None  # the one-line message, once a stall was found
        self._stuck: _Stage | None = None
        # When a stage last opened or closed, and its step: with none open for the timeout,
        # the loop is stuck between stages (two of its threads waiting on each other).
        self.last_change, self.last_step = time.monotonic(), 0
        self.deferred = False  # the interrupt arrived inside a critical stage of the main thread
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None
        self._previous_handler, self._installed = None, False

    def stage(self, name: str, step: int, critical: bool = False):
        """A context manager around one phase of `step`; `critical`: never interrupted by a
        stall elsewhere (checkpoint writes)."""
        return _Stage(self, name, step, critical) if self.timeout_s else _OFF

    def start(self) -> None:
        if not self.timeout_s:
            return
        if _SIGNAL is not None and threading.current_thread() is threading.main_thread():
            self._previous_handler = signal.signal(_SIGNAL, self._on_signal)
            self._installed = True
        self.last_change = time.monotonic()
        self._monitor = threading.Thread(target=self._watch, daemon=True, name="rlvr-watchdog")
        self._monitor.start()

    def stop(self) -> None:
        self._stop.set()
        if self._monitor is not None and self._monitor is not threading.current_thread():
            self._monitor.join()
        if self._installed:
            signal.signal(_SIGNAL, self._previous_handler if self._previous_handler is not None else signal.SIG_DFL)
            self._installed = False

    def __enter__(self) -> Watchdog:
        self.start()
        return self

    def __exit__(self, kind, value, tb) -> None:
        self.stop()
        if kind is not None and self.stalled is not None:
            # Whatever unwound the run after a stall is its consequence: the interrupt itself,
            # or what a C extension made of it (Ray's wait turns it into a SystemError).
            raise StallError(self.stalled) from (None if issubclass(kind, StallInterrupt) else value)

    # The monitor thread.

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_s):
            stuck = self._find_stall()
            if stuck is not None:
                self._fail(stuck)
                return

    def _find_stall(self) -> _Stage | None:
        now = time.monotonic()
        with self.lock:
            stages, last_change = list(self.open.values()), self.last_change
        if not stages and now - last_change > self.timeout_s:
            return self._between_stages(last_change)
        return next((s for s in stages if now - s.since > self.timeout_s), None)

    def _between_stages(self, since: float) -> _Stage:
        """A stand-in stage for the report when none is open: charged to the main thread."""
        gap = _Stage(self, "between stages (none open)", self.last_step, False)
        gap.thread, gap.started, gap.since, gap.outer = threading.main_thread(), since, since, None
        return gap

    def _fail(self, stuck: _Stage) -> None:
        now = time.monotonic()
        where = self._dump(stuck, now)
        self._stuck = stuck
        self.stalled = (f"stalled: stage {stuck.name!r} of step {stuck.step} (thread {stuck.thread.name}) made "
                        f"no progress for {now - stuck.since:.1f} s ({self.setting} = {self.timeout_s:g}); "
                        f"every thread's stack: {where}; resume with `rlvr train --resume {self.dump_dir or 'RUN_DIR'}`")
        self._interrupt_main()
        if self._stop.wait(self.grace_s):
            return  # the main thread unwound and stopped the watchdog
        while not self._safe_to_exit(stuck):
            if self._stop.wait(self.poll_s):
                return
        print(f"rlvr: error: {self.stalled} (the run did not unwind within {self.grace_s:g} s: exiting now)",
              file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        self.exit(EXIT_STATUS)

    def _dump(self, stuck: _Stage, now: float) -> str:
        report = stall_report(stuck, self._open_stages(), now, self.timeout_s, self.setting)
        print(report, file=sys.stderr, flush=True)
        if self.dump_dir is None:
            return "above on stderr"
        path = Path(self.dump_dir) / STALL_FILE
        try:
            with path.open("a", encoding="utf-8") as f:
                f.write(report + "\n")
        except OSError as e:  # a full or gone disk must not keep the run from failing
            return f"on stderr ({path} could not be written: {e})"
        return str(path)

    def _open_stages(self) -> list[_Stage]:
        with self.lock:
            return list(self.open.values())

    def _safe_to_exit(self, stuck: _Stage) -> bool:
        """No critical stage other than the stuck one is open and still moving."""
        now = time.monotonic()
        return not any(s.critical and s is not stuck and now - s.since <= self.timeout_s
                       for top in self._open_stages() for s in top.chain())

    def _interrupt_main(self) -> None:
        if not self._installed:
            return  # started off the main thread (or no SIGUSR1): the grace exit remains
        signal.pthread_kill(threading.main_thread().ident, _SIGNAL)

    # The main thread.

    def _on_signal(self, signum, frame) -> None:
        if self.stalled is None:  # not ours: hand it to whoever listened before
            if callable(self._previous_handler):
                self._previous_handler(signum, frame)
            return
        if self._in_critical_stage():
            self.deferred = True
            return
        raise StallInterrupt(self.stalled)

    def _in_critical_stage(self) -> bool:
        """This thread is inside a critical stage, and the stalled stage is not one of its."""
        top = heartbeat.current()
        chain = list(top.chain()) if isinstance(top, _Stage) else []
        return self._stuck not in chain and any(s.critical for s in chain)

    def raise_if_deferred(self) -> None:
        if self.deferred and threading.current_thread() is threading.main_thread() \
                and not self._in_critical_stage():
            self.deferred = False
            raise StallInterrupt(self.stalled)


def stall_report(stuck: _Stage, stages: list[_Stage], now: float, timeout_s: float, setting: str) -> str:
    """The stall header, the open stages, then every thread's stack, the stuck thread's first."""
    lines = [f"==== rlvr watchdog, {time.strftime('%Y-%m-%d %H:%M:%S')}: no progress for "
             f"{now - stuck.since:.1f} s ({setting} = {timeout_s:g})",
             f"stalled: {stuck.describe(now)}", "open stages:"]
    lines += [f"  {s.describe(now)}" for top in stages for s in top.chain()]
    names = {t.ident: t.name for t in threading.enumerate()}
    frames = sys._current_frames()
    order = sorted(frames, key=lambda ident: ident != stuck.thread.ident)
    for ident in order:
        lines.append(f"--- thread {names.get(ident, '?')} (id {ident})"
                     + (" [stalled]" if ident == stuck.thread.ident else ""))
        lines.append("".join(traceback.format_stack(frames[ident])).rstrip())
    return "\n".join(lines)


__all__ = ["EXIT_STATUS", "STALL_FILE", "StallError", "Watchdog", "default_grace_s", "stall_report"]
