"""vLLM's outputs (`vllm.RequestOutput`, `vllm.CompletionOutput`) as rlvr Rollouts, checked: the
EOS and stop-id rules and the log-prob semantics are those of rlvr.engines.vllm_engine's module
docstring. Never imports vllm: the objects are read by attribute."""

from __future__ import annotations

from typing import Sequence

from rlvr.errors import RlvrError
from rlvr.types import Rollout


def completion_text(tokenizer, ids: Sequence[int], stop: Sequence[str]) -> str:
    """The completion's text as HFEngine makes it: special tokens (EOS) dropped, cut before the
    first stop string. Decoded here rather than taken from vLLM so both engines agree."""
    text = tokenizer.decode(list(ids), skip_special_tokens=True)
    for s in stop:
        cut = text.find(s)
        if cut >= 0:
            text = text[:cut]
    return text


def rollout_from_completion(completion, prompt_ids: Sequence[int], *, tokenizer, eos_id: int,
                            stop: Sequence[str], version: int) -> Rollout:
    """One `vllm.CompletionOutput` → a Rollout. vLLM keeps the EOS token in `token_ids` (and
    gives it a log-prob) when it stopped on it, which is rlvr's convention too; anything else
    is an error, never patched up."""
    ids = tuple(int(t) for t in completion.token_ids)
    reason = completion.finish_reason
    if reason not in ("stop", "length"):
        raise RlvrError(f"vLLM finished a completion with reason {reason!r} (expected 'stop' or 'length')")
    steps = completion.logprobs
    if steps is None or len(steps) != len(ids):
        got = "none" if steps is None else len(steps)
        raise RlvrError(f"vLLM returned {got} log-prob entries for {len(ids)} tokens (was logprobs=0 sent?)")
    try:
        logprobs = tuple(float(step[tok].logprob) for step, tok in zip(steps, ids))
    except KeyError as e:
        raise RlvrError(f"vLLM's log-probs lack the sampled token {e}") from None
    stop_reason = getattr(completion, "stop_reason", None)
    stopped_on_eos = reason == "stop" and stop_reason is None
    if stopped_on_eos and (not ids or ids[-1] != eos_id):
        raise RlvrError(f"vLLM stopped on EOS but its token_ids do not end with EOS ({eos_id}): {ids[-5:]}")
    if reason == "stop" and isinstance(stop_reason, int) and (not ids or ids[-1] != stop_reason):
        raise RlvrError(f"vLLM stopped on token {stop_reason} but its token_ids do not end with it: {ids[-5:]}")
    return Rollout(prompt_ids=tuple(prompt_ids), completion_ids=ids, logprobs=logprobs,
                   text=completion_text(tokenizer, ids, stop), finish_reason=reason, policy_version=version)


def rollouts_from_request(output, prompt_ids: Sequence[int], n: int, **kw) -> list[Rollout]:
    """One `vllm.RequestOutput` (n completions of one prompt) → n Rollouts, in sample order."""
    completions = sorted(output.outputs, key=lambda c: c.index)
    if len(completions) != n:
        raise RlvrError(f"vLLM returned {len(completions)} completions for a prompt; asked for {n}")
    return [rollout_from_completion(c, prompt_ids, **kw) for c in completions]
