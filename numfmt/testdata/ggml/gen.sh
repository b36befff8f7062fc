#!/bin/sh
# gen.sh regenerates the ggml fixtures in this directory from a llama.cpp
# checkout built with CMake (libggml-base.so): LLAMA=/path/to/llama.cpp sh gen.sh
set -eu
LLAMA=${LLAMA:-/tmp/llama.cpp}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -std=gnu11 -I"$LLAMA/ggml/include" -I"$LLAMA/ggml/src" "$here/gen.c" \
	-L"$LLAMA/build/bin" -lggml-base -Wl,-rpath,"$LLAMA/build/bin" -lm -o "$tmp/gen"
"$tmp/gen" "$tmp"
rm -f "$here"/*.bin.gz
for f in "$tmp"/*.bin; do
	gzip -9n <"$f" >"$here/$(basename "$f").gz"
done
# The thresholds of glibc's log2f that MXFP4's exponent depends on.
cc -O2 "$here/log2f.c" -o "$tmp/log2f" -lm
"$tmp/log2f" >"$here/log2f.txt"
ls -l "$here"/*.bin.gz | awk '{s += $5} END {print s " bytes of fixtures"}'
