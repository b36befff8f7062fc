#!/usr/bin/env python3
"""Runs llama.cpp's convert_hf_to_gguf.py on make.py's checkpoints, whose
tiny test tokenizers have no entry in the converter's table of
pre-tokenizer hashes, in one process:

    llamacpp_convert.py PRE DIR OUTTYPE OUTFILE [PRE DIR OUTTYPE OUTFILE ...]

PRE names the pre-tokenizer to write (llama-bpe, qwen2); the other three
go to the converter as DIR --outtype OUTTYPE --outfile OUTFILE. Put this
file beside convert_hf_to_gguf.py, conversion/ and gguf-py/ of a llama.cpp
checkout (`tar xzf llama.cpp-0253fb21f.tgz convert_hf_to_gguf.py conversion
gguf-py` of ../shared/anchors); it needs torch, transformers, numpy and
safetensors. DIR is a checkpoint folder as the tests assemble one from
testdata/arch: NAME.config.json as config.json, NAME.safetensors as
model.safetensors, KIND.tokenizer.json and KIND.tokenizer_config.json as
tokenizer.json and tokenizer_config.json. testdata/arch/llamacpp holds its
output for llama-tied, llama-untied and qwen2 at f32 and (but
llama-untied) q8_0, checked by TestLlamaCppConverter. For embed.py's
Qwen3-Embedding checkpoint, DIR also holds embed.modules.json as
modules.json and embed.pooling.json as 1_Pooling/config.json (whence the
converter writes qwen3.pooling_type), the tokenizer being qwen2's:
testdata/arch/embed.llamacpp.gguf is its output at f32 (PRE qwen2),
checked by TestLlamaCppConvertedEmbedding."""
import os
import runpy
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(1, os.path.join(here, "gguf-py"))
import conversion.base as base  # noqa: E402

jobs = sys.argv[1:]
if not jobs or len(jobs) % 4:
    sys.exit(__doc__)
script = os.path.join(here, "convert_hf_to_gguf.py")
failed = 0
for i in range(0, len(jobs), 4):
    pre, d, outtype, out = jobs[i:i + 4]
    base.TextModel.get_vocab_base_pre = lambda self, tokenizer, pre=pre: pre
    sys.argv = [script, d, "--outtype", outtype, "--outfile", out]
    try:
        runpy.run_path(script, run_name="__main__")
        print(f"converted {d} ({outtype}) to {out}", flush=True)
    except SystemExit as e:
        if e.code:
            print(f"{d} ({outtype}): exit {e.code}", flush=True)
            failed += 1
    except Exception as e:  # report and go on with the next job
        print(f"{d} ({outtype}): {type(e).__name__}: {e}", flush=True)
        failed += 1
sys.exit(1 if failed else 0)
