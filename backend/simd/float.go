package simd

import (
	"encoding/binary"
	"math"

	"inferno/gguf"
	"inferno/numfmt"
)

// dotRowGo adds to acc the products of columns c0..len(x)-1 of the float
// weight row w (F32, F16 or BF16) with x, in order, and returns the sum.
func dotRowGo(acc float32, w []byte, typ gguf.TensorType, x []float32, c0 int) float32 {
	switch typ {
	case gguf.TensorF32:
		for c := c0; c < len(x); c++ {
			acc += float32(math.Float32frombits(binary.LittleEndian.Uint32(w[4*c:])) * x[c])
		}
	case gguf.TensorF16:
		for c := c0; c < len(x); c++ {
			acc += float32(numfmt.F16ToF32(binary.LittleEndian.Uint16(w[2*c:])) * x[c])
		}
	case gguf.TensorBF16:
		for c := c0; c < len(x); c++ {
			acc += float32(numfmt.BF16ToF32(binary.LittleEndian.Uint16(w[2*c:])) * x[c])
		}
	}
	return acc
}

// dot4Go computes y[r] = w_r . x for the four rows w[r*rb:], r < 4.
func dot4Go(y []float32, w []byte, rb int, typ gguf.TensorType, x []float32) {
	for r := range 4 {
		y[r] = dotRowGo(0, w[r*rb:], typ, x, 0)
	}
}
