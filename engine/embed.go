package engine

import (
	"fmt"
	"math"
)

// Embedder is implemented by batch runners that return final hidden
// states: for the tokens a batch lists in Hidden (batch.Batch.AddHidden),
// the state after the output norm, where the head would take it. An
// embedding model's sequence (Request.Embed) runs its prompt with its
// last token so listed, and its embedding is that row L2-normalized
// (last-token pooling).
type Embedder interface {
	// Hidden returns hidden row i of the last Forward (the state of the
	// batch's token Hidden[i]); the slice is reused by the next Forward.
	Hidden(i int) ([]float32, error)
}

// Normalize returns v scaled to unit L2 norm, computed in float64, in a
// new slice. A zero vector (or one that is not finite) is an error.
func Normalize(v []float32) ([]float32, error) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if !(ss > 0) || math.IsInf(ss, 0) {
		return nil, fmt.Errorf("engine: cannot normalize a vector of squared norm %v", ss)
	}
	inv := 1 / math.Sqrt(ss)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out, nil
}
