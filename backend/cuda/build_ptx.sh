#!/bin/sh
# Compiles the CUDA kernels (kernels/kernels.cu and the kernels/*.cuh it
# includes) to what the Go package embeds, gzip-compressed, and records
# what it was built from in kernels/kernels.ptx.stamp:
#   kernels/kernels.ptx.gz         PTX for compute_80: any GPU of compute
#                                  capability 8.0+ (the driver compiles it)
#   kernels/kernels_sm90.ptx.gz    PTX for compute_90: Hopper and newer; the
#                                  same kernels with programmatic dependent
#                                  launch (griddepcontrol) and the cluster
#                                  attention compiled in
#   kernels/kernels_sm80.cubin.gz  machine code for sm_80 (A100), sm_86
#   kernels/kernels_sm86.cubin.gz  (RTX 30xx, A10, A40), sm_89 (RTX 40xx,
#   kernels/kernels_sm89.cubin.gz  L4, L40) from the compute_80 PTX, and
#   kernels/kernels_sm90.cubin.gz  sm_90 (H100, H200) from the compute_90
#                                  PTX: loaded without the driver's JIT
# The loader (device.go) takes the cubin for the GPU's compute capability
# (the same major version, the highest minor not above the GPU's) and the
# PTX otherwise. Run this after editing a kernel, on any machine with the
# CUDA toolkit (nvcc 11.8 or newer), and commit the outputs and the stamp
# with the source.
#
#   ./build_ptx.sh            rebuild everything and the stamp
#   ./build_ptx.sh --check    rebuild into a temporary folder and fail if the
#                             committed files or stamp differ (stale)
#   ./build_ptx.sh --report   compile for sm_90 and print ptxas' resource
#                             usage (registers, shared memory, spills)
#   ./build_ptx.sh --cubin90 DIR
#                             reassemble only the sm_90 cubin from the
#                             committed kernels_sm90.ptx.gz with PTXAS90,
#                             writing DIR/kernels_sm90.cubin.gz and the
#                             updated DIR/kernels.ptx.stamp (devrun.sh's
#                             cubin90 stage, on a machine with CUDA 13)
#
# NVCC names the compiler (default: nvcc on PATH), PTXAS the assembler
# (default: ptxas beside nvcc, else on PATH), PTXAS90 the assembler of the
# sm_90 cubin (default: PTXAS); NVCC_FLAGS adds flags (e.g.
# -allow-unsupported-compiler where the host gcc is newer than nvcc
# supports: only the preprocessor runs for -ptx, the output is the same).
#
# Which ptxas: the PTX is nvcc 11.8's (PTX ISA 7.8: drivers from R520 on
# compile it). The sm_80/86/89 cubins are assembled by the same 11.8 ptxas
# (they load on the same drivers). The sm_90 cubin decodes faster when
# assembled by CUDA 13.0's ptxas, the compiler of the R580 driver's JIT: on
# the H200, 0.6B tg128 1,262 tok/s with 11.8's cubin against 1,283 with the
# driver's JIT of the same PTX (2026-12-01). A cubin a driver cannot load
# (an older driver than its ptxas) makes the loader fall back to the PTX.
#
# The stamp: the SHA-256 of the sources (every kernels/*.cu and *.cuh, in
# name order), the nvcc version, the ptxas versions (sm_80..89, then
# sm_90), then the SHA-256 of each output's uncompressed bytes
# (TestPTXStamp checks both on any machine).
#
# The kernels use what sm_80 brought (cp.async, int8 mma.sync,
# ld.global.nc with L1::no_allocate) and, on sm_90, griddepcontrol and
# thread block clusters; no sm_90a-only instruction is needed by these
# memory-bound kernels.
set -eu
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
if [ -z "${PTXAS:-}" ]; then
	PTXAS=$(dirname "$(command -v "$NVCC" || echo .)")/ptxas
	[ -x "$PTXAS" ] || PTXAS=ptxas
fi
PTXAS90=${PTXAS90:-$PTXAS}
FLAGS="-std=c++17 -O3 ${NVCC_FLAGS:-}"
SRC=kernels/kernels.cu
# name:ptx:arch of each cubin
CUBINS="sm80:kernels.ptx:sm_80 sm86:kernels.ptx:sm_86 sm89:kernels.ptx:sm_89 sm90:kernels_sm90.ptx:sm_90"

# build DIR: writes every output, uncompressed, into DIR
build() {
	# shellcheck disable=SC2086
	"$NVCC" -ptx -arch=compute_80 $FLAGS "$SRC" -o "$1/kernels.ptx" &
	# shellcheck disable=SC2086
	"$NVCC" -ptx -arch=compute_90 $FLAGS "$SRC" -o "$1/kernels_sm90.ptx" &
	wait
	pids=""
	for c in $CUBINS; do
		name=${c%%:*} rest=${c#*:}
		as=$PTXAS
		[ "$name" = sm90 ] && as=$PTXAS90
		"$as" -O3 -arch="${rest#*:}" "$1/${rest%%:*}" -o "$1/kernels_$name.cubin" &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p"; done
}

# outputs: the uncompressed outputs' names, in stamp order
outputs() {
	echo kernels.ptx kernels_sm90.ptx
	for c in $CUBINS; do echo "kernels_${c%%:*}.cubin"; done
}

# stamp DIR: the stamp of the sources and of the outputs in DIR
stamp() {
	# shellcheck disable=SC2046
	cat $(ls kernels/*.cu kernels/*.cuh 2>/dev/null | LC_ALL=C sort) | sha256sum | cut -d' ' -f1
	"$NVCC" --version | tail -n 1
	"$PTXAS" --version | tail -n 1
	"$PTXAS90" --version | tail -n 1
	for f in $(outputs); do
		echo "$(sha256sum <"$1/$f" | cut -d' ' -f1) $f"
	done
}

case "${1:-}" in
--report)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	# shellcheck disable=SC2086
	"$NVCC" -ptx -arch=compute_90 $FLAGS "$SRC" -o "$tmp/k.ptx"
	"$PTXAS" -O3 -arch=sm_90 -v "$tmp/k.ptx" -o /dev/null 2>&1 |
		grep -E "Compiling|registers|spill" | sed -e 's/ptxas info *: //'
	;;
--check)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	build "$tmp"
	stamp "$tmp" >"$tmp/kernels.ptx.stamp"
	if [ "$(head -n 1 kernels/kernels.ptx.stamp)" != "$(head -n 1 "$tmp/kernels.ptx.stamp")" ]; then
		echo "backend/cuda: the kernels are stale: the kernel sources changed since they were built; run backend/cuda/build_ptx.sh" >&2
		exit 1
	fi
	want=$(sed -n 2,4p kernels/kernels.ptx.stamp)
	have=$(sed -n 2,4p "$tmp/kernels.ptx.stamp")
	if [ "$want" != "$have" ]; then
		echo "backend/cuda: sources match the stamp; the kernels were built by '$want', this toolkit is '$have': outputs not compared" >&2
		exit 0
	fi
	for f in $(outputs); do
		if ! gzip -dc "kernels/$f.gz" | cmp -s - "$tmp/$f"; then
			echo "backend/cuda: kernels/$f.gz differs from what $NVCC builds from the sources; run backend/cuda/build_ptx.sh" >&2
			exit 1
		fi
	done
	echo "backend/cuda: the PTX and cubins are up to date"
	;;
--cubin90)
	out=${2:?usage: $0 --cubin90 DIR}
	mkdir -p "$out"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	gzip -dc kernels/kernels_sm90.ptx.gz >"$tmp/kernels_sm90.ptx"
	if [ "$(sha256sum <"$tmp/kernels_sm90.ptx" | cut -d' ' -f1) kernels_sm90.ptx" != "$(grep ' kernels_sm90.ptx$' kernels/kernels.ptx.stamp)" ]; then
		echo "backend/cuda: kernels_sm90.ptx.gz is not the PTX the stamp records" >&2
		exit 1
	fi
	"$PTXAS90" -O3 -arch=sm_90 "$tmp/kernels_sm90.ptx" -o "$tmp/kernels_sm90.cubin"
	gzip -9nc "$tmp/kernels_sm90.cubin" >"$out/kernels_sm90.cubin.gz"
	sum=$(sha256sum <"$tmp/kernels_sm90.cubin" | cut -d' ' -f1)
	ver=$("$PTXAS90" --version | tail -n 1)
	awk -v ver="$ver" -v line="$sum kernels_sm90.cubin" \
		'NR == 4 { print ver; next } / kernels_sm90.cubin$/ { print line; next } { print }' \
		kernels/kernels.ptx.stamp >"$out/kernels.ptx.stamp"
	echo "wrote $out/kernels_sm90.cubin.gz ($(wc -c <"$tmp/kernels_sm90.cubin") bytes) with $ver"
	;;
"")
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	build "$tmp"
	stamp "$tmp" >kernels/kernels.ptx.stamp
	for f in $(outputs); do
		gzip -9nc "$tmp/$f" >"kernels/$f.gz"
	done
	rm -f kernels/kernels.ptx kernels/kernels_sm90.ptx
	echo "wrote kernels/*.gz and the stamp: $(cat "$tmp"/*.ptx "$tmp"/*.cubin | wc -c) bytes, $(cat kernels/*.gz | wc -c) compressed; $(sed -n 2p kernels/kernels.ptx.stamp)"
	;;
*)
	echo "usage: $0 [--check|--report]" >&2
	exit 2
	;;
esac
