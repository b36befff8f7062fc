#!/usr/bin/env bash
# compare.sh: check inferno quantize against llama.cpp's llama-quantize.
#
# For each model of variants.txt, written by "inferno synth" in F32, F16
# and BF16, and of layers.txt (deep models with tiny rows: the rules that
# depend on the layer count), in F32, and each mixture, runs llama-quantize and inferno quantize and
# compares every tensor's type and data byte for byte (by SHA-256), and the
# general.file_type they write. Prints one line per model and mixture and
# exits non-zero if any differ. When a mixture cannot be made (rows not a
# multiple of 32), both must fail.
#
# With --record, also rewrites llama-quantize.tsv, the fixture
# TestLlamaQuantizeFixture checks: llama-quantize's type and SHA-256 of
# every 2-D tensor of the F32 models, for every mixture.
#
# Run from anywhere inside the repository, where llama.cpp is built:
#
#	LLAMA=/tmp/llama.cpp/build/bin quantize/testdata/compare.sh [--record]
set -euo pipefail

LLAMA=${LLAMA:-/tmp/llama.cpp/build/bin}
MIXTURES="Q4_0 Q4_1 MXFP4_MOE Q5_0 Q5_1 Q8_0 Q2_K Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K IQ4_NL IQ4_XS F16 BF16 F32"
record=false
[ "${1:-}" = --record ] && record=true

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/inferno" ./cmd/inferno
go build -o "$work/ggufsum" ./quantize/testdata/ggufsum
export LD_LIBRARY_PATH="$LLAMA${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$LLAMA/llama-quantize" --help >/dev/null 2>&1 || [ $? -ne 127 ] || { echo "no llama-quantize in $LLAMA" >&2; exit 2; }

fixture="$work/fixture.tsv"
{
	echo "# llama-quantize's output for the F32 models of variants.txt, written by compare.sh --record."
	echo "# variant, mixture, tensor, type, first 16 hex digits of the SHA-256 of the data (2-D tensors);"
	echo "# a mixture llama-quantize refuses for the model has one line with tensor \"error\"."
} >"$fixture"

fail=0
total=0
models() {
	grep -v '^#' "$here/variants.txt" | sed 's/^/yes F32,F16,BF16 /'
	grep -v '^#' "$here/layers.txt" | sed 's/^/no F32 /'
}
while read -r rec inputs name flags; do
	[ -n "$name" ] || continue
	for in in ${inputs//,/ }; do
		model="$work/$name-$in.gguf"
		# shellcheck disable=SC2086
		"$work/inferno" synth "$model" $flags --type "$in" 2>/dev/null
		for mix in $MIXTURES; do
			total=$((total + 1))
			ll="$work/ll.gguf" inf="$work/inf.gguf"
			rm -f "$ll" "$inf"
			llok=true infok=true
			"$LLAMA/llama-quantize" "$model" "$ll" "$mix" >"$work/ll.log" 2>&1 || llok=false
			"$work/inferno" quantize "$model" "$inf" --type "$mix" >"$work/inf.log" 2>&1 || infok=false
			label=$(printf '%-2s %-3s %-7s' "$name" "$in" "$mix")
			if ! $llok || ! $infok; then
				if ! $llok && ! $infok; then
					echo "$label both refuse: $(grep -o 'no tensor type fallback[^"]*' "$work/ll.log" | head -1) / $(tail -1 "$work/inf.log" | sed 's/^inferno: //')"
					if $record && [ "$rec" = yes ] && [ "$in" = F32 ]; then printf '%s\t%s\terror\t-\t-\n' "$name" "$mix" >>"$fixture"; fi
				else
					echo "$label MISMATCH: llama-quantize ok=$llok, inferno ok=$infok: $(tail -1 "$work/inf.log")"
					fail=$((fail + 1))
				fi
				continue
			fi
			"$work/ggufsum" "$ll" >"$work/ll.sum"
			"$work/ggufsum" "$inf" >"$work/inf.sum"
			n=$(grep -vc '^#' "$work/ll.sum")
			types=$(awk -F'\t' '!/^#/ && $3 >= 2 {print $2}' "$work/ll.sum" | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')
			if cmp -s "$work/ll.sum" "$work/inf.sum"; then
				echo "$label identical: $n tensors, 2-D: $types"
			else
				bad=$(diff "$work/ll.sum" "$work/inf.sum" | grep -c '^<' || true)
				first=$(diff "$work/ll.sum" "$work/inf.sum" | grep -m2 '^[<>]' | tr '\t\n' '  ')
				echo "$label MISMATCH: $bad of $n lines differ (llama-quantize < > inferno: $first)"
				fail=$((fail + 1))
			fi
			if $record && [ "$rec" = yes ] && [ "$in" = F32 ]; then
				awk -F'\t' -v v="$name" -v m="$mix" '!/^#/ && $3 >= 2 {printf "%s\t%s\t%s\t%s\t%s\n", v, m, $1, $2, $4}' "$work/ll.sum" >>"$fixture"
			fi
		done
	done
done < <(models)

if $record; then
	cp "$fixture" "$here/llama-quantize.tsv"
	echo "recorded $here/llama-quantize.tsv ($(grep -vc '^#' "$fixture") lines)"
fi
echo "$((total - fail)) of $total model and mixture pairs match llama-quantize"
[ "$fail" -eq 0 ]
