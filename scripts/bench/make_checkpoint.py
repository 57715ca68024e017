#!/usr/bin/python3
"""Writes a benchmark checkpoint: config.json + model.safetensors (the layout safetensors writes:
header sorted by name, padded to 8, offsets tiling the buffer).
  --arch gpt2 (scripts/bench-load.sh): GPT-2-shaped, float32; with --bin also pytorch_model.bin
    written by torch.save of the same tensors (Debian python3-torch).
  --arch llama --dtype bf16 (scripts/bench-generate.sh): Llama-shaped (GQA, SwiGLU, untied head),
    with generation_config.json.

Values ~ N(0, 0.02) from one 64 MiB random block reused (the benchmarks measure bytes, not
entropy; the forward stays finite); norm weights are 1."""
import argparse, json, os, struct, sys

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--hidden", type=int, default=2048)
p.add_argument("--layers", type=int, default=13)
p.add_argument("--vocab", type=int, default=50257)
p.add_argument("--positions", type=int, default=1024)
p.add_argument("--heads", type=int, default=16)
p.add_argument("--bin", action="store_true")
p.add_argument("--arch", choices=["gpt2", "llama"], default="gpt2")
p.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
p.add_argument("--intermediate", type=int, default=0, help="llama: MLP width (default 8/3 hidden, rounded to 256)")
p.add_argument("--kv-heads", type=int, default=4)
a = p.parse_args()
os.makedirs(a.out, exist_ok=True)
h = a.hidden


def gpt2_shapes():
    inner = 4 * h
    shapes = {"transformer.wte.weight": [a.vocab, h], "transformer.wpe.weight": [a.positions, h],
              "transformer.ln_f.weight": [h], "transformer.ln_f.bias": [h]}
    for i in range(a.layers):
        b = f"transformer.h.{i}."
        shapes.update({b + "ln_1.weight": [h], b + "ln_1.bias": [h], b + "ln_2.weight": [h], b + "ln_2.bias": [h],
                       b + "attn.c_attn.weight": [h, 3 * h], b + "attn.c_attn.bias": [3 * h],
                       b + "attn.c_proj.weight": [h, h], b + "attn.c_proj.bias": [h],
                       b + "mlp.c_fc.weight": [h, inner], b + "mlp.c_fc.bias": [inner],
                       b + "mlp.c_proj.weight": [inner, h], b + "mlp.c_proj.bias": [h]})
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": h, "n_head": a.heads,
              "n_layer": a.layers, "n_positions": a.positions, "vocab_size": a.vocab}
    return shapes, config


def llama_shapes():
    inner = a.intermediate or (8 * h // 3 + 255) // 256 * 256
    kv = h // a.heads * a.kv_heads
    shapes = {"model.embed_tokens.weight": [a.vocab, h], "model.norm.weight": [h], "lm_head.weight": [a.vocab, h]}
    for i in range(a.layers):
        b = f"model.layers.{i}."
        shapes.update({b + "input_layernorm.weight": [h], b + "post_attention_layernorm.weight": [h],
                       b + "self_attn.q_proj.weight": [h, h], b + "self_attn.k_proj.weight": [kv, h],
                       b + "self_attn.v_proj.weight": [kv, h], b + "self_attn.o_proj.weight": [h, h],
                       b + "mlp.gate_proj.weight": [inner, h], b + "mlp.up_proj.weight": [inner, h],
                       b + "mlp.down_proj.weight": [h, inner]})
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": h,
              "intermediate_size": inner, "num_hidden_layers": a.layers, "num_attention_heads": a.heads,
              "num_key_value_heads": a.kv_heads, "max_position_embeddings": a.positions, "vocab_size": a.vocab,
              "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False,
              "bos_token_id": 1, "eos_token_id": 2}
    with open(os.path.join(a.out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 1, "eos_token_id": 2}, f, indent=2)
    return shapes, config


shapes, config = gpt2_shapes() if a.arch == "gpt2" else llama_shapes()
config["torch_dtype"] = "float32" if a.dtype == "f32" else "bfloat16"
with open(os.path.join(a.out, "config.json"), "w") as f:
    json.dump(config, f, indent=2)

rng = np.random.default_rng(0)
block = (rng.standard_normal(16 << 20) * 0.02).astype("<f4")
ones = np.ones(1 << 16, dtype="<f4")

NORMS = ("ln_1.weight", "ln_2.weight", "ln_f.weight", "layernorm.weight", "norm.weight")


def values(name, n):
    src = ones if name.endswith(NORMS) else block
    reps = -(-n // src.size)
    return np.tile(src, reps)[:n] if reps > 1 else src[:n]


def stored(x):
    """float32 → the stored dtype's bytes (bfloat16: round to nearest even on the upper 16 bits)."""
    if a.dtype == "f32":
        return x.tobytes()
    u = x.view("<u4").astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2").tobytes()


ELEM = 4 if a.dtype == "f32" else 2
names = sorted(shapes)
header, off = {"__metadata__": {"format": "pt"}}, 0
for n in names:
    nbytes = ELEM * int(np.prod(shapes[n]))
    header[n] = {"dtype": "F32" if a.dtype == "f32" else "BF16", "shape": shapes[n],
                 "data_offsets": [off, off + nbytes]}
    off += nbytes
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(os.path.join(a.out, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text)
    for n in names:
        count = int(np.prod(shapes[n]))
        done = 0
        while done < count:  # 64 MiB at a time: the writer's RSS stays small
            k = min(count - done, block.size)
            f.write(stored(values(n, k)))
            done += k
print(f"{a.out}/model.safetensors: {off / 1e9:.2f} GB, {len(names)} tensors", file=sys.stderr)

if a.bin:
    import torch
    sd = {}
    for n in ["transformer.wte.weight", "transformer.wpe.weight"] + [k for k in names if ".h." in k] + \
             ["transformer.ln_f.weight", "transformer.ln_f.bias"]:
        sd[n] = torch.from_numpy(values(n, int(np.prod(shapes[n]))).reshape(shapes[n]).copy())
    torch.save(sd, os.path.join(a.out, "pytorch_model.bin"))
    print(f"{a.out}/pytorch_model.bin written by torch.save", file=sys.stderr)
