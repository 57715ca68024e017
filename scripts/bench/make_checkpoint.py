#!/usr/bin/python3
"""Writes a GPT-2-shaped checkpoint for scripts/bench-load.sh: config.json + model.safetensors
(the layout safetensors writes: header sorted by name, padded to 8, offsets tiling the buffer)
and, with --bin, pytorch_model.bin written by torch.save of the same tensors (Debian python3-torch).

Values: float32 ~ N(0, 0.02) from one 64 MiB random block reused (the load benchmark measures
bytes, not entropy; the forward stays finite)."""
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
a = p.parse_args()
os.makedirs(a.out, exist_ok=True)
h, inner = a.hidden, 4 * a.hidden

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
          "n_layer": a.layers, "n_positions": a.positions, "vocab_size": a.vocab, "torch_dtype": "float32"}
with open(os.path.join(a.out, "config.json"), "w") as f:
    json.dump(config, f, indent=2)

rng = np.random.default_rng(0)
block = (rng.standard_normal(16 << 20) * 0.02).astype("<f4")
ones = np.ones(1 << 16, dtype="<f4")

def values(name, n):
    src = ones if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name.endswith("ln_f.weight") else block
    reps = -(-n // src.size)
    return np.tile(src, reps)[:n] if reps > 1 else src[:n]

names = sorted(shapes)
header, off = {"__metadata__": {"format": "pt"}}, 0
for n in names:
    nbytes = 4 * int(np.prod(shapes[n]))
    header[n] = {"dtype": "F32", "shape": shapes[n], "data_offsets": [off, off + nbytes]}
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
            f.write(values(n, k).tobytes())
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
