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

import torch

from rlvr.types import Batch


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
    tail = module(input_ids=ids[:, p - 1:p - 1 + t], attention_mask=mask[:, :p - 1 + t],
                  position_ids=positions[:, p - 1:p - 1 + t], use_cache=True, **{cache_kw: cache})
    return getattr(tail, field)
