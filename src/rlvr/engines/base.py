"""The engine contract: prompts in, rollouts with sampling log-probs out; new weights in."""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from rlvr.types import Rollout


@dataclass(frozen=True)
class SamplingParams:
    """How to sample. `temperature == 0` means greedy. `min_new_tokens` suppresses EOS until
    that many tokens exist (the benchmark uses it to fix the completion length)."""

    max_new_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    stop: tuple[str, ...] = field(default_factory=tuple)
    min_new_tokens: int = 0
    top_k: int = 0  # keep the k most probable tokens, then top_p within them; 0 = off
    # Sampling-mask replay (algo.sampling_mask = "replay"): record each token's kept-set size
    # in `Rollout.support` and report log-probs of the truncated distribution it was drawn from.
    replay_support: bool = False

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0 = off), got {self.top_k}")
        if self.replay_support and self.min_new_tokens > 0:
            # the stop tokens banned before min_new_tokens leave the kept set, which then is no
            # prefix of the probability order that the trainer replays
            raise ValueError("replay_support with min_new_tokens > 0 is not built: the kept set excludes the "
                             "banned stop tokens, which the trainer cannot rebuild")


class Engine(abc.ABC):
    """Turns prompts into rollouts. Every engine passes tests/engines/test_contract.py.

    This is all that the loops (rlvr.orchestrate) and evaluation (rlvr.evaluate) may use of an
    engine; code that needs more builds a concrete engine by name (rlvr.serve, the in-process
    judge) and says so."""

    @abc.abstractmethod
    def generate(self, prompts: list[str], n: int, params: SamplingParams) -> list[list[Rollout]]:
        """Sample `n` completions for each prompt; result[i][j] is completion j of prompt i."""

    @abc.abstractmethod
    def generate_ids(self, rows: list[list[int]], params: SamplingParams) -> list[Rollout]:
        """Sample one completion for each row of prompt token ids; result[i] continues rows[i].

        Token fidelity (what multi-turn episodes rely on, rlvr.envs.episodes): the ids are the
        prompt exactly as given, never decoded and re-tokenised, nothing added (no BOS, no
        template); `result[i].prompt_ids == tuple(rows[i])`. Each rollout carries, as in
        `generate`, the sampled ids, one sampling log-prob per sampled id (the quantity the
        trainer recomputes, in this engine's convention: see its module) and the
        `policy_version` of the weights that sampled it; it ends on the engine's stop tokens
        (kept in `completion_ids`) or on a stop string of `params.stop` (kept in the ids, cut
        from `text`), else after `params.max_new_tokens` ("length"). The randomness is
        `generator`'s. An empty row raises ValueError; the room left in the model's context is
        the caller's to budget (the episode runner's `max_total_tokens`)."""

    @abc.abstractmethod
    def load_weights(self, state_dict: dict[str, torch.Tensor], version: int) -> None:
        """Replace the policy weights with the trainer's; `version` is its step count.

        `state_dict` holds every weight of a full model; for an engine holding a LoRA model it
        may hold only the adapter tensors (rlvr.train.lora.engine_weights), which is what the
        loops send then. A key the model lacks, or a required key absent, raises
        `WeightKeyError` (rules in rlvr.engines.weight_keys); no key is ignored silently."""

    @property
    @abc.abstractmethod
    def policy_version(self) -> int:
        """The trainer step whose weights the engine samples from."""

    @property
    @abc.abstractmethod
    def generator(self) -> torch.Generator:
        """All of the engine's sampling randomness. The loop checkpoints its state
        (`get_state`) and restores it on resume (`set_state`); evaluation reseeds it and puts
        the saved state back. Same weights, same state, same prompts: same rollouts."""

    @property
    def scoring_model(self) -> torch.nn.Module | None:
        """The model this engine samples with, when it lives in this process and may be read
        by model-based rewards (RLPR scores with the weights that generated the batch, and the
        async trainer thread does not touch this copy); None when the weights live elsewhere
        (vLLM's workers, Ray actors)."""
        return None

    def stats(self) -> dict[str, float]:
        """Engine metrics for the step's metrics line (e.g. workers replaced); none by default."""
        return {}

    def close(self) -> None:
        """Stop what the engine started (worker processes, an engine core) now rather than at
        this process's exit; a run calls it when it ends. The engine cannot sample afterwards
        unless it says otherwise. Nothing to stop by default."""

    def accept_inflight_weights(self, poll: "Callable[[], tuple[dict, int] | None]") -> None:
        """In-flight weight updates (PipelineRL): call `poll` between decode steps and load
        the (state_dict, version) it returns, if any, into the running generation. Engines
        that cannot (a generation is one remote call) refuse."""
        raise NotImplementedError(f"{type(self).__name__} cannot take weights during a generation")


class HeldStateEngine(Engine):
    """An engine that holds its policy version and its sampling generator itself (the
    in-process, Ray and vLLM engines): it sets `self._version` and `self._generator`."""

    _version: int
    _generator: torch.Generator

    @property
    def policy_version(self) -> int:
        return self._version

    @property
    def generator(self) -> torch.Generator:
        return self._generator


def check_rows(rows: list[list[int]]) -> None:
    """`generate_ids`'s input check: every row holds at least one token id."""
    for i, row in enumerate(rows):
        if len(row) == 0:
            raise ValueError(f"row {i} of generate_ids has no token ids: a prompt needs at least one")


def split_rows(rows: list[list[int]], workers: int, generator: torch.Generator) -> tuple[list[list[list[int]]], list[int]]:
    """One contiguous chunk of rows per worker (fewer when there are fewer rows) and one
    sampling seed per chunk drawn from `generator`: a chunk's rollouts then depend on its rows
    and seed only, not on which worker ran it (the Ray and local-pool engines)."""
    size = -(-len(rows) // workers)
    chunks = [rows[i:i + size] for i in range(0, len(rows), size)]
    seeds = torch.randint(0, 2**62, (len(chunks),), generator=generator).tolist()
    return chunks, seeds
