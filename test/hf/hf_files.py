"""Hugging Face model folders written with numpy alone, for llmc's tests.

The CI tests (hf_checkpoints.py, hf_refusals.py) have no torch: they write
the folders transformers would write (config.json, model.safetensors or
shards with model.safetensors.index.json, in f32, bf16 or f16) from numpy
arrays under transformers' own names, and read what llmc writes back.
bench/hf_parity.py uses the configs and the llama3 reference on the GPU
machine too.

The safetensors files are written and read here byte by byte (the format is
an 8-byte header length, a JSON header, the data): the tests need dtypes the
`safetensors` package's numpy API does not write (bf16, fp8), and an
independent reader checks llmc's writer. ml_dtypes gives numpy bf16 and fp8.
"""

import json
import math
import struct
from pathlib import Path

import ml_dtypes
import numpy as np

DTYPES = {  # safetensors name -> numpy dtype
    "F32": np.dtype(np.float32),
    "F16": np.dtype(np.float16),
    "BF16": np.dtype(ml_dtypes.bfloat16),
    "F8_E4M3": np.dtype(ml_dtypes.float8_e4m3fn),
    "I32": np.dtype(np.int32),
    "I64": np.dtype(np.int64),
}
NAMES = {v: k for k, v in DTYPES.items()}


def write_safetensors(path, tensors, metadata=None):
    """tensors: {name: numpy array}; dtypes as in DTYPES."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        array = np.ascontiguousarray(tensors[name])
        data = array.tobytes()
        header[name] = {"dtype": NAMES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """({name: numpy array}, metadata) of a safetensors file."""
    raw = Path(path).read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    metadata = header.pop("__metadata__", {})
    base = 8 + length
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(raw[base + begin:base + end],
                                      dtype=DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return tensors, metadata


def read_folder(folder):
    """Every tensor of a model folder (one file or an index's shards)."""
    folder = Path(folder)
    index = folder / "model.safetensors.index.json"
    files = ([folder / "model.safetensors"] if not index.exists() else
             sorted({folder / f for f in json.loads(index.read_text())["weight_map"].values()}))
    tensors = {}
    for f in files:
        tensors |= read_safetensors(f)[0]
    return tensors


# --- The tiny models ---------------------------------------------------------

from hf_configs import CONFIGS, VOCAB, head_dim  # noqa: E402,F401


def parameter_shapes(config):
    """{transformers name: (shape, kind)} of a model, kind one of "conv"
    (GPT-2's [in, out]), "linear" ([out, in]), "embedding", "norm", "bias"."""
    shapes = {}
    if config["model_type"] == "gpt2":
        C, P, V = config["n_embd"], config["n_positions"], config["vocab_size"]
        F = config.get("n_inner") or 4 * C
        shapes["transformer.wte.weight"] = ((V, C), "embedding")
        shapes["transformer.wpe.weight"] = ((P, C), "embedding")
        for i in range(config["n_layer"]):
            p = f"transformer.h.{i}."
            for norm in ("ln_1", "ln_2"):
                shapes[p + norm + ".weight"] = ((C,), "norm")
                shapes[p + norm + ".bias"] = ((C,), "bias")
            for name, (n_in, n_out) in {"attn.c_attn": (C, 3 * C), "attn.c_proj": (C, C),
                                        "mlp.c_fc": (C, F), "mlp.c_proj": (F, C)}.items():
                shapes[p + name + ".weight"] = ((n_in, n_out), "conv")
                shapes[p + name + ".bias"] = ((n_out,), "bias")
        shapes["transformer.ln_f.weight"] = ((C,), "norm")
        shapes["transformer.ln_f.bias"] = ((C,), "bias")
        return shapes
    C, F, V = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    H, K, D = config["num_attention_heads"], config["num_key_value_heads"], head_dim(config)
    attention_bias = config.get("attention_bias", False)
    mlp_bias = config.get("mlp_bias", False)
    shapes["model.embed_tokens.weight"] = ((V, C), "embedding")
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes[p + "input_layernorm.weight"] = ((C,), "norm")
        shapes[p + "post_attention_layernorm.weight"] = ((C,), "norm")
        for name, (n_out, n_in) in {"q_proj": (H * D, C), "k_proj": (K * D, C),
                                    "v_proj": (K * D, C), "o_proj": (C, H * D)}.items():
            shapes[p + "self_attn." + name + ".weight"] = ((n_out, n_in), "linear")
            if attention_bias:
                shapes[p + "self_attn." + name + ".bias"] = ((n_out,), "bias")
        if config["model_type"] == "mixtral":
            E = config["num_local_experts"]
            m = p + "block_sparse_moe."
            shapes[m + "gate.weight"] = ((E, C), "linear")
            for j in range(E):
                for w, shape in (("w1", (F, C)), ("w2", (C, F)), ("w3", (F, C))):
                    shapes[f"{m}experts.{j}.{w}.weight"] = (shape, "linear")
        else:
            for name, (n_out, n_in) in {"gate_proj": (F, C), "up_proj": (F, C),
                                        "down_proj": (C, F)}.items():
                shapes[p + "mlp." + name + ".weight"] = ((n_out, n_in), "linear")
                if mlp_bias:
                    shapes[p + "mlp." + name + ".bias"] = ((n_out,), "bias")
    shapes["model.norm.weight"] = ((C,), "norm")
    if not config.get("tie_word_embeddings", False):
        shapes["lm_head.weight"] = ((V, C), "linear")
    return shapes


def draw_weights(config, seed):
    """f32 weights whose every value is exact in bf16 and in f16, so that a
    bf16 or f16 copy holds the very same numbers: drawn, rounded to bf16,
    and values below f16's normal range (2^-14) set to 0. Matrices normal
    with std 1/sqrt(fan_in) (activations of order one, as the JAX parity
    tests draw them), norm weights 1 + normal(0.1), biases normal(0.1)."""
    rng = np.random.default_rng(seed)
    weights = {}
    for name, (shape, kind) in parameter_shapes(config).items():
        if kind == "norm":
            x = 1.0 + 0.1 * rng.standard_normal(shape)
        elif kind == "bias":
            x = 0.1 * rng.standard_normal(shape)
        else:
            fan_in = shape[0] if kind == "conv" else shape[-1]
            x = rng.standard_normal(shape) / math.sqrt(fan_in)
        x = x.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)
        x[np.abs(x) < 2.0 ** -14] = 0.0
        assert np.array_equal(x.astype(np.float16).astype(np.float32), x)
        weights[name] = x
    return weights


def write_folder(folder, config, weights, dtype="F32", shards=1, names=None,
                 extra_files=None):
    """A model folder: config.json (torch_dtype set), the weights in `dtype`
    (`names` maps a tensor's name to the one written, None drops it), in
    one file or `shards` files with an index, and `extra_files` {name:
    text}."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = dict(config)
    config["torch_dtype"] = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}.get(dtype,
                                                                                         "float32")
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    tensors = {}
    for name, array in weights.items():
        written = names(name) if names else name
        if written is not None:
            tensors[written] = np.asarray(array).astype(DTYPES[dtype]) if array.dtype.kind == "f" \
                else array
    ordered = sorted(tensors)
    if shards == 1:
        write_safetensors(folder / "model.safetensors", tensors, {"format": "pt"})
    else:
        weight_map = {}
        for s in range(shards):
            part = {n: tensors[n] for n in ordered[s::shards]}
            file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            write_safetensors(folder / file, part, {"format": "pt"})
            weight_map |= {n: file for n in part}
        total = sum(a.nbytes for a in tensors.values())
        (folder / "model.safetensors.index.json").write_text(json.dumps(
            {"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2))
    for name, text in (extra_files or {}).items():
        (folder / name).write_text(text)
    return folder


def stack_experts(tensors):
    """Mixtral's per-expert tensors stacked as llmc stores them
    (experts.w1.weight [E, F, C], ...); other tensors unchanged."""
    out, groups = {}, {}
    for name, array in tensors.items():
        parts = name.split(".")
        if "experts" in parts and parts[parts.index("experts") + 1].isdigit():
            at = parts.index("experts")
            key = ".".join(parts[:at + 1] + parts[at + 2:])
            groups.setdefault(key, {})[int(parts[at + 1])] = array
        else:
            out[name] = array
    for key, experts in groups.items():
        out[key] = np.stack([experts[j] for j in range(len(experts))])
    return out


def fuse_mixtral_experts(tensors):
    """Mixtral's tensors as transformers 5 holds them without its legacy
    conversion: `mlp.gate.weight`, and per layer `mlp.experts.gate_up_proj`
    [E, 2F, C] (each expert's w1 rows, then its w3 rows) and
    `mlp.experts.down_proj` [E, C, F]."""
    fused = {}
    stacked = stack_experts(tensors)
    for name, array in stacked.items():
        if ".block_sparse_moe.experts.w" in name:
            layer = name.split(".block_sparse_moe.")[0]
            w = name.split("experts.")[1][:2]
            if w == "w2":
                fused[layer + ".mlp.experts.down_proj"] = array
            elif w == "w1":
                fused[layer + ".mlp.experts.gate_up_proj"] = np.concatenate(
                    [array, stacked[layer + ".block_sparse_moe.experts.w3.weight"]], axis=1)
        else:
            fused[name.replace("block_sparse_moe.gate", "mlp.gate")] = array
    return fused


def llama3_inverse_frequencies(config):
    """transformers' _compute_llama3_parameters (modeling_rope_utils.py),
    its torch expressions in numpy float64."""
    dim = head_dim(config)
    base = config.get("rope_theta", 10000.0)
    inv_freq = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float64) / dim))
    s = config["rope_scaling"]
    factor, low, high = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
    old = s["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = np.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, smoothed, inv_freq_llama)
