#!/usr/bin/env python3
"""Reference fixtures for inferno's llama and qwen2 architectures.

    python3 tools/archfixtures/make.py OUTDIR            # needs torch and transformers
    python3 tools/archfixtures/make.py --tokenizers DIR  # the tokenizer files only

With torch and transformers, builds three random-weight checkpoints of
small, odd shapes (grouped-query ratios of 3, query width other than the
hidden size), saves each with save_pretrained (safetensors, float32) and
records transformers' float32 logits of every position of a few prompts
and greedy continuations. It writes 7 files flat in OUTDIR:

    NAME.config.json, NAME.safetensors   for NAME in llama-tied, llama-untied, qwen2
    logits.json                          prompts, logits, greedy tokens, versions

The checkpoints' tokenizers are tiny byte-level BPE vocabularies made by
tokenizer_files below (deterministic, no torch needed); --tokenizers writes
them as llama.tokenizer.json, llama.tokenizer_config.json,
qwen2.tokenizer.json and qwen2.tokenizer_config.json. inferno's tests
assemble a checkpoint folder from NAME.* and KIND.tokenizer*.json in
testdata/arch.
"""

import json
import os
import sys

# The pre-tokenizer regular expressions of Llama 3 (llama.cpp's
# "llama-bpe") and Qwen2 ("qwen2"): they differ in digit grouping.
LLAMA3_SPLIT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2_SPLIT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"

MERGES = [
    ("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"), ("e", "r"),
    ("o", "n"), ("r", "e"), ("Ġ", "s"), ("1", "2"), ("Ġ", "Ġ"), ("a", "t"),
    ("Ġ", "w"), ("o", "r"), ("e", "n"), ("Ġ", "c"), ("i", "s"), ("Ġ", "f"),
    ("Ġ", "o"), ("e", "s"), ("Ġ", "b"), ("a", "n"), ("Ġa", "n"), ("Ġan", "d"),
]

SPECIALS = {
    "llama": ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"],
    "qwen2": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
}

# Models: name, tokenizer kind, vocabulary rows (more than the tokenizer's
# tokens, so that conversion pads), and shapes. llama-tied has Llama 3.1's
# scaling parameters (original context 8192, which llama.cpp's converter
# assumes), with a theta that puts its pairs in all three bands (kept,
# blended, divided); llama-untied's original context of 256 is one only
# transformers and inferno read from rope_scaling.
MODELS = [
    dict(name="llama-tied", kind="llama", vocab=300, hidden=72, ffn=176, layers=3, heads=6, kv=2, head_dim=16,
         tied=True, theta=500000.0, llama3=dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                                  original_max_position_embeddings=8192)),
    dict(name="llama-untied", kind="llama", vocab=304, hidden=72, ffn=120, layers=2, heads=9, kv=3, head_dim=8,
         tied=False, theta=500000.0, llama3=dict(factor=4.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                                  original_max_position_embeddings=256)),
    dict(name="qwen2", kind="qwen2", vocab=296, hidden=96, ffn=200, layers=3, heads=6, kv=2, head_dim=16,
         tied=True, theta=1000000.0, llama3=None),
]

# Prompt lengths; the logits of every position are kept for prompts up to
# FULL tokens, of the last position for longer ones ("first" is the
# position of the first row kept).
PROMPT_LENGTHS = [1, 6, 17, 40, 150]
FULL = 40
GREEDY = 8


def bytes_to_unicode():
    """GPT-2's byte-to-character map of byte-level BPE."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def tokenizer_files(kind):
    """Returns (tokenizer.json, tokenizer_config.json) of a tiny byte-level BPE."""
    vocab = {}
    for b, ch in sorted(bytes_to_unicode().items()):
        vocab[ch] = b
    for a, b in MERGES:
        vocab.setdefault(a + b, len(vocab))
    added = []
    decoder = {}
    for s in SPECIALS[kind]:
        i = len(vocab) + len(added)
        added.append(dict(id=i, content=s, single_word=False, lstrip=False, rstrip=False, normalized=False, special=True))
        decoder[str(i)] = dict(content=s, lstrip=False, normalized=False, rstrip=False, single_word=False, special=True)
    split = LLAMA3_SPLIT if kind == "llama" else QWEN2_SPLIT
    tj = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None if kind == "llama" else {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": split}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": kind == "llama", "use_regex": False},
        ]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": kind == "llama",
                  "vocab": vocab, "merges": [[a, b] for a, b in MERGES]},
    }
    if kind == "llama":
        tc = {"added_tokens_decoder": decoder, "bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>",
              "add_bos_token": True, "clean_up_tokenization_spaces": True, "model_max_length": 131072,
              "tokenizer_class": "PreTrainedTokenizerFast"}
    else:
        tc = {"added_tokens_decoder": decoder, "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
              "add_bos_token": False, "errors": "replace", "model_max_length": 32768, "tokenizer_class": "Qwen2Tokenizer"}
    return tj, tc


def token_count(kind):
    tj, _ = tokenizer_files(kind)
    return len(tj["model"]["vocab"]) + len(tj["added_tokens"])


def write_tokenizers(outdir):
    os.makedirs(outdir, exist_ok=True)
    for kind in SPECIALS:
        tj, tc = tokenizer_files(kind)
        with open(os.path.join(outdir, kind + ".tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tj, f, ensure_ascii=False, indent=1)
        with open(os.path.join(outdir, kind + ".tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump(tc, f, ensure_ascii=False, indent=1)


def build(spec):
    import torch
    import transformers

    n_tok = token_count(spec["kind"])
    assert spec["vocab"] > n_tok, (spec["name"], spec["vocab"], n_tok)
    common = dict(vocab_size=spec["vocab"], hidden_size=spec["hidden"], intermediate_size=spec["ffn"],
                  num_hidden_layers=spec["layers"], num_attention_heads=spec["heads"],
                  num_key_value_heads=spec["kv"], max_position_embeddings=256, rms_norm_eps=1e-5,
                  tie_word_embeddings=spec["tied"], hidden_act="silu")
    if spec["kind"] == "llama":
        rope = dict(rope_type="llama3", **spec["llama3"])
        cfg = transformers.LlamaConfig(head_dim=spec["head_dim"], attention_bias=False, mlp_bias=False,
                                       bos_token_id=n_tok - 5, eos_token_id=n_tok - 1,
                                       rope_theta=spec["theta"], rope_scaling=rope, **common)
        cls = transformers.LlamaForCausalLM
    else:
        assert spec["hidden"] == spec["heads"] * spec["head_dim"]
        rope = dict(rope_type="default")
        cfg = transformers.Qwen2Config(rope_theta=spec["theta"], use_sliding_window=False,
                                       bos_token_id=n_tok - 3, eos_token_id=n_tok - 1, **common)
        cls = transformers.Qwen2ForCausalLM
    if isinstance(getattr(cfg, "rope_parameters", None), dict):
        # transformers 5 keeps RoPE's settings here.
        cfg.rope_parameters = dict(rope, rope_theta=spec["theta"])
    cfg._attn_implementation = "eager"
    torch.manual_seed(sum(map(ord, spec["name"])))
    model = cls(cfg).float().eval()
    # Weights of unit scale (not the 0.02 initialization), so that the
    # logits are far apart; norms and biases away from their defaults.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.3 * torch.randn_like(p))
            elif name.endswith(".bias"):
                p.copy_(0.5 * torch.randn_like(p))
            elif p.ndim == 2:
                p.copy_(torch.randn_like(p) / p.shape[1] ** 0.5 * (2.0 if "embed" in name or "lm_head" in name else 1.0))
    rot = next(m for m in model.modules() if hasattr(m, "inv_freq"))
    got = rot.inv_freq.double()
    want = torch.tensor(inv_freq(spec), dtype=torch.float64)
    assert torch.allclose(got, want, rtol=1e-5), (spec["name"], got, want)
    return model, n_tok


def inv_freq(spec):
    """RoPE's frequencies the model must have: base^(-2i/d), with Llama 3's scaling."""
    import math
    d = spec["head_dim"]
    freqs = [spec["theta"] ** (-2 * i / d) for i in range(d // 2)]
    s = spec["llama3"]
    if not s:
        return freqs
    low, high = s["original_max_position_embeddings"] / s["low_freq_factor"], s["original_max_position_embeddings"] / s["high_freq_factor"]
    out = []
    for f in freqs:
        wl = 2 * math.pi / f
        if wl < high:
            out.append(f)
        elif wl > low:
            out.append(f / s["factor"])
        else:
            sm = (s["original_max_position_embeddings"] / wl - s["low_freq_factor"]) / (s["high_freq_factor"] - s["low_freq_factor"])
            out.append((1 - sm) * f / s["factor"] + sm * f)
    return out


def run(model, ids):
    import torch
    with torch.no_grad():
        out = model(torch.tensor([ids])).logits[0].float()
    return out


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--tokenizers":
        write_tokenizers(sys.argv[2])
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    import tempfile
    import shutil
    import torch
    import transformers

    torch.use_deterministic_algorithms(True)
    result = {"transformers": transformers.__version__, "torch": torch.__version__, "models": {}}
    for spec in MODELS:
        model, n_tok = build(spec)
        with tempfile.TemporaryDirectory() as tmp:
            try:
                model.save_pretrained(tmp, safe_serialization=True)
            except TypeError:  # transformers 5 always writes safetensors
                model.save_pretrained(tmp)
            shutil.copyfile(os.path.join(tmp, "config.json"), os.path.join(outdir, spec["name"] + ".config.json"))
            shutil.copyfile(os.path.join(tmp, "model.safetensors"), os.path.join(outdir, spec["name"] + ".safetensors"))
        g = torch.Generator().manual_seed(7 + len(spec["name"]))
        prompts = []
        for n in PROMPT_LENGTHS:
            ids = torch.randint(0, n_tok, (n,), generator=g).tolist()
            logits = run(model, ids)
            seq = list(ids)
            greedy = []
            for _ in range(GREEDY):
                nxt = int(run(model, seq)[-1].argmax())
                greedy.append(nxt)
                seq.append(nxt)
            first = 0 if n <= FULL else n - 1
            prompts.append({"ids": ids, "first": first, "greedy": greedy,
                            "logits": [[float(x) for x in row] for row in logits[first:].tolist()]})
        result["models"][spec["name"]] = {"kind": spec["kind"], "prompts": prompts}
        print(spec["name"], "ok", file=sys.stderr)
    with open(os.path.join(outdir, "logits.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
