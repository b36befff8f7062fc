#!/usr/bin/env python3
"""Reference fixtures for inferno's Qwen3-Embedding support.

    python3 tools/archfixtures/embed.py OUTDIR     # needs torch and transformers

Builds a random-weight Qwen3 embedding checkpoint of small, odd shapes
(six query heads over two KV heads, a query width other than the hidden
size) as transformers' Qwen3Model, the class of Qwen/Qwen3-Embedding-*:
no output head. It saves it with save_pretrained (safetensors, float32)
beside the files sentence-transformers adds (modules.json and
1_Pooling/config.json with last-token pooling), and records, for a few
inputs, the embedding as the model card computes it: the final-normed
hidden state of the last token, L2-normalized, the input ending in
<|endoftext|>. Texts are tokenized by transformers' fast tokenizer over
make.py's tiny Qwen2 byte-level BPE (inferno's test tokenizes them itself
and must get the same ids); the queries use the model card's instruction
format "Instruct: {task}\\nQuery:{query}". It writes flat in OUTDIR:

    embed.config.json, embed.safetensors   the checkpoint (Qwen3Model)
    embed.modules.json, embed.pooling.json sentence-transformers' modules.json and 1_Pooling/config.json
    embed.json                             inputs, ids, embeddings, versions

inferno's test assembles a checkpoint folder from these and
qwen2.tokenizer*.json in testdata/arch.
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make import tokenizer_files, token_count  # noqa: E402

SPEC = dict(vocab=293, hidden=88, ffn=136, layers=3, heads=6, kv=2, head_dim=16, theta=1000000.0)

TASK = "Given a web search query, retrieve relevant passages that answer the query"
TEXTS = [
    "the cat and the hat",
    "Instruct: " + TASK + "\nQuery:" + "what is the capital of France?",
    "Paris is the capital and largest city of France, on the Seine.",
    "x",
    "12 and 1234 at the tent in the rain " * 6,
]
RANDOM_LENGTHS = [1, 9, 63, 130]

MODULES = [
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
]
POOLING = {"word_embedding_dimension": SPEC["hidden"], "pooling_mode_cls_token": False,
           "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False,
           "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
           "pooling_mode_lasttoken": True, "include_prompt": True}


def build():
    import torch
    import transformers

    n_tok = token_count("qwen2")
    cfg = transformers.Qwen3Config(
        vocab_size=SPEC["vocab"], hidden_size=SPEC["hidden"], intermediate_size=SPEC["ffn"],
        num_hidden_layers=SPEC["layers"], num_attention_heads=SPEC["heads"], num_key_value_heads=SPEC["kv"],
        head_dim=SPEC["head_dim"], max_position_embeddings=512, rms_norm_eps=1e-6, rope_theta=SPEC["theta"],
        tie_word_embeddings=True, hidden_act="silu", attention_bias=False, use_sliding_window=False,
        bos_token_id=n_tok - 3, eos_token_id=n_tok - 3)
    if isinstance(getattr(cfg, "rope_parameters", None), dict):
        # transformers 5 keeps RoPE's settings here.
        cfg.rope_parameters = dict(rope_type="default", rope_theta=SPEC["theta"])
    cfg._attn_implementation = "eager"
    torch.manual_seed(1729)
    model = transformers.Qwen3Model(cfg).float().eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.3 * torch.randn_like(p))
            elif p.ndim == 2:
                p.copy_(torch.randn_like(p) / p.shape[1] ** 0.5 * (2.0 if "embed" in name else 1.0))
    return model, n_tok


def embed(model, ids):
    import torch
    with torch.no_grad():
        h = model(torch.tensor([ids])).last_hidden_state[0, -1].double()
    return (h / h.norm()).tolist()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    import torch
    import transformers

    torch.use_deterministic_algorithms(True)
    model, n_tok = build()
    eod = n_tok - 3  # <|endoftext|>, the first of make.py's Qwen2 specials
    with tempfile.TemporaryDirectory() as tmp:
        try:
            model.save_pretrained(tmp, safe_serialization=True)
        except TypeError:  # transformers 5 always writes safetensors
            model.save_pretrained(tmp)
        with open(os.path.join(tmp, "config.json")) as f:
            config = json.load(f)
        assert config["architectures"] == ["Qwen3Model"], config["architectures"]
        with open(os.path.join(outdir, "embed.config.json"), "w") as f:
            json.dump(config, f, indent=2)
        with open(os.path.join(tmp, "model.safetensors"), "rb") as f:
            data = f.read()
        with open(os.path.join(outdir, "embed.safetensors"), "wb") as f:
            f.write(data)
        tj, tc = tokenizer_files("qwen2")
        with open(os.path.join(tmp, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tj, f, ensure_ascii=False)
        tok = transformers.PreTrainedTokenizerFast(tokenizer_file=os.path.join(tmp, "tokenizer.json"))
    assert tok.convert_tokens_to_ids("<|endoftext|>") == eod
    with open(os.path.join(outdir, "embed.modules.json"), "w") as f:
        json.dump(MODULES, f, indent=2)
    with open(os.path.join(outdir, "embed.pooling.json"), "w") as f:
        json.dump(POOLING, f, indent=2)

    inputs = []
    for text in TEXTS:
        ids = tok(text, add_special_tokens=False)["input_ids"] + [eod]
        inputs.append({"text": text, "ids": ids, "embedding": embed(model, ids)})
    g = torch.Generator().manual_seed(99)
    for n in RANDOM_LENGTHS:
        ids = torch.randint(0, n_tok - 3, (n - 1,), generator=g).tolist() + [eod]
        inputs.append({"ids": ids, "embedding": embed(model, ids)})
    # The model card's batched form (left padding, attention mask, the last
    # column's hidden state) should give the same vectors: recorded.
    batch = [x["ids"] for x in inputs[:3]]
    width = max(map(len, batch))
    ids = torch.tensor([[eod] * (width - len(b)) + b for b in batch])
    mask = torch.tensor([[0] * (width - len(b)) + [1] * len(b) for b in batch])
    with torch.no_grad():
        h = model(input_ids=ids, attention_mask=mask).last_hidden_state[:, -1].double()
    h = torch.nn.functional.normalize(h, p=2, dim=1)
    padded = []
    for i in range(len(batch)):
        got = torch.tensor(inputs[i]["embedding"], dtype=torch.float64)
        padded.append(float(torch.dot(got, h[i])))
    print("left-padded batch against alone, cosine:", padded, file=sys.stderr)
    result = {"transformers": transformers.__version__, "torch": torch.__version__, "eod": eod,
              "hidden": SPEC["hidden"], "task": TASK, "padded_cosine": padded, "inputs": inputs}
    with open(os.path.join(outdir, "embed.json"), "w") as f:
        json.dump(result, f)
    print("embed ok:", len(inputs), "inputs", file=sys.stderr)


if __name__ == "__main__":
    main()
