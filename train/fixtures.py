#!/usr/bin/env python3
"""Reference outputs of the demo checkpoint, for checking inferno in CI.

    python3 train/fixtures.py --ckpt CKPT_DIR --out FIXTURES_DIR

Loads the checkpoint that train.py saved (bf16 safetensors) with
transformers' Qwen3ForCausalLM in float32 (an exact upcast, so this is the
reference of exactly the weights we ship), eager attention, TF32 off, and
for five fixed prompts writes

    FIXTURES_DIR/fixtures.json
    FIXTURES_DIR/<name>_last_logits.f32   (vocab_size little-endian float32:
                                           the logits of the last position)

fixtures.json follows testdata/golden/tiny-q8_0.json: per prompt its text,
ids (from the Qwen3 tokenizer.json, no special tokens added; special-token
text maps to its id), last_logits_file, argmax_per_position, top10_last
([id, logit] pairs), greedy32 (32 greedy tokens, each from a full
recomputation over the whole sequence, end-of-generation tokens not
stopping it), greedy32_margins (top-1 minus top-2 logit at each of those
steps: where a margin is tiny, an engine with other rounding may part from
the reference there), greedy32_text, and whether `model.generate` (KV
cache, do_sample=False, eos disabled) gave the same 32 tokens.

Prompts: three plain-text openings, one chat turn rendered as Qwen3's chat
template does with add_generation_prompt (it includes "Hello!", whose
tokens the KJV never uses: zero embedding rows in the input), and the
first 300 tokens of the corpus.

--standin loads the checkpoint with the plain-torch Qwen3 of qwen3_torch.py
instead of transformers (the CPU smoke test, where transformers is missing).

    python3 train/fixtures.py --compare FIXTURES_DIR --inferno BIN --gguf FILE

runs `BIN logits FILE --tokens ...` for every prompt of fixtures.json and
prints the relative L2 error of its last-position logits against the
reference, the largest absolute difference and whether the top-1 agrees
(an end-to-end check of a converted GGUF).
"""

import argparse
import gzip
import hashlib
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def load_tokenizer(folder):
    try:
        from tokenizers import Tokenizer
        return Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    except ImportError:
        from pybpe import PyBPETokenizer
        return PyBPETokenizer(os.path.join(folder, "tokenizer.json"))


def to_json(obj, depth=0):
    """JSON with one key a line and every list on one line."""
    if isinstance(obj, dict) and obj:
        pad = " " * (depth + 1)
        body = ",\n".join(f"{pad}{json.dumps(k)}: {to_json(v, depth + 1)}" for k, v in obj.items())
        return "{\n" + body + "\n" + " " * depth + "}"
    return json.dumps(obj, ensure_ascii=False)


def prompts(corpus):
    """name -> text (a str) or ("first_tokens", text, n)."""
    opener = gzip.open if corpus.endswith(".gz") else open
    with opener(corpus, "rt", encoding="utf-8") as f:
        head = f.read(4000)
    return {
        "genesis": "In the beginning",
        "psalm": "The LORD is my shepherd; I shall not want.",
        "gospel": "And Jesus said unto them,",
        "chat": "<|im_start|>user\nHello! Who made the heaven and the earth?<|im_end|>\n<|im_start|>assistant\n",
        "long300": ("first_tokens", head, 300),
    }


class HF:
    def __init__(self, ckpt, device, dtype):
        import transformers
        from transformers import Qwen3ForCausalLM
        try:
            m = Qwen3ForCausalLM.from_pretrained(ckpt, dtype=dtype, attn_implementation="eager")
        except TypeError:  # transformers 4.x
            m = Qwen3ForCausalLM.from_pretrained(ckpt, torch_dtype=dtype, attn_implementation="eager")
        self.model = m.to(device=device, dtype=dtype).eval()
        self.device = device
        self.version = f"transformers {transformers.__version__} Qwen3ForCausalLM"
        if m.lm_head.weight.data_ptr() != m.model.embed_tokens.weight.data_ptr():
            raise SystemExit("loaded model's lm_head is not tied to its embedding")
        c = m.config
        rope = getattr(c, "rope_parameters", None) or {"rope_type": "default", "rope_theta": getattr(c, "rope_theta", None)}
        self.config = {"vocab_size": c.vocab_size, "hidden_size": c.hidden_size, "num_hidden_layers": c.num_hidden_layers,
                       "num_attention_heads": c.num_attention_heads, "num_key_value_heads": c.num_key_value_heads,
                       "head_dim": c.head_dim, "intermediate_size": c.intermediate_size, "rms_norm_eps": c.rms_norm_eps,
                       "max_position_embeddings": c.max_position_embeddings, "tie_word_embeddings": True,
                       "rope": {"rope_type": rope.get("rope_type", "default"), "rope_theta": rope.get("rope_theta")}}

    @property
    def params(self):
        return self.model.parameters()

    @property
    def embedding(self):
        return self.model.model.embed_tokens.weight

    def logits(self, ids):
        x = torch.tensor([ids], device=self.device)
        return self.model(input_ids=x, use_cache=False).logits[0]

    def generate(self, ids, n, pad_id):
        """model.generate, greedy, with every end-of-generation id removed so
        that it runs the full n tokens. None if generate fails."""
        from transformers import GenerationConfig
        m = self.model
        m.generation_config.eos_token_id = None
        m.config.eos_token_id = None
        gc = GenerationConfig(do_sample=False, num_beams=1, max_new_tokens=n, eos_token_id=None, pad_token_id=pad_id)
        x = torch.tensor([ids], device=self.device)
        out = m.generate(input_ids=x, attention_mask=torch.ones_like(x), generation_config=gc)
        return out[0, len(ids):].tolist()


class StandIn:
    """The smoke test's plain-torch Qwen3 (qwen3_torch.py), for testing
    this script where transformers is missing."""

    def __init__(self, ckpt, device, dtype):
        import qwen3_torch
        self.model = qwen3_torch.load_checkpoint(ckpt, dtype).to(device).eval()
        c = self.model.config
        self.device, self.version = device, "train/qwen3_torch.py Qwen3ForCausalLM (smoke test)"
        self.config = {k: c[k] for k in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                                         "num_key_value_heads", "head_dim", "intermediate_size", "rms_norm_eps",
                                         "max_position_embeddings", "tie_word_embeddings")}
        self.config["rope"] = {"rope_type": "default", "rope_theta": c["rope_theta"]}

    @property
    def params(self):
        return self.model.parameters()

    @property
    def embedding(self):
        return self.model.model.embed_tokens.weight

    def logits(self, ids):
        return self.model(torch.tensor([ids], device=self.device))[0]

    def generate(self, ids, n, pad_id):
        return None


def compare(fixtures_dir, inferno, gguf):
    """Checks `inferno logits` on a GGUF against the fixtures; returns the
    worst relative L2 error."""
    import subprocess
    import tempfile
    with open(os.path.join(fixtures_dir, "fixtures.json")) as f:
        fx = json.load(f)
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name, p in fx["prompts"].items():
            ref = np.fromfile(os.path.join(fixtures_dir, p["last_logits_file"]), dtype="<f4").astype(np.float64)
            out = os.path.join(tmp, name + ".f32")
            r = subprocess.run([inferno, "logits", gguf, "--tokens", ",".join(map(str, p["ids"])), "--out", out],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{name}: inferno logits failed: {r.stderr.strip()[-300:]}")
                worst = float("inf")
                continue
            got = np.fromfile(out, dtype="<f4").astype(np.float64)
            if got.shape != ref.shape:
                print(f"{name}: {got.shape[0]} logits, reference has {ref.shape[0]}")
                worst = float("inf")
                continue
            rel = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
            worst = max(worst, rel)
            print(f"{name}: relative L2 {rel:.2e}, max |diff| {np.abs(got - ref).max():.2e}, "
                  f"top-1 {int(got.argmax())} vs reference {int(ref.argmax())}")
    return worst


def main():
    if "--compare" in sys.argv:
        ap = argparse.ArgumentParser(description="compare `inferno logits` with fixtures")
        ap.add_argument("--compare", required=True, help="fixtures folder")
        ap.add_argument("--inferno", required=True)
        ap.add_argument("--gguf", required=True)
        a = ap.parse_args()
        worst = compare(a.compare, a.inferno, a.gguf)
        print(f"worst relative L2: {worst:.2e}")
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ckpt", required=True, help="checkpoint folder written by train.py")
    ap.add_argument("--out", required=True, help="folder for fixtures.json and the .f32 files")
    ap.add_argument("--corpus", default="train/data/kjv.txt.gz", help="source of the 300-token prompt")
    ap.add_argument("--device", default=None, help="cuda (default when present) or cpu")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--standin", action="store_true", help="use qwen3_torch.py instead of transformers (CPU smoke test)")
    args = ap.parse_args()

    # Exact float32: no TF32 anywhere.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)

    tok = load_tokenizer(args.ckpt)
    eot, im_end = tok.token_to_id("<|endoftext|>"), tok.token_to_id("<|im_end|>")
    model = (StandIn if args.standin else HF)(args.ckpt, device, dtype)

    # The weights must be exactly bf16 values (train.py rounded them), and
    # the unused embedding rows exactly zero.
    with torch.no_grad():
        for p in model.params:
            if not torch.equal(p, p.to(torch.bfloat16).to(p.dtype)):
                raise SystemExit("a weight is not a bf16 value: is this train.py's checkpoint?")
        zero_rows = int((model.embedding == 0).all(dim=1).sum())
    weights = [f for f in sorted(os.listdir(args.ckpt)) if f.endswith((".safetensors", ".pt"))]
    digests = {}
    for f in weights:
        with open(os.path.join(args.ckpt, f), "rb") as fh:
            digests[f] = hashlib.sha256(fh.read()).hexdigest()

    os.makedirs(args.out, exist_ok=True)
    result = {
        "model": "inferno demo checkpoint (train/train.py): " + ", ".join(f"{f} sha256 {d}" for f, d in digests.items()),
        "config": model.config,
        "reference": f"{model.version}, {args.dtype} (the bf16 weights upcast exactly), eager attention, "
                     f"TF32 off, torch {torch.__version__} on {device}",
        "zero_embedding_rows": zero_rows,
        "prompts": {},
    }
    for name, spec in prompts(args.corpus).items():
        if isinstance(spec, tuple):
            ids = tok.encode(spec[1], add_special_tokens=False).ids[:spec[2]]
        else:
            ids = tok.encode(spec, add_special_tokens=False).ids
        with torch.no_grad():
            logits = model.logits(ids)  # [L, V]
            last = logits[-1]
            fname = f"{name}_last_logits.f32"
            last.to(torch.float32).cpu().numpy().astype("<f4").tofile(os.path.join(args.out, fname))
            top = torch.topk(last, 10)
            seq, greedy, margins = list(ids), [], []
            for _ in range(args.new_tokens):  # full recomputation each step
                l = model.logits(seq)[-1]
                t2 = torch.topk(l, 2)
                nxt = int(t2.indices[0])
                greedy.append(nxt)
                margins.append(round(float(t2.values[0] - t2.values[1]), 6))
                seq.append(nxt)
        try:
            gen = model.generate(ids, args.new_tokens, eot)
        except Exception as e:  # only a cross-check: report, carry on
            print(f"  {name}: model.generate failed: {e!r}")
            gen = None
        entry = {
            "text": tok.decode(ids, skip_special_tokens=False),
            "ids": ids,
            "last_logits_file": fname,
            "argmax_per_position": logits.argmax(-1).tolist(),
            "top10_last": [[int(i), float(v)] for v, i in zip(top.values.tolist(), top.indices.tolist())],
            f"greedy{args.new_tokens}": greedy,
            f"greedy{args.new_tokens}_margins": margins,
            f"greedy{args.new_tokens}_text": tok.decode(greedy, skip_special_tokens=False),
            "generate_agrees": None if gen is None else gen == greedy,
        }
        result["prompts"][name] = entry
        note = "" if gen is None or gen == greedy else f"  (model.generate differs: {gen})"
        print(f"{name}: {len(ids)} ids, top-1 {entry['top10_last'][0]}, min greedy margin {min(margins):.4f}, "
              f"greedy: {entry[f'greedy{args.new_tokens}_text']!r}{note}", flush=True)
        if im_end in greedy or eot in greedy:
            print(f"  ({name}: the greedy run passes an end-of-generation token; it was not stopped there)")

    with open(os.path.join(args.out, "fixtures.json"), "w") as f:
        f.write(to_json(result) + "\n")
    total = sum(os.path.getsize(os.path.join(args.out, f)) for f in os.listdir(args.out))
    print(f"wrote {args.out}: {len(os.listdir(args.out))} files, {total / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
