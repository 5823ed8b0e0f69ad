"""Turn rendering: how the first observation and each later observation become token ids.

A renderer tokenises only what it adds (the prompt once, then each observation's delta on its
own); the policy's turns are never rendered, their sampled ids are kept as they are.

Plain format (`PlainRenderer`, for tokenizers without a chat template, e.g. the shipped
char-level models):

    <first observation>                      the prompt, as single-turn tasks have it
    <policy turn>                            sampled ids, EOS included when sampled
    \\n<obs>OBSERVATION</obs>\\n              each later observation, ids masked out
    <policy turn> ...

Chat format (`ChatRenderer`, where the tokenizer has a chat template): the prompt is
`apply_chat_template([user: first observation], tools=..., add_generation_prompt=True)`; an
observation is the text that the template adds when a `tool` message follows an assistant
message, with the generation prompt of the next assistant turn: render [user, assistant] and
[user, assistant, tool] and keep the second's text after the assistant's content. When the
policy's turn ended with EOS and the delta starts with the EOS token's text (Qwen's
`<|im_end|>`), that prefix is dropped: the policy already sampled it.
"""

from __future__ import annotations

import abc

from transformers import PreTrainedTokenizerBase

OBS_OPEN, OBS_CLOSE = "<obs>", "</obs>"
_PLACEHOLDER = "@@rlvr-assistant-turn@@"  # stands for the policy's turn when finding the delta


class Renderer(abc.ABC):
    """Text → the ids to append; `tokenizer` is the engine's."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase):
        self.tokenizer = tokenizer

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    @abc.abstractmethod
    def prompt_ids(self, observation: str, tools: list[dict] | None = None) -> list[int]:
        """The first turn's prompt from the environment's first observation."""

    @abc.abstractmethod
    def observation_ids(self, observation: str, last_policy_id: int | None) -> list[int]:
        """The ids of one later observation, to append after the policy's turn."""


class PlainRenderer(Renderer):
    """The documented plain format above. Tool schemas are the environment's business to
    describe in its first observation (there is no template to put them in)."""

    def prompt_ids(self, observation: str, tools: list[dict] | None = None) -> list[int]:
        return self.encode(observation)

    def observation_ids(self, observation: str, last_policy_id: int | None) -> list[int]:
        return self.encode(f"\n{OBS_OPEN}{observation}{OBS_CLOSE}\n")


class ChatRenderer(Renderer):
    """The tokenizer's own chat template, observations as `tool` messages (see the module)."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase):
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError(f"{type(tokenizer).__name__} has no chat template; use PlainRenderer")
        super().__init__(tokenizer)

    def _render(self, messages: list[dict], generation_prompt: bool, tools=None) -> str:
        return self.tokenizer.apply_chat_template(messages, tools=tools, tokenize=False,
                                                  add_generation_prompt=generation_prompt)

    def prompt_ids(self, observation: str, tools: list[dict] | None = None) -> list[int]:
        return self.encode(self._render([{"role": "user", "content": observation}], True, tools))

    def observation_ids(self, observation: str, last_policy_id: int | None) -> list[int]:
        return self.encode(self.observation_text(observation, last_policy_id))

    def observation_text(self, observation: str, last_policy_id: int | None) -> str:
        base = [{"role": "user", "content": "question"}, {"role": "assistant", "content": _PLACEHOLDER}]
        full = self._render([*base, {"role": "tool", "content": observation}], True)
        cut = full.find(_PLACEHOLDER)
        if cut < 0:
            raise ValueError("the chat template does not render the assistant's content verbatim; "
                             "cannot find where the policy's turn ends")
        delta = full[cut + len(_PLACEHOLDER):]
        if observation not in delta:
            raise ValueError("the chat template drops `tool` messages; it cannot render tool results")
        eos = self.tokenizer.eos_token
        if last_policy_id is not None and last_policy_id == self.tokenizer.eos_token_id and eos \
                and delta.startswith(eos):
            delta = delta[len(eos):]
        return delta


def renderer_for(tokenizer: PreTrainedTokenizerBase) -> Renderer:
    """The chat renderer where the tokenizer has a template, else the plain one."""
    return ChatRenderer(tokenizer) if getattr(tokenizer, "chat_template", None) else PlainRenderer(tokenizer)
