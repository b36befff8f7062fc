package vulkan

import "testing"

// testIntDot is the products loadModel's models take unless a test asks
// (Options.IntDot): the device's default, but for TestModelsIntDot.
var testIntDot = IntDotAuto

// TestModelsIntDot runs the model tests (TestGoldenTiny, TestArchitectures,
// TestBatchedEqualsAlone) with the other products than the device's
// default: with the integer dot products (mul_mvq) where they are not
// the default (lavapipe), with mul_mv where they are (NVIDIA).
func TestModelsIntDot(t *testing.T) {
	d := intDotDevice(t)
	testIntDot = IntDotOn
	if useIntDot(&d.DeviceInfo, IntDotAuto) {
		testIntDot = IntDotOff
	}
	defer func() { testIntDot = IntDotAuto }()
	t.Logf("products: %v (0 the default, 1 integer dot products, 2 float)", testIntDot)
	t.Run("GoldenTiny", TestGoldenTiny)
	t.Run("Architectures", TestArchitectures)
	t.Run("BatchedEqualsAlone", TestBatchedEqualsAlone)
}
