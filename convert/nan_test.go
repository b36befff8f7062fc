package convert

import (
	"encoding/binary"
	"math"
	"testing"

	"inferno/gguf"
	"inferno/numfmt"
)

// TestF16NaN checks F16 encoding of NaN against numpy's float32 to float16
// cast, which llama.cpp's converter uses: the payload's top 10 bits are
// kept without forcing the quiet bit, and a payload that would vanish
// becomes 1. Values are numpy 1.24's results.
func TestF16NaN(t *testing.T) {
	for _, tc := range []struct{ in, want uint32 }{
		{0x7f800001, 0x7c01}, // signalling NaN, payload below the kept bits
		{0x7fc00000, 0x7e00}, // the quiet NaN
		{0xffc00000, 0xfe00},
		{0x7f802000, 0x7c01}, // signalling NaN, payload 1 in the kept bits
		{0xff80a000, 0xfc05},
		{0x7fffffff, 0x7fff},
		{0x3f800000, 0x3c00}, // 1: not a NaN, left to numfmt.F32ToF16
		{0x7f800000, 0x7c00}, // +Inf
	} {
		v := []float32{math.Float32frombits(tc.in)}
		out, err := numfmt.QuantizeRow(nil, v, gguf.TensorF16)
		if err != nil {
			t.Fatal(err)
		}
		fixNaNs(out, v)
		if got := binary.LittleEndian.Uint16(out); uint32(got) != tc.want {
			t.Errorf("%#08x: %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
}
