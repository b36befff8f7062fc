#!/bin/sh
# Builds llama-logits against a built llama.cpp checkout.
#
#   LLAMA_CPP=/tmp/llama.cpp tools/llama-logits/build.sh [OUT]
#
# LLAMA_CPP is the checkout (headers in include/ and ggml/include/), built
# with cmake into $LLAMA_CPP/build (libllama.so and libggml*.so in
# build/bin). OUT defaults to bin/llama-logits (ignored by git). Run it with
# LD_LIBRARY_PATH=$LLAMA_CPP/build/bin (the rpath set here makes that
# unnecessary as long as the build stays where it is).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
llama=${LLAMA_CPP:-/tmp/llama.cpp}
lib=${LLAMA_LIB:-$llama/build/bin}
out=${1:-$here/../../bin/llama-logits}
mkdir -p "$(dirname "$out")"
${CC:-cc} -O2 -std=c11 -Wall -Wextra -o "$out" "$here/main.c" \
	-I"$llama/include" -I"$llama/ggml/include" \
	-L"$lib" -Wl,-rpath,"$lib" -lllama -lggml -lggml-base
echo "built $out" >&2
