// Package floatbits compares float32 slices bit for bit, as the tests of
// kernels and forward passes that promise identical results do (a NaN
// equals the same NaN, +0 differs from -0).
package floatbits

import (
	"fmt"
	"math"
)

// FirstDiff returns the first index at which a and b differ bitwise, or -1
// when they are identical; 0 when their lengths differ.
func FirstDiff(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// Check returns nil when got and want are identical bit for bit, else an
// error naming their first difference (or their lengths).
func Check(got, want []float32) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	if i := FirstDiff(got, want); i >= 0 {
		return fmt.Errorf("value %d is %v, want %v", i, got[i], want[i])
	}
	return nil
}
