package simd

import "inferno/numfmt"

// The table formats IQ4_NL and MXFP4: blocks of 32 4-bit indices into 16
// int8 levels (numfmt.KValuesIQ4NL, numfmt.KValuesMXFP4) times the block's
// scale d: IQ4_NL's a float16 (18 bytes a block: d, then the indices),
// MXFP4's an E8M0 exponent (17 bytes: e, d = numfmt.E8M0Half(e), then the
// indices). Byte j of the indices holds value j (low nibble) and j+16
// (high). The two differ in nothing else, and share the Go decoder and the
// assembly kernels (tabMatVecAVX2, packTabAVX2), which take the levels and
// the kind of scale as arguments; their products are the legacy formats'
// (legacy.go, dot32) against Q8_0 activations.

// tabFormat is a table format's levels and scale.
type tabFormat struct {
	kv    [16]int8  // the levels, by index
	lanes [32]int8  // kv in both 128-bit lanes: tabMatVecAVX2's VPSHUFB table
	plus  [32]uint8 // kv plus 128 in both lanes: packTabAVX2's
	mx    int       // 1 for MXFP4's E8M0 scale, 0 for IQ4_NL's float16
}

func newTabFormat(kv [16]int8, mx int) *tabFormat {
	f := &tabFormat{kv: kv, mx: mx}
	for i := range f.lanes {
		f.lanes[i] = kv[i%16]
		f.plus[i] = uint8(kv[i%16]) + 128
	}
	return f
}

var (
	tabIQ4NL = newTabFormat(numfmt.KValuesIQ4NL, 0)
	tabMXFP4 = newTabFormat(numfmt.KValuesMXFP4, 1)
)

// decodeTab decodes the block b of the table format f into q and returns
// its scale.
func decodeTab(q *[32]int8, b []byte, f *tabFormat) (d, m float32) {
	if f.mx == 1 {
		b = b[:numfmt.BlockMXFP4Bytes]
		d = numfmt.E8M0Half(b[0])
	} else {
		b = b[:numfmt.BlockIQ4_NLBytes]
		d = half(b)
	}
	for j, v := range b[len(b)-16:] {
		q[j], q[j+16] = f.kv[v&0xf], f.kv[v>>4]
	}
	return d, 0
}
