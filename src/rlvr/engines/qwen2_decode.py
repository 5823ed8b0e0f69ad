"""A leaner forward for sampling from Qwen2 models: the same function as transformers', fewer ops.

`transformers`' Qwen2 forward pays, per decoded token and layer, for a `DynamicCache` that
concatenates K and V, a `rotate_half` that concatenates, a cos/sin of the positions, and module
dispatch. This path computes the same function with:

- preallocated K/V buffers (B, kv_heads, P + T, head_dim) per layer, written in place;
- cos/sin of every position of the generation computed once, before the prefill;
- RoPE with `rotate_half(x) * sin` rewritten as `swap(x) * sin_signed`
  (swap exchanges the two halves, sin_signed = [-sin, sin]): the same products, one op fewer;
- for layers up to `JOIN_MAX_HIDDEN` wide, one q|k|v and one gate|up GEMM over weights
  concatenated once per weight version (`JoinedWeights`, rebuilt when a parameter changes);
  wider layers read the parameters in place, with no copy. Measured on 2 CPU cores
  (benchmarks/README.md, "Issue 30 round (2026-12-07, fourth)"): at hidden 256 the engine's
  tokens/s over its generic path's were 1.03-1.20x (median 1.15, 7 runs) joined against
  1.03-1.12x (median 1.08, 4 runs) split (`engine_throughput.py`); at 512 the joined GEMMs were
  no faster and at 768 1.18x slower (1.14x with the copies made per generation;
  `decode_fusion.py`), while the copies are two thirds
  of every layer (261 MiB at 104M parameters);
- grouped-query attention for a single new token done by folding each KV head's group of
  query heads into SDPA's query-length axis (no repeat of K/V).

Left padding is handled as `HFEngine` does: positions are cumsum(mask) - 1, padded keys are
masked out for every query; a padded query attends to itself only, so its (unused) output
stays finite. The embedding and the output head are the model's own modules, so a patched
head (`rlvr.models.precision.use_fp32_head`) is honoured.

`unsupported_reason(model)` says why a model cannot take this path (HFEngine then uses the
generic loop), None when it can.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from transformers.models.qwen2.modeling_qwen2 import (
    Qwen2DecoderLayer,
    Qwen2ForCausalLM,
    Qwen2RMSNorm,
)

from rlvr.errors import RlvrError

# RoPE types whose inv_freq is fixed at init, so the model's own `inv_freq` buffer is exact.
# Dynamic ones (dynamic NTK, longrope) change it with the sequence length: not implemented.
ROPE_TYPES = ("default", "linear")

_LAYER_CHILDREN = {"self_attn", "mlp", "input_layernorm", "post_attention_layernorm"}
_ATTN_CHILDREN = {"q_proj", "k_proj", "v_proj", "o_proj"}
_MLP_CHILDREN = {"gate_proj", "up_proj", "down_proj", "act_fn"}


def unsupported_reason(model: torch.nn.Module) -> str | None:
    """None when this path computes exactly `model`'s forward; otherwise why it cannot."""
    if not isinstance(model, Qwen2ForCausalLM):
        return f"{type(model).__name__} is not a Qwen2ForCausalLM"
    if model.training:
        return "the model is in training mode (dropout)"
    cfg = model.config
    if getattr(cfg, "hidden_act", None) != "silu":
        return f"hidden_act {cfg.hidden_act!r} (only silu)"
    if getattr(cfg, "use_sliding_window", False) or any(
            t != "full_attention" for t in (getattr(cfg, "layer_types", None) or [])):
        return "sliding-window attention layers"
    rope_type = getattr(model.model.rotary_emb, "rope_type", None)
    if rope_type not in ROPE_TYPES:
        return f"rope type {rope_type!r} (implemented: {', '.join(ROPE_TYPES)})"
    if len(model.model.layers) != cfg.num_hidden_layers:  # the HF forward runs only the first n
        return f"{len(model.model.layers)} layers but num_hidden_layers={cfg.num_hidden_layers}"
    if not isinstance(model.model.norm, Qwen2RMSNorm):
        return f"final norm is {type(model.model.norm).__name__}"
    for i, layer in enumerate(model.model.layers):
        if (reason := _layer_reason(layer)) is not None:
            return f"layer {i}: {reason}"
    return None


def _layer_reason(layer: torch.nn.Module) -> str | None:
    # Exact child sets and exact nn.Linear types: an adapter (LoRA) or an extra norm (Qwen3's
    # q_norm) changes the function, and this path would silently skip it.
    if type(layer) is not Qwen2DecoderLayer:
        return f"{type(layer).__name__} is not a Qwen2DecoderLayer"
    attn, mlp = layer.self_attn, layer.mlp
    for module, expected in ((layer, _LAYER_CHILDREN), (attn, _ATTN_CHILDREN), (mlp, _MLP_CHILDREN)):
        names = {n for n, _ in module.named_children()}
        if names != expected:
            return f"{type(module).__name__} has submodules {sorted(names)}, expected {sorted(expected)}"
    projections = [getattr(attn, n) for n in ("q_proj", "k_proj", "v_proj", "o_proj")]
    projections += [getattr(mlp, n) for n in ("gate_proj", "up_proj", "down_proj")]
    if any(type(p) is not torch.nn.Linear or "forward" in vars(p) for p in projections):
        return "a projection is not a plain nn.Linear (adapter or patched forward)"
    if len({attn.q_proj.bias is None, attn.k_proj.bias is None, attn.v_proj.bias is None}) != 1:
        return "q/k/v projections disagree on having a bias"
    if any(p.bias is not None for p in projections[3:]):
        return "o/gate/up/down projections have a bias"
    if any(type(n) is not Qwen2RMSNorm for n in (layer.input_layernorm, layer.post_attention_layernorm)):
        return "a layer norm is not Qwen2RMSNorm"
    return None


@dataclass(frozen=True)
class _Layer:
    """One decoder layer's tensors: the live parameters themselves, so a `load_state_dict` or an
    optimiser step is seen by the next decode step; plus, from `JoinedWeights`, joined copies."""
    ln1: torch.Tensor          # (D,)
    eps1: float
    q_w: torch.Tensor          # (H hd, D)
    k_w: torch.Tensor          # (KV hd, D)
    v_w: torch.Tensor          # (KV hd, D)
    q_b: torch.Tensor | None
    k_b: torch.Tensor | None
    v_b: torch.Tensor | None
    o_w: torch.Tensor          # (D, H hd)
    ln2: torch.Tensor
    eps2: float
    gate_w: torch.Tensor       # (F, D)
    up_w: torch.Tensor         # (F, D)
    down_w: torch.Tensor       # (D, F)
    # JoinedWeights' copies (None: the split GEMMs on the parameters above)
    qkv_w: torch.Tensor | None = None      # ((H + 2 KV) hd, D): q, k, v rows stacked
    qkv_b: torch.Tensor | None = None
    gate_up_w: torch.Tensor | None = None  # (2 F, D)

    @staticmethod
    def of(layer: Qwen2DecoderLayer) -> "_Layer":
        a, m = layer.self_attn, layer.mlp
        return _Layer(
            ln1=layer.input_layernorm.weight, eps1=layer.input_layernorm.variance_epsilon,
            q_w=a.q_proj.weight, k_w=a.k_proj.weight, v_w=a.v_proj.weight,
            q_b=a.q_proj.bias, k_b=a.k_proj.bias, v_b=a.v_proj.bias, o_w=a.o_proj.weight,
            ln2=layer.post_attention_layernorm.weight, eps2=layer.post_attention_layernorm.variance_epsilon,
            gate_w=m.gate_proj.weight, up_w=m.up_proj.weight, down_w=m.down_proj.weight,
        )


# Layers up to this width take the joined GEMMs (see the module docstring for the measurements).
JOIN_MAX_HIDDEN = 256


def joins(model: Qwen2ForCausalLM) -> bool:
    """Whether the decode of `model` joins q|k|v and gate|up (small layers, where it pays)."""
    return model.config.hidden_size <= JOIN_MAX_HIDDEN


class JoinedWeights:
    """The decoder's layers with q|k|v and gate|up concatenated once per weight version.

    The concatenations are copies, so they go stale when a parameter changes in place. The
    version key is every parameter's (storage pointer, autograd version counter), which
    `load_state_dict`'s copy_ and an optimiser step change; `invalidate()` forces a rebuild
    as well. Call it after a write through `param.data` (which bypasses the version counter)
    and after parameter objects are replaced (`load_state_dict(assign=True)`): the parameters
    are listed once, at construction and at each `invalidate()`."""

    def __init__(self, model: Qwen2ForCausalLM):
        self.model = model
        self.invalidate()

    def invalidate(self) -> None:
        self._key: tuple | None = None
        self._layers: list[_Layer] = []
        # Listed once: walking the module tree every decode step costs ~5% of a step here.
        self._params = list(self.model.model.layers.parameters())

    def layers(self) -> list[_Layer]:
        key = tuple((p.data_ptr(), p._version) for p in self._params)
        if key != self._key:
            self._layers = []  # the stale copies go before the new ones are made, not after
            self._layers = [self._join(layer) for layer in self.model.model.layers]
            self._key = key
        return self._layers

    @staticmethod
    def _join(layer: Qwen2DecoderLayer) -> _Layer:
        w = _Layer.of(layer)
        qkv_b = None if w.q_b is None else torch.cat([w.q_b, w.k_b, w.v_b])
        return replace(w, qkv_w=torch.cat([w.q_w, w.k_w, w.v_w]), qkv_b=qkv_b,
                       gate_up_w=torch.cat([w.gate_w, w.up_w]))


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """Qwen2RMSNorm's arithmetic, in its order: normalise in fp32, cast back, then scale."""
    x32 = x.float()
    normed = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return weight * normed.to(x.dtype)


def rope_tables(model: Qwen2ForCausalLM, positions: torch.Tensor, dtype: torch.dtype):
    """positions (B, L) → cos, sin_signed (B, L, 1, hd), as Qwen2RotaryEmbedding computes them.

    sin_signed = [-sin_half, sin_half], so that rotate_half(x) * sin == swap_halves(x) * sin_signed
    exactly (negation commutes with rounding)."""
    rotary = model.model.rotary_emb
    freqs = positions[..., None].float() * rotary.inv_freq.to(device=positions.device, dtype=torch.float)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = (emb.cos() * rotary.attention_scaling).to(dtype)
    sin = (emb.sin() * rotary.attention_scaling).to(dtype)
    half = sin.shape[-1] // 2
    sin_signed = torch.cat((-sin[..., :half], sin[..., half:]), dim=-1)
    return cos[:, :, None, :], sin_signed[:, :, None, :]


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin_signed: torch.Tensor) -> torch.Tensor:
    """x (B, S, heads, hd), cos/sin_signed (B, S, 1, hd) → x cos + rotate_half(x) sin."""
    hd = x.shape[-1]
    swapped = x.unflatten(-1, (2, hd // 2)).flip(-2).flatten(-2)
    return x * cos + swapped * sin_signed


class Qwen2Decoder:
    """One batched generation: `prefill()` the left-padded prompts, then `step(tokens)` once per
    new token; each returns the next-token logits (B, V) from the model's output head."""

    def __init__(self, model: Qwen2ForCausalLM, ids: torch.Tensor, mask: torch.Tensor,
                 max_new_tokens: int, blocks: "Blocks | None" = None, joined: JoinedWeights | None = None):
        cfg = model.config
        self.model, self.ids, self.joined = model, ids, joined
        # Listed once per generation: walking the module tree every decode step costs ~5% of a
        # step. The entries are the parameters themselves, so in-place updates (load_weights'
        # copy_, in-flight weights) reach the next step. `joined` (JoinedWeights), when given,
        # is asked every step instead: its copies are rebuilt when a parameter has changed.
        self.layers = [_Layer.of(layer) for layer in model.model.layers] if joined is None else None
        self.blocks = blocks if blocks is not None else EAGER
        b, p = ids.shape
        self.heads, self.kv_heads = cfg.num_attention_heads, cfg.num_key_value_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        self.scale = self.head_dim ** -0.5  # Qwen2Attention.scaling
        dtype = model.model.embed_tokens.weight.dtype
        length = p + max_new_tokens
        shape = (b, self.kv_heads, length, self.head_dim)
        # Uninitialised: attention reads columns [0, filled + S) only, all written before.
        self.k_cache = [ids.new_empty(shape, dtype=dtype) for _ in model.model.layers]
        self.v_cache = [ids.new_empty(shape, dtype=dtype) for _ in model.model.layers]
        # Every generated position is a real key; only the prompt's padding is masked.
        self.key_ok = torch.ones(b, length, dtype=torch.bool, device=ids.device)
        self.key_ok[:, :p] = mask.bool()
        # The additive form SDPA turns a bool mask into, made once rather than every step.
        self.key_bias = torch.zeros(b, length, dtype=dtype, device=ids.device).masked_fill(~self.key_ok, float("-inf"))
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        steps = torch.arange(1, max_new_tokens + 1, device=ids.device)
        self.cos, self.sin = rope_tables(model, torch.cat([pos, pos[:, -1:] + steps], dim=1), dtype)
        self.filled = 0  # cache columns written so far

    def prefill(self) -> torch.Tensor:
        p = self.ids.shape[1]
        causal = torch.ones(p, p, dtype=torch.bool, device=self.ids.device).tril()
        eye = torch.eye(p, dtype=torch.bool, device=self.ids.device)
        attn_mask = ((causal & self.key_ok[:, None, :p]) | eye)[:, None]  # (B, 1, P, P)
        return self._forward(self.ids, attn_mask)

    def expand(self, index: torch.Tensor) -> None:
        """After `prefill()`: the rows `index` (B',) of this decoder's rows become the batch,
        each with a copy of its row's prompt cache (a prompt's samples share one prefill).
        Only the prompt columns are copied: the new-token columns are not written yet."""
        if self.filled != self.ids.shape[1]:
            raise RlvrError("Qwen2Decoder.expand: call it right after prefill()")
        p = self.filled
        self.k_cache = [_expand_cache(k, index, p) for k in self.k_cache]
        self.v_cache = [_expand_cache(v, index, p) for v in self.v_cache]
        self.ids, self.key_ok, self.key_bias = self.ids[index], self.key_ok[index], self.key_bias[index]
        self.cos, self.sin = self.cos[index], self.sin[index]

    def step(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B,) → logits (B, V) for the position after them."""
        if self.filled >= self.key_ok.shape[1]:
            raise RlvrError(f"Qwen2Decoder.step: all {self.key_ok.shape[1] - self.ids.shape[1]} "
                               "new-token slots (max_new_tokens) are used")
        attn_mask = self.key_bias[:, None, None, :self.filled + 1]  # (B, 1, 1, n)
        return self._forward(tokens[:, None], attn_mask)

    def _forward(self, ids: torch.Tensor, attn_mask: torch.Tensor) -> torch.Tensor:
        start, s = self.filled, ids.shape[1]
        end = start + s
        cos, sin = self.cos[:, start:end], self.sin[:, start:end]
        x = self.model.model.embed_tokens(ids)  # (B, S, D)
        blocks = self.blocks
        for i, w in enumerate(self.joined.layers() if self.joined is not None else self.layers):
            if w.qkv_w is not None:
                qkv = blocks.qkv_rope_joined(x, w.ln1, w.eps1, w.qkv_w, w.qkv_b, cos, sin, self.heads, self.kv_heads)
            else:
                qkv = blocks.qkv_rope(x, w.ln1, w.eps1, w.q_w, w.q_b, w.k_w, w.k_b, w.v_w, w.v_b, cos, sin,
                                      self.heads, self.kv_heads)
            x = x + F.linear(self._attention(qkv, i, start, end, attn_mask), w.o_w)
            if w.gate_up_w is not None:
                x = blocks.mlp_joined(x, w.ln2, w.eps2, w.gate_up_w, w.down_w)
            else:
                x = blocks.mlp(x, w.ln2, w.eps2, w.gate_w, w.up_w, w.down_w)
        self.filled = end
        norm = self.model.model.norm
        return self.model.get_output_embeddings()(rms_norm(x[:, -1], norm.weight, norm.variance_epsilon))

    def _attention(self, qkv, i: int, start: int, end: int, attn_mask) -> torch.Tensor:
        """qkv (q, k, v) of the new positions, RoPE applied → attention output (B, S, H hd),
        the new k and v written to this layer's cache first."""
        q_new, k_new, v_new = qkv  # (B, S, heads, hd) each
        b, s = q_new.shape[:2]
        nq, nkv, hd = self.heads, self.kv_heads, self.head_dim
        k_all, v_all = self.k_cache[i], self.v_cache[i]
        k_all[:, :, start:end] = k_new.transpose(1, 2)
        v_all[:, :, start:end] = v_new.transpose(1, 2)
        k, v = k_all[:, :, :end], v_all[:, :, :end]
        if s == 1:
            # Query head h reads KV head h // group (repeat_kv's order), so a KV head's group
            # of query heads is a length-`group` query sequence against that head's keys.
            q = q_new[:, 0].unflatten(1, (nkv, nq // nkv))  # (B, KV, group, hd)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, scale=self.scale)
            return out.reshape(b, 1, nq * hd)
        out = F.scaled_dot_product_attention(q_new.transpose(1, 2), k, v, attn_mask=attn_mask, scale=self.scale,
                                             enable_gqa=nq != nkv)
        return out.transpose(1, 2).reshape(b, s, nq * hd)


def qkv_rope(x, ln, eps: float, q_w, q_b, k_w, k_b, v_w, v_b, cos, sin_signed, nq: int, nkv: int):
    """The attention's input half: x (B, S, D) → q, k (RoPE applied), v, each (B, S, heads, hd)."""
    h = rms_norm(x, ln, eps)
    q = F.linear(h, q_w, q_b).unflatten(-1, (nq, -1))
    k = F.linear(h, k_w, k_b).unflatten(-1, (nkv, -1))
    return apply_rope(q, cos, sin_signed), apply_rope(k, cos, sin_signed), F.linear(h, v_w, v_b).unflatten(-1, (nkv, -1))


def mlp(x, ln, eps: float, gate_w, up_w, down_w):
    """The layer's second half, residual included: x + down(silu(gate) * up) of the normed x."""
    h = rms_norm(x, ln, eps)
    return x + F.linear(F.silu(F.linear(h, gate_w)) * F.linear(h, up_w), down_w)


def qkv_rope_joined(x, ln, eps: float, qkv_w, qkv_b, cos, sin_signed, nq: int, nkv: int):
    """qkv_rope over JoinedWeights' q|k|v copy: one GEMM, RoPE on q and k together."""
    qkv = F.linear(rms_norm(x, ln, eps), qkv_w, qkv_b)  # (B, S, (H + 2 KV) hd)
    hd = qkv.shape[-1] // (nq + 2 * nkv)
    qk = apply_rope(qkv[..., :(nq + nkv) * hd].unflatten(-1, (nq + nkv, hd)), cos, sin_signed)
    return qk[:, :, :nq], qk[:, :, nq:], qkv[..., (nq + nkv) * hd:].unflatten(-1, (nkv, hd))


def mlp_joined(x, ln, eps: float, gate_up_w, down_w):
    """mlp over JoinedWeights' gate|up copy: one GEMM, then split."""
    gate, up = F.linear(rms_norm(x, ln, eps), gate_up_w).chunk(2, dim=-1)
    return x + F.linear(F.silu(gate) * up, down_w)


class Blocks:
    """The per-layer functions the decoder calls: as written (eager), or compiled by
    `torch.compile` (`Blocks(compiled=True)`), which fuses their elementwise ops (RMSNorm,
    RoPE, SiLU x up) around the GEMMs. Compiled once per process and shape family
    (dynamic batch and length), on first use. Off by default: 0.81x the eager path's tokens/s
    on workload 1 here, 13.6 s first call (benchmarks/decode_variants.py, 2026-12-04)."""

    def __init__(self, compiled: bool = False):
        fns = (qkv_rope, mlp, qkv_rope_joined, mlp_joined)
        if compiled:
            fns = tuple(torch.compile(f, dynamic=True) for f in fns)
        self.qkv_rope, self.mlp, self.qkv_rope_joined, self.mlp_joined = fns


EAGER = Blocks()
_compiled: Blocks | None = None


def compiled_blocks() -> Blocks:
    """The process's one compiled `Blocks` (compiling again per engine would repeat the work)."""
    global _compiled
    if _compiled is None:
        _compiled = Blocks(compiled=True)
    return _compiled


def _expand_cache(cache: torch.Tensor, index: torch.Tensor, filled: int) -> torch.Tensor:
    """cache (B, KV, L, hd) → (B', KV, L, hd) with columns [0, filled) of row index[j] in row j."""
    out = cache.new_empty((index.shape[0], *cache.shape[1:]))
    out[:, :, :filled] = cache[:, :, :filled].index_select(0, index)
    return out
