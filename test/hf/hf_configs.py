"""The tiny Hugging Face models of llmc's tests, as config.json contents.

Standard library only: bench/hf_parity.py's `prepare` step runs it on the
build machine without numpy, and its GPU step with transformers.
"""

VOCAB = 128  # the built-in corpus is ASCII: training needs ids < 128

CONFIGS = {
    "gpt2": {
        "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
        "vocab_size": VOCAB, "n_embd": 32, "n_head": 4, "n_layer": 2,
        "n_positions": 32, "n_inner": None, "layer_norm_epsilon": 1e-5,
        "activation_function": "gelu_new", "embd_pdrop": 0.0, "attn_pdrop": 0.0,
        "resid_pdrop": 0.0, "bos_token_id": 1, "eos_token_id": 2,
    },
    # GPT-2 with the attention scaled by 1/(layer + 1) and the erf GELU.
    "gpt2-scaled": {
        "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
        "vocab_size": VOCAB, "n_embd": 32, "n_head": 4, "n_layer": 2,
        "n_positions": 32, "n_inner": 64, "layer_norm_epsilon": 1e-5,
        "activation_function": "gelu", "scale_attn_by_inverse_layer_idx": True,
        "embd_pdrop": 0.0, "attn_pdrop": 0.0, "resid_pdrop": 0.0,
    },
    # GQA (4 query heads over 2), LLaMA 3 rope scaling with an original
    # context of 16 so that a 16-token sequence sees every regime: the
    # pair of wavelength 6.3 is interpolated, the longer ones divided.
    "llama3": {
        "model_type": "llama", "architectures": ["LlamaForCausalLM"],
        "vocab_size": VOCAB, "hidden_size": 32, "intermediate_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
        "tie_word_embeddings": False, "hidden_act": "silu", "attention_dropout": 0.0,
        "bos_token_id": 1, "eos_token_id": 2,
    },
    # Tied embeddings, a head_dim other than hidden / heads, biases, and
    # LLaMA 3 scaling on 8 pairs.
    "llama-tied": {
        "model_type": "llama", "architectures": ["LlamaForCausalLM"],
        "vocab_size": VOCAB, "hidden_size": 32, "intermediate_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 16, "attention_bias": True, "mlp_bias": True,
        "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
        "rope_scaling": {"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 2.0, "original_max_position_embeddings": 32},
        "tie_word_embeddings": True, "hidden_act": "silu",
    },
    "mixtral": {
        "model_type": "mixtral", "architectures": ["MixtralForCausalLM"],
        "vocab_size": VOCAB, "hidden_size": 32, "intermediate_size": 48,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "num_local_experts": 4, "num_experts_per_tok": 2, "max_position_embeddings": 64,
        "rms_norm_eps": 1e-5, "rope_theta": 1e6, "router_aux_loss_coef": 0.02,
        "sliding_window": None, "tie_word_embeddings": False, "hidden_act": "silu",
    },
}


def head_dim(config):
    return config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
