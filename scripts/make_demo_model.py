"""Make the demo model that `rlvr demo` trains: a tiny Qwen2 pre-trained briefly by SFT.

    python scripts/make_demo_model.py [--out models/tiny-arith] [--steps N] [--seed S]

It builds a character tokenizer and a 0.5M-parameter Qwen2, trains it with supervised
fine-tuning on the train split of the arithmetic task ("23+45=" -> "68<eos>") for a few
hundred steps, so that it learns the format and part of the skill, and saves both with
safetensors. Deterministic from its seed on a given machine and thread count.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from rlvr.engines import HFEngine
from rlvr.evaluate import greedy_accuracy
from rlvr.models import build_char_tokenizer, tiny_qwen2
from rlvr.tasks import arithmetic_splits

TASK = {"seed": 0, "test_size": 500}  # must match recipes/demo.toml [task]


def sft_batch(tokenizer, samples, pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded prompt+answer+EOS ids (B, L) and labels with the prompt and padding at -100."""
    rows, labels = [], []
    for s in samples:
        p = tokenizer(s.prompt, add_special_tokens=False)["input_ids"]
        a = tokenizer(s.answer, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        rows.append(p + a)
        labels.append([-100] * len(p) + a)
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id)
    lab = torch.full((len(rows), width), -100)
    for i, (r, l) in enumerate(zip(rows, labels)):
        ids[i, :len(r)], lab[i, :len(l)] = torch.tensor(r), torch.tensor(l)
    return ids, lab


def exact_match(response: str, gold: str):
    class V:  # the verifier interface greedy_accuracy expects
        score = float(response.strip() == gold)
    return V


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="models/tiny-arith")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(2)
    start = time.time()
    tokenizer = build_char_tokenizer()
    model = tiny_qwen2(hidden_size=128, intermediate_size=512, num_layers=2, num_heads=4,
                       num_kv_heads=2, max_positions=64, seed=args.seed)
    train, test = arithmetic_splits(**TASK)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(args.seed)
    for step in range(args.steps):
        picks = torch.randint(len(train), (args.batch,), generator=gen).tolist()
        ids, labels = sft_batch(tokenizer, [train[i] for i in picks], tokenizer.pad_token_id)
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    acc = greedy_accuracy(HFEngine(model, tokenizer), test, exact_match, max_new_tokens=4)
    seconds = time.time() - start
    out = Path(args.out)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    card = {"sft_steps": args.steps, "batch": args.batch, "lr": args.lr, "seed": args.seed,
            "test_greedy_accuracy": acc, "seconds": round(seconds, 1),
            "parameters": sum(p.numel() for p in model.parameters())}
    (out / "rlvr_model_card.json").write_text(json.dumps(card, indent=2) + "\n")
    print(json.dumps(card))


if __name__ == "__main__":
    main()
