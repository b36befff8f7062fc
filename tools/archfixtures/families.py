#!/usr/bin/env python3
"""Reference fixtures for gpt-oss, Gemma 3, Mistral and Phi-4 (issue 31).

    python3 tools/archfixtures/families.py OUTDIR [--llamacpp DIR] [--only NAME,...]   # needs torch and transformers
    python3 tools/archfixtures/families.py --tokenizers OUTDIR        # the tokenizer files only
    python3 tools/archfixtures/families.py --self-test                # what needs no torch

With torch and transformers (5.x), builds a random-weight checkpoint of
small, odd shapes for each family (query width other than the hidden size
but for Phi-3, whose attention output llama.cpp assumes square;
grouped-query ratio 3; head_dim 32 and widths that are multiples of 32, so
that the CUDA backend takes them; a sliding window of 6 where the family
has one, so that a prompt of 26 tokens crosses it four times):

  gpt-oss        GptOssForCausalLM: 4 experts top-2 with biases, sinks, the
                 window on layers 0 and 2, YaRN as openai/gpt-oss-20b has it
                 (factor 32 of 4096, beta 32/1, truncate false, theta 1.5e5),
                 expert weights exactly MXFP4 values (random e2m1 codes, an
                 e8m0 scale a block of 32 along the input), the other
                 weights exactly bfloat16 values
  gpt-oss-mxfp4  the same model as the Hub ships it: *_blocks/*_scales u8
                 expert tensors, BF16 elsewhere, quantization_config mxfp4
  gemma3         Gemma3ForCausalLM: 6 layers, 5 local (window 6, theta 1e4)
                 and 1 global (theta 1e6, linear scaling 8 as 4B+),
                 query_pre_attn_scalar 48 (not head_dim, as the 27B),
                 QK-norm, post norms, tied embeddings, SentencePiece tokenizer
  mistral        MistralForCausalLM as Nemo: head_dim given (3 x 32 = 96
                 queries over a hidden size of 64), no window, tekken split;
                 Mistral Small 3.x (MistralForCausalLM) differs only in
                 sizes and theta, which no converter treats otherwise
  mistral3       the same language model in Mistral3ForConditionalGeneration
                 (Mistral Small 3.1/3.2's Hub layout: text_config,
                 language_model.* tensors, a tiny Pixtral vision tower and
                 projector); its logits are mistral's (checked on loading)
  phi4           Phi3ForCausalLM as Phi-4 14B: full rotary, untied
  phi4-mini      Phi3ForCausalLM as Phi-4-mini: partial_rotary_factor 0.75,
                 LongRoPE (short factors: the original context, 256, is
                 longer than every sequence here and than the tests'
                 context), tied embeddings

Each checkpoint is written in the Hub's layout (config.json as the Hub's
files state it, model.safetensors with the Hub's tensor names) and loaded
back with from_pretrained (attn_implementation="eager", float32); the
loaded model gives transformers' float32 logits of every position of
prompts of 1, 9 and 26 tokens, of the last position of one of 64, and
greedy continuations of 100 tokens by full recomputation. The tokenizers
are familytok.py's. OUTDIR receives, flat:

  NAME.config.json, NAME.safetensors      each checkpoint
  KIND.tokenizer.json, KIND.tokenizer_config.json (gemma3.tokenizer.model)
  NAME.llamacpp.gguf                      llama.cpp's convert_hf_to_gguf.py
                                          --outtype f32 of each (--llamacpp)
  families.logits.json                    prompts, logits, greedy tokens,
                                          checks, versions

--only builds only the named specs (a variant comes with its spec:
mistral3 with mistral, gpt-oss-mxfp4 with gpt-oss). --llamacpp DIR names a folder holding llama.cpp's convert_hf_to_gguf.py,
conversion/ and gguf-py/ (commit 0253fb21f); each conversion runs in a
process of its own with the family's pre-tokenizer name given (the tiny
vocabularies are not in its hash table), as llamacpp_convert.py does.
Where llama.cpp's file means another model than config.json (it has no
YaRN truncate flag and floors/ceils the ramp; its Gemma 3 scales queries
by 1/sqrt(head_dim) unless the model has 62 layers), the entry's
"llamacpp" holds the logits of that model too, computed by transformers
with the config changed accordingly.

A family that fails is reported and the others are still written; the
summary at the end says what was checked; the exit status is 1 if any
family failed. On the GPU machine (transformers there, no network), from
the repository root, with bin/anchor holding llama.cpp's
convert_hf_to_gguf.py, conversion/ and gguf-py/:

    HF_HUB_OFFLINE=1 python3 tools/archfixtures/families.py /tmp/fam --llamacpp bin/anchor
    tar czf $OUT/families.tgz -C /tmp/fam .        # then: tar xzf families.tgz -C testdata/arch
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import familytok  # noqa: E402
import make  # noqa: E402  (run: a forward pass)

PROMPT_LENGTHS = [1, 9, 26, 64]
FULL = 26  # every position's logits up to this length, the last one's beyond
GREEDY = 100
WINDOW = 6
ALT_PROMPTS = [2, 3]  # the prompts recorded again for llama.cpp's reading

GPT_OSS_YARN = dict(beta_fast=32.0, beta_slow=1.0, factor=32.0, original_max_position_embeddings=4096,
                    rope_type="yarn", truncate=False)
PHI4_MINI_SHORT = [1.0, 1.05, 1.1, 1.2, 1.35, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0]
PHI4_MINI_LONG = [1.0, 1.2, 1.6, 2.4, 3.6, 5.5, 8.0, 12.0, 18.0, 26.0, 36.0, 48.0]

# The checkpoints: tokenizer kind, GGUF architecture, shapes.
SPECS = [
    dict(name="gpt-oss", kind="gpt-oss", arch="gpt-oss", hf="GptOssForCausalLM", vocab=300, hidden=64,
         ffn=64, layers=3, heads=3, kv=1, head_dim=32, experts=4, top=2, theta=150000.0, seed=31),
    dict(name="gemma3", kind="gemma3", arch="gemma3", hf="Gemma3ForCausalLM", vocab=332, hidden=96, ffn=96,
         layers=6, heads=6, kv=2, head_dim=32, theta=1000000.0, local_theta=10000.0, linear=8.0,
         query_scalar=48, seed=32),
    dict(name="mistral", kind="mistral", arch="llama", hf="MistralForCausalLM", vocab=300, hidden=64, ffn=96,
         layers=3, heads=3, kv=1, head_dim=32, theta=1000000.0, seed=33),
    dict(name="phi4", kind="phi4", arch="phi3", hf="Phi3ForCausalLM", vocab=304, hidden=96, ffn=64, layers=3,
         heads=3, kv=1, head_dim=32, theta=250000.0, tied=False, seed=34),
    dict(name="phi4-mini", kind="phi4-mini", arch="phi3", hf="Phi3ForCausalLM", vocab=300, hidden=96, ffn=64,
         layers=3, heads=3, kv=1, head_dim=32, theta=10000.0, tied=True, partial=0.75, seed=35),
]


def hub_config(s):
    """config.json of spec s as the family's Hub checkpoints state it."""
    kind, n_tok = s["kind"], familytok.n_tokens(s["kind"])
    assert s["vocab"] >= n_tok, (s["name"], s["vocab"], n_tok)
    tid = lambda c: familytok.token_id(kind, c)  # noqa: E731
    c = {"architectures": [s["hf"]], "vocab_size": s["vocab"], "hidden_size": s["hidden"],
         "intermediate_size": s["ffn"], "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"],
         "num_key_value_heads": s["kv"], "initializer_range": 0.02, "attention_dropout": 0.0, "use_cache": True,
         "torch_dtype": "float32"}
    if s["name"] == "gpt-oss":
        c.update(model_type="gpt_oss", attention_bias=True, head_dim=s["head_dim"], hidden_act="silu",
                 initial_context_length=4096, max_position_embeddings=131072, rms_norm_eps=1e-5,
                 eos_token_id=tid("<|return|>"), pad_token_id=tid("<|endoftext|>"),
                 num_local_experts=s["experts"], num_experts_per_tok=s["top"], experts_per_token=s["top"],
                 layer_types=["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(s["layers"])],
                 output_router_logits=False, rope_scaling=dict(GPT_OSS_YARN), rope_theta=s["theta"],
                 router_aux_loss_coef=0.9, sliding_window=WINDOW, swiglu_limit=7.0, tie_word_embeddings=False)
    elif s["name"] == "gemma3":
        c.update(model_type="gemma3_text", attention_bias=False, attn_logit_softcapping=None,
                 final_logit_softcapping=None, head_dim=s["head_dim"], hidden_activation="gelu_pytorch_tanh",
                 max_position_embeddings=32768, query_pre_attn_scalar=s["query_scalar"], rms_norm_eps=1e-6,
                 rope_local_base_freq=s["local_theta"], rope_scaling={"factor": s["linear"], "rope_type": "linear"},
                 rope_theta=s["theta"], sliding_window=WINDOW, sliding_window_pattern=6,
                 layer_types=["full_attention" if (i + 1) % 6 == 0 else "sliding_attention"
                              for i in range(s["layers"])],
                 bos_token_id=tid("<bos>"), eos_token_id=[tid("<eos>"), tid("<end_of_turn>")],
                 pad_token_id=tid("<pad>"))
    elif s["name"] == "mistral":
        c.update(model_type="mistral", head_dim=s["head_dim"], hidden_act="silu", max_position_embeddings=1024000,
                 rms_norm_eps=1e-5, rope_theta=s["theta"], sliding_window=None, tie_word_embeddings=False,
                 bos_token_id=tid("<s>"), eos_token_id=tid("</s>"))
    else:
        assert s["heads"] * s["head_dim"] == s["hidden"], "llama.cpp's phi3 assumes a square attention output"
        eos = "<|im_end|>" if s["name"] == "phi4" else "<|endoftext|>"
        c.update(model_type="phi3", attention_bias=False, embd_pdrop=0.0, resid_pdrop=0.0, hidden_act="silu",
                 rms_norm_eps=1e-5, rope_theta=s["theta"], tie_word_embeddings=s["tied"],
                 bos_token_id=tid("<|endoftext|>"), eos_token_id=tid(eos), pad_token_id=tid("<|endoftext|>"))
        if s["name"] == "phi4":
            c.update(max_position_embeddings=16384, original_max_position_embeddings=16384, rope_scaling=None,
                     sliding_window=None)
        else:
            c.update(max_position_embeddings=4096, original_max_position_embeddings=256,
                     partial_rotary_factor=s["partial"], sliding_window=262144,
                     rope_scaling={"long_factor": PHI4_MINI_LONG, "short_factor": PHI4_MINI_SHORT, "type": "longrope"})
    return c


# RoPE frequencies each model must have, as transformers computes them.

def default_inv_freq(theta, dim):
    return [1.0 / theta ** (2 * i / dim) for i in range(dim // 2)]


def yarn_inv_freq(theta, dim, p, truncate):
    def corr(rot):
        return dim * math.log(p["original_max_position_embeddings"] / (rot * 2 * math.pi)) / (2 * math.log(theta))
    low, high = corr(p["beta_fast"]), corr(p["beta_slow"])
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    out = []
    for i, f in enumerate(default_inv_freq(theta, dim)):
        extrap = 1 - min(max((i - low) / (high - low), 0.0), 1.0)
        out.append(f / p["factor"] * (1 - extrap) + f * extrap)
    return out


def expected_rope(s):
    """{label: (inv_freq, attention scaling)} the model's rotary buffers must match."""
    d = s["head_dim"]
    if s["name"] == "gpt-oss":
        return {"yarn": (yarn_inv_freq(s["theta"], d, GPT_OSS_YARN, False), 0.1 * math.log(32.0) + 1)}
    if s["name"] == "gemma3":
        return {"global (linear 8)": ([f / s["linear"] for f in default_inv_freq(s["theta"], d)], 1.0),
                "local": (default_inv_freq(s["local_theta"], d), 1.0)}
    if s["name"] == "phi4-mini":
        dim = int(d * s["partial"])
        inv = [f / sf for f, sf in zip(default_inv_freq(s["theta"], dim), PHI4_MINI_SHORT)]
        return {"longrope short": (inv, math.sqrt(1 + math.log(4096 / 256) / math.log(256)))}
    return {"default": (default_inv_freq(s["theta"], d), 1.0)}


# Weights: the Hub's tensor names, values of unit-scale rows (logits far
# apart), norms and biases away from their defaults.

E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def mxfp4(g, experts, rows, cols, exponents):
    """Random MXFP4 weights of experts x rows x cols (a block of 32 along
    cols): (blocks u8 [E, rows, cols/32, 16], scales u8 [E, rows, cols/32],
    values float32 [E, rows, cols]) in the layout of the Hub's gpt-oss
    (low nibble the even element) and transformers' dequantization."""
    import torch
    assert cols % 32 == 0
    nb = cols // 32
    codes = torch.randint(0, 16, (experts, rows, nb, 32), generator=g)
    pick = torch.randint(0, len(exponents), (experts, rows, nb), generator=g)
    exps = torch.tensor(exponents)[pick]
    lut = torch.tensor(E2M1, dtype=torch.float32)
    values = (lut[codes] * torch.pow(2.0, exps.float())[..., None]).reshape(experts, rows, cols)
    blocks = (codes[..., 0::2] | (codes[..., 1::2] << 4)).to(torch.uint8)
    scales = (exps + 127).to(torch.uint8)
    return blocks, scales, values


def dequant_mxfp4(blocks, scales):
    """transformers' convert_moe_packed_tensors, without the transpose."""
    import torch
    lut = torch.tensor(E2M1, dtype=torch.float32)
    lo, hi = (blocks & 0x0F).long(), (blocks >> 4).long()
    v = torch.stack([lut[lo], lut[hi]], dim=-1).reshape(*blocks.shape[:-1], 32)
    v = v * torch.pow(2.0, scales.float() - 127)[..., None]
    return v.reshape(*blocks.shape[:-2], blocks.shape[-2] * 32)


def weights(s):
    """Returns ({Hub name: float32 tensor}, extra) for spec s; extra holds
    gpt-oss's MXFP4 blocks and scales."""
    import torch
    g = torch.Generator().manual_seed(s["seed"])
    H, F, L, nh, kv, d = s["hidden"], s["ffn"], s["layers"], s["heads"], s["kv"], s["head_dim"]
    gemma = s["name"] == "gemma3"

    def randn(*shape):
        return torch.randn(*shape, generator=g)

    def mat(rows, cols, scale=1.0):
        return randn(rows, cols) / cols ** 0.5 * scale

    def norm(n):  # Gemma's RMSNorm multiplies by 1 + weight
        return 0.3 * randn(n) + (0.0 if gemma else 1.0)

    w, extra = {}, {}
    emb = mat(s["vocab"], H, 2.0)
    n_tok = familytok.n_tokens(s["kind"])
    emb[n_tok:] *= 0.01  # rows of no token: never the top logit
    w["model.embed_tokens.weight"] = emb
    for i in range(L):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(H)
        w[p + "post_attention_layernorm.weight"] = norm(H)
        if s["arch"] == "phi3":
            w[p + "self_attn.qkv_proj.weight"] = torch.cat([mat(nh * d, H), mat(kv * d, H), mat(kv * d, H)])
            w[p + "self_attn.o_proj.weight"] = mat(H, nh * d)
            w[p + "mlp.gate_up_proj.weight"] = torch.cat([mat(F, H), mat(F, H)])
            w[p + "mlp.down_proj.weight"] = mat(H, F)
            continue
        w[p + "self_attn.q_proj.weight"] = mat(nh * d, H)
        w[p + "self_attn.k_proj.weight"] = mat(kv * d, H)
        w[p + "self_attn.v_proj.weight"] = mat(kv * d, H)
        w[p + "self_attn.o_proj.weight"] = mat(H, nh * d)
        if s["name"] == "gpt-oss":
            for x, n in (("q", nh * d), ("k", kv * d), ("v", kv * d), ("o", H)):
                w[p + f"self_attn.{x}_proj.bias"] = 0.5 * randn(n)
            w[p + "self_attn.sinks"] = randn(nh)
            w[p + "mlp.router.weight"] = mat(s["experts"], H, 2.0)
            w[p + "mlp.router.bias"] = 0.5 * randn(s["experts"])
            # gate_up: 2F rows (gate j at 2j, up j at 2j+1) of H inputs, of
            # rms about 3/sqrt(H), so that the SwiGLU's clamp at 7 bites;
            # down: H rows of F inputs, about 1/sqrt(F).
            gb, gs, gv = mxfp4(g, s["experts"], 2 * F, H, [-4, -3, -3, -2])
            db, ds, dv = mxfp4(g, s["experts"], H, F, [-6, -5, -5, -4])
            extra[p + "mlp.experts.gate_up_proj_blocks"], extra[p + "mlp.experts.gate_up_proj_scales"] = gb, gs
            extra[p + "mlp.experts.down_proj_blocks"], extra[p + "mlp.experts.down_proj_scales"] = db, ds
            assert torch.equal(dequant_mxfp4(gb, gs), gv) and torch.equal(dequant_mxfp4(db, ds), dv)
            w[p + "mlp.experts.gate_up_proj"] = gv.transpose(1, 2).contiguous()  # [E, H, 2F]
            w[p + "mlp.experts.gate_up_proj_bias"] = 0.5 * randn(s["experts"], 2 * F)
            w[p + "mlp.experts.down_proj"] = dv.transpose(1, 2).contiguous()  # [E, F, H]
            w[p + "mlp.experts.down_proj_bias"] = 0.5 * randn(s["experts"], H)
            continue
        w[p + "mlp.gate_proj.weight"] = mat(F, H)
        w[p + "mlp.up_proj.weight"] = mat(F, H)
        w[p + "mlp.down_proj.weight"] = mat(H, F)
        if gemma:
            w[p + "self_attn.q_norm.weight"] = norm(d)
            w[p + "self_attn.k_norm.weight"] = norm(d)
            w[p + "pre_feedforward_layernorm.weight"] = norm(H)
            w[p + "post_feedforward_layernorm.weight"] = norm(H)
    w["model.norm.weight"] = norm(H)
    tied = gemma or s.get("tied", False)
    if not tied:
        w["lm_head.weight"] = mat(s["vocab"], H, 2.0)
    if s["name"] == "gpt-oss":
        # Values a BF16 checkpoint holds exactly (MXFP4 values are).
        w = {k: v.to(torch.bfloat16).to(torch.float32) for k, v in w.items()}
    return w, extra


def write_checkpoint(dirname, config, tensors, kind):
    from safetensors.torch import save_file
    os.makedirs(dirname, exist_ok=True)
    with open(os.path.join(dirname, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    save_file({k: v.contiguous() for k, v in sorted(tensors.items())}, os.path.join(dirname, "model.safetensors"),
              metadata={"format": "pt"})
    for name, data in familytok.files(kind, slow=True).items():
        with open(os.path.join(dirname, name), "wb") as f:
            f.write(data)


def mxfp4_checkpoint(w, extra):
    """The gpt-oss tensors as the Hub ships them: MXFP4 experts, BF16 elsewhere."""
    import torch
    out = {}
    for k, v in w.items():
        if k.endswith("mlp.experts.gate_up_proj") or k.endswith("mlp.experts.down_proj"):
            continue
        out[k] = v.to(torch.bfloat16)
    out.update(extra)
    return out


def mistral3_checkpoint(s, text_config, w):
    """config.json and tensors of Mistral3ForConditionalGeneration holding
    spec s's language model (text_config, tensors w), in the Hub's layout:
    language_model.model.*, language_model.lm_head.weight, and a tiny
    random Pixtral vision tower and projector (vision_tower.*,
    multi_modal_projector.*), as mistralai/Mistral-Small-3.1-24B's files."""
    import torch
    import transformers
    text = {k: v for k, v in text_config.items() if k != "architectures"}
    config = {"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3", "torch_dtype": "float32",
              "text_config": text,
              "vision_config": {"model_type": "pixtral", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                                "num_attention_heads": 2, "head_dim": 16, "image_size": 64, "patch_size": 16, "num_channels": 3,
                                "rope_theta": 10000.0, "hidden_act": "silu"},
              "image_token_index": familytok.token_id(s["kind"], "[TOOL_CALLS]"), "projector_hidden_act": "gelu",
              "spatial_merge_size": 2, "multimodal_projector_bias": False, "vision_feature_layer": -1}
    torch.manual_seed(s["seed"])
    full = transformers.Mistral3ForConditionalGeneration(transformers.Mistral3Config(**{k: v for k, v in config.items()
                                                                                       if k not in ("architectures", "model_type")}))
    out = {}
    for k, v in full.state_dict().items():
        for p in ("vision_tower.", "multi_modal_projector."):
            if p in k:
                out[k[k.index(p):]] = v.detach().float().clone()
    assert any(k.startswith("vision_tower.") for k in out) and any(k.startswith("multi_modal_projector.") for k in out), sorted(out)[:8]
    for k, v in w.items():
        out["language_model." + k] = v
    return config, out


def model_class(s):
    import transformers
    return getattr(transformers, s["hf"])


def load(s, path, **kw):
    """from_pretrained of the checkpoint at path in float32, eager attention."""
    import torch
    model, info = model_class(s).from_pretrained(path, dtype=torch.float32, attn_implementation="eager",
                                                 output_loading_info=True, **kw)
    problems = {k: sorted(map(str, info[k])) for k in ("missing_keys", "unexpected_keys", "mismatched_keys",
                                                      "error_msgs") if info.get(k)}
    return model.float().eval(), problems


def rope_check(s, model):
    """Compares the model's inv_freq buffers and attention scalings with expected_rope."""
    import torch
    want = expected_rope(s)
    found, matched = [], set()
    for name, buf in model.named_buffers():
        if not name.endswith("inv_freq") or "original" in name:
            continue
        hit = None
        for label, (inv, _) in want.items():
            t = torch.tensor(inv, dtype=torch.float64)
            if buf.numel() == t.numel() and torch.allclose(buf.double().flatten(), t, rtol=1e-5, atol=0):
                hit = label
        found.append(f"{name}: {hit or 'UNEXPECTED ' + str([round(x, 8) for x in buf.tolist()])}")
        if hit:
            matched.add(hit)
    scalings = set()
    for mod in model.modules():
        for attr, v in vars(mod).items():
            if attr.endswith("attention_scaling") and isinstance(v, (int, float)):
                scalings.add(round(float(v), 6))
    ok = matched == set(want) and all("UNEXPECTED" not in f for f in found)
    ok = ok and all(any(abs(a - sc) < 1e-5 for a in scalings) for _, sc in want.values() if sc != 1.0)
    return ok, {"buffers": found, "attention_scaling": sorted(scalings), "want": sorted(want)}


def f32(values):
    """float32 values as the shortest decimals that read back as them."""
    import numpy as np
    return [float(str(x)) for x in np.asarray(values, dtype=np.float32)]


def plain(v):
    """v with numpy scalars and arrays made JSON's."""
    return json.loads(json.dumps(v, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))


def record(model, n_tok, seed, which=None):
    """Prompts (random ids of the tokenizer), their logits and greedy tokens."""
    import torch
    g = torch.Generator().manual_seed(seed)
    prompts = []
    for k, n in enumerate(PROMPT_LENGTHS):
        ids = torch.randint(0, n_tok, (n,), generator=g).tolist()
        if which is not None and k not in which:
            continue
        logits = make.run(model, ids)
        seq, greedy = list(ids), []
        for _ in range(GREEDY):
            nxt = int(make.run(model, seq)[-1].argmax())
            greedy.append(nxt)
            seq.append(nxt)
        first = 0 if n <= FULL else n - 1
        prompts.append({"ids": ids, "first": first, "greedy": greedy,
                        "logits": [f32(row) for row in logits[first:]]})
    return prompts


def max_diff(a, b, ids, start=0):
    return float((make.run(a, ids)[start:] - make.run(b, ids)[start:]).abs().max())


def convert_job(anchor, pre, src, out):
    """The child process of a llama.cpp conversion: runs convert_hf_to_gguf.py
    with get_vocab_base_pre answering pre."""
    import runpy
    sys.path.insert(0, anchor)
    sys.path.insert(1, os.path.join(anchor, "gguf-py"))
    import conversion.base as base
    base.TextModel.get_vocab_base_pre = lambda self, tokenizer: pre
    script = os.path.join(anchor, "convert_hf_to_gguf.py")
    sys.argv = [script, src, "--outtype", "f32", "--outfile", out]
    runpy.run_path(script, run_name="__main__")


def llamacpp_convert(anchor, pre, src, out, log):
    cmd = [sys.executable, os.path.abspath(__file__), "--convert-job", anchor, pre, src, out]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    with open(log, "w") as f:
        f.write(r.stdout + r.stderr)
    if r.returncode != 0 or not os.path.exists(out):
        tail = (r.stdout + r.stderr).strip().splitlines()[-12:]
        raise RuntimeError("convert_hf_to_gguf.py exit %d:\n  %s" % (r.returncode, "\n  ".join(tail)))


def gguf_summary(anchor, path):
    """The architecture's keys and the tensors (name type shape) of a GGUF file."""
    sys.path.insert(0, os.path.join(anchor, "gguf-py"))
    import gguf
    r = gguf.GGUFReader(path)
    keys = {}
    for name, field in r.fields.items():
        if name.startswith("tokenizer.ggml.") and name not in ("tokenizer.ggml.model", "tokenizer.ggml.pre",
                                                                 "tokenizer.ggml.bos_token_id",
                                                                 "tokenizer.ggml.eos_token_id"):
            continue
        try:
            v = field.contents()
        except Exception:  # older gguf-py: the raw parts
            v = [p.tolist() for p in field.parts[-1:]]
        keys[name] = plain(v if not isinstance(v, list) or len(v) <= 16 else f"[{len(v)} values]")
    tensors = {t.name: f"{t.tensor_type.name} {list(map(int, t.shape))}" for t in r.tensors}
    return keys, tensors


# What llama.cpp's file of a checkpoint means, where that is another model:
# a change of the config (applied to transformers' config object) and why.

def llamacpp_reading(s, tensors):
    # gpt-oss: llama.cpp's ramp floors and ceils YaRN's correction range
    # (transformers' truncate=True), but inferno reads every gpt-oss file
    # with the released models' truncate=False (model/gptoss), so its file
    # means the checkpoint itself.
    if s["name"] == "gemma3":
        def alt(cfg):
            cfg.query_pre_attn_scalar = s["head_dim"]
        return alt, ("llama.cpp's gemma3 scales queries by 1/sqrt(head_dim) unless the model has 62 layers "
                     "(the 27B): query_pre_attn_scalar as head_dim")
    if s["name"] == "phi4-mini" and "rope_factors_short.weight" not in tensors:
        def alt(cfg):
            cfg.rope_parameters = {"rope_type": "default", "rope_theta": s["theta"],
                                   "partial_rotary_factor": s["partial"]}
        return alt, ("llama.cpp's converter wrote no LongRoPE factors (its Phi3 reads config['rope_scaling'], "
                     "which transformers 5's to_dict lacks): default RoPE")
    return None, ""


def build_family(s, outdir, anchor, result, tmp):
    """Writes spec s's files to outdir and its entry to result["models"]."""
    name, kind = s["name"], s["kind"]
    checks = {}
    entry = {"kind": kind, "arch": s["arch"], "hf_arch": s["hf"], "checks": checks}
    n_tok = familytok.n_tokens(kind)
    config = hub_config(s)
    w, extra = weights(s)
    src = os.path.join(tmp, name)
    write_checkpoint(src, config, w, kind)
    model, problems = load(s, src)
    checks["loading"] = problems or "clean"
    if problems:
        raise RuntimeError(f"from_pretrained: {problems}")
    checks["attn_implementation"] = model.config._attn_implementation
    ok, detail = rope_check(s, model)
    checks["rope"] = ("ok " if ok else "MISMATCH ") + json.dumps(detail)
    entry["prompts"] = record(model, n_tok, s["seed"])
    ids = entry["prompts"][2]["ids"]
    if name in ("gpt-oss", "gemma3"):
        wide, _ = load(s, src, sliding_window=4096)
        checks["window_effect"] = max_diff(model, wide, ids, WINDOW)
    if name == "gpt-oss":
        loose, _ = load(s, src)
        for mod in loose.modules():
            if hasattr(mod, "limit"):  # GptOssExperts' clamp
                mod.limit = 1e9
        checks["clamp_effect"] = max_diff(model, loose, ids)
        sd = {k: v.clone() for k, v in model.state_dict().items()}
        for k in sd:
            if k.endswith("sinks"):
                sd[k].fill_(-1e30)
        flat = model_class(s)(model.config).float().eval()
        flat.load_state_dict(sd)
        checks["sink_effect"] = max_diff(model, flat, ids)
    files = {f"{name}.config.json": os.path.join(src, "config.json"),
             f"{name}.safetensors": os.path.join(src, "model.safetensors")}
    variants = [(s, src, entry)]
    if name == "gpt-oss":
        # The Hub's MXFP4 checkpoint of the same model.
        ms = dict(s, name="gpt-oss-mxfp4")
        mconfig = dict(config, torch_dtype="bfloat16",
                       quantization_config={"modules_to_not_convert": ["model.layers.*.self_attn",
                                                                       "model.layers.*.mlp.router",
                                                                       "model.embed_tokens", "lm_head"],
                                            "quant_method": "mxfp4"})
        msrc = os.path.join(tmp, ms["name"])
        write_checkpoint(msrc, mconfig, mxfp4_checkpoint(w, extra), kind)
        mentry = {"kind": kind, "arch": s["arch"], "hf_arch": s["hf"], "quant": "mxfp4", "logits_of": name,
                  "checks": {}}
        try:
            import transformers
            back, problems = load(s, msrc, quantization_config=transformers.Mxfp4Config(dequantize=True))
            mentry["checks"]["reload_max_diff"] = max_diff(model, back, ids)
            mentry["checks"]["loading"] = problems or "clean"
        except Exception as e:  # recorded: the MXFP4 values are checked in weights() already
            mentry["checks"]["reload_max_diff"] = f"not loaded: {type(e).__name__}: {e}"[:400]
        files[f"{ms['name']}.config.json"] = os.path.join(msrc, "config.json")
        files[f"{ms['name']}.safetensors"] = os.path.join(msrc, "model.safetensors")
        result["models"][ms["name"]] = mentry
        variants.append((ms, msrc, mentry))
    if name == "mistral":
        # The same language model inside Mistral3ForConditionalGeneration,
        # as the Hub ships Mistral Small 3.1/3.2: text_config, the
        # language model's tensors under language_model., a tiny Pixtral
        # vision tower and projector beside them.
        ms = dict(s, name="mistral3", arch="mistral3", hf="Mistral3ForConditionalGeneration")
        mconfig, mw = mistral3_checkpoint(s, config, w)
        msrc = os.path.join(tmp, ms["name"])
        write_checkpoint(msrc, mconfig, mw, kind)
        mentry = {"kind": kind, "arch": ms["arch"], "hf_arch": ms["hf"], "logits_of": name, "checks": {}}
        back, problems = load(ms, msrc)
        mentry["checks"]["loading"] = problems or "clean"
        mentry["checks"]["text_max_diff"] = max_diff(model, back, ids)
        if problems or mentry["checks"]["text_max_diff"] > 1e-4:
            raise RuntimeError(f"mistral3: loading {problems}, text logits differ by {mentry['checks']['text_max_diff']}")
        files[f"{ms['name']}.config.json"] = os.path.join(msrc, "config.json")
        files[f"{ms['name']}.safetensors"] = os.path.join(msrc, "model.safetensors")
        result["models"][ms["name"]] = mentry
        variants.append((ms, msrc, mentry))
    for fname, path in files.items():
        with open(path, "rb") as f, open(os.path.join(outdir, fname), "wb") as g:
            g.write(f.read())
    result["models"][name] = entry
    if not anchor:
        return
    pre = familytok.BPE_KINDS.get(kind, {}).get("pre", "default")
    for vs, vsrc, ventry in variants:
        out = os.path.join(outdir, vs["name"] + ".llamacpp.gguf")
        try:
            llamacpp_convert(anchor, pre, vsrc, out, os.path.join(tmp, vs["name"] + ".convert.log"))
            keys, tensors = gguf_summary(anchor, out)
        except Exception as e:
            ventry["checks"]["llamacpp"] = f"FAILED: {e}"[:1500]
            continue
        ventry["checks"]["llamacpp"] = "converted"
        ventry["checks"]["llamacpp_keys"] = {k: v for k, v in keys.items() if not k.startswith("general.")}
        ventry["checks"]["llamacpp_tensors"] = {k: v for k, v in tensors.items() if k.startswith(("blk.0.", "rope", "output", "token"))}
        lc = {"file": os.path.basename(out)}
        alt, note = llamacpp_reading(vs, tensors)
        if alt and vs is s:
            lc["note"] = note
            try:
                cfg = type(model.config).from_pretrained(src)
                alt(cfg)
                other, _ = load(s, src, config=cfg)
                lc["differs_by"] = max_diff(model, other, ids)
                lc["prompts"] = record(other, n_tok, s["seed"], which=ALT_PROMPTS)
            except Exception:  # the Go test then says this reference is missing
                ventry["checks"]["llamacpp_alt"] = "FAILED: " + traceback.format_exc()[-1200:]
        elif alt:
            lc["note"] = note + f" (the logits of {name}'s llamacpp entry)"
        ventry["llamacpp"] = lc


def write_tokenizers(outdir):
    os.makedirs(outdir, exist_ok=True)
    for kind in familytok.KINDS:
        for fname, data in familytok.files(kind).items():
            with open(os.path.join(outdir, f"{kind}.{fname}"), "wb") as f:
                f.write(data)


def check_tokenizers():
    """Encodes familytok.SAMPLE_TEXTS with tokenizers (and SentencePiece for
    gemma3); records the ids and any disagreement."""
    out = {}
    try:
        import tokenizers
    except ImportError as e:
        return {"error": str(e)}
    for kind in familytok.KINDS:
        fs = familytok.files(kind)
        try:
            tok = tokenizers.Tokenizer.from_str(fs["tokenizer.json"].decode("utf-8"))
            enc = [tok.encode(t, add_special_tokens=False).ids for t in familytok.SAMPLE_TEXTS]
        except Exception as e:
            out[kind] = f"tokenizers: {type(e).__name__}: {e}"
            continue
        rec = {"tokenizers": enc, "vocab": tok.get_vocab_size(with_added_tokens=True)}
        if kind == "gemma3":
            try:
                import sentencepiece
                sp = sentencepiece.SentencePieceProcessor()
                sp.LoadFromSerializedProto(fs["tokenizer.model"])
                spe = [sp.encode(t) for t in familytok.SAMPLE_TEXTS]
                rec["sentencepiece"] = spe
                rec["sentencepiece_agrees"] = spe == enc
                rec["sentencepiece_ids"] = [sp.bos_id(), sp.eos_id(), sp.unk_id(), sp.pad_id(), sp.vocab_size()]
            except Exception as e:
                rec["sentencepiece"] = f"{type(e).__name__}: {e}"
        out[kind] = rec
    return out


def main():
    args = sys.argv[1:]
    if args[:1] == ["--convert-job"] and len(args) == 5:
        convert_job(*args[1:])
        return
    if args == ["--self-test"]:
        familytok.self_test()
        for s in SPECS:
            hub_config(s)
            expected_rope(s)
        print("configs ok")
        return
    if len(args) == 2 and args[0] == "--tokenizers":
        write_tokenizers(args[1])
        return
    only = None
    if len(args) >= 2 and args[-2] == "--only":
        only, args = args[-1].split(","), args[:-2]
    anchor = None
    if len(args) == 3 and args[1] == "--llamacpp":
        anchor = os.path.abspath(args[2])
        args = args[:1]
    if len(args) != 1:
        sys.exit(__doc__)
    outdir = args[0]
    os.makedirs(outdir, exist_ok=True)
    import torch
    import transformers

    torch.use_deterministic_algorithms(True)
    write_tokenizers(outdir)
    result = {"transformers": transformers.__version__, "torch": torch.__version__,
              "prompt_lengths": PROMPT_LENGTHS, "full": FULL, "greedy": GREEDY, "window": WINDOW, "models": {}}
    result["tokenizers"] = check_tokenizers()
    failed = {}
    with tempfile.TemporaryDirectory() as tmp:
        for s in SPECS:
            if only and s["name"] not in only:
                continue
            t0 = time.time()
            try:
                build_family(s, outdir, anchor, result, tmp)
                print(f"{s['name']}: built in {time.time() - t0:.1f}s", flush=True)
            except Exception:
                failed[s["name"]] = traceback.format_exc()
                print(f"{s['name']}: FAILED\n{failed[s['name']]}", flush=True)
        if anchor:
            for log in sorted(f for f in os.listdir(tmp) if f.endswith(".convert.log")):
                with open(os.path.join(tmp, log)) as f:
                    lines = f.read().strip().splitlines()
                print(f"--- llama.cpp conversion of {log[:-len('.convert.log')]} (last lines)")
                print("\n".join(lines[-6:]))
    result["failed"] = failed
    with open(os.path.join(outdir, "families.logits.json"), "w") as f:
        json.dump(result, f, default=str)
    try:
        summary(result, outdir)
    except Exception:  # the files are written: a summary that fails is no failure of theirs
        traceback.print_exc()
    sys.exit(1 if failed else 0)


def summary(result, outdir):
    failed = result["failed"]
    print("\n=== summary (transformers %s, torch %s)" % (result["transformers"], result["torch"]))
    for name, e in result["models"].items():
        c = e["checks"]
        print(f"{name:14} rope: {str(c.get('rope', '-'))[:2]:3} loading: {str(c.get('loading', '-'))[:5]:6}"
              f" window: {c.get('window_effect', '-')!s:.8} clamp: {c.get('clamp_effect', '-')!s:.8}"
              f" sinks: {c.get('sink_effect', '-')!s:.8} reload: {c.get('reload_max_diff', '-')!s:.12}"
              f" llama.cpp: {str(c.get('llamacpp', '-'))[:40]}"
              f"{' alt (' + format(e['llamacpp'].get('differs_by', 0), '.3g') + ')' if 'note' in e.get('llamacpp', {}) else ''}")
    for name in failed:
        print(f"{name:14} FAILED")
    for name, e in result["models"].items():
        c = e["checks"]
        if not str(c.get("rope", "ok")).startswith("ok"):
            print(f"{name} rope: {c['rope']}")
        if str(c.get("llamacpp", "")).startswith("FAILED"):
            print(f"{name} llama.cpp: {c['llamacpp']}")
        if "llamacpp_alt" in c:
            print(f"{name} llama.cpp's reading: {c['llamacpp_alt']}")
        if "llamacpp_keys" in c:
            print(f"{name} llama.cpp keys: {json.dumps(c['llamacpp_keys'])}")
    for kind, rec in result["tokenizers"].items():
        print(f"tokenizer {kind}: {rec if isinstance(rec, str) else {k: v for k, v in rec.items() if k != 'tokenizers' and k != 'sentencepiece'}}")
    print("files:", len(os.listdir(outdir)), "total bytes:",
          sum(os.path.getsize(os.path.join(outdir, f)) for f in os.listdir(outdir)))


if __name__ == "__main__":
    main()
