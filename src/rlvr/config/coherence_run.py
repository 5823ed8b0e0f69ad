"""The cross-field rules of [algo] (the objective's axes and the advantage) and of the run's
machinery ([sampling], [orchestrate], [model] engine and LoRA, [train] FSDP). Part of
config/coherence.py, which runs them at load; split off only for length."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from rlvr import names
from rlvr.config.vllm_section import vllm_lora_refusal

if TYPE_CHECKING:
    from rlvr.config.algo_section import AlgoSection
    from rlvr.config.schema import Config

SEQUENCE_RATIOS = ("sequence", "sequence_sum")  # one log-ratio a row, its gradient spread over the row


def algo_incoherences(c: Config) -> Iterator[str]:
    yield from kl_incoherences(c)
    yield from surrogate_incoherences(c.algo)
    yield from per_token_incoherences(c.algo)
    yield from advantage_incoherences(c)
    a = c.algo
    if a.aggregation == "seq_mean_token_sum_norm" and a.seq_mean_token_sum_norm.constant is None and c.env.kind != "none":
        # single-turn, C defaults to sampling.max_new_tokens (orchestrate/plan.py); an episode's
        # completion spans several turns, whose budget only the user knows
        yield ("algo.aggregation = 'seq_mean_token_sum_norm' in an environment run needs "
               "algo.seq_mean_token_sum_norm.constant: Dr. GRPO's C, the episode's generation budget "
               "(sampling.max_new_tokens is one turn's)")


def kl_incoherences(c: Config) -> Iterator[str]:
    a = c.algo
    if c.model.teacher_path and a.kl == "none":
        yield "model.teacher_path is the KL target: set algo.kl (k2 in the loss for reverse-KL distillation) and algo.kl_coef"
    if a.kl == "none" and a.kl_coef > 0:
        yield "algo.kl_coef > 0 needs algo.kl set to an estimator (" + ", ".join(n for n in names.KL.names if n != "none") + ")"
    if a.kl != "none" and a.kl_coef == 0:
        yield f"algo.kl = {a.kl!r} has no effect with algo.kl_coef = 0"
    if a.kl == "none" and a.kl_clamp is not None:
        yield "algo.kl_clamp bounds the KL term: it needs algo.kl set"


def surrogate_incoherences(a: AlgoSection) -> Iterator[str]:
    """The surrogate's own options ([algo.dual_clip], ...) are present exactly when it is
    chosen (config/algo_section.py); these are the rules between them and the shared axes."""
    if a.surrogate in ("ppo_clip", "dual_clip") and a.eps_low >= 1:
        yield (f"algo.surrogate = {a.surrogate!r} with algo.eps_low = {a.eps_low} >= 1 never clips low; "
               "only 'cispo' takes an unbounded lower side")
    if a.surrogate == "dual_clip" and a.dual_clip.clip_c <= 1:
        yield (f"algo.surrogate = 'dual_clip' needs algo.dual_clip.clip_c > 1 (arXiv:1912.09729), got "
               f"{a.dual_clip.clip_c}: with "
               "c <= 1 the bound is active on-policy and cuts every negative-advantage gradient")
    if a.surrogate == "gmpo" and a.ratio_level != "token":
        yield (f"algo.surrogate = 'gmpo' takes token log-ratios (it forms the geometric mean itself), "
               f"not algo.ratio_level = {a.ratio_level!r}")
    if a.surrogate in ("dppo_tv", "dppo_kl") and a.ratio_level != "token":
        yield (f"algo.surrogate = {a.surrogate!r} bounds each token's own probability, so it takes token "
               f"log-ratios, not algo.ratio_level = {a.ratio_level!r}")
    if a.surrogate in ("dppo_tv", "dppo_kl") and a.options("surrogate").clip_c <= 1:
        yield (f"algo.surrogate = {a.surrogate!r} needs algo.{a.surrogate}.clip_c > 1 (its IS-weight cap; the paper "
               f"recommends a large one), got {a.options('surrogate').clip_c}")
    if a.surrogate == "vespo" and a.ratio_level != "token":
        yield (f"algo.surrogate = 'vespo' takes token log-ratios (it forms the sequence weight itself), "
               f"not algo.ratio_level = {a.ratio_level!r}")
    if a.surrogate == "cispo" and a.ratio_level in SEQUENCE_RATIOS:
        yield (f"algo.surrogate = 'cispo' with algo.ratio_level = {a.ratio_level!r}: CISPO weights each token's own "
               "log-prob gradient, but the sequence log-ratio spreads 1/|y| of it over the row; use "
               "algo.ratio_level = 'sequence_token' for a sequence-level weight with CISPO")


def advantage_varies_per_token(a: AlgoSection) -> bool:
    """GAE, and REINFORCE++ with a discount or a KL in the reward, give advantages that vary
    along a completion; the group advantage (even with a KL in the reward, summed per row)
    and undiscounted REINFORCE++ give one value a row."""
    if a.advantage == "gae":
        return True
    return a.advantage == "reinforce_pp" and (a.reinforce_pp.gamma < 1 or (a.kl_placement == "reward" and a.kl != "none"))


def per_token_incoherences(a: AlgoSection) -> Iterator[str]:
    if not advantage_varies_per_token(a):
        return
    cause = f"algo.advantage = {a.advantage!r}" + (" (a discount or a KL in the reward)" if a.advantage != "gae" else "")
    if a.surrogate == "gmpo":
        yield (f"algo.surrogate = 'gmpo' with per-token advantages ({cause}): GMPO's objective is one per "
               "sequence, -A_i times the geometric-mean ratio, so A must be constant along the row")
    if a.ratio_level in SEQUENCE_RATIOS:
        yield (f"algo.ratio_level = {a.ratio_level!r} with per-token advantages ({cause}): the sequence ratio "
               "averages every token's gradient over the row and loses the per-token credit; use "
               "algo.ratio_level = 'sequence_token' (GSPO-token, arXiv:2507.18071)")


def advantage_incoherences(c: Config) -> Iterator[str]:
    a = c.algo
    if a.baseline in ("group_mean", "rloo", "length_weighted", "passk") and c.sampling.group_size == 1:
        yield f"algo.baseline = {a.baseline!r} needs sampling.group_size >= 2 (a group of one has zero advantage)"
    if a.advantage == "reinforce_pp" and a.scale != "none":
        yield "algo.advantage = 'reinforce_pp' whitens over the batch itself: set algo.scale = 'none'"
    if a.advantage == "reinforce_pp" and a.baseline not in ("none", "group_mean"):
        yield "algo.advantage = 'reinforce_pp' takes algo.baseline 'none' or 'group_mean' (REINFORCE++-baseline)"
    if a.advantage == "gae" and (a.baseline != "none" or a.scale != "none"):
        yield "algo.advantage = 'gae' takes its baseline from the critic: set algo.baseline and algo.scale to 'none'"


def local_pool_incoherences(c: Config) -> Iterator[str]:
    """What `orchestrate.rollout_workers > 1` on the local backend (rlvr.engines.local_pool) is not built for."""
    why = "orchestrate.rollout_workers > 1 with orchestrate.backend = 'local' (local processes over shared weights)"
    if c.model.engine != "hf":
        yield f"{why} needs model.engine = 'hf'"
    if c.model.device.startswith("cuda"):
        yield f"{why} samples on the CPU: set model.device = 'cpu', or use one process on a GPU"
    if c.train.fsdp:
        yield f"{why} is not built for train.fsdp"
    if c.orchestrate.inflight_updates:
        yield f"{why} cannot take weights mid-generation: orchestrate.inflight_updates is not built for it"
    if c.model.lora_rank:
        yield f"{why} is not built for LoRA policies (model.lora_rank > 0)"


def run_incoherences(c: Config) -> Iterator[str]:
    s, o = c.sampling, c.orchestrate
    if s.overlong_cache is not None and s.overlong_cache > s.max_new_tokens:
        yield "sampling.overlong_cache is above sampling.max_new_tokens (the budget L_max)"
    if s.min_new_tokens > s.max_new_tokens:
        yield "sampling.min_new_tokens is above sampling.max_new_tokens"
    if o.mode != "async" and o.max_staleness > 0:
        yield "orchestrate.max_staleness > 0 needs orchestrate.mode = 'async'"
    if o.backend == "local" and o.rollout_workers > 1:
        yield from local_pool_incoherences(c)
    if o.inflight_updates and o.mode != "async":
        yield "orchestrate.inflight_updates needs orchestrate.mode = 'async'"
    if o.inflight_updates and o.backend != "local":
        yield "orchestrate.inflight_updates is built for the in-process engine only (orchestrate.backend = 'local')"
    if o.inflight_updates and c.model.engine != "hf":
        yield (f"orchestrate.inflight_updates needs model.engine = 'hf' (the {c.model.engine!r} engine cannot "
               "take weights mid-generation)")
    if o.inflight_at != 0.5 and not (o.mode == "async" and o.exact and o.inflight_updates):
        yield ("orchestrate.inflight_at is only read by an exact async run with in-flight updates "
               "(orchestrate.mode = 'async', orchestrate.exact = true, orchestrate.inflight_updates = true)")
    yield from vllm_incoherences(c)
    yield from fsdp_incoherences(c)
    yield from schedule_incoherences(c)
    yield from sampling_mask_incoherences(c)


def schedule_incoherences(c: Config) -> Iterator[str]:
    t = c.train
    if t.warmup_steps and t.warmup_ratio is not None:
        yield "train.warmup_steps and train.warmup_ratio both set the warm-up: set one"
    updates = t.steps * t.updates_per_batch
    if t.warmup_steps > updates:
        yield (f"train.warmup_steps ({t.warmup_steps}) is above the run's {updates} optimiser updates "
               "(train.steps * train.updates_per_batch): the warm-up would never end")
    if t.lr_schedule == "constant" and t.min_lr_ratio != 0.0:
        yield "train.min_lr_ratio is only read by train.lr_schedule = 'linear' or 'cosine'"


def sampling_mask_incoherences(c: Config) -> Iterator[str]:
    """Sampling-mask replay needs an engine that records each token's kept set, and a set to
    replay."""
    s = c.sampling
    if c.algo.sampling_mask != "replay":
        return
    if c.model.engine != "hf":
        yield (f"algo.sampling_mask = 'replay' needs model.engine = 'hf': the {c.model.engine!r} engine does not "
               "report the top-k / top-p set it sampled each token from")
    if s.top_p == 1 and s.top_k == 0:
        yield ("algo.sampling_mask = 'replay' with sampling.top_p = 1 and sampling.top_k = 0 has nothing to "
               "replay (every token is drawn from the whole vocabulary)")
    if s.min_new_tokens > 0:
        yield ("algo.sampling_mask = 'replay' with sampling.min_new_tokens > 0 is not built: the stop tokens "
               "banned before it leave the sampled set in a way the trainer does not rebuild")
    if c.env.kind != "none":
        yield (f"algo.sampling_mask = 'replay' with env.kind = {c.env.kind!r} is not built: an episode's turns "
               "do not record the set each token was sampled from")


def vllm_incoherences(c: Config) -> Iterator[str]:
    """What the vLLM engine cannot honour."""
    if c.model.engine != "vllm":
        return
    if c.orchestrate.backend != "local":
        yield (f"model.engine = 'vllm' runs in this process; orchestrate.backend = {c.orchestrate.backend!r} "
               "(Ray workers with vLLM) is not built")
    if c.model.lora_rank > 0 and (refusal := vllm_lora_refusal(c.model.lora_rank, c.model.lora_targets)):
        yield f"model.engine = 'vllm': {refusal}"
    if (c.sampling.top_p < 1 or c.sampling.top_k > 0) and c.algo.mismatch == "none":
        yield (f"model.engine = 'vllm' with sampling.top_p = {c.sampling.top_p} (top_k = {c.sampling.top_k}) "
               "reports log-probs of the "
               "truncated distribution, which differ from the trainer's: set algo.mismatch = 'token_tis' "
               "(or 'sequence_tis') to correct for it")


def fsdp_incoherences(c: Config) -> Iterator[str]:
    """What this first FSDP version does not handle (the launch itself is checked when the
    process group is joined: train/distributed.py)."""
    if not c.train.fsdp:
        return
    if c.orchestrate.mode != "sync":
        yield ("train.fsdp needs orchestrate.mode = 'sync': the async producer's timing differs between "
               "ranks, so their batches would differ")
    if c.orchestrate.backend != "local":
        yield "train.fsdp needs orchestrate.backend = 'local' (each rank generates in-process)"
    if c.algo.advantage == "gae":
        yield "train.fsdp does not shard the critic yet (algo.advantage = 'gae')"
    if c.model.lora_rank:
        yield "model.lora_rank > 0 with train.fsdp is not supported yet"
    if c.model.dtype != "float32" and c.model.master_weights == "fp32":
        yield (f"model.master_weights = 'fp32' with train.fsdp is not supported yet (model.dtype = "
               f"{c.model.dtype!r}): set model.master_weights = 'none' or model.dtype = 'float32'")
