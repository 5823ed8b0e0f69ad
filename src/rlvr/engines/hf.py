"""The in-process `transformers` engine: batched sampling with a KV cache.

One decode step is one forward pass over the whole batch with the cache; finished rows keep
being fed padding (cheaper than reshaping the cache) and the loop ends when all rows finish.
For Qwen2 models the forward is `rlvr.engines.qwen2_decode`'s (the same function with a
preallocated cache; `fast_decode=False` turns it off); for any other model
it is the model's own, with a `DynamicCache`, and the first such engine of the process logs
why (one warning line per model class and reason).

Shared prefill (`share_prefill=True`, the default): rows with the same prompt tokens (a
group's G samples) are prefilled once, and each row then decodes from its own copy of that
prompt's KV cache. The sampling is unchanged (the same (B, V) logits drawn row by row from the
same generator), but the prefill GEMMs run over fewer rows and round differently: on the
workload's model the log-probs moved by at most 4.8e-7, the tokens not at all (benchmarks/README.md).

In-flight weight updates (PipelineRL): after `accept_inflight_weights(poll)`, `poll` is asked for new weights
before every decode forward, and new ones are loaded at once; the running generation goes on
under them, its KV cache (computed by the older weights) kept. Each token records the version
of the weights whose forward gave the logits it was drawn from, and its log-prob is that
forward's, so the objective's behaviour log-probs are the ones that really produced it.

Log-probs: `Rollout.logprobs[t]` is log softmax(logits / temperature) at the sampled token,
over the *full* vocabulary. With top_p < 1 or top_k > 0 the token was drawn from the truncated
distribution, but the trainer recomputes exactly this untruncated quantity, so old and new
log-probs are comparable (the truncation mismatch is left to importance-weight correction).
With temperature 0 (greedy) the log-probs are those of the untempered distribution.

Sampling-mask replay (`SamplingParams.replay_support`): the log-probs are instead those of the
truncated distribution, log p_t - log sum_{v in S_t} p_v, and `Rollout.support[t]` = |S_t|.
S_t is always a prefix of the tokens sorted by probability, so its size names it: one int a
token, where the kept ids would take up to |S_t| (thousands at top_p 0.95 on a flat
distribution). The trainer rebuilds S_t as its own top |S_t| (`rlvr.train.logprobs`), which is
the engine's set whenever the two rank the tokens alike; it is not built for `banned` tokens
(the config refuses replay with min_new_tokens > 0).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from typing import NamedTuple

import torch
from transformers import DynamicCache, PreTrainedModel, PreTrainedTokenizerBase

from rlvr import heartbeat
from rlvr.engines import qwen2_decode
from rlvr.engines.base import HeldStateEngine, SamplingParams, check_rows
from rlvr.engines.loading import pad_token_id
from rlvr.engines.stop_tokens import stop_token_ids
from rlvr.engines.weight_keys import check_weight_keys
from rlvr.types import Rollout

log = logging.getLogger(__name__)
_said: set[str] = set()  # fallback reasons already logged in this process


def left_pad(rows: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token lists → input_ids (B, P) and attention_mask (B, P), padded on the left."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        if r:
            ids[i, width - len(r):] = torch.tensor(r, dtype=torch.long)
            mask[i, width - len(r):] = 1
    return ids, mask


def distinct_rows(rows: list[list[int]]) -> tuple[list[list[int]], torch.Tensor | None]:
    """The distinct rows, in first-seen order, and each row's index among them (B,); None
    for the index when every row is distinct (nothing to share)."""
    where: dict[tuple[int, ...], int] = {}
    index = [where.setdefault(tuple(r), len(where)) for r in rows]
    if len(where) == len(rows):
        return rows, None
    return [list(r) for r in where], torch.tensor(index, dtype=torch.long)


class Draw(NamedTuple):
    """One decode step's draw, each (B,): the token, its log-prob under the tempered full
    distribution, its log-prob under the truncated distribution it was drawn from (the same
    without top-k / top-p) and the size of that kept set (the vocabulary without them)."""

    token: torch.Tensor
    logp: torch.Tensor
    kept_logp: torch.Tensor
    kept: torch.Tensor


def sample_next(logits: torch.Tensor, params: SamplingParams, gen: torch.Generator,
                banned: int | Sequence[int] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """logits (B, V) → (token (B,), its log-prob (B,) under the tempered full distribution).

    `banned` (token ids, e.g. the stop tokens before min_new_tokens) is never drawn, but the
    reported log-prob stays that of the full distribution, which is what the trainer recomputes."""
    d = draw(logits, params, gen, banned)
    return d.token, d.logp


def draw(logits: torch.Tensor, params: SamplingParams, gen: torch.Generator,
         banned: int | Sequence[int] | None = None) -> Draw:
    """`sample_next`, with the kept set's log-prob and size (for sampling-mask replay)."""
    logits = logits.float()
    if banned is not None:
        banned = torch.tensor([banned] if isinstance(banned, int) else list(banned), device=logits.device)
    if params.temperature == 0:
        logp = torch.log_softmax(logits, dim=-1)
        pick = logp if banned is None else logp.index_fill(1, banned, float("-inf"))
        token = pick.argmax(dim=-1)
        ones = torch.ones_like(token)  # the set of a greedy step is the argmax alone
        return Draw(token, logp.gather(1, token[:, None]).squeeze(1), torch.zeros_like(logits[:, 0]), ones)
    logp = torch.log_softmax(tempered(logits, params.temperature), dim=-1)
    probs = logp.exp()
    if banned is not None:
        probs = probs.index_fill(1, banned, 0.0)
    kept = None
    if params.top_p < 1.0 or params.top_k > 0:
        sorted_p, order = probs.sort(dim=-1, descending=True)
        drop = dropped_tail(sorted_p, params)
        sorted_p = sorted_p.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter_(1, order, sorted_p)
        kept = (~drop).sum(dim=-1)
    token = torch.multinomial(probs, 1, generator=gen).squeeze(1)
    token_logp = logp.gather(1, token[:, None]).squeeze(1)
    if kept is None:
        return Draw(token, token_logp, token_logp, torch.full_like(token, logits.shape[-1]))
    # the trainer renormalises the same way (rlvr.train.logprobs.kept_log_mass)
    log_mass = torch.logsumexp(logp.masked_fill(probs == 0, float("-inf")), dim=-1)
    return Draw(token, token_logp, token_logp - log_mass, kept)


def dropped_tail(sorted_p: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """(B, V) bool over the descending-sorted probabilities: True past the top_k first, and
    past the smallest prefix whose mass reaches top_p of what top_k kept (always at least one
    token): top-k, then top-p (the order of HF's warpers and of vLLM). A prefix, so its
    length k_t names the kept set."""
    drop = torch.zeros_like(sorted_p, dtype=torch.bool)
    target: float | torch.Tensor = params.top_p
    if params.top_k > 0:
        drop[:, params.top_k:] = True
        sorted_p = sorted_p.masked_fill(drop, 0.0)
        target = params.top_p * sorted_p.sum(dim=-1, keepdim=True)
    if params.top_p < 1.0:
        drop |= (sorted_p.cumsum(dim=-1) - sorted_p) >= target
    return drop


def tempered(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """logits / T (B, V), finite wherever the logits are. Below T = 1e-3 (the configs' floor;
    the API and the server may go lower) 1/T overflows float32 and 0/T rounds to 0/0 = NaN, so
    the max is subtracted first and the division runs in float64; log_softmax is shift-invariant."""
    if temperature >= 1e-3:
        return logits / temperature
    shifted = logits.double() - logits.amax(dim=-1, keepdim=True).double()
    return (shifted / temperature).float()  # -1e300 becomes -inf: probability 0, as it should


class HFEngine(HeldStateEngine):
    """Samples from a `transformers` causal LM in this process (CPU or one GPU)."""

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, *, seed: int = 0, max_batch: int = 1024,
                 fast_decode: bool = True, stop_ids: Sequence[int] | None = None, share_prefill: bool = True,
                 compile_decode: bool = False):
        self.model = model.eval()
        # fast_decode: sample through rlvr.engines.qwen2_decode (the same function, fewer ops)
        # when it supports the model; otherwise, or when False, through the model's forward.
        self.fast_decode = fast_decode
        # share_prefill: rows with the same prompt (a group's samples) are prefilled once and
        # the prompt's KV cache copied to each; False prefills every row (benchmarks' A/B).
        self.share_prefill = share_prefill
        # compile_decode: the fast path's per-layer blocks through torch.compile (qwen2_decode.Blocks).
        self.compile_decode = compile_decode
        self._joined: qwen2_decode.JoinedWeights | None = None  # small models' joined copies, made on first use
        self.tokenizer = tokenizer
        self.eos_id = tokenizer.eos_token_id
        # Sampling one of these ends a completion (kept in it): EOS, the generation config's
        # EOS ids, the chat template's end-of-turn token (rlvr.engines.stop_tokens).
        self.stop_ids = tuple(stop_ids) if stop_ids is not None else stop_token_ids(tokenizer, model)
        self.pad_id = pad_token_id(tokenizer)
        self.max_batch = max_batch
        # On the model's device: torch.multinomial needs a generator where its input lives.
        self._generator = torch.Generator(device=next(model.parameters()).device).manual_seed(seed)
        self._version = 0
        self._weight_poll: Callable[[], tuple[dict, int] | None] | None = None  # in-flight updates
        # transformers 5 renamed the forward argument `past_key_values` to `cache`.
        params = inspect.signature(model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"

    @property
    def scoring_model(self) -> PreTrainedModel:
        return self.model

    def accept_inflight_weights(self, poll: Callable[[], tuple[dict, int] | None]) -> None:
        self._weight_poll = poll

    def load_weights(self, state_dict: dict[str, torch.Tensor], version: int) -> None:
        own = self.model.state_dict()
        check_weight_keys(state_dict, own)  # strict, LoRA's partial dict allowed
        # A sync run's engine samples with the trainer's own model (engine_choice.py): its
        # tensors arrive here as themselves, and copying a tensor onto itself is wasted work.
        foreign = {k: v for k, v in state_dict.items() if v.data_ptr() != own[k].data_ptr()}
        if foreign:
            self.model.load_state_dict(foreign, strict=False)
        self._version = version
        if self._joined is not None:
            self._joined.invalidate()

    def generate(self, prompts: list[str], n: int, params: SamplingParams) -> list[list[Rollout]]:
        encoded = [self.tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
        self._check_context(encoded, params)
        rows = [ids for ids in encoded for _ in range(n)]
        flat: list[Rollout] = []
        for start in range(0, len(rows), self.max_batch):
            flat.extend(self.generate_ids(rows[start:start + self.max_batch], params))
        return [flat[i * n:(i + 1) * n] for i in range(len(prompts))]

    def _check_context(self, encoded: list[list[int]], params: SamplingParams) -> None:
        limit = getattr(self.model.config, "max_position_embeddings", None)
        for i, ids in enumerate(encoded):
            if not ids:
                raise ValueError(f"prompt {i} is empty after tokenisation")
            if limit is not None and len(ids) + params.max_new_tokens > limit:
                raise ValueError(
                    f"prompt {i} has {len(ids)} tokens; with max_new_tokens={params.max_new_tokens} "
                    f"it exceeds the model's context of {limit}"
                )

    def _fused_decode_applies(self) -> bool:
        """Whether qwen2_decode can sample this model; when it cannot, the generic path does, and
        the reason is logged once per process (a Llama folder is not an error, only slower)."""
        if not self.fast_decode:
            return False
        reason = qwen2_decode.unsupported_reason(self.model)
        if reason is not None and (said := f"{type(self.model).__name__}: {reason}") not in _said:
            _said.add(said)
            log.warning("sampling: %s, not the fused Qwen2 decode; using the model's own forward (generic path)", said)
        return reason is None

    @torch.inference_mode()
    def generate_ids(self, rows: list[list[int]], params: SamplingParams) -> list[Rollout]:
        """Sample one completion for each row of prompt token ids (the contract: Engine.generate_ids)."""
        check_rows(rows)
        if not rows:
            return []
        training = self.model.training  # a shared model (sync runs) goes back to the trainer as it came
        self.model.eval()
        try:
            return self._sample(rows, params)
        finally:
            self.model.train(training)

    def _sample(self, rows: list[list[int]], params: SamplingParams) -> list[Rollout]:
        device = next(self.model.parameters()).device
        distinct, index = distinct_rows(rows) if self.share_prefill else (rows, None)
        ids, mask = left_pad(distinct, self.pad_id)
        ids, mask = ids.to(device), mask.to(device)
        if self._fused_decode_applies():
            blocks = qwen2_decode.compiled_blocks() if self.compile_decode else None
            decoder = qwen2_decode.Qwen2Decoder(self.model, ids, mask, params.max_new_tokens, blocks, self._joined_weights())
        else:
            decoder = _ModelDecoder(self.model, self._cache_kw, ids, mask)
        logits = decoder.prefill()
        if index is not None:
            index = index.to(device)
            decoder.expand(index)
            logits = logits[index]
        tracker = _Tracker(len(rows), self.stop_ids, params, self.tokenizer)
        for t in range(params.max_new_tokens):
            banned = self.stop_ids if t < params.min_new_tokens else None
            d = draw(logits, params, self._generator, banned)
            if params.replay_support:
                tracker.record(d.token.cpu(), d.kept_logp.cpu(), self._version, d.kept.cpu())
            else:
                tracker.record(d.token.cpu(), d.logp.cpu(), self._version)
            token = d.token
            heartbeat.beat()  # a decode step is progress for the watchdog (rlvr.orchestrate.watchdog)
            if tracker.all_done() or t == params.max_new_tokens - 1:
                break
            feed = torch.where(tracker.active.to(device), token, torch.full_like(token, self.pad_id))
            self._take_inflight_weights()
            logits = decoder.step(feed)
        return tracker.rollouts(rows)

    def _joined_weights(self) -> "qwen2_decode.JoinedWeights | None":
        if not qwen2_decode.joins(self.model):
            self._joined = None  # a swapped-in wide model: the old model's copies go
            return None
        if self._joined is None or self._joined.model is not self.model:
            self._joined = qwen2_decode.JoinedWeights(self.model)
        return self._joined

    def _take_inflight_weights(self) -> None:
        if self._weight_poll is not None and (new := self._weight_poll()) is not None:
            self.load_weights(*new)


class _ModelDecoder:
    """The generic path: the model's own forward with a `DynamicCache`; the same interface as
    `qwen2_decode.Qwen2Decoder` (prefill, then step per token, each giving logits (B, V))."""

    def __init__(self, model: PreTrainedModel, cache_kw: str, ids: torch.Tensor, mask: torch.Tensor):
        self.model, self.ids, self.mask = model, ids, mask
        self.positions = (mask.cumsum(-1) - 1).clamp(min=0)
        self.cache_kw = {cache_kw: DynamicCache(config=model.config)}

    def prefill(self) -> torch.Tensor:
        out = self.model(input_ids=self.ids, attention_mask=self.mask, position_ids=self.positions,
                         use_cache=True, logits_to_keep=1, **self.cache_kw)
        self.next_pos = self.positions[:, -1:] + 1
        return out.logits[:, -1, :]

    def expand(self, index: torch.Tensor) -> None:
        """After `prefill()`: the rows `index` (B',) of this decoder's rows become the batch."""
        self.ids, self.mask, self.next_pos = self.ids[index], self.mask[index], self.next_pos[index]
        next(iter(self.cache_kw.values())).batch_select_indices(index)

    def step(self, tokens: torch.Tensor) -> torch.Tensor:
        self.mask = torch.cat([self.mask, torch.ones_like(self.mask[:, :1])], dim=1)
        out = self.model(input_ids=tokens[:, None], attention_mask=self.mask, position_ids=self.next_pos,
                         use_cache=True, **self.cache_kw)
        self.next_pos = self.next_pos + 1
        return out.logits[:, -1, :]


class _Tracker:
    """Per-row bookkeeping of a decode loop: tokens, log-probs, finish reasons."""

    def __init__(self, n_rows: int, stop_ids: Sequence[int], params: SamplingParams, tokenizer: PreTrainedTokenizerBase):
        self.tokens: list[list[int]] = [[] for _ in range(n_rows)]
        self.logps: list[list[float]] = [[] for _ in range(n_rows)]
        self.versions: list[list[int]] = [[] for _ in range(n_rows)]
        self.kept: list[list[int]] = [[] for _ in range(n_rows)]  # sampling-mask replay only
        self.reasons = ["length"] * n_rows
        self.active = torch.ones(n_rows, dtype=torch.bool)
        self.stop_ids, self.params, self.tokenizer = frozenset(stop_ids), params, tokenizer

    def record(self, token: torch.Tensor, logp: torch.Tensor, version: int,
               kept: torch.Tensor | None = None) -> None:
        tok_list, logp_list = token.tolist(), logp.tolist()
        kept_list = None if kept is None else kept.tolist()
        for i in torch.nonzero(self.active).flatten().tolist():
            if kept_list is not None:
                self.kept[i].append(kept_list[i])
            self.tokens[i].append(tok_list[i])
            self.logps[i].append(logp_list[i])
            self.versions[i].append(version)
            if tok_list[i] in self.stop_ids or self._hit_stop(i):
                self.reasons[i] = "stop"
                self.active[i] = False

    def _hit_stop(self, i: int) -> bool:
        if not self.params.stop:
            return False
        longest = max(len(s) for s in self.params.stop)
        tail = self.tokenizer.decode(self.tokens[i][-(longest + 2):], skip_special_tokens=True)
        return any(s in tail for s in self.params.stop)

    def all_done(self) -> bool:
        return not bool(self.active.any())

    def text_of(self, i: int) -> str:
        text = self.tokenizer.decode(self.tokens[i], skip_special_tokens=True)
        for s in self.params.stop:  # like vLLM and HF: the stop string is not part of the text
            cut = text.find(s)
            if cut >= 0:
                text = text[:cut]
        return text

    def rollouts(self, rows: list[list[int]]) -> list[Rollout]:
        return [
            Rollout(prompt_ids=tuple(rows[i]), completion_ids=tuple(self.tokens[i]),
                    logprobs=tuple(self.logps[i]), text=self.text_of(i),
                    finish_reason=self.reasons[i], policy_version=self.versions[i][0],
                    token_versions=self._mixed_versions(i), support=tuple(self.kept[i]))
            for i in range(len(rows))
        ]

    def _mixed_versions(self, i: int) -> tuple[int, ...]:
        """Per-token versions when an in-flight update split this row, else () (one version)."""
        v = self.versions[i]
        return tuple(v) if v[0] != v[-1] else ()
