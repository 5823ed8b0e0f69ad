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
    streams, result, stopped_at = _Streams(pipes, cap), Pumped(), None
    try:
        while streams.names:
            now = time.monotonic()
            if stopped_at is None and now >= deadline:
                result.timed_out, stopped_at = True, now
                stop()
            end = deadline if stopped_at is None else stopped_at + GRACE_S
            if now >= end:
                break
            for key, _ in streams.selector.select(end - now):
                if streams.move(key.fd) and stopped_at is None:
                    result.output_limited, stopped_at = True, time.monotonic()
                    stop()
    finally:
        streams.close()
        pipes.inputs, pipes.outputs = {}, {}
    result.outputs = {name: b"".join(parts) for name, parts in streams.chunks.items()}
    return result


class _Streams:
    """The pump's state: inputs still to write, outputs still open, what each has given."""

    def __init__(self, pipes: JobPipes, cap: int):
        self.selector, self.cap = selectors.DefaultSelector(), cap
        self.pending = {fd: memoryview(data) for fd, data in pipes.inputs.items()}
        self.names = {fd: name for name, fd in pipes.outputs.items()}
        self.chunks: dict[str, list[bytes]] = {name: [] for name in pipes.outputs}
        self.sizes = dict.fromkeys(pipes.outputs, 0)
        self.all_outputs = list(self.names)
        for fd in self.pending:
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_WRITE)
        for fd in self.names:
            self.selector.register(fd, selectors.EVENT_READ)

    def move(self, fd: int) -> bool:
        """Write to or read from `fd`, whichever it is; True when an output passed the cap."""
        if fd in self.pending:
            self._feed(fd)
            return False
        return self._drain(fd)

    def _feed(self, fd: int) -> None:
        """Write the next piece of one input; close it when done or when the reader is gone."""
        try:
            written = os.write(fd, self.pending[fd][:_CHUNK])
            self.pending[fd] = self.pending[fd][written:]
            done = not self.pending[fd]
        except BrokenPipeError:  # the job does not read this input (or has ended): fine
            done = True
        if done:
            self.selector.unregister(fd)
            del self.pending[fd]
            os.close(fd)

    def _drain(self, fd: int) -> bool:
        """Read what one output has; keep at most `cap` bytes of it. Did it pass the cap?"""
        data = os.read(fd, _CHUNK)
        name = self.names[fd]
        if not data:
            self.selector.unregister(fd)
            del self.names[fd]
            return False
        room = self.cap - self.sizes[name]
        if room > 0:
            self.chunks[name].append(data[:room])
        self.sizes[name] += len(data)
        return self.sizes[name] > self.cap

    def close(self) -> None:
        """Close the selector and every parent end still open (inputs close as they finish)."""
        self.selector.close()
        for fd in [*self.pending, *self.all_outputs]:
            os.close(fd)
