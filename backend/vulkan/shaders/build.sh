#!/bin/sh
# Compiles the Vulkan backend's shaders (backend/vulkan/shaders/*.comp and
# the *.glsl they include) into SPIR-V, one file a variant, which the Go
# package embeds (//go:embed spv/*.spv):
#
#   ./build.sh           compile every variant of the table below with
#                        glslc, validate each with spirv-val, and write
#                        backend/vulkan/spv/<name>.spv (removing .spv
#                        files no variant names)
#   ./build.sh --check   compile into a temporary folder and fail if a
#                        committed .spv differs, is missing or is extra
#                        (stale); without glslc or spirv-val it says so and
#                        exits 0
#
# Run it after editing a shader and commit the .spv files with the source.
# glslc is shaderc's (Debian glslc; checked with shaderc 2023.2 on glslang
# 11.13), spirv-val SPIRV-Tools' (Debian spirv-tools). The output of one
# glslc version is reproducible; another version may compile to other
# bytes, which --check then reports.
#
# The variants marked +new in the table use what Debian's glslc does not
# compile (GL_EXT_integer_dot_product, GL_KHR_cooperative_matrix): they are
# compiled by a current glslang (the `glslang` command, or $GLSLANG; built
# from KhronosGroup/glslang, vulkan-sdk-1.4.357.0 checked) and validated
# by a spirv-val that knows their instructions (the first of $SPIRV_VAL,
# the spirv-val beside that glslang, spirv-val). Where no such pair is
# found (probed by compiling and validating a shader of both extensions),
# --check skips them and a build keeps their committed .spv files, each
# saying so. They target Vulkan 1.3 (SPIR-V 1.6); those marked +new12
# target Vulkan 1.2 (SPIR-V 1.5 with the extensions' SPV_KHR_*), the
# version the backend's devices are created with. A glslang built without
# its optimizer (ENABLE_OPT=OFF) compiles them without -Os.
set -eu
cd "$(dirname "$0")"
OUT=../spv

# variants: the table, one variant a line: its name (the .spv file and the
# pipeline's name), its source, and the -D defines it is compiled with.
# Keep each helper's lines in a block of their own.
variants() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' <<'TABLE'
# Weight formats (quant.glsl): matrix-vector products and row lookups.
mul_mv_f32     mul_mv.comp    -DTYPE_F32
mul_mv_f16     mul_mv.comp    -DTYPE_F16
mul_mv_bf16    mul_mv.comp    -DTYPE_BF16
mul_mv_q8_0    mul_mv.comp    -DTYPE_Q8_0
mul_mv_q4_0    mul_mv.comp    -DTYPE_Q4_0
mul_mv_q4_1    mul_mv.comp    -DTYPE_Q4_1
mul_mv_q5_0    mul_mv.comp    -DTYPE_Q5_0
mul_mv_q5_1    mul_mv.comp    -DTYPE_Q5_1
mul_mv_q2_k    mul_mv.comp    -DTYPE_Q2_K
mul_mv_q3_k    mul_mv.comp    -DTYPE_Q3_K
mul_mv_q4_k    mul_mv.comp    -DTYPE_Q4_K
mul_mv_q5_k    mul_mv.comp    -DTYPE_Q5_K
mul_mv_q6_k    mul_mv.comp    -DTYPE_Q6_K
mul_mv_iq4_nl  mul_mv.comp    -DTYPE_IQ4_NL
mul_mv_iq4_xs  mul_mv.comp    -DTYPE_IQ4_XS
mul_mv_mxfp4   mul_mv.comp    -DTYPE_MXFP4
get_rows_f32     get_rows.comp  -DTYPE_F32
get_rows_f16     get_rows.comp  -DTYPE_F16
get_rows_bf16    get_rows.comp  -DTYPE_BF16
get_rows_q8_0    get_rows.comp  -DTYPE_Q8_0
get_rows_q4_0    get_rows.comp  -DTYPE_Q4_0
get_rows_q4_1    get_rows.comp  -DTYPE_Q4_1
get_rows_q5_0    get_rows.comp  -DTYPE_Q5_0
get_rows_q5_1    get_rows.comp  -DTYPE_Q5_1
get_rows_q2_k    get_rows.comp  -DTYPE_Q2_K
get_rows_q3_k    get_rows.comp  -DTYPE_Q3_K
get_rows_q4_k    get_rows.comp  -DTYPE_Q4_K
get_rows_q5_k    get_rows.comp  -DTYPE_Q5_K
get_rows_q6_k    get_rows.comp  -DTYPE_Q6_K
get_rows_iq4_nl  get_rows.comp  -DTYPE_IQ4_NL
get_rows_iq4_xs  get_rows.comp  -DTYPE_IQ4_XS
get_rows_mxfp4   get_rows.comp  -DTYPE_MXFP4

# vkops: normalization, RoPE, the KV cache, attention, activations, argmax
# (ops.glsl).
rms_norm         rms_norm.comp
rope_store       rope_store.comp
attn             attn.comp
attn_combine     attn_combine.comp
swiglu           swiglu.comp
geglu            geglu.comp
swiglu_oai       swiglu_oai.comp
add              add.comp
add_bias         add_bias.comp
argmax           argmax.comp

# vksample: sampling (sample.glsl; backend/vulkan/sample.go).
sample_stats   sample_stats.comp
sample_prep    sample_prep.comp
sample_topk    sample_topk.comp
sample_race    sample_race.comp
sample_final   sample_final.comp
# end vksample

# vkmm: matrix-matrix products of prompts (mul_mm.comp over quant.glsl;
# backend/vulkan/mm.go).
mul_mm_f32           mul_mm.comp    -DTYPE_F32
mul_mm_f16           mul_mm.comp    -DTYPE_F16
mul_mm_bf16          mul_mm.comp    -DTYPE_BF16
mul_mm_q8_0          mul_mm.comp    -DTYPE_Q8_0
mul_mm_q4_0          mul_mm.comp    -DTYPE_Q4_0
mul_mm_q4_1          mul_mm.comp    -DTYPE_Q4_1
mul_mm_q5_0          mul_mm.comp    -DTYPE_Q5_0
mul_mm_q5_1          mul_mm.comp    -DTYPE_Q5_1
mul_mm_q2_k          mul_mm.comp    -DTYPE_Q2_K
mul_mm_q3_k          mul_mm.comp    -DTYPE_Q3_K
mul_mm_q4_k          mul_mm.comp    -DTYPE_Q4_K
mul_mm_q5_k          mul_mm.comp    -DTYPE_Q5_K
mul_mm_q6_k          mul_mm.comp    -DTYPE_Q6_K
mul_mm_iq4_nl        mul_mm.comp    -DTYPE_IQ4_NL
mul_mm_iq4_xs        mul_mm.comp    -DTYPE_IQ4_XS
mul_mm_mxfp4         mul_mm.comp    -DTYPE_MXFP4
# The same on cooperative matrices (mul_mm_cm.comp; float16 factors, so
# no float32 weights), over act_h's float16 activations.
act_h               act_h.comp
mul_mm_cm_f16       mul_mm_cm.comp +new12 -DTYPE_F16
mul_mm_cm_bf16      mul_mm_cm.comp +new12 -DTYPE_BF16
mul_mm_cm_q8_0      mul_mm_cm.comp +new12 -DTYPE_Q8_0
mul_mm_cm_q4_0      mul_mm_cm.comp +new12 -DTYPE_Q4_0
mul_mm_cm_q4_1      mul_mm_cm.comp +new12 -DTYPE_Q4_1
mul_mm_cm_q5_0      mul_mm_cm.comp +new12 -DTYPE_Q5_0
mul_mm_cm_q5_1      mul_mm_cm.comp +new12 -DTYPE_Q5_1
mul_mm_cm_q2_k      mul_mm_cm.comp +new12 -DTYPE_Q2_K
mul_mm_cm_q3_k      mul_mm_cm.comp +new12 -DTYPE_Q3_K
mul_mm_cm_q4_k      mul_mm_cm.comp +new12 -DTYPE_Q4_K
mul_mm_cm_q5_k      mul_mm_cm.comp +new12 -DTYPE_Q5_K
mul_mm_cm_q6_k      mul_mm_cm.comp +new12 -DTYPE_Q6_K
mul_mm_cm_iq4_nl    mul_mm_cm.comp +new12 -DTYPE_IQ4_NL
mul_mm_cm_iq4_xs    mul_mm_cm.comp +new12 -DTYPE_IQ4_XS
mul_mm_cm_mxfp4     mul_mm_cm.comp +new12 -DTYPE_MXFP4
# end vkmm

# vkmoe: mixture of experts (moe_route, the experts' products mul_mv_id
# and, grouped by moe_group, mul_mv_idg and mul_mm_id over quant.glsl,
# their activation and weighted sum; backend/vulkan/moe.go).
moe_route            moe_route.comp
moe_glu              moe_glu.comp
moe_combine          moe_combine.comp
mul_mv_id_f32        mul_mv_id.comp  -DTYPE_F32
mul_mv_id_f16        mul_mv_id.comp  -DTYPE_F16
mul_mv_id_bf16       mul_mv_id.comp  -DTYPE_BF16
mul_mv_id_q8_0       mul_mv_id.comp  -DTYPE_Q8_0
mul_mv_id_q4_0       mul_mv_id.comp  -DTYPE_Q4_0
mul_mv_id_q4_1       mul_mv_id.comp  -DTYPE_Q4_1
mul_mv_id_q5_0       mul_mv_id.comp  -DTYPE_Q5_0
mul_mv_id_q5_1       mul_mv_id.comp  -DTYPE_Q5_1
mul_mv_id_q2_k       mul_mv_id.comp  -DTYPE_Q2_K
mul_mv_id_q3_k       mul_mv_id.comp  -DTYPE_Q3_K
mul_mv_id_q4_k       mul_mv_id.comp  -DTYPE_Q4_K
mul_mv_id_q5_k       mul_mv_id.comp  -DTYPE_Q5_K
mul_mv_id_q6_k       mul_mv_id.comp  -DTYPE_Q6_K
mul_mv_id_iq4_nl     mul_mv_id.comp  -DTYPE_IQ4_NL
mul_mv_id_iq4_xs     mul_mv_id.comp  -DTYPE_IQ4_XS
mul_mv_id_mxfp4      mul_mv_id.comp  -DTYPE_MXFP4
moe_group            moe_group.comp
mul_mm_id_f32        mul_mm_id.comp  -DTYPE_F32
mul_mm_id_f16        mul_mm_id.comp  -DTYPE_F16
mul_mm_id_bf16       mul_mm_id.comp  -DTYPE_BF16
mul_mm_id_q8_0       mul_mm_id.comp  -DTYPE_Q8_0
mul_mm_id_q4_0       mul_mm_id.comp  -DTYPE_Q4_0
mul_mm_id_q4_1       mul_mm_id.comp  -DTYPE_Q4_1
mul_mm_id_q5_0       mul_mm_id.comp  -DTYPE_Q5_0
mul_mm_id_q5_1       mul_mm_id.comp  -DTYPE_Q5_1
mul_mm_id_q2_k       mul_mm_id.comp  -DTYPE_Q2_K
mul_mm_id_q3_k       mul_mm_id.comp  -DTYPE_Q3_K
mul_mm_id_q4_k       mul_mm_id.comp  -DTYPE_Q4_K
mul_mm_id_q5_k       mul_mm_id.comp  -DTYPE_Q5_K
mul_mm_id_q6_k       mul_mm_id.comp  -DTYPE_Q6_K
mul_mm_id_iq4_nl     mul_mm_id.comp  -DTYPE_IQ4_NL
mul_mm_id_iq4_xs     mul_mm_id.comp  -DTYPE_IQ4_XS
mul_mm_id_mxfp4      mul_mm_id.comp  -DTYPE_MXFP4
mul_mv_idg_f32       mul_mv_idg.comp -DTYPE_F32
mul_mv_idg_f16       mul_mv_idg.comp -DTYPE_F16
mul_mv_idg_bf16      mul_mv_idg.comp -DTYPE_BF16
mul_mv_idg_q8_0      mul_mv_idg.comp -DTYPE_Q8_0
mul_mv_idg_q4_0      mul_mv_idg.comp -DTYPE_Q4_0
mul_mv_idg_q4_1      mul_mv_idg.comp -DTYPE_Q4_1
mul_mv_idg_q5_0      mul_mv_idg.comp -DTYPE_Q5_0
mul_mv_idg_q5_1      mul_mv_idg.comp -DTYPE_Q5_1
mul_mv_idg_q2_k      mul_mv_idg.comp -DTYPE_Q2_K
mul_mv_idg_q3_k      mul_mv_idg.comp -DTYPE_Q3_K
mul_mv_idg_q4_k      mul_mv_idg.comp -DTYPE_Q4_K
mul_mv_idg_q5_k      mul_mv_idg.comp -DTYPE_Q5_K
mul_mv_idg_q6_k      mul_mv_idg.comp -DTYPE_Q6_K
mul_mv_idg_iq4_nl    mul_mv_idg.comp -DTYPE_IQ4_NL
mul_mv_idg_iq4_xs    mul_mv_idg.comp -DTYPE_IQ4_XS
mul_mv_idg_mxfp4     mul_mv_idg.comp -DTYPE_MXFP4
# end vkmoe

# vkint: the decode products on 8-bit integer dot products (mul_mvq.comp
# over quant8.glsl, their activations by quant_act.comp;
# backend/vulkan/intdot.go).
quant_act        quant_act.comp
mul_mvq_q8_0     mul_mvq.comp   +new12 -DTYPE_Q8_0
mul_mvq_q4_0     mul_mvq.comp   +new12 -DTYPE_Q4_0
mul_mvq_q4_1     mul_mvq.comp   +new12 -DTYPE_Q4_1
mul_mvq_q5_0     mul_mvq.comp   +new12 -DTYPE_Q5_0
mul_mvq_q5_1     mul_mvq.comp   +new12 -DTYPE_Q5_1
mul_mvq_q2_k     mul_mvq.comp   +new12 -DTYPE_Q2_K
mul_mvq_q3_k     mul_mvq.comp   +new12 -DTYPE_Q3_K
mul_mvq_q4_k     mul_mvq.comp   +new12 -DTYPE_Q4_K
mul_mvq_q5_k     mul_mvq.comp   +new12 -DTYPE_Q5_K
mul_mvq_q6_k     mul_mvq.comp   +new12 -DTYPE_Q6_K
mul_mvq_iq4_nl   mul_mvq.comp   +new12 -DTYPE_IQ4_NL
mul_mvq_iq4_xs   mul_mvq.comp   +new12 -DTYPE_IQ4_XS
mul_mvq_mxfp4    mul_mvq.comp   +new12 -DTYPE_MXFP4
# end vkint
TABLE
}

# havetools: whether glslc and spirv-val are here
havetools() { command -v glslc >/dev/null && command -v spirv-val >/dev/null; }

# newtools: sets NEWC and NEWVAL to a glslang and a spirv-val that compile
# and validate the +new variants' extensions, or fails.
newtools() {
	NEWC=${GLSLANG:-$(command -v glslang || true)}
	[ -n "$NEWC" ] && [ -x "$NEWC" ] || return 1
	NEWVAL=${SPIRV_VAL:-}
	if [ -z "$NEWVAL" ]; then
		NEWVAL=$(dirname "$NEWC")/spirv-val
		[ -x "$NEWVAL" ] || NEWVAL=spirv-val
	fi
	probe=$(mktemp -d)
	cat > "$probe/p.comp" <<'PROBE'
#version 450
#extension GL_EXT_integer_dot_product : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B { int v[]; } b;
void main() {
	coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(1.0);
	b.v[0] = dotPacked4x8EXT(b.v[1], b.v[2]) + int(a.length());
}
PROBE
	ok=0
	"$NEWC" -V --target-env vulkan1.3 -S comp "$probe/p.comp" -o "$probe/p.spv" >/dev/null 2>&1 &&
		"$NEWVAL" --target-env vulkan1.3 "$probe/p.spv" >/dev/null 2>&1 && ok=1
	NEWOPT=
	"$NEWC" -V --target-env vulkan1.3 -Os -S comp "$probe/p.comp" -o "$probe/p.spv" >/dev/null 2>&1 && NEWOPT=-Os
	rm -rf "$probe"
	[ "$ok" = 1 ]
}

# newvariants: the names of the +new variants
newvariants() { variants | awk '$3 == "+new" || $3 == "+new12" { print $1 }'; }

# build DIR NEW: compiles and validates every variant into DIR/<name>.spv,
# the +new ones only when NEW is 1
build() {
	variants | while read -r name src defs; do
		case "$defs" in
		+new*)
			[ "$2" = 1 ] || continue
			env=vulkan1.3
			case "$defs" in
			+new12*) env=vulkan1.2 defs=${defs#+new12} ;;
			*) defs=${defs#+new} ;;
			esac
			# shellcheck disable=SC2086 # defs is a list of flags
			"$NEWC" -V --target-env $env $NEWOPT -S comp $defs "$src" -o "$1/$name.spv" >/dev/null || {
				echo "backend/vulkan: compiling $name ($src $defs) with $NEWC failed" >&2
				exit 1
			}
			"$NEWVAL" --target-env $env "$1/$name.spv" || {
				echo "backend/vulkan: $name.spv ($src $defs) is not valid SPIR-V" >&2
				exit 1
			}
			continue
			;;
		esac
		# shellcheck disable=SC2086 # defs is a list of flags
		glslc --target-env=vulkan1.2 -O -fshader-stage=compute $defs "$src" -o "$1/$name.spv" || {
			echo "backend/vulkan: compiling $name ($src $defs) failed" >&2
			exit 1
		}
		spirv-val --target-env vulkan1.2 "$1/$name.spv" || {
			echo "backend/vulkan: $name.spv ($src $defs) is not valid SPIR-V" >&2
			exit 1
		}
	done
}

# newnote: says which +new variants go unbuilt when NEW is not 1
newnote() {
	if [ "$1" != 1 ] && [ -n "$(newvariants)" ]; then
		echo "backend/vulkan: no glslang and spirv-val that know GL_EXT_integer_dot_product and GL_KHR_cooperative_matrix (\$GLSLANG, \$SPIRV_VAL): $(newvariants | wc -l) +new variants $2"
	fi
}

case "${1:-}" in
--check)
	if ! havetools; then
		echo "backend/vulkan: glslc or spirv-val is not installed: shaders not checked"
		exit 0
	fi
	new=0
	newtools && new=1
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	build "$tmp" "$new"
	newnote "$new" "not checked"
	if [ "$new" != 1 ]; then
		for n in $(newvariants); do
			[ -f "$OUT/$n.spv" ] && cp "$OUT/$n.spv" "$tmp/"
		done
	fi
	bad=0
	for f in "$tmp"/*.spv; do
		b=$(basename "$f")
		if [ ! -f "$OUT/$b" ]; then
			echo "backend/vulkan: spv/$b is missing" >&2
			bad=1
		elif ! cmp -s "$f" "$OUT/$b"; then
			echo "backend/vulkan: spv/$b differs from what glslc builds from the sources" >&2
			bad=1
		fi
	done
	for f in "$OUT"/*.spv; do
		[ -e "$f" ] || continue
		if [ ! -f "$tmp/$(basename "$f")" ]; then
			echo "backend/vulkan: spv/$(basename "$f") is no variant of build.sh's table" >&2
			bad=1
		fi
	done
	if [ "$bad" != 0 ]; then
		echo "backend/vulkan: the SPIR-V is stale; run backend/vulkan/shaders/build.sh" >&2
		exit 1
	fi
	echo "backend/vulkan: the SPIR-V of $(variants | wc -l) variants is up to date"
	;;
"")
	if ! havetools; then
		echo "backend/vulkan: building the shaders needs glslc and spirv-val (apt-get install glslc spirv-tools)" >&2
		exit 1
	fi
	new=0
	newtools && new=1
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	build "$tmp" "$new"
	newnote "$new" "kept as committed"
	if [ "$new" != 1 ]; then
		for n in $(newvariants); do
			[ -f "$OUT/$n.spv" ] && cp "$OUT/$n.spv" "$tmp/"
		done
	fi
	mkdir -p "$OUT"
	rm -f "$OUT"/*.spv
	cp "$tmp"/*.spv "$OUT"/
	echo "wrote $(variants | wc -l) variants to backend/vulkan/spv ($(cat "$OUT"/*.spv | wc -c) bytes)"
	;;
*)
	echo "usage: $0 [--check]" >&2
	exit 2
	;;
esac
