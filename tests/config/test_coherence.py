"""Every cross-field rule (config/coherence.py, coherence_run.py): one case each that breaks only
that rule, refused by `load_config` with a sentence naming the key(s); deleting any one rule
makes its case fail. Plus the recipes the issue found accepted at load and failing later, and
the load's speed without torch."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
GAE = ['algo.advantage="gae"', 'algo.baseline="none"', 'algo.scale="none"']
RPP = ['algo.advantage="reinforce_pp"', 'algo.scale="none"']
GYM = ['task.kind="reasoning_gym"']

# name: (overrides on the defaults, a fragment of the rule's sentence, with the key it names)
CASES = {
    # [algo]: KL
    "teacher_needs_kl": (['model.teacher_path="t"'], "model.teacher_path is the KL target: set algo.kl"),
    "kl_coef_without_kl": (["algo.kl_coef=0.1"], "algo.kl_coef > 0 needs algo.kl set"),
    "kl_without_coef": (['algo.kl="k3"'], "algo.kl = 'k3' has no effect with algo.kl_coef = 0"),
    "clamp_without_kl": (["algo.kl_clamp=10.0"], "algo.kl_clamp bounds the KL term: it needs algo.kl"),
    # [algo]: the surrogate and its parameters (the registry's declared ones)
    "clip_c_without_dual_clip": (["algo.dual_clip.clip_c=1.5"],
                                 "algo.dual_clip.clip_c is read only when algo.surrogate = 'dual_clip' (not 'ppo_clip')"),
    "dual_clip_without_clip_c": (['algo.surrogate="dual_clip"'], "algo.dual_clip.clip_c is required"),
    "cispo_with_dual_clip": (['algo.surrogate="cispo"', "algo.dual_clip.clip_c=3.0"], "(not 'cispo')"),
    "sapo_without_taus": (['algo.surrogate="sapo"'], "algo.sapo.tau_neg is required"),
    "dro_beta_without_dro": (["algo.dro.beta=2.0"], "algo.dro.beta is read only when algo.surrogate = 'dro'"),
    "old_flat_clip_c_of_cispo": (['algo.surrogate="cispo"', "algo.clip_c=3.0"],
                                 "algo.clip_c is read only when algo.surrogate = 'dual_clip' / 'dppo_tv' / 'dppo_kl'"),
    "ppo_eps_low_ge_1": (["algo.eps_low=1.0"], "algo.eps_low = 1.0 >= 1 never clips low"),
    "dual_clip_c_at_most_1": (['algo.surrogate="dual_clip"', "algo.dual_clip.clip_c=1.0"], "needs algo.dual_clip.clip_c > 1"),
    "gmpo_sequence_ratio": (['algo.surrogate="gmpo"', 'algo.ratio_level="sequence_token"'],
                            "'gmpo' takes token log-ratios (it forms the geometric mean itself), not algo.ratio_level"),
    "cispo_sequence_ratio": (['algo.surrogate="cispo"', 'algo.ratio_level="sequence_sum"'],
                             "algo.surrogate = 'cispo' with algo.ratio_level = 'sequence_sum'"),
    "vespo_sequence_ratio": (['algo.surrogate="vespo"', 'algo.ratio_level="sequence"', "algo.vespo.k_pos=2",
                              "algo.vespo.lambda_pos=3", "algo.vespo.k_neg=3", "algo.vespo.lambda_neg=2"],
                             "'vespo' takes token log-ratios (it forms the sequence weight itself)"),
    "vespo_without_its_keys": (['algo.surrogate="vespo"'], "algo.vespo.k_pos is required"),
    "dppo_sequence_ratio": (['algo.surrogate="dppo_tv"', 'algo.ratio_level="sequence"', "algo.dppo_tv.clip_c=3"],
                            "'dppo_tv' bounds each token's own probability"),
    "dppo_small_cap": (['algo.surrogate="dppo_kl"', "algo.dppo_kl.clip_c=1"], "'dppo_kl' needs algo.dppo_kl.clip_c > 1"),
    "gmpo_per_token_advantages": ([*GAE, 'algo.surrogate="gmpo"'], "A must be constant along the row"),
    "sequence_ratio_with_gae": ([*GAE, 'algo.ratio_level="sequence"'],
                                "algo.ratio_level = 'sequence' with per-token advantages (algo.advantage = 'gae')"),
    "sequence_ratio_with_discount": ([*RPP, "algo.reinforce_pp.gamma=0.9", 'algo.ratio_level="sequence_sum"'],
                                     "loses the per-token credit"),
    # [algo]: aggregation, entropy control, advantage
    "sum_norm_without_constant_in_env": (['algo.aggregation="seq_mean_token_sum_norm"', 'env.kind="guess_number"',
                                          'task.kind="guess_number"'], "in an environment run needs algo.seq_mean_token_sum_norm.constant"),
    "constant_without_sum_norm": (["algo.seq_mean_token_sum_norm.constant=8.0"],
                                  "algo.seq_mean_token_sum_norm.constant is read only when algo.aggregation"),
    "cov_band_empty": (['algo.entropy_control="clip_cov"', "algo.clip_cov.low=5.0"],
                       "algo.clip_cov.low (5.0) must be below algo.clip_cov.high"),
    "cov_table_without_clip_cov": (["algo.clip_cov.low=0.5"], "algo.clip_cov.low is read only when algo.entropy_control"),
    "baseline_of_one": (["sampling.group_size=1"], "algo.baseline = 'group_mean' needs sampling.group_size >= 2"),
    "reinforce_pp_scaled": (['algo.advantage="reinforce_pp"'], "whitens over the batch itself: set algo.scale"),
    "reinforce_pp_rloo": ([*RPP, 'algo.baseline="rloo"'], "takes algo.baseline 'none' or 'group_mean'"),
    "reinforce_pp_passk": ([*RPP, 'algo.baseline="passk"'], "takes algo.baseline 'none' or 'group_mean'"),
    "passk_of_one": (["sampling.group_size=1", 'algo.baseline="passk"'], "algo.baseline = 'passk' needs sampling.group_size >= 2"),
    "gae_with_group_baseline": (['algo.advantage="gae"'], "algo.advantage = 'gae' takes its baseline from the critic"),
    "lam_without_gae": (["algo.gae.lam_critic=1.0"], "algo.gae.lam_critic is read only when algo.advantage = 'gae'"),
    # [sampling], [orchestrate], engine, FSDP
    "overlong_above_budget": (["sampling.overlong_cache=16"], "sampling.overlong_cache is above sampling.max_new_tokens"),
    "min_above_max_tokens": (["sampling.min_new_tokens=9"], "sampling.min_new_tokens is above"),
    "staleness_in_sync": (["orchestrate.max_staleness=1"], "orchestrate.max_staleness > 0 needs orchestrate.mode"),
    "local_workers_vllm": (["orchestrate.rollout_workers=2", "model.engine=vllm"], "shared weights) needs model.engine = 'hf'"),
    "local_workers_cuda": (["orchestrate.rollout_workers=2", "model.device=cuda"], "samples on the CPU"),
    "local_workers_inflight": (["orchestrate.rollout_workers=2", "orchestrate.mode=async", "orchestrate.max_staleness=1",
                                "orchestrate.inflight_updates=true"], "cannot take weights mid-generation"),
    "local_workers_lora": (["orchestrate.rollout_workers=2", "model.lora_rank=4"], "not built for LoRA"),
    "local_workers_fsdp": (["orchestrate.rollout_workers=2", "train.fsdp=true"], "is not built for train.fsdp"),
    "inflight_at_unread": (["orchestrate.inflight_at=0.25", 'orchestrate.mode="async"', "orchestrate.exact=true"],
                           "orchestrate.inflight_at is only read by an exact async run with in-flight updates"),
    "inflight_in_sync": (["orchestrate.inflight_updates=true"], "orchestrate.inflight_updates needs orchestrate.mode"),
    "inflight_on_ray": (["orchestrate.inflight_updates=true", 'orchestrate.mode="async"', 'orchestrate.backend="ray"'],
                        "inflight_updates is built for the in-process engine only"),
    "inflight_on_vllm": (["orchestrate.inflight_updates=true", 'orchestrate.mode="async"', 'model.engine="vllm"'],
                         "orchestrate.inflight_updates needs model.engine = 'hf'"),
    "vllm_on_ray": (['model.engine="vllm"', 'orchestrate.backend="ray"'], "(Ray workers with vLLM) is not built"),
    "vllm_lora_rank": (['model.engine="vllm"', "model.lora_rank=600"], "600: 512 is the largest rank vLLM's LoRA"),
    "vllm_lora_target": (['model.engine="vllm"', "model.lora_rank=8", 'model.lora_targets=["embed_tokens"]'],
                         "vLLM's LoRA does not take ['embed_tokens']"),
    "vllm_top_p_uncorrected": (['model.engine="vllm"', "sampling.top_p=0.9"], "set algo.mismatch = 'token_tis'"),
    "vllm_top_k_uncorrected": (['model.engine="vllm"', "sampling.top_k=20"], "(top_k = 20) reports log-probs"),
    "replay_on_vllm": (['algo.sampling_mask="replay"', 'model.engine="vllm"', "sampling.top_p=0.9",
                        'algo.mismatch="token_tis"'], "algo.sampling_mask = 'replay' needs model.engine = 'hf'"),
    "replay_full_vocabulary": (['algo.sampling_mask="replay"'], "has nothing to replay"),
    "replay_min_new_tokens": (['algo.sampling_mask="replay"', "sampling.top_p=0.9", "sampling.min_new_tokens=2"],
                              "sampling.min_new_tokens > 0 is not built"),
    "fsdp_async": (["train.fsdp=true", 'orchestrate.mode="async"'], "train.fsdp needs orchestrate.mode = 'sync'"),
    "fsdp_ray": (["train.fsdp=true", 'orchestrate.backend="ray"'], "train.fsdp needs orchestrate.backend = 'local'"),
    "fsdp_gae": (["train.fsdp=true", *GAE], "train.fsdp does not shard the critic yet"),
    "fsdp_lora": (["train.fsdp=true", "model.lora_rank=8"], "model.lora_rank > 0 with train.fsdp"),
    "fsdp_bf16_master": (["train.fsdp=true", "model.dtype=\"bfloat16\""], "model.master_weights = 'fp32' with train.fsdp"),
    # [task], [eval]
    "jsonl_without_train_path": (['task.kind="jsonl"'], "task.kind = 'jsonl' needs task.train_path"),
    "datasets_without_train_path": (['task.kind="datasets"'], "task.kind = 'datasets' needs task.train_path"),
    "datasets_two_test_splits": (['task.kind="datasets"', 'task.train_path="t.parquet"', 'task.test_path="e.parquet"',
                                  "task.test_fraction=0.1"], "task.test_path and task.test_fraction both give"),
    "paths_for_arithmetic": (['task.test_path="t.jsonl"'], "task.test_path is an option of task.kind = 'jsonl'"),
    "low_above_high": (["task.low=50", "task.high=20"], "task.low (50) is above task.high (20)"),
    "train_on_humaneval": (['task.kind="humaneval"', 'reward.verifier="code"'], "task.kind = 'humaneval' has no training split"),
    "gym_without_generators": ([*GYM, "task.gym_tasks=[]", 'reward.verifier="exact"'], "task.gym_tasks is empty"),
    "gym_math_on_text": ([*GYM, 'task.gym_tasks=["basic_arithmetic", "spell_backward"]'],
                         "reward.verifier = 'math' cannot score the non-numeric generator(s) ['spell_backward']"),
    "k_above_samples": (["eval.samples=4", "eval.k=[8]"], "eval.k = [8] must lie in 1 .. eval.samples (4)"),
    "keep_best_unknown": (['eval.keep_best="eval/pass@4"'], "eval.keep_best = 'eval/pass@4' is not an eval metric"),
    # [reward]
    "rubric_without_criteria": (['reward.verifier="rubric"'], "needs at least one [[reward.rubric]] criterion"),
    "rules_without_rules": (['reward.verifier="rules"'], "reward.verifier = 'rules' needs reward.rules"),
    "criteria_without_rubric": (['reward.rubric=[{name = "a", verifier = "math"}]'], "reward.rubric is only read"),
    "rules_without_verifier": (['reward.rules=["be brief"]'], "reward.rules is only read"),
    "http_judge_without_url": (['reward.judge.backend="http"'], "reward.judge.backend = 'http' needs reward.judge.url"),
    "probability_async_on_ray": (['reward.verifier="probability"', 'orchestrate.mode="async"', 'orchestrate.backend="ray"'],
                                 "reward.verifier = 'probability' in async mode needs the in-process engine"),
    # rules of one section (run by the section's validator)
    "bad_ops": (['task.ops="/"'], "task.ops = '/': use some of"),
    "too_many_problems": (["task.low=0", "task.high=100000"], "are enumerated"),
    "test_split_takes_all": (["task.low=1", "task.high=2"], "task.test_size = 500 leaves no training problem"),
    "criterion_two_scorers": (['reward.verifier="rubric"', 'reward.rubric=[{name = "a", verifier = "math", question = "q"}]'],
                              "criterion 'a' needs exactly one of function, verifier, question"),
    "format_without_template": (['reward.verifier="format"'], "the format verifier checks the answer template"),
    "template_for_code": (['reward.verifier="code"', 'reward.template="boxed"'], "reward.template = 'boxed' applies to"),
}


@pytest.mark.parametrize("overrides, sentence", CASES.values(), ids=CASES.keys())
def test_each_rule_refuses_its_case_at_load_naming_the_key(overrides, sentence):
    with pytest.raises(ConfigError) as info:
        load_config(None, overrides)
    assert sentence in str(info.value)


def test_neighbours_of_the_refused_cases_load():
    """The same axes, set coherently: each rule fires only on its own combination."""
    for overrides in (['algo.surrogate="dual_clip"', "algo.dual_clip.clip_c=3.0"], ['algo.surrogate="sapo"',
                      "algo.sapo.tau_pos=1.0", "algo.sapo.tau_neg=1.05"], ['algo.surrogate="cispo"', 'algo.ratio_level="sequence_token"'],
                      [*GAE, 'algo.ratio_level="sequence_token"'], [*RPP, 'algo.ratio_level="sequence"'],
                      ['model.engine="vllm"', "sampling.top_p=0.9", 'algo.mismatch="token_tis"'],
                      ['algo.sampling_mask="replay"', "sampling.top_p=0.7"],
                      ['algo.surrogate="dppo_tv"', "algo.dppo_tv.clip_c=20"],
                      ['algo.surrogate="vespo"', "algo.vespo.k_pos=2", "algo.vespo.lambda_pos=3", "algo.vespo.k_neg=3",
                       "algo.vespo.lambda_neg=2"],
                      ['algo.sampling_mask="replay"', "sampling.top_k=5"],
                      ["train.fsdp=true"], ["orchestrate.rollout_workers=2"], [*GYM, 'task.gym_tasks=["basic_arithmetic"]'],
                      [*GYM, 'task.gym_tasks=["spell_backward"]', 'reward.verifier="exact"']):
        load_config(None, overrides)


@pytest.mark.parametrize("overrides, keys", [
    (["train.fsdp=true", 'orchestrate.mode="async"'], ["train.fsdp", "orchestrate.mode"]),
    (['model.engine="vllm"', "model.lora_rank=600"], ["model.engine", "model.lora_rank"]),
    ([*GAE, 'algo.ratio_level="sequence"'], ["algo.ratio_level", "algo.advantage"]),
    (['task.kind="humaneval"', 'reward.verifier="code"'], ["task.kind"]),
    (['algo.surrogate="cispo"', 'algo.ratio_level="sequence"'], ["algo.surrogate", "algo.ratio_level"]),
], ids=["fsdp_async", "vllm_lora", "gae_sequence_ratio", "train_on_humaneval", "cispo_sequence_ratio"])
def test_grpo_variants_that_failed_only_later_are_refused_at_load(overrides, keys):
    """The issue's list: accepted by load_config before, failing only once the run started."""
    with pytest.raises(ConfigError) as info:
        load_config(REPO / "recipes" / "grpo.toml", overrides)
    message = str(info.value)
    assert message.startswith(f"{REPO / 'recipes' / 'grpo.toml'}: ") and all(k in message for k in keys)


def test_an_incoherent_recipe_is_refused_fast_and_without_torch(tmp_path):
    recipe = tmp_path / "bad.toml"
    grpo = (REPO / "recipes" / "grpo.toml").read_text()
    recipe.write_text(grpo.replace("[train]\n", "[train]\nfsdp = true\n") + '\n[orchestrate]\nmode = "async"\n')
    probe = textwrap.dedent(f"""
        import sys, time
        t0 = time.perf_counter()
        from rlvr.config import load_config
        from rlvr.errors import ConfigError
        try:
            load_config({str(recipe)!r})
        except ConfigError as e:
            message = str(e)
        else:
            raise SystemExit("accepted")
        elapsed = time.perf_counter() - t0
        assert "train.fsdp needs orchestrate.mode = 'sync'" in message, message
        assert 'torch' not in sys.modules, "torch was imported"
        print(elapsed)
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) < 1.5
