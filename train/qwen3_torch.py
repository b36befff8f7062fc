"""Qwen3 in plain torch, and a pure-Python safetensors reader/writer.

Only for the CPU smoke test (train.py --smoke-cpu, fixtures.py --standin)
on machines without transformers or safetensors: the real run uses
transformers' Qwen3ForCausalLM. This module computes what that class
computes (eager attention): RMSNorm in float32, per-head RMSNorm on queries
and keys, rotary embedding on two halves (rotate_half), grouped-query
attention, SwiGLU MLP, tied output head. Its parameter names are those of
the Hugging Face checkpoint ("model.layers.0.self_attn.q_proj.weight", ...)
and save_checkpoint() writes a folder that `inferno convert` reads like a
transformers one: config.json in transformers' classic Qwen3 layout and a
bf16 model.safetensors without lm_head.weight (tied).
"""

import json
import math
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        dt = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dt)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.nh, self.nkv, self.hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        h = c["hidden_size"]
        self.q_proj = nn.Linear(h, self.nh * self.hd, bias=False)
        self.k_proj = nn.Linear(h, self.nkv * self.hd, bias=False)
        self.v_proj = nn.Linear(h, self.nkv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.nh * self.hd, h, bias=False)
        self.q_norm = RMSNorm(self.hd, c["rms_norm_eps"])
        self.k_norm = RMSNorm(self.hd, c["rms_norm_eps"])

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        q = self.q_norm(self.q_proj(x).view(B, T, self.nh, self.hd)).transpose(1, 2)
        k = self.k_norm(self.k_proj(x).view(B, T, self.nkv, self.hd)).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.nkv, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        rep = self.nh // self.nkv
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        s = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.hd)
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        s = s.masked_fill(mask, float("-inf"))
        p = torch.softmax(s, dim=-1, dtype=torch.float32).to(q.dtype)
        o = torch.matmul(p, v).transpose(1, 2).reshape(B, T, self.nh * self.hd)
        return self.o_proj(o)


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, f = c["hidden_size"], c["intermediate_size"]
        self.gate_proj = nn.Linear(h, f, bias=False)
        self.up_proj = nn.Linear(h, f, bias=False)
        self.down_proj = nn.Linear(f, h, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.input_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.mlp = MLP(c)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([Layer(c) for _ in range(c["num_hidden_layers"])])
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, ids):
        T, hd = ids.shape[1], self.c["head_dim"]
        inv = 1.0 / (self.c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.int64, device=ids.device).float() / hd))
        f = torch.arange(T, device=ids.device).float()[:, None] * inv[None, :]
        emb = torch.cat((f, f), dim=-1)
        x = self.embed_tokens(ids)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.norm(x)


class Qwen3ForCausalLM(nn.Module):
    """model.* as in Hugging Face; the output head is the embedding."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.model = Model(c)
        for m in self.modules():  # transformers' initialisation
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=c.get("initializer_range", 0.02))

    def forward(self, ids):
        return F.linear(self.model(ids), self.model.embed_tokens.weight)


def hf_config(vocab_size, hidden, intermediate, layers, heads, kv_heads, head_dim, max_pos, rope_theta, rms_eps):
    """config.json in transformers' classic Qwen3 layout."""
    return {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "attention_bias": False, "attention_dropout": 0.0,
        "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": head_dim, "hidden_act": "silu",
        "hidden_size": hidden, "initializer_range": 0.02, "intermediate_size": intermediate,
        "max_position_embeddings": max_pos, "max_window_layers": layers, "num_attention_heads": heads,
        "num_hidden_layers": layers, "num_key_value_heads": kv_heads, "rms_norm_eps": rms_eps, "rope_scaling": None,
        "rope_theta": rope_theta, "sliding_window": None, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
        "use_cache": True, "use_sliding_window": False, "vocab_size": vocab_size,
    }


# --- safetensors, pure Python ------------------------------------------------

_DT = {"BF16": (torch.bfloat16, np.int16), "F32": (torch.float32, np.float32), "F16": (torch.float16, np.float16)}


def save_safetensors(tensors, path):
    """Writes {name: tensor} (bf16, f16 or f32) in the safetensors format."""
    names = {v[0]: k for k, v in _DT.items()}
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().cpu()
        raw = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        tdt, ndt = _DT[info["dtype"]]
        a, b = info["data_offsets"]
        arr = np.frombuffer(data[a:b], dtype=ndt).copy().reshape(info["shape"])
        t = torch.from_numpy(arr)
        out[name] = t.view(torch.bfloat16) if tdt == torch.bfloat16 else t
    return out


def save_checkpoint(module, folder):
    """bf16 model.safetensors (no lm_head: tied) and config.json; returns
    the saved tensors."""
    sd = {k: v.detach().to(torch.bfloat16).cpu() for k, v in module.state_dict().items()}
    save_safetensors(sd, f"{folder}/model.safetensors")
    with open(f"{folder}/config.json", "w") as f:
        json.dump(module.config, f, indent=2, sort_keys=True)
        f.write("\n")
    return sd


def load_checkpoint(folder, dtype=torch.float32):
    with open(f"{folder}/config.json") as f:
        c = json.load(f)
    m = Qwen3ForCausalLM(c)
    sd = load_safetensors(f"{folder}/model.safetensors")
    m.load_state_dict({k: v.to(dtype) for k, v in sd.items()})
    return m.to(dtype)
