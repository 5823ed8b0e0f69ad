"""The base model of the spec-training demo (docs/spec-training.md): a random Qwen2 (width 64,
2 layers) over a byte-level BPE tokenizer trained on the demo domain's text (prompts, answers,
reasoning, both shipped specs). It knows nothing: every behaviour comes from the pipeline.

    python scripts/make_spec_model.py [--out models/tiny-spec]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "scripts"))

from make_chat_model import bpe_tokenizer, save_chat_model  # noqa: E402

from rlvr.spec.document import load_spec  # noqa: E402
from rlvr.spec.domain import answer_for, reasoning_for, requests  # noqa: E402


def domain_lines() -> list[str]:
    lines = []
    for name in ("assistant_v1.toml", "assistant_v2.toml"):
        spec = load_spec(REPO / "specs" / name)
        lines.append(spec.as_text())
        for req in requests(spec, 400, seed=99):
            for rule in spec.rules:
                lines += [req.prompt, reasoning_for(rule) + answer_for(rule, req)]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "models" / "tiny-spec")
    args = ap.parse_args()
    save_chat_model(args.out, bpe_tokenizer(domain_lines(), vocab_size=600), "qwen2", seed=0, hidden=64)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
