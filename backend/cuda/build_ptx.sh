#!/bin/sh
# Compiles the CUDA kernels (kernels/*.cu) to the PTX that the Go package
# embeds, and records what it was built from in kernels/kernels.ptx.stamp:
# the SHA-256 of the sources and the nvcc version. Two PTX files:
#   kernels/kernels.ptx       compute_80: any GPU of compute capability 8.0+
#   kernels/kernels_sm90.ptx  compute_90: Hopper and newer; the same kernels
#                             with programmatic dependent launch
#                             (griddepcontrol) compiled in
# Run it after editing a kernel, on any machine with the CUDA toolkit
# (nvcc 11.8 or newer), and commit the .ptx and .stamp with the source.
#
#   ./build_ptx.sh            rebuild the PTX files and the stamp
#   ./build_ptx.sh --check    rebuild into a temporary folder and fail if the
#                             committed PTX or stamp differs (stale)
#   ./build_ptx.sh --report   compile for sm_90 and print ptxas' resource
#                             usage (registers, shared memory, spills)
#
# NVCC names the compiler (default: nvcc on PATH); NVCC_FLAGS adds flags
# (e.g. -allow-unsupported-compiler where the host gcc is newer than nvcc
# supports: only the preprocessor runs for -ptx, the output is the same).
#
# The driver compiles the PTX for the GPU at load. The kernels use what
# sm_80 brought (cp.async, int8 mma.sync, ld.global.nc with
# L1::no_allocate) and, on sm_90, griddepcontrol; no sm_90a-only
# instruction is needed by these memory-bound kernels.
set -eu
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
FLAGS="-std=c++17 -O3 ${NVCC_FLAGS:-}"
SRC=kernels/kernels.cu

# build DIR: writes DIR/kernels.ptx and DIR/kernels_sm90.ptx
build() {
	# shellcheck disable=SC2086
	"$NVCC" -ptx -arch=compute_80 $FLAGS "$SRC" -o "$1/kernels.ptx"
	# shellcheck disable=SC2086
	"$NVCC" -ptx -arch=compute_90 $FLAGS "$SRC" -o "$1/kernels_sm90.ptx"
}

stamp() {
	# sha256 of every kernel source, in name order, then the compiler version
	cat kernels/*.cu kernels/*.cuh 2>/dev/null | sha256sum | cut -d' ' -f1
	"$NVCC" --version | tail -n 1
}

case "${1:-}" in
--report)
	"$NVCC" -std=c++17 -O3 -cubin -arch=sm_90 -Xptxas -v ${NVCC_FLAGS:-} "$SRC" -o /dev/null 2>&1 |
		grep -E "Compiling|registers|spill" | sed -e 's/ptxas info *: //'
	;;
--check)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	build "$tmp"
	stamp >"$tmp/kernels.ptx.stamp"
	want=$(tail -n 1 kernels/kernels.ptx.stamp)
	have=$(tail -n 1 "$tmp/kernels.ptx.stamp")
	if [ "$(head -n 1 kernels/kernels.ptx.stamp)" != "$(head -n 1 "$tmp/kernels.ptx.stamp")" ]; then
		echo "backend/cuda: kernels.ptx is stale: the kernel sources changed since it was built; run backend/cuda/build_ptx.sh" >&2
		exit 1
	fi
	if [ "$want" != "$have" ]; then
		echo "backend/cuda: sources match the stamp; kernels.ptx was built by '$want', this nvcc is '$have': PTX not compared" >&2
		exit 0
	fi
	if ! cmp -s kernels/kernels.ptx "$tmp/kernels.ptx" || ! cmp -s kernels/kernels_sm90.ptx "$tmp/kernels_sm90.ptx"; then
		echo "backend/cuda: kernels.ptx differs from what $NVCC builds from the sources; run backend/cuda/build_ptx.sh" >&2
		exit 1
	fi
	echo "backend/cuda: kernels.ptx is up to date"
	;;
"")
	build kernels
	stamp >kernels/kernels.ptx.stamp
	echo "wrote kernels/kernels.ptx and kernels_sm90.ptx ($(cat kernels/*.ptx | wc -c) bytes) with $(tail -n 1 kernels/kernels.ptx.stamp)"
	;;
*)
	echo "usage: $0 [--check|--report]" >&2
	exit 2
	;;
esac
