"""The engine worker: a bounded queue of encoded requests, answered in batches by one thread.

Handlers `submit` a request and await its future. One asyncio task takes the oldest waiting
request, adds every later waiting request with the same batch key (equal max_tokens,
temperature, top_p, stop; see Encoded.batch_key) until `max_batch_rows` rows, optionally waits
`batch_wait_s` for more, and runs the batch on the engine thread. Requests with other keys keep
their place for the next batch, so nothing waits behind more than one batch of later arrivals.

Bounds: more than `queue_size` waiting requests is a 503 (Retry-After). A request past its
deadline is answered 504 by its handler and marked abandoned: it is skipped if it has not
started, and a running batch whose requests are all abandoned stops at the next decode step.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

from rlvr.serve.completions import BadRequest
from rlvr.serve.limits import ServeLimits
from rlvr.serve.model_service import Abandoned, Encoded, ModelService


@dataclass(eq=False)
class Job:
    encoded: Encoded
    future: asyncio.Future
    deadline: float  # time.monotonic()
    abandoned: bool = False  # set by the handler's loop, read by the engine thread


@dataclass
class WorkerStats:
    """Counters served at GET /v1/stats (what the caps refused, how well batching packs)."""
    answered: int = 0
    batches: int = 0
    rejected_queue_full: int = 0
    timed_out: int = 0
    batches_stopped: int = 0
    engine_errors: int = 0
    largest_batch: int = 0


class EngineWorker:
    def __init__(self, service: ModelService, limits: ServeLimits):
        self.service, self.limits = service, limits
        self.waiting: deque[Job] = deque()
        self.stats = WorkerStats()
        self._arrived = asyncio.Event()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rlvr-engine")

    def refuse_if_full(self) -> None:
        """BadRequest 503 when `queue_size` requests wait (also called before tokenising)."""
        if len(self.waiting) >= self.limits.queue_size:
            self.stats.rejected_queue_full += 1
            raise BadRequest(f"the server is busy ({len(self.waiting)} requests waiting); retry shortly",
                             status=503, code="queue_full")

    async def answer(self, encoded: Encoded, arrived: float) -> dict:
        """The response for `encoded`, or BadRequest 503 (queue full) / 504 (past the deadline)."""
        self.refuse_if_full()
        job = Job(encoded, asyncio.get_running_loop().create_future(), arrived + self.limits.request_timeout_s)
        self.waiting.append(job)
        self._arrived.set()
        try:
            return await asyncio.wait_for(asyncio.shield(job.future), max(0.0, job.deadline - time.monotonic()))
        except asyncio.TimeoutError:  # a distinct class before Python 3.11
            job.abandoned = True  # a running batch stops at its next decode step
            if job in self.waiting:  # not started: free its place, or dead jobs fill the queue (503)
                self.waiting.remove(job)
            self.stats.timed_out += 1
            raise BadRequest(f"the request took over {self.limits.request_timeout_s:g} s and was dropped",
                             status=504, code="timeout") from None

    async def run(self) -> None:
        """The worker loop (one task for the server's lifetime)."""
        loop = asyncio.get_running_loop()
        while True:
            batch = await self._next_batch()
            if not batch:
                continue
            self.stats.batches += 1
            self.stats.largest_batch = max(self.stats.largest_batch, len(batch))
            try:
                results = await loop.run_in_executor(self._thread, self.service.run_batch,
                                                     [j.encoded for j in batch],
                                                     lambda: all(j.abandoned for j in batch))
            except Abandoned:
                self.stats.batches_stopped += 1
                continue
            except Exception as e:  # a bug in the engine must not end the worker; the clients see a 500
                self.stats.engine_errors += 1
                for job in batch:
                    _settle(job, error=BadRequest(f"the engine failed: {type(e).__name__}: {e}", status=500))
                continue
            self.stats.answered += sum(not j.abandoned for j in batch)  # a 504 already went to the rest
            for job, result in zip(batch, results):
                _settle(job, result=result)

    async def _next_batch(self) -> list[Job]:
        while not self.waiting:
            self._arrived.clear()
            await self._arrived.wait()
        if self.limits.batch_wait_s > 0:
            await asyncio.sleep(self.limits.batch_wait_s)
        self._drop_abandoned()
        if not self.waiting:
            return []
        head = self.waiting.popleft()
        batch, rows = [head], len(head.encoded.rows)
        key = head.encoded.batch_key
        if key is None:
            return batch
        kept: deque[Job] = deque()
        while self.waiting:
            job = self.waiting.popleft()
            size = len(job.encoded.rows)
            if job.encoded.batch_key == key and rows + size <= self.limits.max_batch_rows:
                batch.append(job)
                rows += size
            else:
                kept.append(job)
        self.waiting = kept
        return batch

    def _drop_abandoned(self) -> None:
        self.waiting = deque(j for j in self.waiting if not j.abandoned)

    def stats_dict(self) -> dict:
        return {**asdict(self.stats), "waiting": len(self.waiting)}

    def close(self) -> None:
        self._thread.shutdown(wait=False, cancel_futures=True)


def _settle(job: Job, *, result: dict | None = None, error: BadRequest | None = None) -> None:
    if not job.future.done() and not job.abandoned:  # an abandoned one has no reader left
        job.future.set_exception(error) if error is not None else job.future.set_result(result)
