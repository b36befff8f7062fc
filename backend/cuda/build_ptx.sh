#!/bin/sh
# Compiles the CUDA kernels (kernels/kernels.cu and the kernels/*.cuh it
# includes) into the images the Go package embeds, zstd-compressed, and
# records what they were built from in kernels/kernels.stamp:
#   kernels/compute90.ptx.zst  PTX for compute_90: Hopper and every newer
#                              GPU (the driver compiles it); programmatic
#                              dependent launch (griddepcontrol) and the
#                              cluster attention compiled in
#   kernels/sm80.cubin.zst     machine code for sm_80, which every GPU of
#                              compute capability 8.x runs (A100, RTX 30xx,
#                              A10, A40, RTX 40xx, L4, L40), assembled from
#                              the compute_80 PTX (built, not shipped)
#   kernels/sm90.cubin.zst     machine code for sm_90 (H100, H200), from
#                              compute90.ptx
# image.go says which GPU loads which. Run this after editing a kernel, on
# any machine with the CUDA toolkit (nvcc 11.8 or newer) and the zstd
# command, and commit the outputs and the stamp with the source.
#
#   ./build_ptx.sh            rebuild everything and the stamp
#   ./build_ptx.sh --check    rebuild into a temporary folder and fail if the
#                             committed images or stamp differ (stale)
#   ./build_ptx.sh --report   compile for sm_90 and print ptxas' resource
#                             usage (registers, shared memory, spills)
#   ./build_ptx.sh --cubin90 DIR
#                             reassemble only the sm_90 cubin from the
#                             committed compute90.ptx.zst with PTXAS90,
#                             writing DIR/sm90.cubin.gz and the updated
#                             DIR/kernels.stamp (devrun.sh's cubin90 stage,
#                             on the GPU machine, which has CUDA 13); gzip
#                             only carries it back from there
#   ./build_ptx.sh --import DIR
#                             check DIR's cubin (from --cubin90) against
#                             DIR's stamp and this tree's, then write it to
#                             kernels/sm90.cubin.zst and DIR's stamp to
#                             kernels/kernels.stamp
#
# NVCC names the compiler (default: nvcc on PATH), PTXAS the assembler
# (default: ptxas beside nvcc, else on PATH), PTXAS90 the assembler of the
# sm_90 cubin (default: PTXAS); NVCC_FLAGS adds flags (e.g.
# -allow-unsupported-compiler where the host gcc is newer than nvcc
# supports: only the preprocessor runs for -ptx, the output is the same).
# The images are compressed with the zstd command, and read with it or,
# where it is missing (the GPU machine may lack it), with the program UNZSTD
# names (default: unzstd on PATH), tools/unzstd built for that machine
# (CGO_ENABLED=0 go build -o bin/unzstd ./tools/unzstd).
#
# Compression: zstd -19 --long=27, chosen by the measurements of issue 34
# (2026-12-06, on the images of 0b348f6, a 2-core EPYC): the sm_90 cubin's
# 26.7 MB to 3.14 MB (gzip -9: 6.5), the PTX's 51.3 MB to 4.05 MB (gzip -9:
# 9.6), the three images to 9.95 MB, what a rebuild adds to the history;
# --ultra -22 saves 0.4% more at three to five times the time. xz -9e makes
# them 8.3 MB, but Go uncompresses it six times slower: the sm_90 cubin in
# 360 ms against zstd's 55 (gzip's 200), at every model load. The decoder
# is github.com/klauspost/compress/zstd (BenchmarkDecodeKernels).
#
# Which ptxas: the PTX is nvcc 11.8's (PTX ISA 7.8: drivers from R520 on
# compile it). The sm_80 cubin is assembled by the same 11.8 ptxas (it
# loads on the same drivers and later ones). The sm_90 cubin decodes faster
# when assembled by CUDA 13.0's ptxas, the compiler of the R580 driver's
# JIT: on the H200, 0.6B tg128 1,262 tok/s with 11.8's cubin against 1,283
# with the driver's JIT of the same PTX (2026-12-01). A driver older than
# that ptxas may refuse the cubin: the loader then falls back to the PTX.
#
# The stamp: the SHA-256 of the sources (every kernels/*.cu and *.cuh, in
# name order), the nvcc version, the ptxas versions (sm_80, then sm_90),
# then the SHA-256 of each image's uncompressed bytes (TestPTXStamp checks
# both on any machine).
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
STAMP=kernels/kernels.stamp

# build DIR: writes every image, uncompressed, into DIR (and the compute_80
# PTX the sm_80 cubin is assembled from, DIR/compute80.ptx)
build() {
	# shellcheck disable=SC2086
	"$NVCC" -ptx -arch=compute_80 $FLAGS "$SRC" -o "$1/compute80.ptx" &
	# shellcheck disable=SC2086
	"$NVCC" -ptx -arch=compute_90 $FLAGS "$SRC" -o "$1/compute90.ptx" &
	wait
	"$PTXAS" -O3 -arch=sm_80 "$1/compute80.ptx" -o "$1/sm80.cubin" &
	p80=$!
	"$PTXAS90" -O3 -arch=sm_90 "$1/compute90.ptx" -o "$1/sm90.cubin" &
	p90=$!
	wait "$p80"
	wait "$p90"
}

# outputs: the images' names (uncompressed), in stamp order
outputs() {
	echo compute90.ptx sm80.cubin sm90.cubin
}

# stamp DIR: the stamp of the sources and of the images in DIR
stamp() {
	# shellcheck disable=SC2046,SC2002,SC2012 # the sources, in name order
	cat $(ls kernels/*.cu kernels/*.cuh 2>/dev/null | LC_ALL=C sort) | sha256sum | cut -d' ' -f1
	"$NVCC" --version | tail -n 1
	"$PTXAS" --version | tail -n 1
	"$PTXAS90" --version | tail -n 1
	for f in $(outputs); do
		echo "$(sha256sum <"$1/$f" | cut -d' ' -f1) $f"
	done
}

# needzstd: fails unless the zstd command is here
needzstd() {
	command -v zstd >/dev/null || {
		echo "backend/cuda: the zstd command is needed to compress the kernels (apt-get install zstd)" >&2
		exit 1
	}
}

# pack FILE: compresses FILE to FILE.zst
pack() { zstd -q -f -T1 -19 --long=27 "$1" -o "$1.zst"; }

# needunzstd: fails unless the images can be read (zstd or UNZSTD)
needunzstd() {
	command -v zstd >/dev/null || command -v "${UNZSTD:-unzstd}" >/dev/null || {
		echo "backend/cuda: reading the kernels needs the zstd command or UNZSTD (see the top of build_ptx.sh)" >&2
		exit 1
	}
}

# unpack FILE.zst: writes the uncompressed bytes to standard output
unpack() {
	if command -v zstd >/dev/null; then
		zstd -dcq "$1"
	else
		"${UNZSTD:-unzstd}" "$1"
	fi
}

# sum FILE: the SHA-256 of FILE
sum() { sha256sum <"$1" | cut -d' ' -f1; }

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
	needunzstd
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	build "$tmp"
	stamp "$tmp" >"$tmp/kernels.stamp"
	if [ "$(head -n 1 "$STAMP")" != "$(head -n 1 "$tmp/kernels.stamp")" ]; then
		echo "backend/cuda: the kernels are stale: the kernel sources changed since they were built; run backend/cuda/build_ptx.sh" >&2
		exit 1
	fi
	want=$(sed -n 2,4p "$STAMP")
	have=$(sed -n 2,4p "$tmp/kernels.stamp")
	if [ "$want" != "$have" ]; then
		echo "backend/cuda: sources match the stamp; the kernels were built by '$want', this toolkit is '$have': images not compared" >&2
		exit 0
	fi
	for f in $(outputs); do
		if ! unpack "kernels/$f.zst" | cmp -s - "$tmp/$f"; then
			echo "backend/cuda: kernels/$f.zst differs from what $NVCC builds from the sources; run backend/cuda/build_ptx.sh" >&2
			exit 1
		fi
	done
	echo "backend/cuda: the PTX and cubins are up to date"
	;;
--cubin90)
	out=${2:?usage: $0 --cubin90 DIR}
	needunzstd
	mkdir -p "$out"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	unpack kernels/compute90.ptx.zst >"$tmp/compute90.ptx"
	if [ "$(sum "$tmp/compute90.ptx") compute90.ptx" != "$(grep ' compute90.ptx$' "$STAMP")" ]; then
		echo "backend/cuda: compute90.ptx.zst is not the PTX the stamp records" >&2
		exit 1
	fi
	"$PTXAS90" -O3 -arch=sm_90 "$tmp/compute90.ptx" -o "$tmp/sm90.cubin"
	gzip -9nc "$tmp/sm90.cubin" >"$out/sm90.cubin.gz"
	ver=$("$PTXAS90" --version | tail -n 1)
	awk -v ver="$ver" -v line="$(sum "$tmp/sm90.cubin") sm90.cubin" \
		'NR == 4 { print ver; next } / sm90\.cubin$/ { print line; next } { print }' \
		"$STAMP" >"$out/kernels.stamp"
	echo "wrote $out/sm90.cubin.gz ($(wc -c <"$tmp/sm90.cubin") bytes) with $ver; on the machine holding the tree: backend/cuda/build_ptx.sh --import DIR"
	;;
--import)
	in=${2:?usage: $0 --import DIR}
	needzstd
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	gzip -dc "$in/sm90.cubin.gz" >"$tmp/sm90.cubin"
	if [ "$(sum "$tmp/sm90.cubin") sm90.cubin" != "$(grep ' sm90\.cubin$' "$in/kernels.stamp")" ]; then
		echo "backend/cuda: $in/sm90.cubin.gz is not the cubin $in/kernels.stamp records" >&2
		exit 1
	fi
	# The same sources, tools and PTX as this tree's stamp: only the sm_90
	# ptxas and cubin may differ.
	if [ "$(sed -e 4d -e '/ sm90\.cubin$/d' "$in/kernels.stamp")" != "$(sed -e 4d -e '/ sm90\.cubin$/d' "$STAMP")" ]; then
		echo "backend/cuda: $in/kernels.stamp was made from other sources or PTX than $STAMP" >&2
		exit 1
	fi
	pack "$tmp/sm90.cubin"
	cp "$tmp/sm90.cubin.zst" kernels/sm90.cubin.zst
	cp "$in/kernels.stamp" "$STAMP"
	echo "wrote kernels/sm90.cubin.zst ($(wc -c <kernels/sm90.cubin.zst) bytes) and $STAMP: $(sed -n 4p "$STAMP")"
	;;
"")
	needzstd
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	build "$tmp"
	stamp "$tmp" >"$tmp/kernels.stamp"
	pids=""
	for f in $(outputs); do
		pack "$tmp/$f" &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p"; done
	raw=0 packed=0
	for f in $(outputs); do
		cp "$tmp/$f.zst" "kernels/$f.zst"
		raw=$((raw + $(wc -c <"$tmp/$f")))
		packed=$((packed + $(wc -c <"kernels/$f.zst")))
	done
	cp "$tmp/kernels.stamp" "$STAMP"
	echo "wrote kernels/*.zst and the stamp: $raw bytes, $packed compressed; $(sed -n 2p "$STAMP")"
	;;
*)
	echo "usage: $0 [--check|--report|--cubin90 DIR|--import DIR]" >&2
	exit 2
	;;
esac
