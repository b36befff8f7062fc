//go:build arm64 && !purego

package simd

import "inferno/numfmt"

// The packers of the Q8_0-like tile for Q4_0, Q5_0, IQ4_NL and MXFP4
// (lpack_arm64.s): packQ8Go's bytes.

//go:noescape
func packQ4_0NEON(dst, w *byte, rb, nb int)

//go:noescape
func packQ5_0NEON(dst, w *byte, rb, nb int)

//go:noescape
func packIQ4NLNEON(dst, w *byte, rb, nb int, kv *[16]int8)

//go:noescape
func packMXFP4NEON(dst, w *byte, rb, nb int, kv *[16]int8)

// l32PackArgs checks the arguments of a packer of the Q8_0-like tile.
func l32PackArgs(dst, w []byte, rb, bb, nb int) {
	_, _ = dst[nb*packBlockBytes-1], w[7*rb+nb*bb-1]
}

func packQ4_0(dst, w []byte, rb, nb int) {
	l32PackArgs(dst, w, rb, numfmt.BlockQ4_0Bytes, nb)
	packQ4_0NEON(&dst[0], &w[0], rb, nb)
}

func packQ5_0(dst, w []byte, rb, nb int) {
	l32PackArgs(dst, w, rb, numfmt.BlockQ5_0Bytes, nb)
	packQ5_0NEON(&dst[0], &w[0], rb, nb)
}

func packIQ4NL(dst, w []byte, rb, nb int) {
	l32PackArgs(dst, w, rb, numfmt.BlockIQ4_NLBytes, nb)
	packIQ4NLNEON(&dst[0], &w[0], rb, nb, &tabIQ4NL.kv)
}

func packMXFP4(dst, w []byte, rb, nb int) {
	l32PackArgs(dst, w, rb, numfmt.BlockMXFP4Bytes, nb)
	packMXFP4NEON(&dst[0], &w[0], rb, nb, &tabMXFP4.kv)
}
