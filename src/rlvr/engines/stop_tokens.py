"""Which sampled tokens end a completion: EOS, the model's generation-config EOS ids, and the
chat template's end-of-turn token.

An instruct model ends its turn with the template's end-of-turn token (`<|im_end|>` for Qwen,
`<|eot_id|>` for Llama 3), which is often not the tokenizer's EOS; sampling on past it would
make the model write the next turn itself. The end-of-turn token is found by rendering a probe
conversation whose assistant turn is a marker and reading the first token the template writes
after it; it counts only when it is a special (added) token, so a template that closes a turn
with plain text ("\\n\\n") adds no stop id.
"""

from __future__ import annotations

from transformers import PreTrainedModel, PreTrainedTokenizerBase

_MARKER = "rlvr-probe-7f3a"  # plain text no template alters


def end_of_turn_id(tokenizer: PreTrainedTokenizerBase) -> int | None:
    """The special token the chat template writes right after an assistant message, or None
    (no template, a template that refuses the probe, or plain text after the message)."""
    if not getattr(tokenizer, "chat_template", None):
        return None
    from jinja2 import TemplateError  # a transformers dependency

    probe = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": _MARKER}]
    try:
        text = tokenizer.apply_chat_template(probe, tokenize=False)
    except TemplateError:
        return None
    if not isinstance(text, str) or _MARKER not in text:
        return None
    after = text[text.rindex(_MARKER) + len(_MARKER):].lstrip(" ")
    ids = tokenizer(after, add_special_tokens=False)["input_ids"] if after else []
    special = set(tokenizer.all_special_ids) | set(getattr(tokenizer, "added_tokens_decoder", {}))
    return ids[0] if ids and ids[0] in special else None


def stop_token_ids(tokenizer: PreTrainedTokenizerBase, model: PreTrainedModel | None = None) -> tuple[int, ...]:
    """EOS first, then the model's `generation_config.eos_token_id` (an id or a list, as HF
    instruct models ship), then the template's end-of-turn token; each once."""
    ids: list[int] = [tokenizer.eos_token_id]
    generation = getattr(model, "generation_config", None)
    configured = getattr(generation, "eos_token_id", None)
    ids += configured if isinstance(configured, (list, tuple)) else [configured] if configured is not None else []
    if (turn := end_of_turn_id(tokenizer)) is not None:
        ids.append(turn)
    return tuple(dict.fromkeys(int(i) for i in ids if i is not None))


def folder_stop_ids(tokenizer: PreTrainedTokenizerBase, model_path: str) -> tuple[int, ...]:
    """`stop_token_ids` with the generation config of the model folder, read without loading
    the weights: for a driver whose engine (Ray workers, vLLM) loads the model elsewhere.
    `tokenizer` is the driver's, its template set (model.chat_template)."""
    from types import SimpleNamespace

    from transformers import AutoConfig, GenerationConfig

    try:
        generation = GenerationConfig.from_pretrained(model_path)
    except OSError:  # no generation_config.json: transformers derives one from config.json on load
        generation = GenerationConfig.from_model_config(AutoConfig.from_pretrained(model_path))
    return stop_token_ids(tokenizer, SimpleNamespace(generation_config=generation))
