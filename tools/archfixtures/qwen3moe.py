#!/usr/bin/env python3
"""Reference fixtures for inferno's qwen3moe architecture (Qwen3-MoE).

    python3 tools/archfixtures/qwen3moe.py OUTDIR    # needs torch and transformers

Builds two random-weight Qwen3MoeForCausalLM checkpoints of small, odd
shapes (8 experts top-2 with norm_topk_prob, 6 experts top-3 without;
grouped-query ratios of 3 and 4; query width other than the hidden size;
expert widths that are not powers of two), saves each with
save_pretrained (safetensors, float32) in the Hugging Face Hub's layout
(one tensor per expert and projection, as Qwen/Qwen3-30B-A3B ships:
fused expert tensors, if this transformers writes them, are split back
and the saved folder is reloaded and its logits compared), and records transformers' float32 logits of every position of a
few prompts and greedy continuations. It writes 5 files flat in OUTDIR:

    NAME.config.json, NAME.safetensors   for NAME in qwen3moe-norm, qwen3moe-nonorm
    qwen3moe.logits.json                 prompts, logits, greedy tokens, versions

and the largest difference of the reloaded folder's logits from the
recorded ones (reload_max_diff, expected 0).

The tokenizer is make.py's tiny qwen2 byte-level BPE (testdata/arch's
qwen2.tokenizer*.json); the prompt lengths and greedy steps are make.py's.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make  # noqa: E402  (the tokenizer and the prompt lengths)

# Models: name, vocabulary rows (more than the tokenizer's tokens), shapes
# and the mixture's settings. Every layer is sparse (decoder_sparse_step
# 1, no mlp_only_layers), as in every released Qwen3-MoE and as llama.cpp
# reads qwen3moe files.
MODELS = [
    dict(name="qwen3moe-norm", vocab=300, hidden=64, ffn=136, layers=3, heads=6, kv=2, head_dim=16,
         experts=8, top=2, expert_ffn=40, norm=True, tied=False, theta=1000000.0),
    dict(name="qwen3moe-nonorm", vocab=296, hidden=72, ffn=120, layers=2, heads=4, kv=1, head_dim=24,
         experts=6, top=3, expert_ffn=56, norm=False, tied=True, theta=10000.0),
]


def build(spec):
    import torch
    import transformers

    n_tok = make.token_count("qwen2")
    assert spec["vocab"] > n_tok, (spec["name"], spec["vocab"], n_tok)
    rope = dict(rope_type="default")
    cfg = transformers.Qwen3MoeConfig(
        vocab_size=spec["vocab"], hidden_size=spec["hidden"], intermediate_size=spec["ffn"],
        num_hidden_layers=spec["layers"], num_attention_heads=spec["heads"], num_key_value_heads=spec["kv"],
        head_dim=spec["head_dim"], max_position_embeddings=256, rms_norm_eps=1e-6,
        tie_word_embeddings=spec["tied"], hidden_act="silu", rope_theta=spec["theta"], attention_bias=False,
        decoder_sparse_step=1, mlp_only_layers=[], moe_intermediate_size=spec["expert_ffn"],
        num_experts=spec["experts"], num_experts_per_tok=spec["top"], norm_topk_prob=spec["norm"],
        bos_token_id=n_tok - 3, eos_token_id=n_tok - 1)
    if isinstance(getattr(cfg, "rope_parameters", None), dict):
        cfg.rope_parameters = dict(rope, rope_theta=spec["theta"])
    cfg._attn_implementation = "eager"
    torch.manual_seed(sum(map(ord, spec["name"])))
    model = transformers.Qwen3MoeForCausalLM(cfg).float().eval()
    # Weights of unit scale, so that logits and router scores are far
    # apart; norms away from their defaults; the router at twice the
    # scale, so that the experts' top-k is rarely a near tie.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.3 * torch.randn_like(p))
            elif p.ndim >= 2:
                scale = 2.0 if ("embed" in name or "lm_head" in name or name.endswith("mlp.gate.weight")) else 1.0
                p.copy_(torch.randn_like(p) / p.shape[-1] ** 0.5 * scale)
    return model, n_tok


def hub_layout(path, spec):
    """Rewrites the safetensors file at path in the Hub's per-expert layout
    if it holds fused expert tensors; returns whether it did."""
    from safetensors.torch import load_file, save_file

    sd = load_file(path)
    out, fused = {}, False
    for k, v in sd.items():
        if k.endswith("mlp.experts.gate_up_proj") or k.endswith("mlp.experts.gate_up_proj.weight"):
            fused = True
            base = k.removesuffix(".weight").removesuffix(".gate_up_proj")
            f = v.shape[-2] // 2
            assert v.shape == (spec["experts"], 2 * spec["expert_ffn"], spec["hidden"]), (k, v.shape)
            for e in range(v.shape[0]):
                out[f"{base}.{e}.gate_proj.weight"] = v[e, :f, :].contiguous()
                out[f"{base}.{e}.up_proj.weight"] = v[e, f:, :].contiguous()
        elif k.endswith("mlp.experts.down_proj") or k.endswith("mlp.experts.down_proj.weight"):
            fused = True
            base = k.removesuffix(".weight").removesuffix(".down_proj")
            assert v.shape == (spec["experts"], spec["hidden"], spec["expert_ffn"]), (k, v.shape)
            for e in range(v.shape[0]):
                out[f"{base}.{e}.down_proj.weight"] = v[e].contiguous()
        else:
            out[k] = v
    for i in range(spec["layers"]):
        for e in range(spec["experts"]):
            for w in ("gate_proj", "up_proj", "down_proj"):
                assert f"model.layers.{i}.mlp.experts.{e}.{w}.weight" in out, (i, e, w, sorted(out)[:8])
    if fused:
        save_file(out, path, metadata={"format": "pt"})
    return fused


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    import shutil
    import tempfile
    import torch
    import transformers

    torch.use_deterministic_algorithms(True)
    result = {"transformers": transformers.__version__, "torch": torch.__version__, "models": {}}
    for spec in MODELS:
        model, n_tok = build(spec)
        g = torch.Generator().manual_seed(11 + len(spec["name"]))
        prompts = []
        for n in make.PROMPT_LENGTHS:
            ids = torch.randint(0, n_tok, (n,), generator=g).tolist()
            logits = make.run(model, ids)
            seq = list(ids)
            greedy = []
            for _ in range(make.GREEDY):
                nxt = int(make.run(model, seq)[-1].argmax())
                greedy.append(nxt)
                seq.append(nxt)
            first = 0 if n <= make.FULL else n - 1
            prompts.append({"ids": ids, "first": first, "greedy": greedy,
                            "logits": [[float(x) for x in row] for row in logits[first:].tolist()]})
        with tempfile.TemporaryDirectory() as tmp:
            try:
                model.save_pretrained(tmp, safe_serialization=True)
            except TypeError:  # transformers 5 always writes safetensors
                model.save_pretrained(tmp)
            st = os.path.join(tmp, "model.safetensors")
            rewritten = hub_layout(st, spec)
            # The saved folder, as a user would download it, must give the
            # logits recorded above.
            try:
                back = transformers.Qwen3MoeForCausalLM.from_pretrained(tmp, attn_implementation="eager").float().eval()
                ids = prompts[2]["ids"]
                reload = (make.run(back, ids) - make.run(model, ids)).abs().max().item()
            except Exception as e:  # recorded, not fatal: the fixtures stand on their own
                reload = repr(e)
            shutil.copyfile(os.path.join(tmp, "config.json"), os.path.join(outdir, spec["name"] + ".config.json"))
            shutil.copyfile(st, os.path.join(outdir, spec["name"] + ".safetensors"))
        result["models"][spec["name"]] = {"kind": "qwen2", "prompts": prompts, "experts_rewritten": rewritten,
                                           "reload_max_diff": reload}
        print(spec["name"], "ok, fused experts rewritten:", rewritten, "reload max diff:", reload, file=sys.stderr)
    with open(os.path.join(outdir, "qwen3moe.logits.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
