"""The in-process judge: sampling with `rlvr.engines.HFEngine`, the verdict from one forward.

Imported only when `reward.judge.backend = "transformers"`. It lives in `orchestrate`, which
may use engines, so that `rlvr.rewards` stays free of model code. The judge model runs on the
CPU in float32, whatever `model.device` says (the policy's device is not the judge's business;
a large judge belongs behind the HTTP backend, on a server such as vLLM).
"""

from __future__ import annotations

import torch

from rlvr.engines import HFEngine, SamplingParams
from rlvr.errors import RewardError
from rlvr.rewards.judge.backend import JudgeBackend, ReasonParams


class TransformersJudgeBackend(JudgeBackend):
    """A causal LM in this process. `model` is put in eval mode and never trained."""

    def __init__(self, model, tokenizer, *, seed: int = 0):
        self.engine = HFEngine(model, tokenizer, seed=seed)
        self.model, self.tokenizer = self.engine.model, tokenizer

    def reason(self, text: str, k: int, params: ReasonParams) -> list[str]:
        sampling = SamplingParams(max_new_tokens=params.max_new_tokens, temperature=params.temperature,
                                  stop=params.stop)
        try:
            group = self.engine.generate([text], k, sampling)[0]
        except ValueError as e:  # the engine's context check
            raise RewardError(f"judge: {e}") from None
        return [r.text for r in group]

    @torch.inference_mode()
    def next_token_logprobs(self, texts: list[str], top: int) -> list[list[tuple[str, float]]]:
        out = []
        limit = getattr(self.model.config, "max_position_embeddings", None)
        device = next(self.model.parameters()).device
        for text in texts:  # one row at a time: no padding, so no padding effects on the logits
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            if limit is not None and len(ids) > limit:
                raise RewardError(f"judge: the verdict text has {len(ids)} tokens, over the judge "
                                  f"model's context of {limit}")
            logits = self.model(input_ids=torch.tensor([ids], device=device)).logits[0, -1]
            logp = torch.log_softmax(logits.float(), dim=-1)
            values, idx = logp.topk(min(top, logp.numel()))
            out.append([(self.tokenizer.decode([i]), v) for i, v in zip(idx.tolist(), values.tolist())])
        return out
