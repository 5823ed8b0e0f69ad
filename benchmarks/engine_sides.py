"""HFEngine, vLLM (the CPU build here) and plain `model.generate` on the vs-TRL grid's models:
`engine_throughput.py --grid` runs this once per (side, model), each in a process of its own, so
that each side's peak RSS and time to first rollout are its own.

    .venv-vllm/bin/python benchmarks/engine_sides.py --side vllm --model 4M --lengths 64,256 --groups 8,32

Per (completion length L, group size G): 8 prompts x G completions of exactly L tokens (EOS
suppressed until L), temperature 1, the engine's log-probs kept. One untimed call at the first
(L, G) (the warm-up), then `--reps` timed calls (`--reps-long` from L = 512, to fit the time):
tokens/s is their median. Time to first rollout is from the start of building the engine
(vLLM: starting its processes, loading, compiling) to the end of the warm-up call. Peak RSS
is the whole process tree's (vLLM's engine core and worker included), sampled every 0.2 s.
Prints one JSON line per (L, G). `--side vllm-eager` is vLLM with `compile = false` (its
compilation mode 0), to weigh the compile default against (docs/scaling.md).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
MODELS = {"4M": dict(hidden_size=256, intermediate_size=1024, num_layers=4, num_heads=4, num_kv_heads=2),
          "30M": dict(hidden_size=512, intermediate_size=2048, num_layers=8, num_heads=8, num_kv_heads=2)}
PROMPTS = 8


class PeakRSS(threading.Thread):
    """The largest sum of RSS over this process and its descendants, sampled."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak, self.stop = 0, threading.Event()

    def run(self):
        import psutil

        me = psutil.Process()
        while not self.stop.is_set():
            total = 0
            for p in [me, *me.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self.stop.wait(0.2)


def save_model(folder: Path, name: str, context: int) -> str:
    from rlvr.models import build_char_tokenizer, tiny_qwen2

    net, tok = tiny_qwen2(**MODELS[name], vocab_size=128, max_positions=context, seed=20240601), build_char_tokenizer(128)
    net.save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def build(side: str, folder: str, context: int):
    """(generate(prompts, G, L) -> tokens, model) for the side."""
    import torch

    from rlvr.engines import HFEngine, SamplingParams
    from rlvr.engines.hf import left_pad
    from rlvr.engines.loading import load_model, load_tokenizer

    tok = load_tokenizer(folder)
    if side in ("vllm", "vllm-eager"):  # vLLM loads the folder itself: no torch copy in this process's RSS
        from rlvr.engines.vllm_engine import VLLMSettings, build_vllm_engine
        # vllm-eager: `model.vllm.compile = false` (vLLM's compilation mode 0), the tests' setting
        engine = build_vllm_engine(folder, tok, seed=0, context=context,
                                   settings=VLLMSettings(dtype="float32", cpu_kv_cache_gib=2.0,
                                                         compile=side == "vllm"))
    else:
        model = load_model(folder, "float32").eval()
    if side == "hf":
        engine = HFEngine(model, tok, seed=0)
    if side in ("vllm", "vllm-eager", "hf"):
        def run(prompts, g, length):
            groups = engine.generate(prompts, g, SamplingParams(max_new_tokens=length, min_new_tokens=length))
            return sum(len(r.completion_ids) for gr in groups for r in gr)
        return run

    def run(prompts, g, length):  # model.generate, keeping the scores log-probs need
        ids, mask = left_pad([tok(p, add_special_tokens=False)["input_ids"] for p in prompts], tok.pad_token_id)
        with torch.inference_mode():
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, top_k=0, top_p=1.0,
                                 temperature=1.0, min_new_tokens=length, max_new_tokens=length,
                                 num_return_sequences=g, output_scores=True, return_dict_in_generate=True,
                                 pad_token_id=tok.pad_token_id)
        return int(out.sequences[:, ids.shape[1]:].numel())
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--side", choices=["hf", "vllm", "vllm-eager", "generate"], required=True)
    ap.add_argument("--model", choices=list(MODELS), required=True)
    ap.add_argument("--lengths", default="64,256,1024")
    ap.add_argument("--groups", default="8,32")
    ap.add_argument("--reps", type=int, default=3, help="timed calls per (L, G) below L = 512")
    ap.add_argument("--reps-long", type=int, default=1, help="timed calls per (L, G) from L = 512 (to fit the time)")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    from step_throughput import make_prompts

    lengths, groups = [int(x) for x in args.lengths.split(",")], [int(x) for x in args.groups.split(",")]
    prompts = [p for p, _ in make_prompts()[:PROMPTS]]
    rss = PeakRSS()
    rss.start()
    with tempfile.TemporaryDirectory() as tmp:
        context = max(lengths) + 32
        t0 = time.perf_counter()
        run = build(args.side, save_model(Path(tmp) / "model", args.model, context), context)
        first = None
        for length in lengths:
            for g in groups:
                if first is None:  # one untimed call, at the first (L, G): the warm-up
                    run(prompts, g, length)
                    first = time.perf_counter() - t0
                seconds, n = [], 0
                for _ in range(args.reps if length < 512 else args.reps_long):
                    t = time.perf_counter()
                    n = run(prompts, g, length)
                    seconds.append(time.perf_counter() - t)
                print(json.dumps({"side": args.side, "model": args.model, "length": length, "group": g, "tokens": n, "reps": len(seconds),
                                  "tokens_per_s": round(n / statistics.median(seconds), 1),
                                  "first_rollout_s": round(first, 1), "peak_rss_gib": round(rss.peak / 2**30, 2),
                                  "load": os.getloadavg()[0]}), flush=True)


if __name__ == "__main__":
    main()
