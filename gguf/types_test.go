package gguf_test

import (
	"testing"

	"inferno/gguf"
)

// TestTypeLayouts checks a few types' names and block layouts against
// ggml's type_traits (ggml.c), MXFP4 among them: 32 values in one E8M0
// byte and 16 bytes of 4-bit codes.
func TestTypeLayouts(t *testing.T) {
	for _, c := range []struct {
		typ          gguf.TensorType
		id           uint32
		name         string
		block, bytes int
	}{
		{gguf.TensorQ8_0, 8, "Q8_0", 32, 34},
		{gguf.TensorIQ4_NL, 20, "IQ4_NL", 32, 18},
		{gguf.TensorMXFP4, 39, "MXFP4", 32, 17},
	} {
		if uint32(c.typ) != c.id || c.typ.String() != c.name || !c.typ.Known() {
			t.Errorf("type %d: %q (known %v), want %d %q", uint32(c.typ), c.typ, c.typ.Known(), c.id, c.name)
		}
		if c.typ.BlockSize() != c.block || c.typ.BlockBytes() != c.bytes {
			t.Errorf("%s: %d values in %d bytes, want %d in %d", c.typ, c.typ.BlockSize(), c.typ.BlockBytes(), c.block, c.bytes)
		}
	}
	// gpt-oss's hidden size, 2880 = 90 blocks.
	if n, ok := gguf.TensorMXFP4.RowBytes(2880); !ok || n != 90*17 {
		t.Errorf("MXFP4.RowBytes(2880) = %d, %v; want 1530", n, ok)
	}
	if _, ok := gguf.TensorMXFP4.RowBytes(2880 + 16); ok {
		t.Error("MXFP4.RowBytes(2896) ok: not a whole number of blocks")
	}
}
