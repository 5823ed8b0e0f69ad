"""Make the long-completion benchmark task and its model: chain sums with a scratchpad.

    python scripts/make_scratchpad_model.py [--out models/tiny-scratch] [--target 0.3] [--seed S]

The task: a prompt of 2-8 one-digit terms (1..9), and a completion that writes each running
sum on its own line and then the total alone on the last line:

    7+5+9+8=   ->   7+5=12
                    12+9=21
                    21+8=29
                    29<eos>

so a worked solution is 7 to 57 characters (one token each, 8-58 with the EOS; mean 38.5 over
the train split) and its length follows the number of
terms. The reward is the exact verifier (the last non-blank line equals the total), so a
completion cut off mid-scratchpad scores 0. The script writes the train and test prompts to
`OUT/task/{train,test}.jsonl` (task.kind = "jsonl"), builds a 0.5M-parameter Qwen2 with the
character tokenizer and a 256-token context, and pre-trains it by SFT on the train split until
its greedy accuracy on a separate dev split (100 prompts, not written) reaches `--target`, so
that it starts imperfect and RL has room. What holds it back is finding the next term: after
300 steps 96% of its written additions were right but it often added the wrong term (10.5% of
the problems right); with the defaults it stops at 500 steps, 35% on dev and 32% on 200 test
prompts (rlvr_model_card.json). Two-digit terms were tried first: 300 SFT steps gave 0.5%.
Deterministic from its seed on a given machine and thread count.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import torch

from rlvr.engines import HFEngine
from rlvr.evaluate import greedy_accuracy
from rlvr.models import build_char_tokenizer, tiny_qwen2
from rlvr.rewards.exact_verifier import ExactVerifier
from rlvr.tasks import load_jsonl
from rlvr.types import Sample

MIN_TERMS, MAX_TERMS = 2, 8
LOW, HIGH = 1, 9
TRAIN_SIZE, TEST_SIZE, DEV_SIZE = 4000, 500, 100
MAX_NEW_TOKENS = 64  # the benchmark's budget: the longest worked solution is 58 tokens with its EOS


def scratchpad(terms: list[int]) -> str:
    """The worked solution: one `running+term=sum` line per addition, then the total."""
    lines, total = [], terms[0]
    for t in terms[1:]:
        lines.append(f"{total}+{t}={total + t}")
        total += t
    return "\n".join(lines + [str(total)])


def make_rows(rng: random.Random, n: int, seen: set[str]) -> list[dict]:
    """n prompts with a uniform number of terms, none of them in `seen` (which grows)."""
    rows = []
    while len(rows) < n:
        terms = [rng.randint(LOW, HIGH) for _ in range(rng.randint(MIN_TERMS, MAX_TERMS))]
        prompt = "+".join(map(str, terms)) + "="
        if prompt in seen:
            continue
        seen.add(prompt)
        rows.append({"prompt": prompt, "answer": str(sum(terms)), "meta": {"terms": len(terms)}})
    return rows


def write_task(out: Path, seed: int) -> list[dict]:
    """OUT/task/test.jsonl, then train.jsonl, no prompt in both; returns a dev split (not
    written) that decides when SFT stops, so that the test split stays unseen."""
    rng, seen = random.Random(seed), set()
    (out / "task").mkdir(parents=True, exist_ok=True)
    for name, size in (("test", TEST_SIZE), ("train", TRAIN_SIZE)):
        rows = make_rows(rng, size, seen)
        (out / "task" / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return make_rows(rng, DEV_SIZE, seen)


def sft_batch(tokenizer, prompts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded prompt+scratchpad+EOS ids (B, L) and labels with the prompt and padding at -100."""
    rows, labels = [], []
    for p in prompts:
        terms = [int(x) for x in p.rstrip("=").split("+")]
        p_ids = tokenizer(p, add_special_tokens=False)["input_ids"]
        a_ids = tokenizer(scratchpad(terms), add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        rows.append(p_ids + a_ids)
        labels.append([-100] * len(p_ids) + a_ids)
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), tokenizer.pad_token_id)
    lab = torch.full((len(rows), width), -100)
    for i, (r, l) in enumerate(zip(rows, labels)):
        ids[i, :len(r)], lab[i, :len(l)] = torch.tensor(r), torch.tensor(l)
    return ids, lab


def dev_accuracy(model, tokenizer, dev: list[dict]) -> float:
    samples = [Sample(prompt=r["prompt"], answer=r["answer"]) for r in dev]
    acc = greedy_accuracy(HFEngine(model, tokenizer), samples, ExactVerifier(), max_new_tokens=MAX_NEW_TOKENS)
    model.train()
    return acc


def sft(model, tokenizer, prompts: list[str], dev: list[dict], args) -> int:
    """SFT until the dev accuracy, checked every `check_every` steps from `min_steps` on,
    reaches `target` (or `steps` in all); returns the steps taken. The check reads no random
    numbers, so the run is the same as one told to stop at that step."""
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(args.seed)
    for step in range(args.steps):
        picks = torch.randint(len(prompts), (args.batch,), generator=gen).tolist()
        ids, labels = sft_batch(tokenizer, [prompts[i] for i in picks])
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        done = step + 1
        if step % 50 == 0 or done == args.steps:
            print(f"step {step:4d}  loss {loss.item():.4f}", flush=True)
        if done >= args.min_steps and done % args.check_every == 0:
            acc = dev_accuracy(model, tokenizer, dev)
            print(f"step {done:4d}  dev accuracy {acc:.2f}", flush=True)
            if acc >= args.target:
                return done
    return args.steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("models/tiny-scratch"))
    ap.add_argument("--steps", type=int, default=1500, help="the most SFT steps")
    ap.add_argument("--min-steps", type=int, default=300)
    ap.add_argument("--check-every", type=int, default=50)
    ap.add_argument("--target", type=float, default=0.3, help="stop once the dev greedy accuracy reaches this")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(2)
    start = time.time()
    dev = write_task(args.out, args.seed)
    train, test = load_jsonl(args.out / "task" / "train.jsonl"), load_jsonl(args.out / "task" / "test.jsonl")
    tokenizer = build_char_tokenizer()
    model = tiny_qwen2(hidden_size=128, intermediate_size=512, num_layers=2, num_heads=4,
                       num_kv_heads=2, max_positions=256, seed=args.seed)
    steps = sft(model, tokenizer, [s.prompt for s in train], dev, args)
    acc = greedy_accuracy(HFEngine(model, tokenizer), test[:200], ExactVerifier(), max_new_tokens=MAX_NEW_TOKENS)
    seconds = time.time() - start
    model.save_pretrained(args.out, safe_serialization=True)
    tokenizer.save_pretrained(args.out)
    card = {"task": "chain sums with a scratchpad (OUT/task)", "sft_steps": steps, "target": args.target, "batch": args.batch,
            "lr": args.lr, "seed": args.seed, "test_greedy_accuracy_200": acc, "seconds": round(seconds, 1),
            "parameters": sum(p.numel() for p in model.parameters())}
    (args.out / "rlvr_model_card.json").write_text(json.dumps(card, indent=2) + "\n")
    print(json.dumps(card))


if __name__ == "__main__":
    main()
