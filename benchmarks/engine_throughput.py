"""rlvr's in-process engine against plain `model.generate`, on the same sampling work.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/engine_throughput.py [--reps 5] [--out FILE]

The model is WORKLOAD.md's (3.97M-parameter Qwen2, random init, character tokenizer, fp32) and
the work is one rollout batch of the workload: 8 prompts x 8 samples, 64 new tokens each,
temperature 1. Both sides are forced to the same length (EOS suppressed until 64 tokens), so
they generate exactly the same number of tokens:

  - `HFEngine.generate(prompts, 8, SamplingParams(64, min_new_tokens=64))`: rlvr's sampler,
    which also returns each token's log-prob, the finish reasons and decoded text.
  - `model.generate(ids, attention_mask, do_sample=True, top_k=0, min_new_tokens=64,
    max_new_tokens=64, num_return_sequences=8)` with `output_scores=True`, so that it too
    keeps what log-probs need (without it, it does less work than the engine).

The two run interleaved, `--reps` times each after one warm-up, and the report is the ratio
of the medians (tokens/s of the engine over tokens/s of `generate`), measured in the same run
on the same machine: absolute times on a shared machine are noise.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_throughput import GROUP, MODEL, NEW_TOKENS, PROMPTS_PER_STEP, make_prompts  # noqa: E402

from rlvr.engines import HFEngine, SamplingParams  # noqa: E402
from rlvr.engines.hf import left_pad  # noqa: E402
from rlvr.models import build_char_tokenizer, tiny_qwen2  # noqa: E402


def time_engine(engine: HFEngine, prompts: list[str]) -> tuple[float, int]:
    params = SamplingParams(max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, temperature=1.0)
    t0 = time.perf_counter()
    groups = engine.generate(prompts, GROUP, params)
    seconds = time.perf_counter() - t0
    return seconds, sum(len(r.completion_ids) for g in groups for r in g)


def time_generate(model, tokenizer, prompts: list[str]) -> tuple[float, int]:
    rows = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
    ids, mask = left_pad(rows, tokenizer.pad_token_id)
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, top_k=0, top_p=1.0,
                             temperature=1.0, min_new_tokens=NEW_TOKENS, max_new_tokens=NEW_TOKENS,
                             num_return_sequences=GROUP, output_scores=True, return_dict_in_generate=True,
                             pad_token_id=tokenizer.pad_token_id)
    seconds = time.perf_counter() - t0
    return seconds, int(out.sequences[:, ids.shape[1]:].numel())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    args = ap.parse_args()
    torch.set_num_threads(os.cpu_count() or 1)
    tokenizer = build_char_tokenizer(128)
    model = tiny_qwen2(**MODEL).eval()
    prompts = [text for text, _ in make_prompts()[:PROMPTS_PER_STEP]]
    engine = HFEngine(model, tokenizer, seed=0)
    time_engine(engine, prompts), time_generate(model, tokenizer, prompts)  # warm-up
    engine_s, generate_s, tokens = [], [], set()
    for _ in range(args.reps):
        for timings, run in ((engine_s, lambda: time_engine(engine, prompts)),
                             (generate_s, lambda: time_generate(model, tokenizer, prompts))):
            seconds, n = run()
            timings.append(seconds)
            tokens.add(n)
    if len(tokens) != 1:
        raise SystemExit(f"the two sides generated different token counts: {sorted(tokens)}")
    n = tokens.pop()
    result = {"tokens_per_call": n, "reps": args.reps,
              "engine_tokens_per_s": n / statistics.median(engine_s),
              "generate_tokens_per_s": n / statistics.median(generate_s),
              "engine_over_generate": statistics.median(generate_s) / statistics.median(engine_s),
              "engine_s": engine_s, "generate_s": generate_s}
    print(f"{n} tokens a call; median over {args.reps}: HFEngine {result['engine_tokens_per_s']:.0f} tok/s, "
          f"model.generate {result['generate_tokens_per_s']:.0f} tok/s; "
          f"HFEngine / generate = {result['engine_over_generate']:.2f}x")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
