package scalar

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/gguf"
	"inferno/numfmt"
)

// TestMatMulMXFP4 checks the scalar product of MXFP4 weights: the backend
// takes the type, and MatMul gives the bits of MatMul over F32 weights
// holding the values the format defines for hand-built blocks: codes
// 0..15 in order, then 15..0, each the E2M1 value 0, 0.5, 1, 1.5, 2, 3,
// 4, 6, 0, -0.5, ... -6 times the block's scale 2^(e-127).
func TestMatMulMXFP4(t *testing.T) {
	s := NewScalar()
	if !s.Supports(gguf.TensorMXFP4) {
		t.Fatal("MXFP4 not supported")
	}
	blk := make([]byte, numfmt.BlockMXFP4Bytes)
	for j := range 16 {
		blk[1+j] = byte(j) | byte(15-j)<<4
	}
	e2m1 := []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6, 0, -0.5, -1, -1.5, -2, -3, -4, -6}
	vals := make([]float32, 32)
	for j := range 16 {
		vals[j], vals[16+j] = e2m1[j]/2, e2m1[15-j]/2
	}
	rng := rand.New(rand.NewPCG(39, 2))
	const rows, cols, n = 5, 64, 3
	mx := &backend.Weight{Name: "mx", Type: gguf.TensorMXFP4, Rows: rows, Cols: cols}
	f32 := &backend.Weight{Name: "f32", Type: gguf.TensorF32, Rows: rows, Cols: cols}
	for r := range rows {
		for b := range cols / 32 {
			blk[0] = byte(120 + r + b) // scale 2^(e-127) = 2^(r+b-7)
			mx.Data = append(mx.Data, blk...)
			for _, v := range vals {
				f32.Data = binary.LittleEndian.AppendUint32(f32.Data, math.Float32bits(v*float32(math.Ldexp(1, r+b-6))))
			}
		}
	}
	x := make([]float32, n*cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	got, want := make([]float32, n*rows), make([]float32, n*rows)
	s.MatMul(got, mx, x, n)
	s.MatMul(want, f32, x, n)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("output %d: MXFP4 %g, F32 %g", i, got[i], want[i])
		}
	}
}
