"""Rows of supervised data → token examples whose labels mark what the loss trains on.

Two row forms, told apart by their columns:

    {"messages": [{"role": ..., "content": ...}, ...]}
        rendered with the tokenizer's chat template; labels on the assistant turns only (each
        turn's text as the template writes it, its end-of-turn marker included)
    {"prompt": text or messages, "completion": text}
        labels on the completion and the EOS token appended after it

How an assistant turn is found: the template renders messages[:i] with the generation prompt
and messages[:i+1] without it; the second must start with the first, and the difference is the
turn. Each segment is tokenized on its own (add_special_tokens=False) and the ids concatenated,
so a label boundary is always a token boundary. A template that rewrites earlier turns (so the
prefix property fails) is refused, naming the row.

Stated rules for the rows that do not fit (each counted in `SFTCounts`, logged by `rlvr sft`):
a chat row with no assistant turn is skipped (`data.no_assistant = "skip"`) or refused
("fail"); an example longer than `data.max_length` is cut to it ("truncate", the default),
left out ("drop") or refused ("fail"); an example left with no trained token is left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.errors import DatasetError
from rlvr.tasks.chat import check_messages
from rlvr.tasks.files import read_table
from rlvr.types import IGNORE, SFTExample as Example

@dataclass
class SFTCounts:
    rows: int = 0
    examples: int = 0
    no_assistant: int = 0  # chat rows skipped for want of an assistant turn
    truncated: int = 0  # examples cut to data.max_length
    dropped_overlong: int = 0  # examples left out for being longer than data.max_length
    dropped_empty: int = 0  # examples with no trained token left
    reasons: list[str] = field(default_factory=list)  # the first few rows each rule touched

    def note(self, kind: str, where: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.reasons) < 5:
            self.reasons.append(f"{where}: {kind}")


def load_examples(path: str | Path, tokenizer, data, chat_setting: str = "auto") -> tuple[list[Example], SFTCounts]:
    """Every row of `path` as an `Example` under the [data] section's rules (module docstring)."""
    path = Path(path)
    table = read_table(path)
    form = row_form(path, list(table.column_names))
    counts, examples = SFTCounts(), []
    for i, row in enumerate(table.select_columns(list(form))):
        where = f"{path} row {i}"
        counts.rows += 1
        segments = segments_of(row, where, tokenizer, chat_setting)
        if segments is None:
            if data.no_assistant == "fail":
                raise DatasetError(f"{where}: no assistant turn to train on (data.no_assistant = 'fail')")
            counts.note("no_assistant", where)
            continue
        example = fit_length(encode(segments, tokenizer, where), data, counts)
        if example is not None:
            examples.append(example)
    counts.examples = len(examples)
    if not examples:
        raise DatasetError(f"{path}: no row gave an example to train on ({counts.rows} rows; "
                           f"{', '.join(counts.reasons) or 'none'})")
    return examples, counts


def row_form(path: Path, columns: list[str]) -> tuple[str, ...]:
    if "messages" in columns:
        return ("messages",)
    if {"prompt", "completion"} <= set(columns):
        return ("prompt", "completion")
    raise DatasetError(f"{path}: expected a 'messages' column, or 'prompt' and 'completion' columns; "
                       f"its columns: {', '.join(columns)}")


def segments_of(row: dict[str, Any], where: str, tokenizer, chat_setting: str) -> list[tuple[str, bool]] | None:
    """[(text, trained)] of one row; None for a chat row with no assistant turn."""
    if "messages" in row:
        return chat_segments(tokenizer, messages_of(row["messages"], where), where, chat_setting)
    prompt, completion = row["prompt"], row["completion"]
    if not isinstance(completion, str) or not completion:
        raise DatasetError(f"{where}, column 'completion': expected non-empty text, got {type(completion).__name__}")
    if isinstance(prompt, list):
        prompt = render_chat(tokenizer, check_messages(prompt, where), where, chat_setting, True)
    elif not isinstance(prompt, str):
        raise DatasetError(f"{where}, column 'prompt': expected text or chat messages, got {type(prompt).__name__}")
    eos = tokenizer.eos_token or ""
    return [(prompt, False), (completion, True), (eos, True)]


def messages_of(value: Any, where: str) -> list[dict[str, str]]:
    """The chat messages of a training row, each {"role", "content"} (other keys kept when not
    null); any role may come last. DatasetError naming the row and the message otherwise."""
    if not isinstance(value, list) or not value:
        raise DatasetError(f"{where}, column 'messages': expected a non-empty list of messages")
    messages = []
    for i, message in enumerate(value):
        role = message.get("role") if isinstance(message, dict) else None
        if not isinstance(role, str) or not role.strip() or not isinstance(message.get("content"), str):
            raise DatasetError(f"{where}, column 'messages': message {i} needs a string 'role' and 'content'")
        messages.append({k: v for k, v in message.items() if v is not None})
    return messages


def chat_segments(tokenizer, messages: list[dict[str, str]], where: str, chat_setting: str) -> list[tuple[str, bool]] | None:
    turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    if not turns:
        return None
    segments, done = [], ""
    for i in turns:
        before = render_chat(tokenizer, messages[:i], where, chat_setting, True) if i else ""
        through = render_chat(tokenizer, messages[:i + 1], where, chat_setting, False)
        if not before.startswith(done) or not through.startswith(before):
            raise DatasetError(f"{where}: the chat template renders an earlier turn differently once message "
                               f"{i} follows, so the assistant's tokens cannot be told apart; use a template that "
                               f"appends each turn")
        segments += [(before[len(done):], False), (through[len(before):], True)]
        done = through
    return segments


def render_chat(tokenizer, messages, where: str, chat_setting: str, generation_prompt: bool) -> str:
    if chat_setting == "none" or not getattr(tokenizer, "chat_template", None):
        raise DatasetError(f"{where}: chat messages need a chat template (model.chat_template is "
                           f"{chat_setting!r} and the tokenizer has none)")
    from jinja2 import TemplateError  # a transformers dependency

    try:
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)
    except TemplateError as e:
        raise DatasetError(f"{where}: the chat template refuses these messages ({e})") from None


def encode(segments: list[tuple[str, bool]], tokenizer, where: str) -> Example:
    ids, labels = [], []
    for text, trained in segments:
        piece = tokenizer(text, add_special_tokens=False)["input_ids"] if text else []
        ids += piece
        labels += piece if trained else [IGNORE] * len(piece)
    return Example(ids, labels, where)


def fit_length(example: Example, data, counts: SFTCounts) -> Example | None:
    """The example under data.max_length and data.overlong; None when it is left out."""
    if len(example.ids) > data.max_length:
        if data.overlong == "fail":
            raise DatasetError(f"{example.source}: {len(example.ids)} tokens, more than data.max_length = "
                               f"{data.max_length} (data.overlong = 'fail')")
        if data.overlong == "drop":
            counts.note("dropped_overlong", example.source)
            return None
        counts.note("truncated", example.source)
        example = Example(example.ids[:data.max_length], example.labels[:data.max_length], example.source)
    if all(label == IGNORE for label in example.labels[1:]):  # label 0 predicts nothing
        counts.note("dropped_empty", example.source)
        return None
    return example
