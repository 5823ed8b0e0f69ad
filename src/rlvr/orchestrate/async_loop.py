"""The asynchronous loop: a producer thread generates ahead while the trainer trains.

Admission control, not dropping: batch i (0-based) may start generating only once the
trainer has finished step i - max_staleness, so every batch is at most `max_staleness` policy
versions old when it is trained on, and no rollout is ever thrown away for being stale (that
would bias training against long, hard prompts). The objective's importance ratio uses the
engine's own sampling log-probs, so the stale batch is corrected like any off-policy batch.

Weights reach the engine between batches: the trainer leaves a copy of its newest weights, and
the producer loads it before it draws the next batch. With `orchestrate.inflight_updates`
(PipelineRL) the engine also takes them between decode steps of a running generation, so a
long completion continues under the newer weights; each token records the version that
produced it and its own log-prob (see `rlvr.engines.hf`), which the objective uses as the
behaviour log-prob. Without it every token of a batch comes from one policy version.

With max_staleness = 0 the producer waits for each step's weights, and the run is the
synchronous one, step for step and bit for bit with the same seed.
"""

from __future__ import annotations

import threading
import time
from collections import deque

from rlvr.orchestrate.sync import Produced, SyncLoop
from rlvr.train.lora import engine_weights


class AsyncLoop(SyncLoop):
    overlapped = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cond = threading.Condition()
        self.ready: deque[Produced] = deque()
        self.pending_states: deque[dict] = deque()  # loop state before each unconsumed batch
        self.new_weights: tuple[dict, int] | None = None
        # The newest version handed to the engine side. Admission waits on it, not on the step
        # counter: the trainer increments the step before it copies the weights out, and a
        # producer admitted in between would sample from weights older than the bound allows.
        self.pushed_version = 0
        self.error: BaseException | None = None
        self.stopping = False
        self.engine_lock = threading.Lock()
        if self.config.orchestrate.inflight_updates:
            self.parts.engine.accept_inflight_weights(self._pop_new_weights)

    @property
    def max_staleness(self) -> int:
        return self.config.orchestrate.max_staleness

    def sync_weights(self) -> None:
        weights = {k: v.detach().clone() for k, v in engine_weights(self.parts.model).items()}
        with self.cond:
            self.new_weights = (weights, self.step)
            self.pushed_version = self.step
            self.cond.notify_all()

    def next_batch_state(self) -> dict:
        with self.cond:
            return self.pending_states[0] if self.pending_states else self.loop_state()

    def evaluate(self, size: int | None = None) -> float:
        with self.engine_lock:
            self._load_new_weights()
            return super().evaluate(size)

    def _pop_new_weights(self) -> tuple[dict, int] | None:
        with self.cond:
            pending, self.new_weights = self.new_weights, None
        return pending

    def _load_new_weights(self) -> None:
        pending = self._pop_new_weights()
        if pending is not None:
            self.parts.engine.load_weights(pending[0], version=pending[1])

    def _produce_forever(self, first_batch: int) -> None:
        try:
            i = first_batch
            while True:
                with self.cond:
                    # Admission: batch i needs the weights of step i - k; also stop at the end.
                    self.cond.wait_for(lambda: self.stopping or self.pushed_version >= i - self.max_staleness)
                    if self.stopping or i >= self.config.train.steps:
                        return
                    self.pending_states.append(self.loop_state())
                with self.engine_lock:
                    with self.watchdog.stage("sync", i + 1):  # batch i is trained at step i + 1
                        self._load_new_weights()
                    produced = self.produce(step=i + 1)
                with self.cond:
                    self.ready.append(produced)
                    self.cond.notify_all()
                i += 1
        except BaseException as e:  # handed to the trainer thread, which re-raises it
            with self.cond:
                self.error = e
                self.cond.notify_all()

    def train_step(self) -> dict[str, float]:
        t0 = time.perf_counter()
        with self.cond:
            self.cond.wait_for(lambda: self.ready or self.error is not None)
            if self.error is not None:
                raise self.error
            produced = self.ready.popleft()
            self.pending_states.popleft()
        return self.consume(produced, wait_s=time.perf_counter() - t0)

    def _run(self, display, board) -> None:
        self.pushed_version = self.step  # the engine holds this step's weights (resume synced them)
        producer = threading.Thread(target=self._produce_forever, args=(self.step,), daemon=True,
                                    name="rlvr-producer")
        producer.start()
        try:
            super()._run(display, board)
        finally:
            with self.cond:
                self.stopping = True
                self.cond.notify_all()
            if self.watchdog.stalled is None:  # a stalled producer may never return
                producer.join()
