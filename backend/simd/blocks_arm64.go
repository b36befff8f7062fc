//go:build arm64 && !purego

package simd

import (
	"runtime"

	"golang.org/x/sys/cpu"

	"inferno/backend"
)

// The block formats' kernels on arm64: NEON with the dot product
// instructions SDOT for the matrix-vector products (lmatvec_arm64.go,
// kquant_arm64.go), the packers (lpack_arm64.go, kpack_arm64.go) and the
// multi-token tiles (ktile_arm64.go), whose K tiles use the 8-bit matrix
// multiplications USMMLA where the CPU has them (I8MM). They give the bits
// of the Go references, as the amd64 kernels do, so the choice among them
// changes no result. The assembly is generated: see arm64gen.

// blockAccel reports whether the block formats' NEON kernels run: they
// need SDOT (FEAT_DotProd, ARMv8.2, optional there and present on every
// ARMv8.4 CPU: Apple M1 and later, Graviton 2 and later, Ampere Altra,
// Cortex-A76 and later). Every Apple silicon CPU has it, and macOS 11
// does not report it. Without it (Cortex-A53, A72: the Raspberry Pi 3 and
// 4) the Go versions run. Tests may clear it.
var blockAccel = cpu.ARM64.HasASIMD && (cpu.ARM64.HasASIMDDP || runtime.GOOS == "darwin")

// i8mm reports whether the K formats' multi-token tiles use USMMLA
// (FEAT_I8MM: Apple M2 and later, Graviton 3 and later, Cortex-A510/A710
// and later) rather than SDOT. Tests may clear it.
var i8mm = blockAccel && cpu.ARM64.HasI8MM

// blockAsm reports whether the block formats' assembly kernels run: the
// NEON kernels at all (accel, the one switch of every kernel) and SDOT.
func blockAsm() bool { return accel && blockAccel }

// tileName returns the multi-token kernel k uses on this CPU: "i8mm" or
// "sdot" for the K formats, "sdot" for the Q8_0-like ones (whose packed
// layout leaves SMMLA nothing to gain), "" for none.
func tileName(k *typeKernels) string {
	switch {
	case !blockAsm() || k.tile == tileNone:
		return ""
	case k.tile == tileK && i8mm:
		return "i8mm"
	}
	return "sdot"
}

// vnni is false: the AVX-512 kernels of amd64 (vnni_amd64.go) have no
// counterpart here.
const vnni = false

// matMulQ8VNNI is never called without VNNI kernels.
func (o *Ops) matMulQ8VNNI(y []float32, w *backend.Weight, a *Acts, r0, r1 int) {
	matMulQ8(y, w, a, r0, r1)
}

// packBlockBytes is the size of one block of a repacked tile of eight
// rows of a Q8_0-like format (packQ8Go): eight vectors of the rows'
// 4-byte groups k, then eight float32 scales.
const packBlockBytes = 8*32 + 8*4

// q8VNNI16x8, q8VNNI16x4 and kTileWide, amd64's 512-bit tiles, are never
// called: vnni is false, and tileName never says "vnni".
func q8VNNI16x8(y []float32, ldy int, pack []byte, qs []int8, qstride int, ds []float32, cx []int32, nb int, pf []byte, pfs int) {
	panic("simd: no VNNI kernels")
}

func q8VNNI16x4(y []float32, ldy int, pack []byte, qs []int8, qstride int, ds []float32, cx []int32, nb int, pf []byte, pfs int) {
	panic("simd: no VNNI kernels")
}

func kTileWide(y []float32, ldy int, f *kFormat, pack []byte, qs []int8, qstride int, ds []float32, bs []int16, nb int) {
	panic("simd: no wide tile kernels")
}
