package placement

import (
	"testing"

	"inferno/arch"
	"inferno/internal/floatbits"
)

// TestLongRoPEContext: the context a backend is opened with chooses a
// LongRoPE model's factors (llama.cpp's rule): past the original context
// the long ones, within it the short ones. The golden model is given
// LongRoPE with an attention factor of 1, and each run is checked bitwise
// against the same weights with the chosen factors as Llama 3's per-pair
// frequency factors, which turn the pairs by the same angles.
func TestLongRoPEContext(t *testing.T) {
	m := openModel(t)
	c := m.Arch.Hyper()
	const orig = 32
	if c.ContextLength <= orig {
		t.Fatalf("the golden model's context %d is too short", c.ContextLength)
	}
	long, short := make([]float32, c.RotaryDims()/2), make([]float32, c.RotaryDims()/2)
	for i := range long {
		long[i], short[i] = 1+float32(i), 1+0.05*float32(i)
	}
	longRoPE := arch.Rope{Style: c.Rope.Style, Theta: c.Rope.Theta, Scaling: arch.ScaleLongRoPE, OrigContext: orig,
		AttnFactor: 1, LongFactors: long, ShortFactors: short}
	prompt := []int32{9707, 11, 1879, 0, 785, 3974, 13876}
	logits := func(r arch.Rope, ctx int) [][]float32 {
		c.Rope = r
		b := open(t, m, Config{Backend: "scalar", Context: ctx})
		run := single(t, b, false)
		defer run.Close()
		_, logs := decode(t, run, prompt, 4)
		return logs
	}
	asLlama3 := func(factors []float32) arch.Rope {
		return arch.Rope{Style: c.Rope.Style, Theta: c.Rope.Theta, Scaling: arch.ScaleLlama3, FreqFactors: factors}
	}
	wantLong, wantShort := logits(asLlama3(long), orig+1), logits(asLlama3(short), orig)
	if floatbits.FirstDiff(wantLong[0], wantShort[0]) < 0 {
		t.Fatal("the long and short factors give the same logits")
	}
	for _, tc := range []struct {
		ctx  int
		want [][]float32
	}{{orig, wantShort}, {orig + 1, wantLong}, {0, wantLong}} {
		got := logits(longRoPE, tc.ctx)
		for i := range got {
			if floatbits.FirstDiff(got[i], tc.want[i]) >= 0 {
				t.Errorf("context %d: step %d: logits differ from those of the factors the context chooses", tc.ctx, i)
				break
			}
		}
	}
	if m.Arch.Hyper().Rope.Long {
		t.Error("opening a backend changed the model's configuration")
	}
}
