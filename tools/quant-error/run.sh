#!/bin/sh
# Reproduces the quantization error table of docs/QUANT.md and the fixture
# of model/qwen3's TestQuantError (model/qwen3/testdata/quant_error.json).
#
#   tools/quant-error/run.sh [WORK]
#
# Needs a llama.cpp checkout built with cmake (LLAMA_CPP, default
# /tmp/llama.cpp: headers in include/ and ggml/include/, libraries and
# llama-quantize in build/bin). WORK keeps the models and logits (default:
# a temporary folder, removed at the end).
#
# Steps: build inferno and tools/llama-logits; `inferno synth` writes the
# float32 model; for each mixture, `inferno quantize` and `llama-quantize`
# quantize it; tools/llama-logits (llama.cpp, CPU, one batch, float32 KV
# cache) and inferno (CPU pool backend, in tools/quant-error) compute the
# logits of every position of the token sequence for every file;
# tools/quant-error compares each with the same engine's float32 logits,
# writes the fixture and prints the Markdown table.
set -eu
cd "$(dirname "$0")/../.."
LLAMA_CPP=${LLAMA_CPP:-/tmp/llama.cpp}
if [ $# -gt 0 ]; then
	work=$1
	mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
LLAMA_CPP=$LLAMA_CPP tools/llama-logits/build.sh "$work/llama-logits"
go build -o "$work/inferno" ./cmd/inferno
go build -o "$work/quant-error" ./tools/quant-error
export LD_LIBRARY_PATH="$LLAMA_CPP/build/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$work/quant-error" -work "$work" \
	-inferno "$work/inferno" \
	-llama-logits "$work/llama-logits" \
	-llama-quantize "$LLAMA_CPP/build/bin/llama-quantize" \
	-fixture model/qwen3/testdata/quant_error.json
