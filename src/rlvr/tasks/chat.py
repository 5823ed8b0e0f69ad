"""Prompts given as chat messages, rendered to text with the tokenizer's chat template.

    [{"role": "system", "content": "Answer with a number."}, {"role": "user", "content": "2+3="}]

becomes the template's text for that conversation followed by the generation prompt (the
opening of the assistant's turn, `<|im_start|>assistant\\n` for Qwen's template), which is what
the engine continues. The text is encoded without adding special tokens (the engines do so),
so a template that writes `{{ bos_token }}` gets exactly one BOS.

`model.chat_template` says which template: "auto" (the tokenizer's own), "none" (no template:
a messages prompt is an error), or the path of a jinja file that replaces the tokenizer's. A
plain-text prompt is used as it is whatever the setting. The engine's stop condition follows
the template's end-of-turn token (rlvr.engines.stop_tokens).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlvr.errors import ConfigError, DatasetError

KEYWORD_SETTINGS = ("auto", "none")


def template_file(setting: str, base: Path) -> Path | None:
    """The jinja file a `model.chat_template` setting names (read from the working directory,
    else from `base`), or None for "auto" / "none"."""
    if setting in KEYWORD_SETTINGS:
        return None
    path = Path(setting)
    if not path.is_absolute() and not path.exists():
        path = base / path
    if not path.is_file():
        raise ConfigError(f"model.chat_template = {setting!r}: no such file (use 'auto', 'none', or the path of a "
                          f"jinja template)")
    return path


def with_chat_template(tokenizer, setting: str, base: Path):
    """The tokenizer, its template replaced by the file `setting` names (when it names one).
    The tokenizer saved with a checkpoint then carries that template."""
    path = template_file(setting, base)
    if path is not None:
        try:
            tokenizer.chat_template = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"model.chat_template = {setting!r}: {path} is not UTF-8 text") from None
    return tokenizer


def check_messages(value: Any, where: str) -> list[dict[str, str]]:
    """A column value → the messages it holds, each {"role", "content"} (other keys kept when
    not null); DatasetError naming `where` and the message otherwise."""
    if not isinstance(value, list) or not value:
        raise DatasetError(f"{where}: expected a non-empty list of messages, got {_kind(value)}")
    messages = []
    for i, message in enumerate(value):
        if not isinstance(message, dict):
            raise DatasetError(f"{where}: message {i} is {_kind(message)}, expected an object with 'role' and 'content'")
        role, content = message.get("role"), message.get("content")
        if not isinstance(role, str) or not role.strip():
            raise DatasetError(f"{where}: message {i} has no 'role' (a string: system, user, assistant...)")
        if not isinstance(content, str):
            raise DatasetError(f"{where}: message {i} ({role}) has no string 'content', got {_kind(content)}")
        # A struct column gives every message every key of the file's schema, null where absent.
        messages.append({k: v for k, v in message.items() if v is not None})
    if not any(m["content"].strip() for m in messages):
        raise DatasetError(f"{where}: every message is empty")
    if messages[-1]["role"] == "assistant":
        raise DatasetError(f"{where}: the last message is the assistant's; a prompt ends with the turn the "
                           f"model answers (user or system)")
    return messages


def render(tokenizer, setting: str, messages: list[dict[str, str]], where: str) -> str:
    """The prompt text of `messages`: the template with the generation prompt."""
    if setting == "none":
        raise ConfigError(f"model.chat_template = 'none', but {where} holds chat messages; set it to 'auto' "
                          f"(the tokenizer's template) or to a jinja file, or give plain-text prompts")
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(f"model.chat_template = {setting!r}: the tokenizer ({tokenizer.name_or_path}) has no "
                          f"chat template, but {where} holds chat messages; set model.chat_template to a "
                          f"jinja file, or give plain-text prompts")
    from jinja2 import TemplateError  # a transformers dependency

    try:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    except TemplateError as e:  # the template's own raise_exception("Conversation roles must alternate...")
        raise DatasetError(f"{where}: the chat template refuses these messages ({e})") from None
    if not isinstance(text, str) or not text.strip():
        raise DatasetError(f"{where}: the chat template rendered these messages as empty text")
    return text


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", type(None): "null", bool: "a boolean",
             int: "an integer", float: "a number"}
    if isinstance(value, list) and not value:
        return "an empty list"
    return names.get(type(value), type(value).__name__)


def renderer(setting: str, get_tokenizer):
    """`render(messages, where)` for rlvr.tasks.files, with `get_tokenizer()` (the tokenizer,
    its template set) called on the first messages prompt only: plain-text files load none."""
    cache: list = []

    def render_one(messages: list[dict[str, str]], where: str) -> str:
        if not cache:
            cache.append(get_tokenizer())
        return render(cache[0], setting, messages, where)

    return render_one
