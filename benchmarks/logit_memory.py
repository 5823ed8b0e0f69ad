"""Peak memory of one forward + backward of the log-prob loss at Qwen2's vocabulary
(V = 152,064), the LM head applied in chunks of tokens (`rlvr.train.logprobs`) against all
positions at once (chunk 0, the plain path), and how far apart their numbers are.

    PYTHONPATH=src python benchmarks/logit_memory.py      # plain; checkpointed 1024, 512, 256; fused 512, 256
    PYTHONPATH=src python benchmarks/logit_memory.py --chunks 512 --fused --tokens 448

Model: a random 1-layer Qwen2 (hidden 64, untied head, float32) at V = 152,064, so that the
head and its logits dominate as they do at a large vocabulary; batch B = 4 rows of 16 prompt and
`--tokens` completion tokens (default 448: 1,792 tokens, whose (B, T, V) float32 logits are
1.09 GB). Loss: sum(w * logp) + 0.01 * sum(w * entropy), with the entropy's gradient ("bonus")
or without it ("metric", the trainer's default: the entropy is only logged).

Each (mode, chunk) runs in its own subprocess, so that one's peak cannot hide another's. On a
CPU the peak is the process's ru_maxrss less its resident size just before the step; on CUDA it
is torch.cuda.max_memory_allocated less the memory allocated before the step. The subprocess
saves its log-probs, entropies and gradients; the parent compares them to chunk 0's.

"fused" rows are a prototype kept here for the comparison, not rlvr's path: a custom autograd
function (`FusedHeadChunk`) that writes the logits' gradient in place; it holds fewer (N, V)
buffers than checkpointing but handles only an untied-or-tied float32 Linear head at
temperature 1, and its values are not bit-identical to the plain path's.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

V = 152_064
MB = 2**20


def build(tokens: int, device: str):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from rlvr.train.batching import collate
    from rlvr.types import Rollout

    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=V, hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=1024,
                         tie_word_embeddings=False)
    model = Qwen2ForCausalLM(config).to(device)
    g = torch.Generator().manual_seed(1)
    rollouts = [Rollout(prompt_ids=tuple(torch.randint(V, (16,), generator=g).tolist()),
                        completion_ids=tuple(torch.randint(V, (tokens,), generator=g).tolist()),
                        logprobs=(0.0,) * tokens, text="", finish_reason="length") for _ in range(4)]
    batch = collate(rollouts, torch.zeros(4), torch.arange(4), 0).to(device)
    return model, batch


class FusedHeadChunk(torch.autograd.Function):
    """A prototype to compare with checkpointing, not used by rlvr: log-prob and entropy of one
    chunk through a float32 Linear head (temperature 1), whose backward recomputes the logits
    and writes d/dz in place over them, so a chunk holds two (N, V) buffers, not four or five.
    d logp_t / dz_j = [j = t] - p_j;  d H / dz_j = -p_j (log p_j + H)."""

    @staticmethod
    def forward(ctx, hidden, weight, targets, entropy_grad):
        logp_all = hidden @ weight.T  # (N, V), then log-softmax in place
        logp_all -= logp_all.logsumexp(-1, keepdim=True)
        entropy = -(logp_all.exp() * logp_all).sum(-1)
        ctx.save_for_backward(hidden, weight, targets, entropy)
        if not entropy_grad:
            ctx.mark_non_differentiable(entropy)
        return logp_all.gather(-1, targets[:, None])[:, 0], entropy

    @staticmethod
    def backward(ctx, g_logp, g_entropy):
        hidden, weight, targets, entropy = ctx.saved_tensors
        buf = hidden @ weight.T
        buf -= buf.logsumexp(-1, keepdim=True)  # log p
        p = buf.exp()
        if g_entropy is None:
            buf = p.mul_(-g_logp[:, None])
        else:  # -p_j (g_logp + g_H (log p_j + H)), in buf
            buf.add_(entropy[:, None]).mul_(g_entropy[:, None]).add_(g_logp[:, None]).mul_(p).neg_()
            del p
        buf.scatter_add_(-1, targets[:, None], g_logp[:, None])
        return buf @ weight, buf.T @ hidden, None, None


def fused_logprobs(model, batch, chunk: int, bonus: bool):
    from rlvr.train.logprobs import completion_hidden

    hidden = completion_hidden(model.model, batch)
    targets = batch.input_ids[:, batch.prompt_len:]
    n_chunks = -(-targets.numel() // chunk)
    pieces = [FusedHeadChunk.apply(h, model.lm_head.weight, t, bonus) for h, t in
              zip(hidden.reshape(-1, hidden.shape[-1]).tensor_split(n_chunks), targets.reshape(-1).tensor_split(n_chunks))]
    return (torch.cat([x[i] for x in pieces]).view_as(targets) for i in (0, 1))


def resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def worker(chunk: int, bonus: bool, fused: bool, tokens: int, out: Path) -> None:
    """One forward + backward; prints 'peak_mb seconds' and saves the numbers to `out`."""
    from rlvr.train.logprobs import completion_logprobs

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, batch = build(tokens, device)
    w = torch.linspace(-1.0, 1.0, batch.completion_mask.numel(), device=device).view_as(batch.completion_mask)
    if device == "cuda":
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
    else:
        before = resident_bytes()
    t0 = time.perf_counter()
    if fused:
        logp, entropy = fused_logprobs(model, batch, chunk, bonus)
    else:
        logp, entropy = completion_logprobs(model, batch, chunk=chunk, entropy_grad=bonus)
    ((w * logp).sum() + 0.01 * (w * entropy).sum()).backward()
    if device == "cuda":
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - before
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before  # KiB on Linux
    seconds = time.perf_counter() - t0
    grads = torch.cat([p.grad.flatten() for p in model.parameters()])
    torch.save({"logp": logp.detach().cpu(), "entropy": entropy.detach().cpu(), "grads": grads.cpu()}, out)
    print(f"{peak / MB:.0f} {seconds:.2f} {device}")


def run_one(chunk: int, bonus: bool, fused: bool, tokens: int, folder: Path) -> tuple[float, float, str, Path]:
    out = folder / f"{bonus}_{fused}_{chunk}.pt"
    cmd = [sys.executable, __file__, "--worker", str(chunk), "--tokens", str(tokens), "--out", str(out)]
    cmd += (["--bonus"] if bonus else []) + (["--fused-worker"] if fused else [])
    line = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split("\n")[-2]
    peak, seconds, device = line.split()
    return float(peak), float(seconds), device, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, nargs="+", default=[1024, 512, 256], help="checkpointed chunk sizes")
    ap.add_argument("--fused", type=int, nargs="*", default=[512, 256], help="prototype FusedHeadChunk sizes")
    ap.add_argument("--tokens", type=int, default=448, help="completion tokens per row (4 rows)")
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--bonus", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--fused-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        return worker(args.worker, args.bonus, args.fused_worker, args.tokens, args.out)
    print(f"V = {V}, B x T = 4 x {args.tokens} = {4 * args.tokens} tokens, (B, T, V) float32 logits = "
          f"{4 * args.tokens * V * 4 / MB:.0f} MB")
    print("| entropy | path | chunk | peak MB | vs plain | step s | max abs diff logp | entropy | grad (max abs grad) |")
    print("|---|---|---|---|---|---|---|---|---|")
    variants = [("plain", 0)] + [("checkpoint", c) for c in args.chunks] + [("fused", c) for c in args.fused]
    with tempfile.TemporaryDirectory() as folder:
        for bonus in (False, True):
            base = None
            for path, chunk in variants:
                peak, seconds, device, out = run_one(chunk, bonus, path == "fused", args.tokens, Path(folder))
                numbers = torch.load(out)
                base = base or (peak, numbers)
                diff = {k: float((numbers[k] - base[1][k]).abs().max()) for k in numbers}
                print(f"| {'bonus' if bonus else 'metric'} | {path} | {chunk} | {peak:.0f} | {peak / base[0]:.3f} | "
                      f"{seconds:.2f} | {diff['logp']:.1e} | {diff['entropy']:.1e} | "
                      f"{diff['grads']:.1e} ({float(base[1]['grads'].abs().max()):.1e}) |", flush=True)
    print(f"device: {device}")


if __name__ == "__main__":
    main()
