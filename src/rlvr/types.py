"""Plain data passed between the stages of a step (see DESIGN.md, "One step, as data").

These types carry no behaviour beyond small derived views; every stage imports them and
none of them imports a stage.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import torch

FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class Sample:
    """One task item: a prompt, its gold answer, and where it came from (for error messages).

    `extra` holds a dataset's other columns named in `task.extra_fields` (rlvr.tasks.files);
    a reward function that takes one of them by keyword gets its value (rewards/calling.py).
    It is left out of the hash (a dict has none), so samples stay usable as set members."""

    prompt: str
    answer: str
    source: str = ""  # e.g. "data.jsonl:12" or "arithmetic/train#3"
    extra: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Rollout:
    """One completion of one prompt, as the engine produced it.

    `completion_ids` includes the stop token (EOS, or the chat template's end-of-turn token) when
    `finish_reason == "stop"` on a token, because the policy sampled it and must be trained on
    it; `text` excludes it. `logprobs[t]` is the
    log-probability under the sampling distribution (after temperature) of `completion_ids[t]`.
    """

    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    text: str
    finish_reason: FinishReason
    policy_version: int = 0  # the version that produced the first token (the oldest)
    # With in-flight weight updates, the version whose weights produced each token; empty when
    # every token came from `policy_version`.
    token_versions: tuple[int, ...] = ()
    # Multi-turn episodes (rlvr.envs): 1 on the completion tokens the policy sampled, 0 on the
    # observation and template tokens spliced in between turns (their `logprobs` are 0 and they
    # leave the loss); empty when every completion token is the policy's (single-turn).
    loss_mask: tuple[int, ...] = ()
    # Sampling-mask replay (SamplingParams.replay_support): per token, the size k_t of the set
    # the engine drew it from, the k_t most probable tokens of the tempered distribution (top-k
    # / top-p keep a prefix of that order); `logprobs` are then of that truncated distribution.
    # Empty when not recorded; 0 on tokens the policy did not sample.
    support: tuple[int, ...] = ()


@dataclass(frozen=True)
class Scored:
    """A rollout with its reward, the verifier's reason, and any flags the reward stack raised.

    `episode`: for a multi-turn episode (rlvr.envs.scored), its record as samples.jsonl keeps
    it (turns with their actions, observations, rewards and tool calls; the stop reason);
    None for a single-turn rollout."""

    sample: Sample
    rollout: Rollout
    reward: float
    reason: str
    flags: tuple[str, ...] = ()
    episode: dict[str, Any] | None = field(default=None, hash=False)
    # One advantage per completion token, set by per-turn credit (rlvr.envs.credit); None: the
    # batch chain's algo.advantage gives the row one value.
    token_adv: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Batch:
    """The tensors one optimiser step trains on. B rows, P prompt columns, T completion columns.

    Prompts are left-padded to P and completions right-padded to T, so that
    `input_ids[:, P:]` are the completion tokens and the logits at columns P-1 .. P+T-2
    predict them.

    input_ids:       (B, P+T) long
    attention_mask:  (B, P+T) long, 1 on real tokens
    completion_mask: (B, T) float, 1 on completion tokens that enter the loss
    old_logp:        (B, T) float, log-probs of the behaviour policy (the sampler)
    adv:             (B, T) float, advantage of each token
    group_ids:       (B,) long, index of the prompt group of each row, in [0, n_groups)
    ref_logp:        (B, T) float or None, log-probs of the reference model
    is_weight:       (B, T) float or None, truncated importance weights correcting the
                     engine/trainer mismatch (multiply the policy term of the loss)
    lm_weight:       (B, T) float or None, weights of VAPO's positive-example LM loss
                     (`rlvr.algo.imitation`), computed on the full batch
    cov_select:      (B, T) float or None, 1 on the tokens Clip-Cov / KL-Cov act on
                     (`rlvr.algo.entropy_control`), selected on the full batch
    support:         (B, T) long or None, sampling-mask replay: the engine's kept-set size
                     per token (`Rollout.support`; 0 = the full vocabulary); the policy's
                     log-probs are then renormalised over that set (`rlvr.train.logprobs`)
    """

    input_ids: "torch.Tensor"
    attention_mask: "torch.Tensor"
    completion_mask: "torch.Tensor"
    old_logp: "torch.Tensor"
    adv: "torch.Tensor"
    group_ids: "torch.Tensor"
    ref_logp: "torch.Tensor | None" = None
    is_weight: "torch.Tensor | None" = None  # (B, T) engine/trainer mismatch weights, no gradient
    lm_weight: "torch.Tensor | None" = None  # (B, T) positive-example LM loss weights
    cov_select: "torch.Tensor | None" = None  # (B, T) entropy-control token selection
    support: "torch.Tensor | None" = None  # (B, T) long, kept-set sizes (sampling-mask replay)

    @property
    def prompt_len(self) -> int:
        return self.input_ids.shape[1] - self.completion_mask.shape[1]

    def to(self, device: "torch.device | str") -> "Batch":
        """The same batch with every tensor on `device` (a no-op where they already are)."""
        moved = {f.name: None if (v := getattr(self, f.name)) is None else v.to(device)
                 for f in dataclasses.fields(self)}
        return Batch(**moved)

    def rows(self, index: "torch.Tensor") -> "Batch":
        """The sub-batch of the given rows (micro-batching), padding kept as it is."""
        return Batch(**{f.name: None if (v := getattr(self, f.name)) is None else v[index]
                        for f in dataclasses.fields(self)})


IGNORE = -100  # the label of a token a supervised loss does not train on (PyTorch's ignore_index)


@dataclass(frozen=True)
class SFTExample:
    """One supervised example (rlvr.tasks.sft_rows → rlvr.train.sft_batches): token ids and
    their labels, the id where the loss trains on the token and IGNORE elsewhere."""

    ids: list[int]
    labels: list[int]
    source: str  # "file row i"
