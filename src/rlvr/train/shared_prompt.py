"""The training forward with each distinct prompt computed once: GRPO's G completions of a
prompt share its P prompt positions, which the plain forward runs G times.

The body runs on the distinct prompts (U rows) with a KV cache, the cache is indexed out to
the B rows (`DynamicCache.batch_select_indices`, whose backward sums each copy's gradient
into its prompt row), and the body runs again on the completion positions against it. Every
completion position attends to the same keys and values as in the plain forward (the same
prompt rows, masks and positions), so it is the same function; only the GEMMs' row counts
change (U (P - 1) + B (T + 1) rows instead of B (P + T)), and with them the order in which the
weight gradients sum their rows, so gradients may differ in the last bits. At GRPO's G = 8
with P = 22, T = 64 (shared/bench/WORKLOAD.md) that is 22% fewer rows; at the demo's
P ~ 20, T <= 8, about 60% fewer.

The log-probs round differently from the plain forward's (2026-12-01, the tiny model on CPU,
float32: at most 2.9e-6 absolute, 1.1e-6 relative, in tests/orchestrate/test_batch_golden.py's
cases) and are the same bits on every call, whatever ran before (tests/train/test_shared_prompt.py).
The bit-exact fixture of test_batch_golden.py predates this module, so that test runs the plain
path (`share_prompts=False` everywhere else). The earlier note here, that the fixture passed
alone and failed after other tests, is reproduced by a run without PYTHONPATH=src (the venv then
imports /work/main's rlvr, which has no shared path); with this tree it fails in every order.
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Iterator

import torch
import torch.nn.functional as F
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from rlvr.types import Batch

# The tail pass needs a mask (its queries start P - 1 positions into the keys, where SDPA's
# is_causal would align them at 0), and transformers' SDPA attention repeats each KV head's K
# and V for its group of query heads whenever a mask is given (`use_gqa_in_sdpa`: CUDA's kernels
# take no mask with grouped heads): a (B, heads, P + T, hd) copy of each, per layer, kept for the
# backward. On the CPU, PyTorch's flash kernel takes the mask and grouped heads together, so the
# tail pass runs under `GQA_SDPA`: transformers' SDPA attention but for that one case, with the
# same masks. At g7's shapes (benchmarks/vs_trl.py: 32 rows x 534 positions, 4 layers) the
# copies and the per-layer float masks held the peak RSS 276-321 MiB higher (rss_phases.py,
# benchmarks/README.md, 2026-12-07); benchmarks/tail_attention.py times both ways.
GQA_SDPA = "rlvr_sdpa_masked_gqa"


def _masked_gqa_sdpa(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None,
                     is_causal=None, **kwargs):
    grouped = query.shape[1] != key.shape[1]
    if (attention_mask is None or not grouped or query.device.type != "cpu" or dropout
            or kwargs.get("position_bias") is not None or kwargs.get("softcap") is not None):
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      is_causal=is_causal, **kwargs)
    out = F.scaled_dot_product_attention(query, key, value, attn_mask=_additive(attention_mask, query.dtype),
                                         scale=scaling, enable_gqa=True)
    return out.transpose(1, 2).contiguous(), None


# (bool mask, its additive form) of the pass running under `masked_gqa`: every layer gets the
# same bool mask, and SDPA would turn it into a float one per layer, each kept for the backward.
_additive_memo: list[tuple[torch.Tensor, torch.Tensor]] = []


def _additive(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A bool mask (B, 1, Q, K) as SDPA's additive float mask (0 / -inf: the values SDPA turns
    a bool mask into), made once per pass, with one row broadcast when all rows agree."""
    if mask.dtype != torch.bool:
        return mask
    if _additive_memo and _additive_memo[0][0] is mask and _additive_memo[0][1].dtype == dtype:
        return _additive_memo[0][1]
    rows = mask[:1] if bool((mask == mask[:1]).all()) else mask
    additive = torch.zeros(rows.shape, dtype=dtype, device=mask.device).masked_fill_(~rows, float("-inf"))
    _additive_memo[:] = [(mask, additive)]
    return additive


AttentionInterface.register(GQA_SDPA, _masked_gqa_sdpa)
AttentionMaskInterface.register(GQA_SDPA, sdpa_mask)


@contextmanager
def masked_gqa(module: torch.nn.Module) -> Iterator[None]:
    """Within: a model on transformers' "sdpa" attention runs `_masked_gqa_sdpa` instead (the
    same function; no K/V copy for grouped heads under a mask on the CPU). Other
    implementations are left as they are."""
    config = getattr(module, "config", None)
    if config is None or getattr(config, "_attn_implementation", None) != "sdpa":
        yield
        return
    config._attn_implementation = GQA_SDPA
    try:
        yield
    finally:
        config._attn_implementation = "sdpa"
        _additive_memo.clear()  # the backward holds the additive mask it needs


def prompt_groups(batch: Batch) -> tuple[torch.Tensor, torch.Tensor] | None:
    """(first (U,), inverse (B,)): a row holding each distinct prompt (ids and mask of the P
    prompt columns) and the index of each row's prompt among them; None when no two rows
    share one, or P < 2 (nothing to save)."""
    p = batch.prompt_len
    if p < 2:
        return None
    key = torch.cat([batch.input_ids[:, :p], batch.attention_mask[:, :p]], dim=1)  # (B, 2P)
    uniq, inverse = torch.unique(key, dim=0, return_inverse=True)
    if uniq.shape[0] == key.shape[0]:
        return None
    rows = torch.arange(key.shape[0], device=key.device)
    first = torch.full((uniq.shape[0],), key.shape[0], dtype=torch.long, device=key.device)
    first = first.scatter_reduce(0, inverse, rows, reduce="amin")
    return first, inverse


def cache_keyword(body: torch.nn.Module) -> str | None:
    """The keyword through which `body`'s forward takes a KV cache (transformers 5 renamed
    `past_key_values` to `cache`), or None when it takes none or will not make one (under
    gradient checkpointing transformers turns the cache off): then the plain path runs."""
    forward = getattr(body, "forward", body)  # a plain callable (AdaptersOff's) is its own forward
    if isinstance(body, torch.nn.Module) and body.training and _checkpointing(body):
        return None
    try:
        params = inspect.signature(forward).parameters
    except (TypeError, ValueError):  # a builtin or wrapped callable without a signature
        return None
    if "use_cache" not in params:
        return None
    return next((k for k in ("cache", "past_key_values") if k in params), None)


def _checkpointing(module: torch.nn.Module) -> bool:
    """transformers' activation checkpointing flag (renamed in 5.x; the old name warns)."""
    for name in ("is_activation_checkpointing", "is_gradient_checkpointing"):
        if hasattr(type(module), name):
            return bool(getattr(module, name))
    return any(getattr(m, "gradient_checkpointing", False) for m in module.modules())


def shared_prompt_forward(module: torch.nn.Module, cache_kw: str, batch: Batch, positions: torch.Tensor,
                          groups: tuple[torch.Tensor, torch.Tensor], field: str, **prompt_kw) -> torch.Tensor:
    """`module`'s output `field` (B, T, ...) at the positions P-1 .. P+T-2 (those that predict
    the completion tokens), with the prompt columns 0 .. P-2 run once per distinct prompt.
    The last prompt column runs with the completions, once per row, so that all T outputs
    come from one call on B x T rows, as in the plain forward (the head's matmul then sees the
    same rows). module: a decoder body (field "last_hidden_state") or a causal LM (field
    "logits", prompt_kw logits_to_keep=1: the prompt pass's logits are not used); positions
    (B, P+T): the plain forward's position ids; cache_kw: `cache_keyword(module)`. Needs P >= 2."""
    first, inverse = groups
    p, t = batch.prompt_len, batch.completion_mask.shape[1]
    ids, mask = batch.input_ids, batch.attention_mask
    prompt = module(input_ids=ids[first, :p - 1], attention_mask=mask[first, :p - 1],
                    position_ids=positions[first, :p - 1], use_cache=True, **prompt_kw)
    cache = getattr(prompt, cache_kw)
    cache.batch_select_indices(inverse)  # (U, ...) → (B, ...) in every layer, differentiably
    with masked_gqa(module):
        tail = module(input_ids=ids[:, p - 1:p - 1 + t], attention_mask=mask[:, :p - 1 + t],
                      position_ids=positions[:, p - 1:p - 1 + t], use_cache=True, **{cache_kw: cache})
    return getattr(tail, field)
