"""Answer checked completion requests with one causal LM, through the engine its recipe's plan
chose (`rlvr serve` builds it: rlvr/cli/serve_command.py, orchestrate/model_parts.py).

`encode` tokenises a request and applies the token caps (a 400 before it waits for the model);
`run_batch` answers several encoded requests that share sampling settings with one engine call
(their rows concatenated, prompt by prompt, n each); `complete` is one request alone.
Batching does not change a request's answer beyond float noise: a greedy request's text is the
same, and its log-probs come from a forward pass over that request's own tokens (no padding).
Sampled requests with a `seed` always run alone, so the seed reproduces the same text.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import torch

from rlvr.engines import Engine, SamplingParams
from rlvr.serve.completions import BadRequest, CompletionRequest
from rlvr.types import Rollout


class Abandoned(Exception):
    """Raised between decode steps when every request of the running batch has timed out."""


@dataclass(frozen=True)
class Encoded:
    request: CompletionRequest
    prompt_ids: tuple[tuple[int, ...], ...]  # one per prompt

    @property
    def rows(self) -> list[list[int]]:
        return [list(ids) for ids in self.prompt_ids for _ in range(self.request.n)]

    @property
    def batch_key(self) -> tuple | None:
        """Requests with equal keys may share an engine call; None: this one runs alone."""
        r = self.request
        if r.seed is not None and r.temperature > 0:
            return None
        return (r.max_tokens, r.temperature, r.top_p, r.stop)


def _never() -> bool:
    return False


class ModelService:
    """One model; `run_batch` calls are serialised by a lock (the server calls it from one thread).
    `engine` generates (seeded by its builder); `model` (the same weights as a transformers
    model) scores the `logprobs` a request asks for; `max_batch`: rows per engine call."""

    def __init__(self, engine: Engine, model, tokenizer, name: str, *, max_request_tokens: int = 65536,
                 max_batch: int = 1024):
        self.engine, self.model, self.tokenizer, self.name = engine, model, tokenizer, name
        self.max_batch, self.eos_id = max_batch, tokenizer.eos_token_id
        self.vocab_size = int(self.model.config.vocab_size)
        self.context = getattr(self.model.config, "max_position_embeddings", None)
        self.max_request_tokens = max_request_tokens
        self.lock = threading.Lock()
        self._should_stop: Callable[[], bool] = _never
        # The engine asks this hook for new weights before every decode step (PipelineRL's
        # seam); it is the only point inside a generation where a batch can be dropped.
        self.engine.accept_inflight_weights(self._poll_stop)

    def models(self) -> dict:
        return {"object": "list", "data": [{"id": self.name, "object": "model", "created": 0, "owned_by": "rlvr"}]}

    def encode(self, req: CompletionRequest) -> Encoded:
        """Tokenise; BadRequest (400) when a prompt overflows the context or the request the cap."""
        encoded = tuple(tuple(self.tokenizer(p, add_special_tokens=False)["input_ids"]) for p in req.prompts)
        for i, ids in enumerate(encoded):
            if not ids:
                raise BadRequest(f"prompt {i} is empty after tokenisation", "prompt")
            if self.context is not None and len(ids) + req.max_tokens > self.context:
                raise BadRequest(f"prompt {i} has {len(ids)} tokens; with max_tokens={req.max_tokens} "
                                 f"it exceeds the model's context of {self.context}", "prompt")
        total = req.n * sum(len(ids) + req.max_tokens for ids in encoded)
        if total > self.max_request_tokens:
            raise BadRequest(f"the request asks for {total} tokens (n x (prompt tokens + max_tokens), over "
                             f"its prompts), over this server's cap of {self.max_request_tokens}",
                             "max_tokens", code="too_many_tokens")
        return Encoded(req, encoded)

    def complete(self, req: CompletionRequest) -> dict:
        return self.run_batch([self.encode(req)])[0]

    def run_batch(self, batch: list[Encoded], should_stop: Callable[[], bool] = _never) -> list[dict]:
        """One engine call for `batch` (equal batch keys); one response dict per request.
        `should_stop` is polled between decode steps; True raises Abandoned."""
        keys = {e.batch_key for e in batch}
        if len(batch) > 1 and (len(keys) > 1 or None in keys):
            raise ValueError(f"run_batch got requests that may not share a call: {keys}")
        first = batch[0].request
        params = SamplingParams(max_new_tokens=first.max_tokens, temperature=first.temperature,
                                top_p=first.top_p, stop=first.stop)
        rows = [row for e in batch for row in e.rows]
        with self.lock:
            self._should_stop = should_stop
            try:
                if first.seed is not None and first.temperature > 0:
                    self.engine.generator.manual_seed(first.seed % (1 << 63))
                flat = [r for start in range(0, len(rows), self.max_batch)
                        for r in self.engine.generate_ids(rows[start:start + self.max_batch], params)]
            finally:
                self._should_stop = _never
            out, at = [], 0
            for e in batch:
                out.append(self._response(e, flat[at:at + len(e.rows)]))
                at += len(e.rows)
        return out

    def _poll_stop(self) -> None:
        if self._should_stop():
            raise Abandoned("every request of the batch timed out")
        return None

    def _response(self, e: Encoded, flat: list[Rollout]) -> dict:
        choices = [self._choice(i, r, e.request.logprobs) for i, r in enumerate(flat)]
        prompt_tokens = sum(len(ids) for ids in e.prompt_ids)
        completion_tokens = sum(len(r.completion_ids) for r in flat)
        return {"id": f"cmpl-{uuid.uuid4().hex}", "object": "text_completion", "created": int(time.time()),
                "model": self.name, "choices": choices,
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}

    def _choice(self, index: int, r: Rollout, top: int | None) -> dict:
        return {"index": index, "text": r.text, "finish_reason": r.finish_reason,
                "logprobs": None if top is None else self._logprobs(r, top)}

    def reported_tokens(self, r: Rollout) -> list[int]:
        """The completion tokens behind `r.text`: a stop string's tokens are cut, an EOS kept."""
        ids = list(r.completion_ids)
        tail = ids[-1:] if ids and ids[-1] == self.eos_id else []
        body = ids[:len(ids) - len(tail)]
        while body and len(self.tokenizer.decode(body, skip_special_tokens=True)) > len(r.text):
            body.pop()
        return body + tail

    @torch.inference_mode()
    def _logprobs(self, r: Rollout, top: int) -> dict:
        ids = self.reported_tokens(r)
        device = next(self.model.parameters()).device
        full = torch.tensor([list(r.prompt_ids) + ids], device=device)
        logits = self.model(input_ids=full).logits[0, len(r.prompt_ids) - 1: -1].float()  # (T, V)
        logp = torch.log_softmax(logits, dim=-1)
        chosen = logp.gather(1, torch.tensor(ids, device=device, dtype=torch.long)[:, None])[:, 0]
        values, idx = logp.topk(top, dim=-1) if top else (logp[:, :0], logp[:, :0].long())
        tokens = [self.tokenizer.decode([t]) for t in ids]
        prompt_len = len(self.tokenizer.decode(list(r.prompt_ids)))
        offsets = [prompt_len + sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
        top_maps = [self._top_map(row_i.tolist(), row_v.tolist()) for row_i, row_v in zip(idx, values)]
        return {"tokens": tokens, "token_logprobs": chosen.tolist(), "top_logprobs": top_maps,
                "text_offset": offsets}

    def _top_map(self, ids: list[int], values: list[float]) -> dict[str, float]:
        """{token text: logprob}, most likely first; of two ids with one text the likelier wins."""
        out: dict[str, float] = {}
        for t, v in zip(ids, values):
            out.setdefault(self.tokenizer.decode([t]), v)
        return out
