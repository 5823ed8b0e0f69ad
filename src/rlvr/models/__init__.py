"""The tiny models rlvr builds for itself: a character tokenizer and small Qwen2 configs.

Nothing here is needed to train a user's own model; it exists so that the demo and the
benchmarks run offline on a model the repository makes and ships (see scripts/).

`precision.py` (the fp32 LM head) and `finite.py` (are all weights finite?) are the numerics
helpers that both the engines and the trainer use; they live here, below both.
"""

from rlvr.models.char_tokenizer import EOS_TOKEN, build_char_tokenizer
from rlvr.models.tiny_qwen2 import tiny_qwen2

__all__ = ["EOS_TOKEN", "build_char_tokenizer", "tiny_qwen2"]
