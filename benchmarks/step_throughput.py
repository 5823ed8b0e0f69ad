"""Time rlvr on the fixed GRPO workload `arith64-tinyqwen2-g8-v1` (shared/bench/WORKLOAD.md).

    OMP_WAIT_POLICY=PASSIVE python benchmarks/step_throughput.py [--steps 10] [--out FILE]
        [--profile [FILE.pstats]] [--torch-profile] [--hf-decode] [--ab-decode]

Every stage goes through rlvr's own components: `HFEngine.generate` samples, the reward below
scores, `outcome_advantages` + `collate` build the batch, `Trainer.step` runs the training
forward, backward and AdamW, and `HFEngine.load_weights` syncs the weights back.

The headline is "x of floor": s/step over the FLOP floor, the step's FLOPs (computed from the
model config as WORKLOAD.md counts them) over the fp32 `torch.mm` rate this machine reaches
*in the same run*. The mm rate is sampled before every step and after the last one, each step
is divided by the floor at the best rate sampled next to it, and the median over steps 2..N is
reported; this follows a shared machine whose speed changes during the run. The "strict"
figure divides the median s/step by the floor at the best rate of the whole run.

`--profile` runs cProfile over the last step and prints the top functions; `--torch-profile`
runs torch.profiler over the last step's generation and training and prints the time per op
category and the top ops. A profiled step is left out of the medians. `--hf-decode` samples
through the model's own forward (`HFEngine(fast_decode=False)`) instead of the default fast
Qwen2 decode path. `--ab-decode` also times the *other* decode path on the same prompts and
weights every step, just before the step (outside its timings), and reports what the step's
x of floor would have been with that generation time: both paths measured in one run.
"""

from __future__ import annotations

import os

# Read by the OpenMP runtime when torch loads it; WORKLOAD.md fixes PASSIVE.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import copy  # noqa: E402
import cProfile  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402

from rlvr.algo import Objective, outcome_advantages  # noqa: E402
from rlvr.engines import HFEngine, SamplingParams  # noqa: E402
from rlvr.models import build_char_tokenizer, tiny_qwen2  # noqa: E402
from rlvr.train import OptimConfig, Trainer  # noqa: E402
from rlvr.train.batching import collate  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profiling import print_profile, torch_profile_summary  # noqa: E402

WORKLOAD = "arith64-tinyqwen2-g8-v1"
MODEL = dict(hidden_size=256, intermediate_size=1024, num_layers=4, num_heads=4, num_kv_heads=2,
             vocab_size=128, seed=20240601)
N_PARAMS = 3_969_280
N_PROMPTS, PROMPT_SEED, PROMPT_TOKENS = 64, 1234, 22
PROMPTS_PER_STEP, GROUP = 8, 8
NEW_TOKENS = 64
ENGINE_SEED = 0
THREADS = 2
MM_SHAPE = (2048, 2048, 1024)  # (m, k, n): a (m, k) @ (k, n) fp32 product
MM_REPS_PER_STEP = 3


# --- workload -------------------------------------------------------------------------------

def make_prompts() -> list[tuple[str, int]]:
    """The 64 (prompt, a+b) pairs of WORKLOAD.md, in draw order."""
    rng = random.Random(PROMPT_SEED)
    out = []
    for _ in range(N_PROMPTS):
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        out.append((f"What is {a}+{b}? Answer:", a + b))
    return out


_INT = re.compile(r"-?\d+")


def reward(text: str, gold: int) -> float:
    """Exact match of the last integer in the completion against a+b: 1.0 or 0.0."""
    found = _INT.findall(text)
    return float(bool(found) and int(found[-1]) == gold)


def check_setup(model, tokenizer) -> None:
    """Fail loudly if the model or the tokenizer is not the one WORKLOAD.md fixes."""
    n = sum(p.numel() for p in model.parameters())
    assert n == N_PARAMS, f"model has {n:,} parameters, WORKLOAD.md says {N_PARAMS:,}"
    c = model.config
    assert (c.hidden_size, c.intermediate_size, c.num_hidden_layers) == (256, 1024, 4), c
    assert (c.num_attention_heads, c.num_key_value_heads, c.head_dim) == (4, 2, 64), c
    assert c.vocab_size == 128 and c.tie_word_embeddings, c
    # transformers 5 keeps rope_theta in rope_parameters; 4.x has it as an attribute.
    theta = (getattr(c, "rope_parameters", None) or {}).get("rope_theta", getattr(c, "rope_theta", None))
    assert theta == 1e4 and c.rms_norm_eps == 1e-6, c
    assert model.get_input_embeddings().weight is model.get_output_embeddings().weight
    assert next(model.parameters()).dtype == torch.float32
    vocab = tokenizer.get_vocab()
    assert len(vocab) == 128, len(vocab)
    from rlvr.models.char_tokenizer import BYTE_LEVEL  # " " and "\n" as the byte-level vocabulary spells them

    spell = lambda ch: BYTE_LEVEL.get(ch, ch)  # noqa: E731
    assert vocab["<|endoftext|>"] == 0 and vocab["<unk>"] == 1 and vocab[spell("\n")] == 2
    for c_ in range(32, 127):
        assert vocab[spell(chr(c_))] == c_ - 29, (chr(c_), vocab[spell(chr(c_))])
    assert all(i >= 98 for t, i in vocab.items() if t.startswith("<|reserved"))
    assert tokenizer.eos_token_id == 0 and tokenizer.pad_token_id == 0
    assert tokenizer.padding_side == "left"
    assert tokenizer("A b\n~", add_special_tokens=False)["input_ids"] == [36, 3, 69, 2, 97]


def step_flops(config, prompt_len: int, new_tokens: int, batch: int) -> dict[str, float]:
    """FLOPs of one step as WORKLOAD.md counts them, from the config.

    A forward pass over a sequence of L tokens costs 2 FLOPs per weight of every linear layer
    (q, k, v, o, gate, up, down and the tied LM head) per token, plus the causal attention
    matmuls: QK^T and AV, 2 FLOPs per multiply-add each, over heads * head_dim columns and
    1 + 2 + ... + L key positions. Generation runs P + (N - 1) forward tokens per row (the
    prefill and N - 1 decode steps); training runs P + N tokens, forward + backward = 3x.
    Norms, RoPE, softmax and the optimiser are left out (they are well under 1%).
    """
    d, f, nl = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    hd, nh, nkv, v = config.head_dim, config.num_attention_heads, config.num_key_value_heads, config.vocab_size
    linear = nl * (d * nh * hd + 2 * d * nkv * hd + nh * hd * d + 3 * d * f) + v * d

    def forward(length: int) -> float:
        return 2 * linear * length + 2 * 2 * nl * nh * hd * length * (length + 1) / 2

    gen = batch * forward(prompt_len + new_tokens - 1)
    train = batch * 3 * forward(prompt_len + new_tokens)
    return {"generation": gen, "training": train, "total": gen + train}


def mm_rates(reps: int) -> list[float]:
    """GFLOP/s of fp32 torch.mm of MM_SHAPE, one figure per repetition (after one warm-up)."""
    m, k, n = MM_SHAPE
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)
    out = torch.empty(m, n)
    torch.mm(a, b, out=out)
    rates = []
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.mm(a, b, out=out)
        rates.append(2 * m * k * n / (time.perf_counter() - t0) / 1e9)
    return rates


# --- the loop -------------------------------------------------------------------------------

def run_step(step: int, prompts, engine, trainer, model, tokenizer, params,
             around=lambda phase: contextlib.nullcontext()) -> dict[str, float]:
    """One step of the workload; `around(phase)` wraps "generation" and "training"
    (the torch profiler uses it)."""
    faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    picks = [prompts[(step * PROMPTS_PER_STEP + i) % N_PROMPTS] for i in range(PROMPTS_PER_STEP)]
    t0 = time.perf_counter()
    with around("generation"):
        groups = engine.generate([p for p, _ in picks], GROUP, params)
    t1 = time.perf_counter()
    rollouts = [r for g in groups for r in g]
    rewards = torch.tensor([reward(r.text, gold) for (_, gold), g in zip(picks, groups) for r in g])
    t2 = time.perf_counter()
    group_ids = torch.arange(len(picks)).repeat_interleave(GROUP)
    adv = outcome_advantages(rewards, group_ids, baseline="group_mean", scale="group_std")
    batch = collate(rollouts, adv, group_ids, tokenizer.pad_token_id)
    t3 = time.perf_counter()
    with around("training"):
        metrics = trainer.step(batch)
    t4 = time.perf_counter()
    engine.load_weights(model.state_dict(), version=step + 1)
    t5 = time.perf_counter()

    assert all(len(r.completion_ids) == NEW_TOKENS and r.finish_reason == "length" for r in rollouts)
    assert all(len(r.prompt_ids) == PROMPT_TOKENS for r in rollouts)
    assert batch.input_ids.shape == (PROMPTS_PER_STEP * GROUP, PROMPT_TOKENS + NEW_TOKENS)
    train = metrics["time/train_forward_s"] + metrics["time/backward_s"] + metrics["time/optimizer_s"]
    return {
        "step_s": t5 - t0,
        "generation_s": t1 - t0,
        "scoring_s": t2 - t1,
        "batching_s": t3 - t2,
        "train_forward_s": metrics["time/train_forward_s"],
        "backward_s": metrics["time/backward_s"],
        "optimizer_s": metrics["time/optimizer_s"],
        "trainer_other_s": (t4 - t3) - train,
        "weight_sync_s": t5 - t4,
        "minor_faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults0,
        "reward_mean": float(rewards.mean()),
        "loss": metrics["loss/policy"],
        "grad_norm": metrics["train/grad_norm"],
    }


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--out", help="write the results as JSON to this file")
    ap.add_argument("--profile", metavar="FILE", nargs="?", const="",
                    help="cProfile the last step; print the top functions (and dump to FILE)")
    ap.add_argument("--torch-profile", action="store_true",
                    help="torch.profiler over the last step's generation and training; print the "
                         "time per op category and the top ops")
    ap.add_argument("--hf-decode", action="store_true",
                    help="sample through the model's own forward (HFEngine fast_decode=False), "
                         "not rlvr.engines.qwen2_decode")
    ap.add_argument("--ab-decode", action="store_true",
                    help="also time the other decode path each step (same prompts and weights) "
                         "and report the step's x of floor with it")
    args = ap.parse_args()
    if args.steps < 2:
        ap.error("--steps must be at least 2 (step 1 is warm-up)")
    return args


def setup(fast_decode: bool = True):
    """The workload's model, tokenizer, prompts, engine, sampling, trainer and FLOP count."""
    tokenizer = build_char_tokenizer(128)
    model = tiny_qwen2(**MODEL)
    check_setup(model, tokenizer)
    engine = HFEngine(copy.deepcopy(model), tokenizer, seed=ENGINE_SEED, fast_decode=fast_decode)
    params = SamplingParams(max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, temperature=1.0)
    objective = Objective(aggregation="token_mean", surrogate="ppo_clip",
                          surrogate_args={"eps_low": 0.2, "eps_high": 0.2})
    trainer = Trainer(model, objective, OptimConfig(lr=1e-5, max_grad_norm=1.0),
                      micro_batch_size=PROMPTS_PER_STEP * GROUP)
    flops = step_flops(model.config, PROMPT_TOKENS, NEW_TOKENS, PROMPTS_PER_STEP * GROUP)
    # The figures WORKLOAD.md states, to one decimal: a check of the formula, not its source.
    assert [round(flops[k] / 1e9, 1) for k in ("generation", "training", "total")] == [44.1, 133.9, 178.0]
    return model, tokenizer, make_prompts(), engine, params, trainer, flops


def time_other_path(other: HFEngine, step: int, prompts, params) -> float:
    """Seconds for `other` (the decode path not under test) to generate this step's rollouts."""
    picks = [prompts[(step * PROMPTS_PER_STEP + i) % N_PROMPTS][0] for i in range(PROMPTS_PER_STEP)]
    t0 = time.perf_counter()
    other.generate(picks, GROUP, params)
    return time.perf_counter() - t0


def run_steps(args, model, tokenizer, prompts, engine, params, trainer, flops, other=None):
    """Run the steps; returns the per-step records, the mm rates sampled, and the profilers.
    `other`: an engine on the other decode path, timed on each step's prompts before the step."""
    # The mm rate is sampled before every step and after the last one (outside the step
    # timings), so that a shared machine's load shows in the floor as it shows in the steps.
    mm_before = [mm_rates(MM_REPS_PER_STEP)]
    steps, prof, tprofs = [], None, {}

    @contextlib.contextmanager
    def torch_profiled(phase: str):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                    record_shapes=True) as p:
            yield
        tprofs[phase] = p

    for s in range(args.steps):
        last = s == args.steps - 1
        if args.profile is not None and last:
            prof = cProfile.Profile()
            prof.enable()
        around = torch_profiled if args.torch_profile and last else (lambda phase: contextlib.nullcontext())
        other_s = None if other is None else time_other_path(other, s, prompts, params)
        r = run_step(s, prompts, engine, trainer, model, tokenizer, params, around)
        if prof is not None:
            prof.disable()
        if other is not None:
            other.load_weights(model.state_dict(), version=s + 1)
        mm_before.append(mm_rates(MM_REPS_PER_STEP))
        # This step's own floor: the best mm rate just before or just after it.
        rate = max(mm_before[-2] + mm_before[-1]) * 1e9
        floor_s, gen_floor_s = flops["total"] / rate, flops["generation"] / rate
        r["paired_x_of_floor"] = r["step_s"] / floor_s
        r["generation_paired_x_of_floor"] = r["generation_s"] / gen_floor_s
        if other_s is not None:
            r["other_path_generation_s"] = other_s
            r["other_path_paired_x_of_floor"] = (r["step_s"] - r["generation_s"] + other_s) / floor_s
            r["other_path_generation_paired_x_of_floor"] = other_s / gen_floor_s
        steps.append(r)
        print(f"step {s + 1:2d}  {r['step_s']:6.2f} s  (generation {r['generation_s']:5.2f}, "
              f"train fwd {r['train_forward_s']:5.2f}, bwd {r['backward_s']:5.2f}, "
              f"opt {r['optimizer_s']:5.3f})  {r['paired_x_of_floor']:4.2f}x floor  "
              f"reward {r['reward_mean']:.3f}", flush=True)
    return steps, [x for xs in mm_before for x in xs], prof, tprofs


def summarize(args, steps, rates, flops, profiled: bool) -> dict:
    """Medians over steps 2..N (the profiled last step excluded) and the derived figures."""
    timed = steps[1:]  # steps 2..N; step 1 is warm-up
    if profiled and len(timed) > 1:  # a profiler slows the profiled step: leave it out
        timed = timed[:-1]
    med = {k: statistics.median(r[k] for r in timed) for k in timed[0]
           if k.endswith(("_s", "paired_x_of_floor")) or k == "minor_faults"}
    rate = max(rates)
    floor_s = flops["total"] / (rate * 1e9)
    tokens = PROMPTS_PER_STEP * GROUP * NEW_TOKENS
    return {
        "workload": WORKLOAD,
        "steps": args.steps,
        "s_per_step": med["step_s"],
        "x_of_floor": med["paired_x_of_floor"],
        "generation_x_of_its_floor": med["generation_paired_x_of_floor"],
        **({"other_decode_path": {
            "path": "fast" if args.hf_decode else "hf",
            "x_of_floor": med["other_path_paired_x_of_floor"],
            "generation_x_of_its_floor": med["other_path_generation_paired_x_of_floor"],
            "generation_s": med["other_path_generation_s"]}} if "other_path_generation_s" in med else {}),
        "x_of_floor_best_rate": med["step_s"] / floor_s,
        "completion_tokens_per_s": tokens / med["step_s"],
        "split_s": {k[:-2]: v for k, v in med.items() if k.endswith("_s") and k != "step_s"},
        "generation_share": med["generation_s"] / med["step_s"],
        "minor_page_faults_per_step": med["minor_faults"],
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "gflop_per_step": {k: v / 1e9 for k, v in flops.items()},
        "achieved_gflop_s": flops["total"] / 1e9 / med["step_s"],
        "mm_gflop_s": {"best": rate, "median": statistics.median(rates), "all": rates,
                       "shape": list(MM_SHAPE)},
        "floor_s_best_rate": floor_s,
        "per_step": steps,
        "env": {"torch": torch.__version__, "transformers": transformers.__version__,
                "python": platform.python_version(), "threads": torch.get_num_threads(),
                "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "cpus": os.cpu_count(),
                "load_avg_1m": os.getloadavg()[0], "profiled_last_step": profiled,
                "decode_path": "hf" if args.hf_decode else "fast"},
    }


def print_report(args, result: dict, flops: dict, profiled: bool) -> None:
    sp, med_step = result["split_s"], result["s_per_step"]
    print(f"\n{WORKLOAD}: {args.steps} steps, medians of steps 2..{args.steps}, "
          f"{'HF-forward' if args.hf_decode else 'fast'} decode path"
          + (" (the profiled last step excluded)" if profiled else ""))
    print(f"  s/step               {med_step:.2f}")
    print(f"  x of floor           {result['x_of_floor']:.2f}  (median over steps of s/step over that "
          f"step's floor: {flops['total'] / 1e9:.1f} GFLOP at the best fp32 mm rate sampled just "
          "before and after it)")
    print(f"  x of floor, strict   {result['x_of_floor_best_rate']:.2f}  (median s/step over "
          f"{result['floor_s_best_rate']:.2f} s, the floor at the run's best mm rate "
          f"{result['mm_gflop_s']['best']:.0f} GFLOP/s; median mm {result['mm_gflop_s']['median']:.0f})")
    print(f"  completion tokens/s  {result['completion_tokens_per_s']:.0f}")
    print(f"  achieved GFLOP/s     {result['achieved_gflop_s']:.1f}  "
          f"({flops['generation'] / 1e9:.1f} generation + {flops['training'] / 1e9:.1f} training GFLOP)")
    print(f"  generation           {sp['generation']:.2f} s  ({result['generation_share']:.0%} of the step; "
          f"{result['generation_x_of_its_floor']:.2f}x its floor)")
    if (other := result.get("other_decode_path")) is not None:
        print(f"  other decode path    {other['path']}: generation {other['generation_s']:.2f} s "
              f"({other['generation_x_of_its_floor']:.2f}x its floor); the step at "
              f"{other['x_of_floor']:.2f}x of floor with it (timed on the same prompts and weights)")
    print(f"  scoring              {sp['scoring']:.4f} s")
    print(f"  training forward     {sp['train_forward']:.2f} s")
    print(f"  backward             {sp['backward']:.2f} s")
    print(f"  optimiser            {sp['optimizer']:.3f} s")
    print(f"  other (batching, trainer glue, weight sync)  "
          f"{sp['batching'] + sp['trainer_other'] + sp['weight_sync']:.3f} s")
    print(f"  minor page faults    {result['minor_page_faults_per_step']:.0f} per step")
    print(f"  peak RSS             {result['peak_rss_mib']:.0f} MiB"
          + (" (includes the profiler's buffers)" if args.torch_profile else ""))


def main() -> None:
    args = parse_args()
    if os.environ.get("OMP_WAIT_POLICY", "").upper() != "PASSIVE":
        print(f"warning: OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}, WORKLOAD.md fixes PASSIVE",
              file=sys.stderr)
    torch.set_num_threads(THREADS)
    model, tokenizer, prompts, engine, params, trainer, flops = setup(fast_decode=not args.hf_decode)
    other = HFEngine(copy.deepcopy(model), tokenizer, seed=ENGINE_SEED, fast_decode=args.hf_decode) \
        if args.ab_decode else None
    steps, rates, prof, tprofs = run_steps(args, model, tokenizer, prompts, engine, params, trainer, flops, other)
    profiled = prof is not None or args.torch_profile
    result = summarize(args, steps, rates, flops, profiled)
    print_report(args, result, flops, profiled)
    if prof is not None:
        print_profile(prof, args.profile or None)
    if tprofs:
        result["torch_profile"] = {ph: torch_profile_summary(p, ph) for ph, p in tprofs.items()}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
