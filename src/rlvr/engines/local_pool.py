"""The in-process engine's sampling spread over local processes that share the model's memory.

Why: on a CPU, a decode step of a small model is ~180 small kernels, and OpenMP's fork and
join between them costs as much as the second thread gains (benchmarks/README.md, "decode
op by op"): workload 1's step takes about as long on one thread as on two. Two processes of
one thread each, each decoding half the rows, run side by side instead
(`benchmarks/engine_throughput.py --workers 2`). That is `orchestrate.rollout_workers = N`
with `orchestrate.backend = "local"`.

How: the model's parameters and buffers move to shared memory (`torch.Tensor.share_memory_`,
in place: the trainer's tensors stay the same objects, so a sync run's in-place optimizer
steps reach the workers with no copy), and N worker processes each hold an `HFEngine` over
those same tensors with `threads // N` intra-op threads. The first one-thread workers are
forked from this process when the engine is built (`start_method`), so torch's and
transformers' import-time heap is shared copy-on-write rather than imported again (~30 MiB of
a worker's own against ~300 MiB started fresh); any other start (more threads, a replacement,
new storage) is a fresh interpreter (`spawn`, a few seconds). Each call is
split as `RayEngine` splits it (`split_rows`: one chunk per worker, each chunk its own seed
drawn from this engine's generator), so the generator's state still decides every rollout,
and a chunk redone on a fresh worker is the same chunk. A worker that dies is replaced and its
chunk redone once; a second death in one call raises. The workers' decode steps beat the
watchdog's stage in this process (through a shared counter), so a worker that hangs stops
the beats and the run's watchdog reports it.

What changes against one process: the rollouts (another seed per chunk, and one thread's
GEMMs round differently from two), not their distribution. What it costs: each worker's
start and its own memory beside the shared weights (benchmarks/README.md, "local rollout
workers", gives the process tree's peak). A parameter whose storage is replaced
(`param.data = ...`, a checkpoint loaded with `assign=True`) is noticed before the next call,
and the workers are restarted on the new storage. A worker dies with this process (Linux's
parent-death signal, and an idle worker's check of its parent), and a forked one closes its
copy of the run folder's lock (rlvr.orchestrate.run_folder). A run closes the engine when it
ends (`Engine.close`).

Known, untraced: a pooled exact-async run that evaluates during training
(`eval.every`) did not repeat itself in 3 of 14 runs of the same test (one process: 6 of 6
repeated; pooled without evaluation: 6 of 6); tests/orchestrate/test_local_pool_run.py checks
exact async without evaluation.

Not built: in-flight weight updates (a chunk is one request), CUDA models, LoRA policies,
FSDP (the config refuses these, config/coherence_run.py). Since a replacement worker starts
with `spawn`, a user's script that builds this engine must keep its top-level work under
`if __name__ == "__main__":`, as with any `spawn` start.
"""

from __future__ import annotations

import ctypes
import os
import queue
import signal
import threading
import traceback
import weakref
from collections.abc import Callable, Sequence

import torch
import torch.multiprocessing as mp
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from rlvr import heartbeat
from rlvr.engines.base import SamplingParams, split_rows
from rlvr.engines.hf import HFEngine
from rlvr.errors import RlvrError
from rlvr.types import Rollout

_POLL_S = 0.25  # how often the caller looks at a waiting worker's beats and liveness
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


class _Beats:
    """A heartbeat stage for a worker's thread: each `beat()` there counts in shared memory."""

    def __init__(self, counter):
        self.counter = counter

    @property
    def since(self) -> float:
        return 0.0

    @since.setter
    def since(self, _value: float) -> None:
        self.counter.value += 1


def start_method(threads: int, first: bool) -> str:
    """`fork` for the engine's first one-thread workers, started from the main thread when the
    engine is built: they share this process's pages (torch's and transformers' ~300 MiB of
    import-time heap) copy-on-write instead of importing their own. Otherwise `spawn`: GNU
    OpenMP cannot run a team of threads in a forked child of a process that used one (it hangs);
    a later fork would share the trainer's heap (optimizer state, gradients), whose every page
    the trainer then writes is copied; and a fork from another thread copies only that one."""
    main = threading.current_thread() is threading.main_thread()
    return "fork" if threads == 1 and first and main else "spawn"


def _die_with(parent: int) -> None:
    """Linux: the kernel kills this process when its parent thread ends (a kill -9 of the run,
    the watchdog's os._exit): an orphaned worker would hold its memory, or spin if it hung."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # not Linux: the request loop's check of the parent still ends an idle worker
    if os.getppid() != parent:  # the parent went before the request above took effect
        os._exit(0)


def _worker_main(model, tokenizer, engine_kw: dict, threads: int, parent: int, requests, replies, beats) -> None:
    _die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle; it stops us
    for inherited in (signal.SIGTERM, signal.SIGUSR1):  # a fork keeps the run's own handlers
        signal.signal(inherited, signal.SIG_DFL)
    torch.set_num_threads(threads)
    heartbeat.set_current(_Beats(beats))
    engine = HFEngine(model, tokenizer, **engine_kw)
    # The caller writes the shared tensors in place: "loading" them as they are sets the
    # version and drops the joined copies, whose own check (this process's version counters,
    # which the caller's writes do not move) cannot see those writes.
    shared = engine.model.state_dict()
    replies.put(("ready", True))
    while True:
        try:
            request = requests.get(timeout=1.0)
        except queue.Empty:
            if os.getppid() != parent:
                return
            continue
        if request is None:
            return
        rows, params, seed, version = request
        try:
            engine.generator.manual_seed(seed)
            engine.load_weights(shared, version)
            replies.put(("ok", engine.generate_ids(rows, params)))
        except Exception as e:  # noqa: BLE001 - sent to the caller, which raises it
            replies.put(("error", f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))


class _Worker:
    def __init__(self, ctx, index: int, model, tokenizer, engine_kw: dict, threads: int):
        self.index = index
        self.requests, self.replies = ctx.Queue(), ctx.Queue()
        self.beats = ctx.RawValue("Q", 0)
        self.process = ctx.Process(target=_worker_main, name=f"rlvr-rollout-{index}", daemon=True,
                                   args=(model, tokenizer, engine_kw, threads, os.getpid(), self.requests,
                                         self.replies, self.beats))
        self.process.start()

    def stop(self, graceful: bool = True) -> None:
        """Ask the worker to exit and wait up to 5 s; without `graceful` (an interrupted call:
        the worker may be mid-chunk or hung), kill it at once."""
        if graceful and self.process.is_alive():
            try:
                self.requests.put(None)
            except (OSError, ValueError):
                pass
            self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)

    def wait(self, expect: str, what: str):
        """The worker's next reply, which must be of kind `expect`; None when the process died
        first. Beats the caller's stage while the worker's own beats advance."""
        seen = self.beats.value
        while True:
            try:
                kind, value = self.replies.get(timeout=_POLL_S)
            except queue.Empty:
                if not self.process.is_alive():
                    return None
                if self.beats.value != seen:
                    seen = self.beats.value
                    heartbeat.beat()
                continue
            if kind == "error":
                raise RlvrError(f"rollout worker {self.index} (pid {self.process.pid}) failed {what}: {value}")
            if kind != expect:
                raise RlvrError(f"rollout worker {self.index} answered {kind!r} where {expect!r} was due ({what})")
            return value


def _await_ready(worker: _Worker) -> None:
    if worker.wait("ready", "to start") is None:
        raise RlvrError(f"rollout worker {worker.index} exited with code {worker.process.exitcode} while starting")


def _stop_all(workers: list[_Worker], graceful: bool = True) -> None:
    for w in workers:
        w.stop(graceful)


class LocalPoolEngine(HFEngine):
    """`HFEngine`'s contract, its rows sampled by `workers` local processes over shared weights."""

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, *, workers: int = 2, seed: int = 0,
                 threads: int | None = None, max_batch: int = 1024, fast_decode: bool = True,
                 stop_ids: Sequence[int] | None = None, share_prefill: bool = True, compile_decode: bool = False):
        if workers < 1:
            raise ValueError(f"LocalPoolEngine needs workers >= 1, got {workers}")
        if next(model.parameters()).device.type != "cpu":
            raise RlvrError("LocalPoolEngine samples on the CPU: the model is on "
                            f"{next(model.parameters()).device} (use HFEngine there)")
        super().__init__(model, tokenizer, seed=seed, max_batch=max_batch, fast_decode=fast_decode,
                         stop_ids=stop_ids, share_prefill=share_prefill, compile_decode=compile_decode)
        self.n_workers = workers
        # threads: each worker's intra-op threads; by default this process's, shared out.
        self.threads = threads if threads is not None else max(1, torch.get_num_threads() // workers)
        self._engine_kw = {"max_batch": max_batch, "fast_decode": fast_decode, "stop_ids": self.stop_ids,
                           "share_prefill": share_prefill, "compile_decode": compile_decode}
        self._workers: list[_Worker] = []
        self._storage: tuple[int, ...] = ()  # the data pointers the workers were started on
        self.restarts = 0  # workers replaced after dying (a metric)
        self._finalizer = weakref.finalize(self, _stop_all, self._workers)
        # Now, before the run builds its trainer and starts its threads (start_method).
        self._ensure_workers()

    def accept_inflight_weights(self, poll: Callable[[], tuple[dict, int] | None]) -> None:
        raise NotImplementedError("LocalPoolEngine cannot take weights during a generation: each chunk is one request")

    def close(self, graceful: bool = True) -> None:
        """Stop the worker processes now (they also stop when this process exits, or is
        killed); the next call starts fresh ones. `graceful=False` kills them at once."""
        _stop_all(self._workers, graceful)
        self._workers.clear()

    def stats(self) -> dict[str, float]:
        return {"engine/worker_restarts": float(self.restarts)}

    def _tensors(self) -> list[torch.Tensor]:
        return [*self.model.parameters(), *self.model.buffers()]

    def _ensure_workers(self) -> None:
        storage = tuple(t.data_ptr() for t in self._tensors())
        if self._workers and storage == self._storage and all(w.process.is_alive() for w in self._workers):
            return
        first = not self._storage
        if self._workers and storage == self._storage:
            self.restarts += 1  # a worker died between calls
        self.close()
        self.model.share_memory()  # in place; tensors already shared stay where they are
        self._storage = tuple(t.data_ptr() for t in self._tensors())
        ctx = mp.get_context(start_method(self.threads, first))
        self._workers.extend(self._start(ctx, i) for i in range(self.n_workers))  # all start, then all are awaited
        try:
            for w in self._workers:
                _await_ready(w)
        except BaseException:
            self.close(graceful=False)
            raise

    def _start(self, ctx, index: int) -> _Worker:
        return _Worker(ctx, index, self.model, self.tokenizer, self._engine_kw, self.threads)

    def _sample(self, rows: list[list[int]], params: SamplingParams) -> list[Rollout]:
        try:
            self._ensure_workers()
            chunks, seeds = split_rows(rows, self.n_workers, self._generator)
            for w, chunk, seed in zip(self._workers, chunks, seeds):
                w.requests.put((chunk, params, seed, self._version))
            flat: list[Rollout] = []
            for i, (chunk, seed) in enumerate(zip(chunks, seeds)):
                flat.extend(self._collect(i, chunk, seed, params))
            return flat
        except BaseException:
            # Replies still on their way would answer the next call, and a hung worker would
            # hold a graceful stop for its 5 s: kill them all and start clean next time.
            self.close(graceful=False)
            raise

    def _collect(self, i: int, chunk: list[list[int]], seed: int, params: SamplingParams) -> list[Rollout]:
        """Worker i's rollouts of its chunk; a worker that died is replaced and the chunk redone
        (same seed, so the same rollouts) once."""
        result = self._workers[i].wait("ok", "a generation")
        if result is not None:
            return result
        self._workers[i].stop(graceful=False)
        self._workers[i] = self._start(mp.get_context(start_method(self.threads, first=False)), i)
        self.restarts += 1
        _await_ready(self._workers[i])
        self._workers[i].requests.put((chunk, params, seed, self._version))
        result = self._workers[i].wait("ok", "a generation")
        if result is None:
            raise RlvrError(f"rollout worker {i} died twice in one generation "
                            f"(exit code {self._workers[i].process.exitcode})")
        return result
