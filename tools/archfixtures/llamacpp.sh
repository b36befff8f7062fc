#!/bin/sh
# Builds llama.cpp's library (CPU) and tools/llama-logits from a llama.cpp
# source tarball, then runs the TestLlamaCpp tests: llama.cpp must load the
# files inferno's converter makes of testdata/arch's checkpoints and
# compute transformers' logits from them (TestLlamaCpp), and embeddings
# from the Qwen3-Embedding one (TestLlamaCppEmbedding).
#
#   tools/archfixtures/llamacpp.sh LLAMA_CPP.tgz [DIR]
#
# DIR (default /tmp/llama.cpp) receives the source and the build. Needs
# cmake, a C compiler and Go.
set -eu
tgz=${1:?usage: llamacpp.sh LLAMA_CPP.tgz [DIR]}
dir=${2:-/tmp/llama.cpp}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd) # go test runs in the package's folder
tar xzf "$tgz" -C "$dir"
cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DGGML_NATIVE=ON >/dev/null
cmake --build "$dir/build" -j "$(nproc)" --target llama >/dev/null
LLAMA_CPP=$dir "$(dirname "$0")/../llama-logits/build.sh" "$dir/llama-logits"
cd "$(dirname "$0")/../.."
go test ./tools/archfixtures -run TestLlamaCpp -v -count=1 -llama-logits "$dir/llama-logits"
