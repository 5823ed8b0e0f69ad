"""A judge behind an OpenAI-compatible server (`/v1/completions`), standard library only.

Reasoning: one request with `n = k`, `max_tokens`, `temperature`, `stop`. Verdict: one request
whose `prompt` is the list of k texts, `max_tokens = 1`, `temperature = 0` and
`logprobs = top`; the verdict reads `choices[i].logprobs.top_logprobs[0]` (the legacy
completions format). Every failure is a RewardError naming the URL and what went wrong:
connection refused or timed out, an HTTP error status (with the start of the server's error
body), a body that is not JSON, or JSON without the fields above.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from rlvr.errors import RewardError
from rlvr.rewards.judge.backend import JudgeBackend, ReasonParams


class HttpJudgeBackend(JudgeBackend):
    def __init__(self, url: str, model: str | None, *, timeout_s: float = 60.0, seed: int | None = None):
        self.url = url.rstrip("/") + "/completions"
        self.model, self.timeout_s, self.seed = model, timeout_s, seed

    def post(self, body: dict) -> dict:
        if self.model is not None:
            body = {"model": self.model, **body}
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as reply:
                raw = reply.read()
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")[:300]
            raise RewardError(f"judge server {self.url}: HTTP {e.code} {e.reason}: {detail}") from None
        except (TimeoutError, urllib.error.URLError, ConnectionError) as e:
            why = getattr(e, "reason", e)
            raise RewardError(f"judge server {self.url}: cannot connect ({why}; "
                              f"timeout {self.timeout_s:g} s)") from None
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise RewardError(f"judge server {self.url}: reply is not JSON: {raw[:200]!r}") from None
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            raise RewardError(f"judge server {self.url}: reply has no 'choices' list: {str(data)[:200]}")
        return data

    def reason(self, text: str, k: int, params: ReasonParams) -> list[str]:
        body = {"prompt": text, "n": k, "max_tokens": params.max_new_tokens,
                "temperature": params.temperature, "stop": list(params.stop)}
        if self.seed is not None:
            body["seed"] = self.seed
        choices = self.post(body)["choices"]
        texts = [c.get("text") if isinstance(c, dict) else None for c in choices]
        if len(texts) != k or not all(isinstance(t, str) for t in texts):
            raise RewardError(f"judge server {self.url}: expected {k} choices with a 'text', got {str(choices)[:200]}")
        return texts

    def next_token_logprobs(self, texts: list[str], top: int) -> list[list[tuple[str, float]]]:
        body = {"prompt": texts, "n": 1, "max_tokens": 1, "temperature": 0.0, "logprobs": top}
        choices = self.post(body)["choices"]
        if len(choices) != len(texts):
            raise RewardError(f"judge server {self.url}: sent {len(texts)} prompts, got {len(choices)} choices")
        ordered = sorted(choices, key=lambda c: c.get("index", 0) if isinstance(c, dict) else 0)
        return [self._first_top(c) for c in ordered]

    def _first_top(self, choice: object) -> list[tuple[str, float]]:
        try:
            first = choice["logprobs"]["top_logprobs"][0]
            pairs = [(str(tok), float(lp)) for tok, lp in first.items()]
        except (KeyError, IndexError, TypeError, AttributeError, ValueError):
            raise RewardError(f"judge server {self.url}: a choice has no logprobs.top_logprobs[0] "
                              f"mapping: {str(choice)[:200]}") from None
        return sorted(pairs, key=lambda p: -p[1])
