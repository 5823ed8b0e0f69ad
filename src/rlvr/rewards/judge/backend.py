"""What a GenRM judge needs from a model: sampled reasoning, then the next-token distribution.

A backend does two things, and nothing about yes or no:

- `reason(text, k, params)`: k sampled continuations of `text` (the judge's reasoning);
- `next_token_logprobs(texts, top)`: for each text, the log-probabilities of the `top` most
  likely next tokens, as (token text, logprob) pairs, most likely first. The log-probabilities
  are those of the model's untempered distribution (temperature 1), whatever the sampling
  temperature of the reasoning was.

Two implementations: `TransformersJudgeBackend` (in process, `rlvr.orchestrate.judge_backend`) and
`HttpJudgeBackend` (an OpenAI-compatible `/v1/completions` server, `http_backend.py`). Both
re-tokenise the text they are given, so they see exactly the same input.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ReasonParams:
    """How the judge reasons: `max_new_tokens` 0 means it answers at once (no reasoning)."""

    max_new_tokens: int = 256
    temperature: float = 1.0
    stop: tuple[str, ...] = field(default_factory=tuple)


class JudgeBackend(abc.ABC):
    @abc.abstractmethod
    def reason(self, text: str, k: int, params: ReasonParams) -> list[str]:
        """k sampled continuations of `text` (k identical ones at temperature 0)."""

    @abc.abstractmethod
    def next_token_logprobs(self, texts: list[str], top: int) -> list[list[tuple[str, float]]]:
        """For each text, the `top` most likely next tokens and their log-probabilities."""
