package sampling

import (
	"math"
	"testing"
)

func TestArgmax(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	tests := []struct {
		logits []float32
		want   int32
	}{
		{[]float32{1}, 0},
		{[]float32{1, 3, 2}, 1},
		{[]float32{5, 5, 5}, 0},        // ties go to the lower id
		{[]float32{1, 7, 3, 7}, 1},     // ties go to the lower id
		{[]float32{nan, 1, 2}, 2},      // NaN is never chosen over a number
		{[]float32{1, nan, 2, nan}, 2}, // nor in the middle
		{[]float32{nan, nan}, 0},       // all NaN: the first
		{[]float32{-inf, -inf, -1}, 2},
		{[]float32{1, inf, inf}, 1},
	}
	for _, tc := range tests {
		if got := Argmax(tc.logits); got != tc.want {
			t.Errorf("Argmax(%v) = %d, want %d", tc.logits, got, tc.want)
		}
	}
}
