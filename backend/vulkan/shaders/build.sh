#!/bin/sh
# Compiles the compute shaders of backend/vulkan (shaders/*.comp and the
# *.glsl they include) to SPIR-V, one file a variant, spv/<name>.spv, which
# the Go package embeds. Every variant is compiled with
# glslc --target-env=vulkan1.2 -O and its defines, then validated with
# spirv-val --target-env vulkan1.2. Run this after editing a shader, and
# commit the .spv files with the source.
#
#   ./build.sh            rebuild every variant into ../spv
#   ./build.sh --check    rebuild into a temporary folder and fail if a
#                         committed .spv differs, is missing or is not in
#                         the table (stale)
#
# GLSLC and SPIRV_VAL name the tools (default: glslc and spirv-val on
# PATH). Without glslc the script says so and exits 0 (nothing checked).
set -eu
cd "$(dirname "$0")"
GLSLC=${GLSLC:-glslc}
SPIRV_VAL=${SPIRV_VAL:-spirv-val}

# variants prints the table: a variant a line, its name (the .spv file and
# the name the Go side asks a pipeline by), its source and its -D defines.
# Each helper keeps its lines in a block of its own.
variants() {
	cat <<'TABLE'
# name          source            defines

# vkops: normalization, RoPE, the KV cache, attention, activations, argmax
rms_norm        rms_norm.comp
rope            rope.comp
kv_store        kv_store.comp
attn            attn.comp
attn_combine    attn_combine.comp
swiglu          swiglu.comp
geglu           geglu.comp
swiglu_oai      swiglu_oai.comp
add             add.comp
add_bias        add_bias.comp
argmax          argmax.comp
# end vkops
TABLE
}

check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*)
	echo "usage: $0 [--check]" >&2
	exit 2
	;;
esac

if ! command -v "$GLSLC" >/dev/null 2>&1; then
	echo "build.sh: $GLSLC not found: shaders not compiled or checked"
	exit 0
fi

out=../spv
if [ $check = 1 ]; then
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"


variants | while read -r name src defs; do
	case "$name" in "" | "#"*) continue ;; esac
	# shellcheck disable=SC2086 # defs is a list of -D flags
	"$GLSLC" --target-env=vulkan1.2 -O $defs -o "$out/$name.spv" "$src"
	"$SPIRV_VAL" --target-env vulkan1.2 "$out/$name.spv"
done
names=$(variants | awk '$1 != "" && $1 !~ /^#/ { print $1 ".spv" }' | sort)
if [ $check = 0 ]; then
	# Remove what the table no longer names.
	for f in "$out"/*.spv; do
		b=$(basename "$f")
		echo "$names" | grep -qx "$b" || rm -f "$f"
	done
	exit 0
fi

status=0
for b in $names; do
	if [ ! -f "../spv/$b" ]; then
		echo "build.sh --check: spv/$b is missing" >&2
		status=1
	elif ! cmp -s "$out/$b" "../spv/$b"; then
		echo "build.sh --check: spv/$b differs from its source" >&2
		status=1
	fi
done
for f in ../spv/*.spv; do
	[ -e "$f" ] || continue
	b=$(basename "$f")
	if ! echo "$names" | grep -qx "$b"; then
		echo "build.sh --check: spv/$b is in no variant of the table" >&2
		status=1
	fi
done
[ $status = 0 ] && echo "build.sh --check: every .spv matches its source"
exit $status
