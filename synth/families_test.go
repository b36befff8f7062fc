package synth

// Synth reads its presets from the registry, which the model packages
// fill.
import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"inferno/arch"
	"inferno/backend/forward/forwardtest"
	"inferno/backend/scalar"
	"inferno/family"
	"inferno/kvcache"
	_ "inferno/model"
)

// presetConfig returns the configuration of the registered preset name.
func presetConfig(name string) *arch.Config {
	_, p, ok := family.LookupPreset(name)
	if !ok {
		panic("no preset " + name)
	}
	return &p.Config
}

// TestEveryPreset writes every preset of every registered family at a
// small width, reads it back with its family's reader, which must give
// the configuration synth wrote (the metadata synth writes is what the
// reader reads), and runs a few tokens through it on the scalar backend.
func TestEveryPreset(t *testing.T) {
	for _, name := range PresetNames() {
		t.Run(name, func(t *testing.T) {
			small := Shape{Layers: 3, Hidden: 64, FFN: 96, Heads: 4, KVHeads: 2, HeadDim: 32, Vocab: 300}
			if presetConfig(name).MoE.Enabled() {
				small.Experts, small.TopK, small.ExpertFFN = 4, 2, 64
			}
			opts := Options{Preset: name, Shape: small, Mixture: "Q8_0", Seed: 3}
			want, err := Resolve(opts)
			if err != nil {
				t.Fatal(err)
			}
			fam, _ := family.Lookup(want.Config.Arch)
			f, _ := write(t, opts)
			m, err := arch.LoadModel(f, fam.Config)
			if err != nil {
				t.Fatal(err)
			}
			if got, w := summary(m.Hyper()), summary(&want.Config); got != w {
				t.Errorf("read back\n%s\nwant\n%s", got, w)
			}
			r := forwardtest.Single(t, m, scalar.NewScalar(), 64, kvcache.F32)
			defer r.Close()
			if err := r.Forward([]int32{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
				t.Fatal(err)
			}
			l, _ := r.Logits()
			for _, x := range l {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("logit %v", x)
				}
			}
		})
	}
}

// summary prints the parts of c a file states, one per line, with RoPE
// frequency factors as the per-pair frequencies they give.
func summary(c *arch.Config) string {
	d := *c
	d.Rope.FreqFactors, d.LocalRope.FreqFactors = nil, nil
	freqs := c.Rope.Freqs(c.HeadDim)
	if c.Rope.Scaling == arch.ScaleLlama3 {
		// Llama 3's parameters are written as the factors they give.
		d.Rope.Factor, d.Rope.LowFreqFactor, d.Rope.HighFreqFactor, d.Rope.OrigContext = 0, 0, 0, 0
	}
	fs := make([]string, len(freqs))
	for i, f := range freqs {
		fs[i] = fmt.Sprintf("%.6g", f)
	}
	v := reflect.ValueOf(d)
	s := ""
	for i := range v.NumField() {
		s += fmt.Sprintf("%s: %v\n", v.Type().Field(i).Name, v.Field(i).Interface())
	}
	return s + fmt.Sprintf("freqs: %v\n", fs)
}
