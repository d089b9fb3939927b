"""Reference forward losses of llmc's built-in model families, in JAX.

GPT-2 (Radford et al. 2019; Hugging Face GPT2LMHeadModel), LLaMA (Touvron et
al. 2023; LlamaForCausalLM) and a Mixtral-style mixture of experts (Jiang et
al. 2024; MixtralForCausalLM, plus llmc's expert capacity), written the way a
JAX user writes them: parameters are a flat dict keyed by the Hugging Face
names, with Hugging Face's layouts (GPT-2's Conv1D weights [in, out],
torch.nn.Linear weights [out, in]), and the loss is a pure function of the
parameters and a batch. Nothing here is translated from llmc's C++ builders;
where llmc defines something Hugging Face leaves open (the expert capacity,
top-k ties), the definition is the one of docs/ir.md and docs/frontend.md.

Every function computes in the dtype of the parameters (float32 or float64),
so the same code gives the f32 reference and the f64 one.

`mutation` names a deliberate change of semantics (MUTATIONS lists them); the
parity test uses them to show that its inputs are sensitive enough for a
wrong convention to fail the comparison. The empty string is the real model.
"""

import dataclasses
import math

import jax
import jax.numpy as jnp

# Deliberately wrong variants, per family: name -> what it changes.
MUTATIONS = {
    "gpt2": {
        "not_causal": "attention sees later positions",
        "scale_1_over_d": "attention scale 1/D instead of 1/sqrt(D)",
        "eps_1e-3": "LayerNorm epsilon 1e-3 instead of the configured one",
        "no_positions": "no learned position embedding",
        # Not here: erf instead of tanh GELU. The two differ by at most
        # ~5e-4 per element, which moves these losses by ~1e-5 relative:
        # not reliably above the tolerance, whatever the weights.
    },
    "llama": {
        "no_rope": "no rotary embedding",
        "rope_interleaved": "rope on pairs (2i, 2i+1) instead of (i, i+D/2)",
        "gqa_tile": "query head h reads kv head h % Hkv instead of h // (Hq/Hkv)",
        "eps_1e-3": "RMSNorm epsilon 1e-3 instead of the configured one",
        "swap_gate_up": "silu(up) * gate instead of silu(gate) * up",
    },
    "moe": {
        "no_capacity": "no expert capacity: no pair is dropped",
        "no_renormalize": "top-k weights are the raw softmax probabilities",
        "count_after_drop": "f_e counts only the pairs kept after capacity",
        "no_rope": "no rotary embedding",
    },
}


@dataclasses.dataclass(frozen=True)
class Config:
    """A model's sizes: the [model] table of a run description with its
    defaults applied (docs/run-description.md), and the batch shape."""

    family: str
    vocab_size: int
    layers: int
    width: int
    heads: int
    kv_heads: int
    ffn_width: int
    max_positions: int
    norm_eps: float
    rope_theta: float
    tie_embeddings: bool
    experts: int
    experts_per_token: int
    capacity_factor: float
    aux_loss_weight: float
    batch_size: int
    seq_len: int
    # A scaled rope's D/2 inverse frequencies (LLaMA 3's rope_scaling, as
    # test/hf/hf_files.llama3_inverse_frequencies computes them), replacing
    # theta^(-2i/D); None for the plain rope.
    inv_freq: tuple = None

    @property
    def head_dim(self):
        return self.width // self.heads

    @classmethod
    def from_run_description(cls, run):
        """`run`: a parsed TOML run description with `family` and sizes
        (not `hf_config`)."""
        model, train = run["model"], run.get("train", {})
        family = model["family"]
        seq_len = train.get("seq_len", 64)
        width = model["width"]
        return cls(
            family=family,
            vocab_size=model["vocab_size"],
            layers=model["layers"],
            width=width,
            heads=model["heads"],
            kv_heads=model.get("kv_heads", model["heads"]),
            ffn_width=model.get("ffn_width", 4 * width if family == "gpt2" else None),
            max_positions=model.get("max_positions", None if family == "gpt2" else seq_len),
            norm_eps=float(model.get("norm_eps", 1e-5)),
            rope_theta=float(model.get("rope_theta", 10000.0)),
            tie_embeddings=model.get("tie_embeddings", family == "gpt2"),
            experts=model.get("experts", 0),
            experts_per_token=model.get("experts_per_token", 0),
            capacity_factor=float(model.get("capacity_factor", 1.25)),
            aux_loss_weight=float(model.get("aux_loss_weight", 0.01)),
            batch_size=train.get("batch_size", 8),
            seq_len=seq_len,
        )


# --- Parameters --------------------------------------------------------------


def parameter_shapes(cfg):
    """{Hugging Face name: shape} of every trainable tensor of the model."""
    C, F, V = cfg.width, cfg.ffn_width, cfg.vocab_size
    shapes = {}
    if cfg.family == "gpt2":
        shapes["transformer.wte.weight"] = (V, C)
        shapes["transformer.wpe.weight"] = (cfg.max_positions, C)
        for i in range(cfg.layers):
            p = f"transformer.h.{i}."
            shapes |= {
                p + "ln_1.weight": (C,), p + "ln_1.bias": (C,),
                p + "attn.c_attn.weight": (C, 3 * C), p + "attn.c_attn.bias": (3 * C,),
                p + "attn.c_proj.weight": (C, C), p + "attn.c_proj.bias": (C,),
                p + "ln_2.weight": (C,), p + "ln_2.bias": (C,),
                p + "mlp.c_fc.weight": (C, F), p + "mlp.c_fc.bias": (F,),
                p + "mlp.c_proj.weight": (F, C), p + "mlp.c_proj.bias": (C,),
            }
        shapes["transformer.ln_f.weight"] = (C,)
        shapes["transformer.ln_f.bias"] = (C,)
        return shapes

    D = cfg.head_dim
    shapes["model.embed_tokens.weight"] = (V, C)
    for i in range(cfg.layers):
        p = f"model.layers.{i}."
        shapes |= {
            p + "input_layernorm.weight": (C,),
            p + "self_attn.q_proj.weight": (cfg.heads * D, C),
            p + "self_attn.k_proj.weight": (cfg.kv_heads * D, C),
            p + "self_attn.v_proj.weight": (cfg.kv_heads * D, C),
            p + "self_attn.o_proj.weight": (C, cfg.heads * D),
            p + "post_attention_layernorm.weight": (C,),
        }
        if cfg.family == "llama":
            shapes |= {
                p + "mlp.gate_proj.weight": (F, C),
                p + "mlp.up_proj.weight": (F, C),
                p + "mlp.down_proj.weight": (C, F),
            }
        else:
            m = p + "block_sparse_moe."
            shapes[m + "gate.weight"] = (cfg.experts, C)
            # llmc stacks the experts' weights (Mixtral: experts.{e}.w1 ...).
            shapes |= {
                m + "experts.w1.weight": (cfg.experts, F, C),
                m + "experts.w2.weight": (cfg.experts, C, F),
                m + "experts.w3.weight": (cfg.experts, F, C),
            }
    shapes["model.norm.weight"] = (C,)
    if not cfg.tie_embeddings:
        shapes["lm_head.weight"] = (V, C)
    return shapes


# --- Layers ------------------------------------------------------------------


def layer_norm(x, weight, bias, eps):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)  # biased
    return (x - mean) * jax.lax.rsqrt(var + eps) * weight + bias


def rms_norm(x, weight, eps):
    return x * jax.lax.rsqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + eps) * weight


def causal_attention(q, k, v, mutation=""):
    """q [B, T, Hq, D], k and v [B, T, Hkv, D] -> [B, T, Hq, D]. Query head h
    reads key/value head h // (Hq / Hkv), as Hugging Face's repeat_kv."""
    Hq, Hkv, D = q.shape[2], k.shape[2], q.shape[3]
    if mutation == "gqa_tile":
        k, v = jnp.tile(k, (1, 1, Hq // Hkv, 1)), jnp.tile(v, (1, 1, Hq // Hkv, 1))
    else:
        k, v = jnp.repeat(k, Hq // Hkv, axis=2), jnp.repeat(v, Hq // Hkv, axis=2)
    scale = 1.0 / D if mutation == "scale_1_over_d" else 1.0 / math.sqrt(D)
    scores = jnp.einsum("bthd,bshd->bhts", q, k) * scale
    T = q.shape[1]
    if mutation != "not_causal":
        visible = jnp.tril(jnp.ones((T, T), dtype=bool))
        scores = jnp.where(visible, scores, -jnp.inf)
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("bhts,bshd->bthd", probs, v)


def apply_rope(x, theta, mutation="", inv_freq=None):
    """Rotary embedding of x [B, T, H, D] at positions 0..T-1, Hugging Face's
    "rotate half" layout: the pair (x[i], x[i + D/2]) turns by t * theta^(-2i/D)
    (or t * inv_freq[i] for a scaled rope)."""
    if mutation == "no_rope":
        return x
    T, D = x.shape[1], x.shape[3]
    if inv_freq is not None:
        inv_freq = jnp.asarray(inv_freq, dtype=x.dtype)
    else:
        inv_freq = 1.0 / (theta ** (jnp.arange(0, D, 2, dtype=x.dtype) / D))  # [D/2]
    angles = jnp.arange(T, dtype=x.dtype)[:, None] * inv_freq[None, :]  # [T, D/2]
    cos, sin = jnp.cos(angles)[None, :, None, :], jnp.sin(angles)[None, :, None, :]
    if mutation == "rope_interleaved":
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return jnp.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1).reshape(x.shape)
    x1, x2 = x[..., : D // 2], x[..., D // 2 :]
    return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def swiglu_mlp(x, gate, up, down, mutation=""):
    """down(silu(gate(x)) * up(x)), weights [out, in] (torch.nn.Linear)."""
    g, u = x @ gate.T, x @ up.T
    if mutation == "swap_gate_up":
        g, u = u, g
    return (jax.nn.silu(g) * u) @ down.T


def mean_cross_entropy(logits, targets):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))


# --- GPT-2 -------------------------------------------------------------------


def gpt2_loss(params, tokens, targets, cfg, mutation=""):
    p = params
    B, T = tokens.shape
    H, D = cfg.heads, cfg.head_dim
    eps = 1e-3 if mutation == "eps_1e-3" else cfg.norm_eps
    wte = p["transformer.wte.weight"]
    x = wte[tokens]
    if mutation != "no_positions":
        x = x + p["transformer.wpe.weight"][:T][None]
    for i in range(cfg.layers):
        n = f"transformer.h.{i}."
        h = layer_norm(x, p[n + "ln_1.weight"], p[n + "ln_1.bias"], eps)
        qkv = h @ p[n + "attn.c_attn.weight"] + p[n + "attn.c_attn.bias"]
        q, k, v = (a.reshape(B, T, H, D) for a in jnp.split(qkv, 3, axis=-1))
        a = causal_attention(q, k, v, mutation).reshape(B, T, H * D)
        x = x + a @ p[n + "attn.c_proj.weight"] + p[n + "attn.c_proj.bias"]
        h = layer_norm(x, p[n + "ln_2.weight"], p[n + "ln_2.bias"], eps)
        h = h @ p[n + "mlp.c_fc.weight"] + p[n + "mlp.c_fc.bias"]
        h = jax.nn.gelu(h, approximate=True)  # GPT-2's tanh approximation
        x = x + h @ p[n + "mlp.c_proj.weight"] + p[n + "mlp.c_proj.bias"]
    x = layer_norm(x, p["transformer.ln_f.weight"], p["transformer.ln_f.bias"], eps)
    return mean_cross_entropy(x @ wte.T, targets)  # the head is tied to wte


# --- LLaMA and the mixture of experts ----------------------------------------


def llama_attention(x, p, n, cfg, mutation):
    B, T, _ = x.shape
    D = cfg.head_dim
    q = (x @ p[n + "q_proj.weight"].T).reshape(B, T, cfg.heads, D)
    k = (x @ p[n + "k_proj.weight"].T).reshape(B, T, cfg.kv_heads, D)
    v = (x @ p[n + "v_proj.weight"].T).reshape(B, T, cfg.kv_heads, D)
    q = apply_rope(q, cfg.rope_theta, mutation, cfg.inv_freq)
    k = apply_rope(k, cfg.rope_theta, mutation, cfg.inv_freq)
    a = causal_attention(q, k, v, mutation).reshape(B, T, cfg.heads * D)
    return a @ p[n + "o_proj.weight"].T


def expert_capacity(cfg, tokens):
    """Slots per expert: min(N, ceil(capacity_factor * N * k / E))."""
    k, E = cfg.experts_per_token, cfg.experts
    return min(tokens, math.ceil(cfg.capacity_factor * (tokens * k) / E))


def sparse_moe(x, p, n, cfg, mutation):
    """Mixtral's sparse MoE block with llmc's expert capacity. x [N, C].
    Returns (output [N, C], router statistics)."""
    N = x.shape[0]
    E, k = cfg.experts, cfg.experts_per_token
    logits = x @ p[n + "gate.weight"].T  # [N, E]
    probs = jax.nn.softmax(logits, axis=-1)
    # Top-k of the logits (the same order as of the probabilities); equal
    # values: the lower expert id first (lax.top_k's documented rule).
    _, choice = jax.lax.top_k(logits, k)  # [N, k]
    weight = jnp.take_along_axis(probs, choice, axis=-1)
    if mutation != "no_renormalize":
        weight = weight / jnp.sum(weight, axis=-1, keepdims=True)

    # Capacity: for each expert, the (token, choice) pairs that chose it, in
    # order of token then choice, take slots 0, 1, ...; those past the
    # capacity are dropped.
    chose = jax.nn.one_hot(choice, E, dtype=jnp.int32)  # [N, k, E]
    slot = (jnp.cumsum(chose.reshape(N * k, E), axis=0) - 1).reshape(N, k, E)
    slot_of_pair = jnp.sum(slot * chose, axis=-1)  # [N, k]
    capacity = N if mutation == "no_capacity" else expert_capacity(cfg, N)
    kept = slot_of_pair < capacity

    # Every expert on every token (dense; the model is tiny), then each
    # token's kept choices, weighted.
    expert_out = jnp.stack([
        swiglu_mlp(x, p[n + "experts.w1.weight"][e], p[n + "experts.w3.weight"][e],
                   p[n + "experts.w2.weight"][e])
        for e in range(E)
    ])  # [E, N, C]
    picked = expert_out[choice, jnp.arange(N)[:, None]]  # [N, k, C]
    out = jnp.sum(jnp.where(kept, weight, 0.0)[..., None] * picked, axis=1)

    counted = chose * kept[..., None] if mutation == "count_after_drop" else chose
    stats = {
        "pairs_per_expert": jnp.sum(counted, axis=(0, 1)),  # [E], before dropping
        "router_prob_sum": jnp.sum(probs, axis=0),  # [E]
        "dropped_pairs": jnp.sum(~kept),
    }
    return out, stats


def llama_loss(params, tokens, targets, cfg, mutation="", with_stats=False):
    """LLaMA's loss, and the MoE model's when cfg.family == "moe" (whose loss
    adds aux_loss_weight * E * sum_e f_e * P_e over all layers' tokens)."""
    p = params
    B, T = tokens.shape
    eps = 1e-3 if mutation == "eps_1e-3" else cfg.norm_eps
    x = p["model.embed_tokens.weight"][tokens]
    routing = []
    for i in range(cfg.layers):
        n = f"model.layers.{i}."
        h = rms_norm(x, p[n + "input_layernorm.weight"], eps)
        x = x + llama_attention(h, p, n + "self_attn.", cfg, mutation)
        h = rms_norm(x, p[n + "post_attention_layernorm.weight"], eps)
        if cfg.family == "moe":
            out, stats = sparse_moe(h.reshape(B * T, -1), p, n + "block_sparse_moe.", cfg,
                                    mutation)
            x = x + out.reshape(B, T, -1)
            routing.append(stats)
        else:
            x = x + swiglu_mlp(h, p[n + "mlp.gate_proj.weight"], p[n + "mlp.up_proj.weight"],
                               p[n + "mlp.down_proj.weight"], mutation)
    x = rms_norm(x, p["model.norm.weight"], eps)
    head = p["model.embed_tokens.weight"] if cfg.tie_embeddings else p["lm_head.weight"]
    loss = mean_cross_entropy(x @ head.T, targets)
    if cfg.family == "moe":
        rows = cfg.layers * B * T  # the router rows of all layers together
        f = sum(s["pairs_per_expert"] for s in routing) / rows
        P = sum(s["router_prob_sum"] for s in routing) / rows
        loss = loss + cfg.aux_loss_weight * cfg.experts * jnp.sum(f * P)
    if with_stats:
        return loss, routing
    return loss


def loss_fn(cfg, mutation=""):
    """The jitted loss(params, tokens, targets) of cfg's family."""
    model = gpt2_loss if cfg.family == "gpt2" else llama_loss
    return jax.jit(lambda params, tokens, targets: model(params, tokens, targets, cfg, mutation))
