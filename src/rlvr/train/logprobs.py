"""Log-probabilities and entropies of completion tokens under a model, by one teacher-forced
forward pass.

At a large vocabulary the logits dominate the step's memory: (B, T, V) float32 is 608 KB a
token at Qwen2's V = 152,064, and the log-softmax, the entropy's terms and their gradients
hold several more such tensors. `completion_logprobs` therefore runs the model's body once
and applies the LM head `chunk` tokens at a time, each chunk under activation checkpointing
when the logits are large (`REMAT_MIN_BYTES`), so that at most one chunk's (chunk, V) logits
are alive, in the forward and in the backward (which recomputes them). The values are those
of the plain path: the same functions on the same rows (measured in benchmarks/logit_memory.py
and docs/scaling.md).
"""

from __future__ import annotations

import logging

import torch
from torch.distributed.fsdp import FSDPModule
from torch.utils.checkpoint import checkpoint
from transformers import PreTrainedModel

from rlvr.train.model_split import SplitModel, split_model
from rlvr.train.shared_prompt import cache_keyword, prompt_groups, shared_prompt_forward
from rlvr.types import Batch

log = logging.getLogger(__name__)

# Tokens per LM-head chunk. The head's part of a forward + backward peaks at about 3 (entropy
# logged) to 5 (entropy bonus) times the float32 logits it holds at once, chunked or not
# (benchmarks/logit_memory.py): at V = 152,064, 0.9 to 1.6 GB for 512 tokens, against 40 to
# 50 GB for a 16k-token micro-batch all at once; 512 rows keep a GPU's head matmul efficient.
DEFAULT_LOGIT_CHUNK = 512
# The chunks are checkpointed only when the micro-batch's float32 logits, all chunks together,
# exceed this: below it recomputing each chunk's head in the backward bounds nothing worth the
# time (w1's 4,096 x 128 logits are 2 MiB; at V = 152,064 the limit is 110 tokens). The values
# and gradients are the same bits either way (the same functions on the same chunks).
REMAT_MIN_BYTES = 64 << 20


def completion_logits(model: PreTrainedModel, batch: Batch, *, share_prompts: bool = True) -> torch.Tensor:
    """Logits (B, T, V) of the positions that predict the completion tokens, in the dtype the
    model's head produces: float32 for a float32 model or one loaded with `model.fp32_head`
    (`rlvr.models.precision`), else the model's dtype. Rows that share a prompt run it once,
    as in `completion_hidden` (not for an FSDP-sharded model).
    """
    positions = (batch.attention_mask.cumsum(-1) - 1).clamp(min=0)
    cache_kw = cache_keyword(model) if share_prompts and not isinstance(model, FSDPModule) else None
    if cache_kw is not None and (groups := prompt_groups(batch)) is not None:
        return shared_prompt_forward(model, cache_kw, batch, positions, groups, "logits", logits_to_keep=1)
    t = batch.completion_mask.shape[1]
    out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                position_ids=positions, use_cache=False, logits_to_keep=t + 1)
    # logits_to_keep=t+1 keeps columns P-1 .. P+T-1; the last one predicts past the end.
    return out.logits[:, :t, :]


def scaled_log_softmax(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """log softmax(logits / temperature) over the vocabulary, in float32 whatever dtype the
    head gave the logits, as the engine's sampling log-probs are. (..., V) → (..., V)."""
    logits = logits.float()
    if temperature not in (0.0, 1.0):
        logits = logits / temperature
    return torch.log_softmax(logits, dim=-1)


def entropy_of(logp_all: torch.Tensor) -> torch.Tensor:
    """H = -sum_v p_v log p_v (nats) from log-probs over the vocabulary. (..., V) → (...)."""
    return -(logp_all.exp() * logp_all).sum(dim=-1)


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """log softmax(logits / temperature) at the target tokens. (B, T, V), (B, T) → (B, T).
    Matches the engine's sampling log-probs, which use the same temperature."""
    return scaled_log_softmax(logits, temperature).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def token_entropy(logits: torch.Tensor, temperature: float = 1.0, *, with_grad: bool = False) -> torch.Tensor:
    """Entropy (nats) of each position's distribution softmax(logits / temperature), the one
    the log-probs and the loss use. (B, T, V) → (B, T). With gradient only when asked (an
    entropy bonus), since it keeps a (B, T, V) softmax in the graph."""
    with torch.set_grad_enabled(with_grad and torch.is_grad_enabled()):
        return entropy_of(scaled_log_softmax(logits, temperature))


def completion_logprobs(model: PreTrainedModel, batch: Batch, temperature: float = 1.0, *,
                        chunk: int = DEFAULT_LOGIT_CHUNK, entropy: bool = True, entropy_grad: bool = False,
                        share_prompts: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(logp, entropy), each (B, T): `token_logprobs` and `token_entropy` of the completion
    positions (entropy None unless asked), with the LM head applied `chunk` tokens at a time
    (0: all at once, the plain path). A model that does not split into body and head
    (`rlvr.train.model_split`) takes the plain path, and says why once. share_prompts: run
    each distinct prompt once (`rlvr.train.shared_prompt`; the same function)."""
    want = "grad" if entropy and entropy_grad else "value" if entropy else None
    split = split_model(model) if chunk > 0 else None
    if isinstance(split, SplitModel):
        return chunked_logprobs(split, batch, temperature, chunk, want, share_prompts)
    if split is not None:
        _say_once(split)
    return _head_stats(None, completion_logits(model, batch, share_prompts=share_prompts),
                       batch.input_ids[:, batch.prompt_len:], temperature, want, batch.support)


def completion_hidden(body: torch.nn.Module, batch: Batch, *, share_prompts: bool = True) -> torch.Tensor:
    """Final hidden states (B, T, H) of the positions P-1 .. P+T-2, those that predict the
    completion tokens: the rows `completion_logits` feeds the head. When rows share a prompt
    (a GRPO group) and the body takes a KV cache, each distinct prompt runs once
    (`rlvr.train.shared_prompt`; `share_prompts=False`: every row's prompt)."""
    positions = (batch.attention_mask.cumsum(-1) - 1).clamp(min=0)
    cache_kw = cache_keyword(body) if share_prompts else None
    if cache_kw is not None and (groups := prompt_groups(batch)) is not None:
        return shared_prompt_forward(body, cache_kw, batch, positions, groups, "last_hidden_state")
    out = body(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
               position_ids=positions, use_cache=False)
    p, t = batch.prompt_len, batch.completion_mask.shape[1]
    return out.last_hidden_state[:, p - 1:p - 1 + t, :]


def chunked_logprobs(split: SplitModel, batch: Batch, temperature: float, chunk: int,
                     entropy: str | None, share_prompts: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
    """`completion_logprobs` on a split model: the body once, then the head on equal chunks
    of at most `chunk` flattened (row, position) tokens. With gradient, more than one chunk and
    logits above `REMAT_MIN_BYTES`, each chunk is checkpointed (non-reentrant): only its
    (chunk, H) hidden rows are kept, and the backward recomputes its logits, so no two chunks'
    (chunk, V) tensors are alive at once. `entropy`: None, "value" or "grad"."""
    hidden = completion_hidden(split.body, batch, share_prompts=share_prompts)  # (B, T, H)
    targets = batch.input_ids[:, batch.prompt_len:]  # (B, T)
    # equal chunks of at most `chunk` rows, not a short tail: a few-row matmul may take another
    # BLAS kernel than the plain path's, and round differently
    sizes = equal_chunks(targets.numel(), chunk)
    # split, not tensor_split: the same views, but one backward node that concatenates the
    # chunks' gradients, where tensor_split's slices each scatter into a zeroed (B T, H) tensor
    # (w1: 8 fills of 4 MB a step fewer, torch.profiler)
    rows_h = hidden.reshape(-1, hidden.shape[-1]).split(sizes)
    rows_t = targets.reshape(-1).split(sizes)
    rows_k = [None] * len(sizes) if batch.support is None else batch.support.reshape(-1).split(sizes)
    remat = (torch.is_grad_enabled() and len(rows_h) > 1
             and _logit_bytes(split.head, targets.numel()) > REMAT_MIN_BYTES)
    pieces = [checkpoint(_head_stats, split.head, h, t, temperature, entropy, k, use_reentrant=False)
              if remat else _head_stats(split.head, h, t, temperature, entropy, k)
              for h, t, k in zip(rows_h, rows_t, rows_k)]
    logp = torch.cat([lp for lp, _ in pieces]).view_as(targets)
    return logp, None if entropy is None else torch.cat([e for _, e in pieces]).view_as(targets)


def _logit_bytes(head: torch.nn.Module, tokens: int) -> float:
    """Bytes of `tokens` rows of float32 logits of `head`; inf when its vocabulary is not
    known (a wrapped head): then the chunks are checkpointed."""
    weight = getattr(head, "weight", None)
    return float("inf") if weight is None else 4.0 * tokens * weight.shape[0]


def equal_chunks(n: int, chunk: int) -> list[int]:
    """Sizes of ceil(n / chunk) chunks of n rows that differ by at most one, the larger first
    (those of `torch.tensor_split`)."""
    count = max(-(-n // chunk), 1)
    small, extra = divmod(n, count)
    return [small + 1] * extra + [small] * (count - extra)


def _head_stats(head: torch.nn.Module | None, x: torch.Tensor, targets: torch.Tensor, temperature: float,
                entropy: str | None, support: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-prob and entropy (`entropy`: None, "value" or "grad") at every row of x, the
    logits (..., V) themselves when `head` is None, else hidden states (..., H) for it. Both
    paths compute through here, so that they agree; the values are those of `token_logprobs`
    and `token_entropy`. With `support` (...) (sampling-mask replay) the log-prob is that of
    the distribution truncated to each row's kept set (`kept_log_mass`); the entropy stays
    the full distribution's."""
    logp_all = scaled_log_softmax(x if head is None else head(x), temperature)  # (..., V)
    # log-probs first: a checkpointed chunk's recomputation stops once it has rebuilt the
    # tensors the backward needs, which skips a gradient-free entropy after them
    logp = logp_all.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    if support is not None:
        logp = logp - kept_log_mass(logp_all, targets, support)
    if entropy is None:
        return logp, None
    with torch.set_grad_enabled(entropy == "grad" and torch.is_grad_enabled()):
        return logp, entropy_of(logp_all)  # from the same log-softmax: one (..., V) tensor fewer


def kept_log_mass(logp_all: torch.Tensor, targets: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """log sum_{v in S} p_v over each row's kept set S: the k most probable tokens, k =
    `support` (0: the full vocabulary, whose mass is taken as exactly 1). (..., V), (...),
    (...) → (...), differentiable in `logp_all`.

    The engine drew each target from S (`rlvr.engines.hf.draw`), so S holds it; when this
    model ranks it below k (a near-tie at the edge, the two models' numerics differing), the
    k - 1 first and the target are taken, the closest set that holds it. The mass is summed
    from the k largest values (`topk`, not a full sort: 2.7x the head's cost with an argsort
    at V = 152k on CPU), so ties at the edge do not change it."""
    k = torch.where(support > 0, support, 1).clamp(max=logp_all.shape[-1])  # 1: padding, result unused
    target_logp = logp_all.gather(-1, targets.unsqueeze(-1))  # (..., 1)
    with torch.no_grad():
        outside = (logp_all > target_logp).sum(dim=-1) >= k  # this model ranks the target below k
        first = (k - outside.long()).unsqueeze(-1)  # how many of the largest to take besides
        width = max(int(first.max()), 1)
        take = torch.arange(width, device=logp_all.device) < first
    top = logp_all.topk(width, dim=-1).values.masked_fill(~take, float("-inf"))  # (..., width)
    extra = target_logp.masked_fill(~outside.unsqueeze(-1), float("-inf"))
    log_mass = torch.logsumexp(torch.cat([top, extra], dim=-1), dim=-1)
    return torch.where(support > 0, log_mass, torch.zeros_like(log_mass))


_said: set[str] = set()


def _say_once(reason: str) -> None:
    if reason not in _said:
        _said.add(reason)
        log.warning("log-probs: %s, so the LM head runs on all positions at once ((B, T, V) logits)", reason)


def batch_logprobs(model: PreTrainedModel, batch: Batch, temperature: float = 1.0, *,
                   chunk: int = DEFAULT_LOGIT_CHUNK) -> torch.Tensor:
    """(B, T) log-probs of the batch's completion tokens, computed on the model's device and
    returned on the batch's."""
    home = batch.input_ids.device
    batch = batch.to(next(model.parameters()).device)
    logp, _ = completion_logprobs(model, batch, temperature, chunk=chunk, entropy=False)
    return logp.to(home)
