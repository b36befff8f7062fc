package floatbits

import (
	"math"
	"testing"
)

func TestFirstDiff(t *testing.T) {
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct {
		a, b []float32
		want int
	}{
		{nil, nil, -1},
		{[]float32{1, 2, 3}, []float32{1, 2, 3}, -1},
		{[]float32{1, nan}, []float32{1, nan}, -1},
		{[]float32{1, 2, 3}, []float32{1, 2, 4}, 2},
		{[]float32{0}, []float32{negZero}, 0},
		{[]float32{1, 2}, []float32{1, 2, 3}, 0},
	} {
		if got := FirstDiff(c.a, c.b); got != c.want {
			t.Errorf("FirstDiff(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	if err := Check([]float32{1, 2}, []float32{1, 2}); err != nil {
		t.Error(err)
	}
	if err := Check([]float32{1, 2}, []float32{1, 3}); err == nil || err.Error() != "value 1 is 2, want 3" {
		t.Errorf("Check: %v", err)
	}
	if err := Check([]float32{1}, []float32{1, 3}); err == nil || err.Error() != "1 values, want 2" {
		t.Errorf("Check: %v", err)
	}
}
