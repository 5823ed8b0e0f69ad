"""Producers: where the loop takes its scored batches from, and where it hands new weights.

The loop (orchestrate/loop.py) is the same for every way of producing rollouts; only the
producer differs:

- `SyncProducer`: generate with the weights of the last step, then train (on-policy).
- `AsyncProducer`: a thread generates ahead while the trainer trains, at most
  `orchestrate.max_staleness` policy versions behind; with `orchestrate.inflight_updates`
  (PipelineRL) the engine also takes new weights between decode steps of a generation, and
  an environment run between the turns of its episodes (each token keeps its version).

Ray rollout workers are an engine (engines/ray_engine.py) behind either producer. A new way of
producing rollouts is a new `Producer` and an entry in `PRODUCERS`, never a change to the loop.
"""

from __future__ import annotations

import abc
import threading
import time
from collections import deque
from contextlib import contextmanager
from typing import Callable, Iterator

from rlvr import names
from rlvr.engines import Engine
from rlvr.orchestrate.rollouts import Produced, Source
from rlvr.orchestrate.watchdog import Watchdog


class Producer(abc.ABC):
    """Scored batches out, in training order; the trainer's weights in."""

    def __init__(self, source: Source, engine: Engine, watchdog: Watchdog, *, max_staleness: int = 0,
                 inflight_updates: bool = False, steps: int):
        self.source, self.engine, self.watchdog, self.steps = source, engine, watchdog, steps

    def start(self, step: int, weights: "Callable[[], dict] | None" = None) -> None:
        """The engine holds the weights of `step` (the run starts or resumes there); `weights`
        gives the trainer's copy of them, for a producer that keeps past versions."""

    def load_state(self, state: dict, checkpoint) -> None:
        """Restore what `next_state` saved (a resume)."""
        self.source.load_state(state, checkpoint)

    @abc.abstractmethod
    def next(self, step: int) -> Produced:
        """The scored batch that training step `step` trains on (blocks until it exists)."""

    @abc.abstractmethod
    def publish(self, weights: dict, version: int) -> None:
        """The trainer's weights after step `version`, for the batches drawn from now on."""

    @abc.abstractmethod
    def next_state(self) -> dict:
        """The rollout source's state before the next batch the trainer will take (what a
        checkpoint stores: resuming from it redraws that batch)."""

    @abc.abstractmethod
    def engine_for_eval(self) -> "contextmanager[Engine]":
        """The engine with the newest weights, not generating anything else meanwhile."""

    def close(self, wait: bool = True) -> None:
        """Stop producing and close the source (the run ended or stopped; `wait` False: it
        failed or was interrupted, so do not wait for a generation in flight)."""
        self.source.close()


class SyncProducer(Producer):
    """Each batch is drawn when the trainer asks for it, with the newest weights."""

    def next(self, step: int) -> Produced:
        produced = self.source.draw(step)
        produced.wait_s = produced.generate_s + produced.score_s  # the step is generation + training
        return produced

    def publish(self, weights: dict, version: int) -> None:
        self.engine.load_weights(weights, version=version)

    def next_state(self) -> dict:
        return self.source.state()

    @contextmanager
    def engine_for_eval(self) -> Iterator[Engine]:
        yield self.engine


class AsyncProducer(Producer):
    """Admission control, not dropping: batch i (0-based) may start generating only once the
    trainer has finished step i - max_staleness, so every batch is at most `max_staleness`
    versions old when trained on, and no rollout is thrown away for being stale (that would
    bias training against long, hard prompts). The objective's ratio uses the engine's own
    sampling log-probs, so a stale batch is corrected like any off-policy batch. Weights reach
    the engine between batches (and, in flight, between decode steps; see engines/hf.py).
    With max_staleness = 0 the run is the synchronous one, bit for bit with the same seed."""

    def __init__(self, source, engine, watchdog, *, max_staleness: int = 0, inflight_updates: bool = False,
                 steps: int):
        super().__init__(source, engine, watchdog, steps=steps)
        self.max_staleness = max_staleness
        self.cond = threading.Condition()
        self.ready: deque[Produced] = deque()
        self.pending_states: deque[dict] = deque()  # the source's state before each unconsumed batch
        self.new_weights: tuple[dict, int] | None = None
        # The newest version handed over. Admission waits on it, not on the trainer's step: a
        # batch admitted between the step's end and its weights' copy would be too old.
        self.pushed_version = 0
        self.error: BaseException | None = None
        self.stopping = False
        self.engine_lock = threading.Lock()
        self.thread: threading.Thread | None = None
        if inflight_updates:
            engine.accept_inflight_weights(self._pop_new_weights)  # between decode steps
            between_turns = getattr(source, "accept_inflight_weights", None)  # an EpisodeSource has it
            if between_turns is not None:
                between_turns(self._load_new_weights)  # and between an episode's turns

    def start(self, step: int, weights: Callable[[], dict] | None = None) -> None:
        self.pushed_version = step
        first = step + len(self.ready)  # batches restored by load_state are not drawn again
        self.thread = threading.Thread(target=self._produce_forever, args=(first,), daemon=True, name="rlvr-producer")
        self.thread.start()

    def next(self, step: int) -> Produced:
        t0 = time.perf_counter()
        with self.cond:
            self.cond.wait_for(lambda: self.ready or self.error is not None)
            if self.error is not None:
                raise self.error
            produced = self.ready.popleft()
            self.pending_states.popleft()
        produced.wait_s = time.perf_counter() - t0
        return produced

    def publish(self, weights: dict, version: int) -> None:
        copy = {k: v.detach().clone() for k, v in weights.items()}  # the trainer goes on updating its own
        with self.cond:
            self.new_weights = (copy, version)
            self.pushed_version = version
            self.cond.notify_all()

    def next_state(self) -> dict:
        with self.cond:
            return self.pending_states[0] if self.pending_states else self.source.state()

    @contextmanager
    def engine_for_eval(self) -> Iterator[Engine]:
        with self.engine_lock:
            self._load_new_weights()
            yield self.engine

    def close(self, wait: bool = True) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        # Not waited for: a stalled producer (it may never return), or a run that is failing or
        # interrupted (it writes no checkpoint, and the daemon thread ends with the process).
        if wait and self.thread is not None and self.watchdog.stalled is None:
            self.thread.join()
            self.source.close()
        elif self.thread is None or not self.thread.is_alive():
            # Nothing draws from the source any more (the producer failed, or never started):
            # close it now, so an environment's sandbox and step threads do not outlive the run.
            # A producer still drawing keeps it: closing the env pool under it would only add errors.
            self.source.close()

    def _pop_new_weights(self) -> tuple[dict, int] | None:
        with self.cond:
            pending, self.new_weights = self.new_weights, None
        return pending

    def _load_new_weights(self) -> None:
        pending = self._pop_new_weights()
        if pending is not None:
            self.engine.load_weights(pending[0], version=pending[1])

    def _produce_forever(self, first_batch: int) -> None:
        try:
            i = first_batch
            while self._admit(i):
                with self.engine_lock:  # an evaluation may hold the engine (and reseed its RNG)
                    with self.cond:
                        self.pending_states.append(self.source.state())
                    with self.watchdog.stage("sync", i + 1):  # batch i is trained at step i + 1
                        self._weights_for(i)
                    produced = self._drawn(self.source.draw(i + 1))
                with self.cond:
                    self.ready.append(produced)
                    self.cond.notify_all()
                i += 1
        except BaseException as e:  # handed to the trainer thread, which re-raises it
            with self.cond:
                self.error = e
                self.cond.notify_all()

    def _drawn(self, produced: Produced) -> Produced:
        """A batch just drawn (a subclass adds what it measured)."""
        return produced

    def _weights_for(self, i: int) -> None:
        """Before batch i: the newest weights handed over, whichever they are."""
        self._load_new_weights()

    def _admit(self, i: int) -> bool:
        """Wait until batch i may start (the weights of step i - k exist); False: stop."""
        with self.cond:
            self.cond.wait_for(lambda: self.stopping or self.pushed_version >= i - self.max_staleness)
            return not (self.stopping or i >= self.steps)


PRODUCERS: dict[str, type[Producer]] = names.ORCHESTRATE_MODE.bind({"sync": SyncProducer, "async": AsyncProducer},
                                                                   table="PRODUCERS")
