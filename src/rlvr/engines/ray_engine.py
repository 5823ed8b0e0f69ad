"""An engine whose rollouts are made by Ray actors, each holding an in-process HF engine.

The driver splits each `generate` (and `generate_ids`: token-id rows, as multi-turn episodes
send them) call into one chunk per worker and gives every chunk its own
sampling seed drawn from the driver's generator. A chunk's result therefore does not depend on
which worker ran it, so when a worker dies its chunk is redone on a fresh worker with the same
seed: nothing is lost, nothing is counted twice, and the run is the one it would have been.

A worker that stops answering is replaced the same way: with `chunk_timeout_s` (the run's
`run.stall_timeout_s`), a chunk still running that long after it was sent has its worker killed
and is redone on a fresh one (`engine/worker_stalls`). While every chunk is inside its time the
driver beats the watchdog's "generate" stage (rlvr.heartbeat); a chunk that stalls again on
its fresh worker gets no second replacement (the chunk is deterministic, so it would stall
forever): the beats stop, and the run's watchdog reports the step and fails. A fresh worker's
start (process, model load) counts in its first chunk's time: the default 30 minutes cover it.

Weights go through Ray's object store: `load_weights` puts the state dict once, and every
worker loads it before its next chunk. (Across GPUs NCCL would be the faster path; not built.)
With LoRA the state dict is the adapters only, and each worker wraps its model the same way.

The stop ids (EOS, the generation config's EOS ids, the chat template's end-of-turn token) are
computed once in the driver, from the driver's tokenizer, and handed to every worker: a worker
loads its tokenizer from the model folder, which does not hold a template that
`model.chat_template` gave as a file, so its own reading would miss that template's end of turn.
"""

from __future__ import annotations

import time

import torch

from rlvr import heartbeat
from rlvr.engines.base import HeldStateEngine, SamplingParams, check_rows, split_rows
from rlvr.engines.stop_tokens import folder_stop_ids
from rlvr.errors import RlvrError
from rlvr.types import Rollout


def _ray():
    try:
        import ray
    except ImportError:
        raise RlvrError("orchestrate.backend = 'ray' needs Ray: pip install 'rlvr[ray]'") from None
    return ray


class RolloutWorker:
    """Runs in a Ray actor: loads the model from a local folder and samples on request."""

    def __init__(self, model_path: str, dtype: str, threads: int, fp32_head: bool = True, prepare=None,
                 stop_ids: tuple[int, ...] | None = None):
        from rlvr.engines.hf import HFEngine
        from rlvr.engines.loading import load_model, load_tokenizer

        torch.set_num_threads(threads)
        model = load_model(model_path, dtype, fp32_head)
        # `prepare` (e.g. LoRA wrapping, rlvr.train.lora.engine_model) makes the worker's model
        # the same shape as the trainer's, so the trainer's (adapter-only) weights fit it.
        self.engine = HFEngine(prepare(model) if prepare is not None else model, load_tokenizer(model_path),
                               stop_ids=stop_ids)  # None: the worker reads them from its own folder

    def generate(self, rows: list[list[int]], params: SamplingParams, seed: int,
                 weights: dict | None, version: int) -> list[Rollout]:
        if weights is not None:
            self.engine.load_weights(weights, version)
        self.engine.generator.manual_seed(seed)
        return self.engine.generate_ids(rows, params)

    def stop_ids(self) -> tuple[int, ...]:
        return self.engine.stop_ids

    def pid(self) -> int:
        import os

        return os.getpid()


class RayEngine(HeldStateEngine):
    def __init__(self, model_path: str, tokenizer, *, dtype: str = "float32", fp32_head: bool = True,
                 workers: int = 1, address: str = "auto", seed: int = 0, threads_per_worker: int = 1,
                 prepare_model=None, chunk_timeout_s: float = 0.0, stop_ids: tuple[int, ...] | None = None):
        ray = _ray()
        if not ray.is_initialized():
            try:
                ray.init(address=address, log_to_driver=False)
            except ConnectionError:
                raise RlvrError(f"no Ray cluster at orchestrate.ray_address = {address!r}: "
                                "start one with `ray start --head`") from None
        self.ray, self.tokenizer = ray, tokenizer
        self._generator = torch.Generator().manual_seed(seed)
        self._actor = ray.remote(num_cpus=0)(RolloutWorker)
        # `stop_ids` None: read here from the driver's tokenizer (its template set) and the folder's generation config.
        self.stop_ids = tuple(stop_ids) if stop_ids is not None else folder_stop_ids(tokenizer, model_path)
        self._spec = (model_path, dtype, threads_per_worker, fp32_head, prepare_model, self.stop_ids)
        self.workers = [self._spawn() for _ in range(workers)]
        self.worker_versions = [0] * workers  # the version each worker holds (0: the folder's)
        self.weights_ref, self._version = None, 0
        self.restarts = 0  # workers replaced after dying (a metric)
        self.chunk_timeout_s = chunk_timeout_s  # 0: wait for a chunk forever
        self.stalls = 0  # workers replaced because their chunk ran past chunk_timeout_s (a metric)

    def _spawn(self):
        return self._actor.remote(*self._spec)

    def load_weights(self, state_dict: dict[str, torch.Tensor], version: int) -> None:
        self.weights_ref = self.ray.put({k: v.detach().cpu() for k, v in state_dict.items()})
        self._version = version

    def generate(self, prompts: list[str], n: int, params: SamplingParams) -> list[list[Rollout]]:
        encoded = [self.tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
        for i, ids in enumerate(encoded):
            if not ids:
                raise ValueError(f"prompt {i} is empty after tokenisation")
        rows = [ids for ids in encoded for _ in range(n)]
        flat = self.generate_ids(rows, params)
        return [flat[i * n:(i + 1) * n] for i in range(len(prompts))]

    def generate_ids(self, rows: list[list[int]], params: SamplingParams) -> list[Rollout]:
        """The rows, split into one chunk per worker, go to the workers as they are (the
        workers' HFEngine.generate_ids samples from them: no tokeniser on the way); each
        rollout carries the version of the weights its worker loaded for this call."""
        check_rows(rows)
        if not rows:
            return []
        chunks, seeds = split_rows(rows, len(self.workers), self._generator)
        flat: list[Rollout] = []
        for rollouts in self._run_chunks(chunks, seeds, params):
            flat.extend(rollouts)
        return flat

    def _run_chunks(self, chunks, seeds, params) -> list[list[Rollout]]:
        """Run chunk i on worker i; a chunk whose worker died, or stalled (once), is redone on
        a replacement at once. Chunk i's time runs from its first send (a stall replacement
        restarts it, a crash replacement does not, so a crash loop cannot beat forever)."""
        results: list[list[Rollout] | None] = [None] * len(chunks)

        def send(i: int):
            return self.workers[i].generate.remote(chunks[i], params, seeds[i], self._weights_for(i), self._version)

        waiting = {send(i): i for i in range(len(chunks))}
        deadline = {i: time.monotonic() + self.chunk_timeout_s for i in range(len(chunks))}
        stalled_before: set[int] = set()
        poll = min(1.0, self.chunk_timeout_s / 4) if self.chunk_timeout_s else None  # beats well inside the timeout
        while waiting:
            ready, _ = self.ray.wait(list(waiting), num_returns=1, timeout=poll)
            for ref in ready:
                i = waiting.pop(ref)
                if not self._take(i, ref, results):
                    waiting[send(i)] = i
            now = time.monotonic()
            for ref, i in list(waiting.items()):
                if self.chunk_timeout_s and now > deadline[i] and i not in stalled_before:
                    self._replace_stalled(i)
                    stalled_before.add(i)
                    del waiting[ref]
                    waiting[send(i)] = i
                    deadline[i] = now + self.chunk_timeout_s
            if not self.chunk_timeout_s or all(now <= deadline[i] for i in waiting.values()):
                heartbeat.beat()  # every chunk still running is inside its time
        return results

    def _take(self, i: int, ref, results: list) -> bool:
        try:
            results[i] = self.ray.get(ref)
        except self.ray.exceptions.RayActorError:
            self.workers[i] = self._spawn()
            self.worker_versions[i] = 0
            self.restarts += 1
            return False
        self.worker_versions[i] = self._version
        return True

    def _replace_stalled(self, i: int) -> None:
        self.ray.kill(self.workers[i], no_restart=True)
        self.workers[i] = self._spawn()
        self.worker_versions[i] = 0
        self.stalls += 1

    def _weights_for(self, i: int):
        """Send the weights only to a worker that does not hold this version yet."""
        return None if self.worker_versions[i] == self._version else self.weights_ref

    def stats(self) -> dict[str, float]:
        return {"engine/worker_restarts": float(self.restarts), "engine/worker_stalls": float(self.stalls)}
