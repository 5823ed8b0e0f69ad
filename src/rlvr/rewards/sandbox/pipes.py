"""The six pipes of a job, and the loop that feeds its inputs and drains its outputs.

Inputs (stdin, header, secret) and outputs (stdout, stderr, results) move at the same time:
a program that writes a lot before reading its stdin must not deadlock against a parent that
is still writing. Every output is capped; past the cap the run is stopped, not just cut.
"""

from __future__ import annotations

import os
import selectors
import time
from dataclasses import dataclass, field
from typing import Callable

from rlvr.rewards.sandbox.types import Job

GRACE_S = 2.0  # after a kill, how long the outputs may take to reach end-of-file
_CHUNK = 1 << 16


@dataclass
class JobPipes:
    """Parent and child ends of a job's pipes.

    `child` is in the order the sandbox expects: stdin, stdout, stderr, header, results,
    secret (see `sandbox/inside.py`). `inputs` maps a parent write end to the bytes it must
    carry; `outputs` maps a stream name to its parent read end.
    """

    child: list[int]
    inputs: dict[int, bytes]
    outputs: dict[str, int]

    @classmethod
    def open(cls, job: Job, header: bytes) -> "JobPipes":
        pairs = [os.pipe() for _ in range(6)]  # (read, write); not inherited unless passed
        stdin, stdout, stderr, head, results, secret = pairs
        child = [stdin[0], stdout[1], stderr[1], head[0], results[1], secret[0]]
        inputs = {stdin[1]: job.stdin, head[1]: header, secret[1]: job.secret}
        outputs = {"stdout": stdout[0], "stderr": stderr[0], "results": results[0]}
        return cls(child, inputs, outputs)

    def close_child_ends(self) -> None:
        for fd in self.child:
            os.close(fd)
        self.child = []

    def close_all(self) -> None:
        """Close every end still held (when the job could not be started at all)."""
        self.close_child_ends()
        for fd in [*self.inputs, *self.outputs.values()]:
            os.close(fd)
        self.inputs, self.outputs = {}, {}


@dataclass
class Pumped:
    """What came out of a job, and why the pump stopped it (if it did)."""

    outputs: dict[str, bytes] = field(default_factory=dict)
    timed_out: bool = False
    output_limited: bool = False


def pump(pipes: JobPipes, deadline: float, cap: int, stop: Callable[[], None]) -> Pumped:
    """Feed inputs and drain outputs until every output reaches end-of-file.

    `stop()` is called once, at `deadline` or when an output passes `cap` bytes; after it the
    outputs get `GRACE_S` seconds to close before the pump gives up on them. The pump closes
    every parent end it was given.
    """
    selector = selectors.DefaultSelector()
    pending = {fd: memoryview(data) for fd, data in pipes.inputs.items()}
    for fd in pending:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_WRITE)
    names = {fd: name for name, fd in pipes.outputs.items()}
    chunks: dict[str, list[bytes]] = {name: [] for name in pipes.outputs}
    sizes = dict.fromkeys(pipes.outputs, 0)
    for fd in names:
        selector.register(fd, selectors.EVENT_READ)
    result, stopped_at = Pumped(), None
    try:
        while names:
            now = time.monotonic()
            if stopped_at is None and now >= deadline:
                result.timed_out, stopped_at = True, now
                stop()
            if stopped_at is not None and now >= stopped_at + GRACE_S:
                break
            limit = (stopped_at + GRACE_S if stopped_at is not None else deadline) - now
            for key, _ in selector.select(max(limit, 0.0)):
                fd = key.fd
                if fd in pending:
                    _feed(selector, pending, fd)
                    continue
                over = _drain(selector, names, chunks, sizes, fd, cap)
                if over and stopped_at is None:
                    result.output_limited, stopped_at = True, time.monotonic()
                    stop()
    finally:
        selector.close()
        for fd in [*pending, *pipes.outputs.values()]:
            os.close(fd)
        pipes.inputs, pipes.outputs = {}, {}
    result.outputs = {name: b"".join(parts) for name, parts in chunks.items()}
    return result


def _feed(selector: selectors.BaseSelector, pending: dict, fd: int) -> None:
    """Write the next piece of one input; close it when done or when the reader is gone."""
    try:
        written = os.write(fd, pending[fd][:_CHUNK])
        pending[fd] = pending[fd][written:]
        done = not pending[fd]
    except BrokenPipeError:  # the job does not read this input (or has ended): fine
        done = True
    if done:
        selector.unregister(fd)
        del pending[fd]
        os.close(fd)


def _drain(selector, names: dict, chunks: dict, sizes: dict, fd: int, cap: int) -> bool:
    """Read what one output has; keep at most `cap` bytes of it. Did it pass the cap?"""
    data = os.read(fd, _CHUNK)
    name = names[fd]
    if not data:
        selector.unregister(fd)
        del names[fd]
        return False
    room = cap - sizes[name]
    if room > 0:
        chunks[name].append(data[:room])
    sizes[name] += len(data)
    return sizes[name] > cap
