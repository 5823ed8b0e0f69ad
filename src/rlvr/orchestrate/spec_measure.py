"""Greedy completions of a model folder, for `rlvr spec measure`."""

from __future__ import annotations

from pathlib import Path

import torch

from rlvr.engines.loading import load_model, load_tokenizer


def greedy_completer(model_dir: Path, max_new_tokens: int = 48):
    """`complete(prompt) -> completion` by greedy decoding, stopping at EOS."""
    tok, model = load_tokenizer(model_dir), load_model(model_dir)
    model.eval()

    def complete(prompt: str) -> str:
        ids = tok(prompt, return_tensors="pt", add_special_tokens=False).input_ids
        with torch.no_grad():
            out = model.generate(ids, do_sample=False, max_new_tokens=max_new_tokens, pad_token_id=tok.eos_token_id,
                                 eos_token_id=tok.eos_token_id)
        return tok.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
    return complete
