"""The shared-prompt tail pass with `GQA_SDPA` against transformers' SDPA, one training forward +
backward at a time, the two interleaved in one process.

    nice -n -10 env OMP_WAIT_POLICY=PASSIVE python benchmarks/tail_attention.py [--rounds 6] [--out FILE]

`rlvr.train.shared_prompt` runs the tail pass (the completion positions against the prompt's
KV cache) under its own attention function, `GQA_SDPA`: on the CPU, with a mask and grouped
K/V heads, it calls SDPA with `enable_gqa=True` and one additive mask per pass, where
transformers' SDPA attention repeats each K/V head for its query heads and turns the bool mask
into a float one in every layer. This times `completion_logprobs` (share_prompts on) with its
backward both ways on random-weight Qwen2 models of vs_trl.py's shapes:

- w1: 4M (hidden 256, 4 layers, 4 query / 2 K/V heads), 8 prompts x 8 completions of 64
  tokens, WORKLOAD.md's prompts (all 22 tokens: every row's mask is the same);
- g7: the same model at 1024 positions, 2 x 16 completions of 512 tokens;
- w1-ragged: w1 with prompts of 12 to 22 tokens, left-padded (the mask differs by row).

Rounds alternate the two sides; the figures are medians over rounds, with the largest
log-prob difference and the largest gradient difference relative to its tensor's largest
entry, between the sides. Peak memory is not measured here (one
process holds both sides): `rss_phases.py` measures it per process.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CASES = {  # name: (max positions, prompts, group, completion tokens, ragged prompts)
    "w1": (512, 8, 8, 64, False),
    "g7": (1024, 2, 16, 512, False),
    "w1-ragged": (512, 8, 8, 64, True),
}


def batch_for(case: str, tokenizer):
    import torch

    from rlvr.train.batching import collate
    from rlvr.types import Rollout
    from step_throughput import make_prompts

    _, prompts, group, tokens, ragged = CASES[case]
    rng = random.Random(0)
    rows = []
    for i, (text, _) in enumerate(make_prompts()[:prompts]):
        ids = tuple(tokenizer(text)["input_ids"])
        ids = ids[rng.randint(1, 10):] if ragged and i else ids  # the first keeps its 22
        for _ in range(group):
            completion = tuple(rng.randrange(3, 128) for _ in range(tokens))
            rows.append(Rollout(ids, completion, (0.0,) * tokens, "", "length"))
    n = len(rows)
    return collate(rows, torch.randn(n), torch.arange(n) // group, tokenizer.pad_token_id)


def one_pass(model, batch, gqa: bool):
    """Seconds for one forward + backward, its log-probs and gradients."""
    import rlvr.train.shared_prompt as shared
    from rlvr.train.logprobs import completion_logprobs

    real = shared.masked_gqa
    if not gqa:
        shared.masked_gqa = lambda module: contextlib.nullcontext()
    try:
        model.zero_grad(set_to_none=True)
        start = time.perf_counter()
        logp = completion_logprobs(model, batch, entropy=False)[0]
        (logp * batch.completion_mask).sum().backward()
        seconds = time.perf_counter() - start
    finally:
        shared.masked_gqa = real
    return seconds, logp.detach(), [p.grad.clone() for p in model.parameters()]


def run_case(case: str, rounds: int) -> dict:
    import torch

    from rlvr.models import build_char_tokenizer, tiny_qwen2
    from vs_trl import SMALL

    positions = CASES[case][0]
    torch.manual_seed(20240601)
    model = tiny_qwen2(**{**SMALL, "max_positions": positions, "vocab_size": 128})
    tokenizer = build_char_tokenizer(128)
    batch = batch_for(case, tokenizer)
    times = {True: [], False: []}
    one_pass(model, batch, True), one_pass(model, batch, False)  # warm-up, both sides
    for r in range(rounds):
        for gqa in ((True, False) if r % 2 == 0 else (False, True)):
            seconds, logp, grads = one_pass(model, batch, gqa)
            times[gqa].append(seconds)
            if gqa:
                new = (logp, grads)
            else:
                old = (logp, grads)
    mask = batch.completion_mask.bool()
    return dict(case=case, rows=batch.input_ids.shape[0], positions=batch.input_ids.shape[1],
                gqa_s=statistics.median(times[True]), sdpa_s=statistics.median(times[False]),
                ratio=statistics.median(times[True]) / statistics.median(times[False]),
                logp_max_diff=float((new[0] - old[0])[mask].abs().max()),
                grad_max_rel=max(float((a - b).abs().max() / b.abs().max()) for a, b in zip(new[1], old[1])),
                load=os.getloadavg()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--only", default=",".join(CASES), help="cases, comma-separated")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    results = []
    for case in args.only.split(","):
        if case not in CASES:
            parser.error(f"--only: unknown case {case!r}; known: {', '.join(CASES)}")
        res = run_case(case, args.rounds)
        results.append(res)
        print(f"{case}: {res['rows']} rows x {res['positions']} positions; forward + backward GQA_SDPA "
              f"{res['gqa_s']:.3f} s, transformers' SDPA {res['sdpa_s']:.3f} s ({res['ratio']:.2f}x); "
              f"max diff log-probs {res['logp_max_diff']:.1e}, gradients {res['grad_max_rel']:.1e} of the tensor's largest "
              f"(load {res['load']:.2f})", flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
