"""Answer checked completion requests with one causal LM (`rlvr.engines.HFEngine`)."""

from __future__ import annotations

import threading
import time
import uuid

import torch

from rlvr.engines import HFEngine, SamplingParams
from rlvr.serve.completions import BadRequest, CompletionRequest
from rlvr.types import Rollout


class ModelService:
    """One model behind a lock: requests are answered one at a time, in arrival order."""

    def __init__(self, model, tokenizer, name: str, *, seed: int = 0):
        self.engine = HFEngine(model, tokenizer, seed=seed)
        self.model, self.tokenizer, self.name = self.engine.model, tokenizer, name
        self.vocab_size = int(self.model.config.vocab_size)
        self.lock = threading.Lock()

    def models(self) -> dict:
        return {"object": "list", "data": [{"id": self.name, "object": "model", "created": 0, "owned_by": "rlvr"}]}

    def complete(self, req: CompletionRequest) -> dict:
        params = SamplingParams(max_new_tokens=req.max_tokens, temperature=req.temperature,
                                top_p=req.top_p, stop=req.stop)
        with self.lock:
            if req.seed is not None:
                self.engine.generator.manual_seed(req.seed % (1 << 63))
            try:
                groups = self.engine.generate(list(req.prompts), req.n, params)
            except ValueError as e:  # the engine's context check names the prompt
                raise BadRequest(str(e), "prompt") from None
            flat = [r for g in groups for r in g]
            choices = [self._choice(i, r, req.logprobs) for i, r in enumerate(flat)]
        prompt_tokens = sum(len(g[0].prompt_ids) for g in groups)
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
        tail = ids[-1:] if ids and ids[-1] == self.engine.eos_id else []
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
