"""One real vLLM per session for the `vllm`-marked tests (starting one takes tens of seconds):
`make test-vllm` runs them in .venv-vllm; elsewhere they skip with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.engines.vllm_engine import VLLMSettings, vllm_unavailable_reason

REPO = Path(__file__).resolve().parents[2]
# float32 so that log-probs match the trainer's; a small KV cache (CPU) or GPU share; no
# torch.compile: the tests sample a few hundred tokens, which compilation would not repay.
TEST_SETTINGS = VLLMSettings(dtype="float32", cpu_kv_cache_gib=0.25, gpu_memory_utilization=0.3,
                             compile=False)


def start_vllm(folder: Path, tok, context: int, weight_keys=None, lora=None):
    """A VLLMEngine on `folder` with TEST_SETTINGS; skips the test where vLLM cannot run."""
    reason = vllm_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    from rlvr.engines.vllm_engine import build_vllm_engine

    return build_vllm_engine(str(folder), tok, seed=0, settings=TEST_SETTINGS, context=context,
                             weight_keys=weight_keys, lora=lora)


@pytest.fixture(scope="session")
def vllm_arith(tiny_pair):
    """The session's vLLM on models/tiny-arith (weights as shipped; a test that pushes others
    pushes the shipped ones back)."""
    model, tok = tiny_pair
    engine = start_vllm(REPO / "models" / "tiny-arith", tok, model.config.max_position_embeddings,
                        model.state_dict().keys())
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def vllm_start():
    """`start_vllm`, for a test that needs a vLLM of its own (other weights, one to kill)."""
    return start_vllm
