// Package sampling chooses the next token from a position's logits.
package sampling

// Argmax returns the index of the largest value, the lowest index among
// ties. NaN values are never chosen unless all values are NaN.
func Argmax(logits []float32) int32 {
	best := 0
	for i, v := range logits {
		if v > logits[best] || logits[best] != logits[best] && v == v {
			best = i
		}
	}
	return int32(best)
}
