package arch_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/gguf"
)

// Phi-4-mini's LongRoPE as testdata/arch/phi4-mini.config.json has it: 24
// of a head's 32 values rotated (12 pairs), base 10000, trained for 256
// positions, max_position_embeddings 4096.
var (
	phiShort = []float32{1.0, 1.05, 1.1, 1.2, 1.35, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0}
	phiLong  = []float32{1.0, 1.2, 1.6, 2.4, 3.6, 5.5, 8.0, 12.0, 18.0, 26.0, 36.0, 48.0}
)

// phiLongRoPE is dense() with Phi-4-mini's partial RoPE and LongRoPE.
func phiLongRoPE() arch.Config {
	c := dense()
	c.ContextLength, c.RopeDims = 4096, 24
	c.Rope = arch.Rope{Theta: 10000, Scaling: arch.ScaleLongRoPE, OrigContext: 256,
		LongFactors: phiLong, ShortFactors: phiShort, AttnFactor: math.Sqrt(1 + math.Log(16)/math.Log(256))}
	return c
}

// TestLongRoPEFreqs checks the frequencies and the factor of cos and sin
// of LongRoPE against transformers' _compute_longrope_parameters, written
// out in float64 by Python for the configuration above: inv_freq = 1 /
// (ext_factors * base^(2i/dim)), the short factors for sequences within
// original_max_position_embeddings and the long ones beyond;
// attention_factor = sqrt(1 + ln(4096/256)/ln(256)).
func TestLongRoPEFreqs(t *testing.T) {
	short := []float64{1.0, 0.44205607939169317, 0.1958576990938076, 0.08333333333333333, 0.034382139508242815,
		0.01436289793354589, 0.005714285714285714, 0.0023207944168063886, 0.0008617738760127538,
		0.0003333333333333333, 0.00011603972084031942, 4.3088693800637694e-05}
	long := []float64{1.0, 0.38679906946773157, 0.13465216812699274, 0.041666666666666664, 0.012893302315591056,
		0.003917153981876151, 0.00125, 0.00038679906946773143, 0.00011969081611288247, 3.846153846153846e-05,
		1.2893302315591047e-05, 4.488405604233093e-06}
	const attention = 1.224744871391589
	c := phiLongRoPE()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		long bool
		want []float64
	}{{false, short}, {true, long}} {
		r := c.Rope
		r.Long = tc.long
		got := r.Freqs(c.RotaryDims())
		if len(got) != len(tc.want) {
			t.Fatalf("long %v: %d frequencies, want %d", tc.long, len(got), len(tc.want))
		}
		for i, f := range got {
			// The factors are float32, as a file holds them.
			if math.Abs(f-tc.want[i]) > 1e-7*tc.want[i] {
				t.Errorf("long %v: pair %d turns at %.17g, transformers %.17g", tc.long, i, f, tc.want[i])
			}
		}
		if m := r.Mscale(); math.Abs(m-attention) > 1e-15 {
			t.Errorf("long %v: mscale %.17g, want %.17g", tc.long, m, attention)
		}
		if p := r.PairFactors(); !slices.Equal(p, map[bool][]float32{false: phiShort, true: phiLong}[tc.long]) {
			t.Errorf("long %v: pair factors %v", tc.long, p)
		}
	}
	if f := c.Features(); f&arch.FeatRopeLongRoPE == 0 || !strings.Contains(f.String(), "LongRoPE scaling") {
		t.Errorf("features %v", f)
	}
}

// longRoPEModel is a Model of configuration c, without weights: what
// ForContext reads.
type longRoPEModel struct{ c arch.Config }

func (m *longRoPEModel) Hyper() *arch.Config    { return &m.c }
func (m *longRoPEModel) Plan() []arch.Step      { return nil }
func (m *longRoPEModel) Tensors() *arch.Weights { return nil }

// TestForContext checks llama.cpp's rule: a run of a context above the
// original length takes the long factors, one of at most that length the
// short ones; the model's own configuration is left as read, and a model
// without LongRoPE is not wrapped.
func TestForContext(t *testing.T) {
	m := &longRoPEModel{c: phiLongRoPE()}
	m.c.LocalRope = m.c.Rope
	for _, tc := range []struct {
		n    int
		long bool
	}{{1, false}, {256, false}, {257, true}, {4096, true}} {
		run := arch.ForContext(m, tc.n)
		c := run.Hyper()
		if c.Rope.Long != tc.long || c.LocalRope.Long != tc.long {
			t.Errorf("context %d: long factors %v (local layers %v), want %v", tc.n, c.Rope.Long, c.LocalRope.Long, tc.long)
		}
		if again := arch.ForContext(run, 100).Hyper(); again.Rope.Long {
			t.Errorf("context %d, then 100: the long factors", tc.n)
		}
		want := phiShort
		if tc.long {
			want = phiLong
		}
		if got := c.Rope.PairFactors(); !slices.Equal(got, want) {
			t.Errorf("context %d: factors %v, want %v", tc.n, got, want)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("context %d: %v", tc.n, err)
		}
	}
	if m.c.Rope.Long || m.c.LocalRope.Long {
		t.Error("ForContext changed the model's own configuration")
	}
	plain := &longRoPEModel{c: dense()}
	if run := arch.ForContext(plain, 1<<20); run != arch.Model(plain) {
		t.Error("a model without LongRoPE was wrapped")
	}
}

// TestReadLongRoPE reads LongRoPE as llama.cpp's Phi-3 converter writes it
// (the factor tensors, rope.scaling.attn_factor and the original context,
// no rope.scaling.type), as its other converters do (type "longrope"),
// and refuses what does not fit.
func TestReadLongRoPE(t *testing.T) {
	c := phiLongRoPE()
	base := map[string]any{".rope.dimension_count": uint32(24), "tensor:rope_factors_long.weight": phiLong,
		"tensor:rope_factors_short.weight": phiShort}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	attn := float32(c.Rope.AttnFactor)
	for name, tc := range map[string]struct {
		extra      map[string]any
		orig       int
		attnFactor float64
	}{
		"phi3":     {map[string]any{".rope.scaling.attn_factor": attn, ".rope.scaling.original_context_length": uint32(256)}, 256, float64(attn)},
		"typed":    {map[string]any{".rope.scaling.type": "longrope", ".rope.scaling.original_context_length": uint32(256)}, 256, 1},
		"defaults": {nil, 4096, 1},
	} {
		got, err := arch.ReadConfig(writeModel(t, &c, with(tc.extra)), "test")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r := got.Rope
		if r.Scaling != arch.ScaleLongRoPE || !slices.Equal(r.LongFactors, phiLong) || !slices.Equal(r.ShortFactors, phiShort) ||
			r.OrigContext != tc.orig || r.AttnFactor != tc.attnFactor || r.Long {
			t.Errorf("%s: rope %+v", name, r)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, tc := range map[string]struct {
		extra map[string]any
		want  string
	}{
		"one tensor": {map[string]any{"tensor:rope_factors_short.weight": nil},
			`test: LongRoPE needs both tensors "rope_factors_long.weight" and "rope_factors_short.weight"; the file has one`},
		"shape": {map[string]any{"tensor:rope_factors_long.weight": phiLong[:6]},
			`test: tensor "rope_factors_long.weight": shape [6], want [12]`},
		"and llama3": {map[string]any{"tensor:rope_freqs.weight": phiLong},
			`test: RoPE llama3 scaling and LongRoPE's factors ("rope_factors_long.weight", "rope_factors_short.weight")`},
		"and yarn": {map[string]any{".rope.scaling.type": "yarn", ".rope.scaling.factor": float32(4)},
			`test: RoPE yarn scaling and LongRoPE's factors`},
		"factor": {map[string]any{".rope.scaling.type": "longrope", ".rope.scaling.factor": float32(4)},
			`test: RoPE longrope scaling with a factor of 4 besides, which inferno does not run`},
		"attention factor": {map[string]any{".rope.scaling.attn_factor": float32(-1)},
			`test: test.rope.scaling.attn_factor = -1; want positive and finite`},
		"attention factor alone": {map[string]any{".rope.scaling.attn_factor": float32(2), "tensor:rope_factors_long.weight": nil,
			"tensor:rope_factors_short.weight": nil}, `test: test.rope.scaling.attn_factor = 2 without LongRoPE's factors`},
		"typed without factors": {map[string]any{".rope.scaling.type": "longrope", "tensor:rope_factors_long.weight": nil,
			"tensor:rope_factors_short.weight": nil}, `test: RoPE longrope scaling without its factors`},
		"original context": {map[string]any{".rope.scaling.original_context_length": "256"}, `test: gguf:`},
	} {
		extra := with(tc.extra)
		for k, v := range extra {
			if v == nil {
				delete(extra, k)
			}
		}
		_, err := arch.ReadConfig(writeModel(t, &c, extra), "test")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line containing %q", name, err, tc.want)
		}
	}
}

// TestValidateLongRoPE checks that Validate refuses LongRoPE parameters
// that do not fit, and LongRoPE's fields on another scaling.
func TestValidateLongRoPE(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(r *arch.Rope)
		want string
	}{
		"no long factors":  {func(r *arch.Rope) { r.LongFactors = nil }, "RoPE longrope scaling needs long and short factors"},
		"lengths":          {func(r *arch.Rope) { r.ShortFactors = phiShort[:6] }, "RoPE longrope scaling: 12 long factors and 6 short ones"},
		"rotated values":   {func(r *arch.Rope) { r.LongFactors, r.ShortFactors = phiLong[:6], phiShort[:6] }, "6 RoPE long factors for 24 rotated values of a head, want 12"},
		"zero factor":      {func(r *arch.Rope) { r.LongFactors = append([]float32{0}, phiLong[1:]...) }, "RoPE long factor 0 is 0"},
		"infinite factor":  {func(r *arch.Rope) { r.ShortFactors = append([]float32{float32(math.Inf(1))}, phiShort[1:]...) }, "RoPE short factor 0 is +Inf"},
		"original context": {func(r *arch.Rope) { r.OrigContext = 0 }, "needs an original context length, not 0"},
		"attention factor": {func(r *arch.Rope) { r.AttnFactor = 0 }, "RoPE longrope attention factor 0 must be positive"},
		"on yarn": {func(r *arch.Rope) { r.Scaling, r.Factor = arch.ScaleYaRN, 4 },
			"RoPE long and short factors, an attention factor or the choice of the long ones come with longrope scaling, not yarn"},
		"long alone": {func(r *arch.Rope) { *r = arch.Rope{Theta: 10000, Long: true} }, "come with longrope scaling, not none"},
	} {
		c := phiLongRoPE()
		tc.edit(&c.Rope)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}

// FuzzReadLongRoPE reads fuzzed files seeded with LongRoPE's: a clear
// error, or a configuration that validates or says why not, and runs at
// any context.
func FuzzReadLongRoPE(f *testing.F) {
	c := phiLongRoPE()
	f.Add(modelBytes(f, &c, map[string]any{".rope.dimension_count": uint32(24), "tensor:rope_factors_long.weight": phiLong,
		"tensor:rope_factors_short.weight": phiShort, ".rope.scaling.attn_factor": float32(1.2),
		".rope.scaling.original_context_length": uint32(256)}))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := gguf.Parse(data)
		if err != nil {
			return
		}
		got, err := arch.ReadConfig(file, "test")
		if err != nil || got.Validate() != nil {
			return
		}
		r := got.Rope
		for _, long := range []bool{false, true} {
			r.Long = long
			for i := range got.RotaryDims() / 2 {
				if fr := r.Freq(i, got.RotaryDims()); math.IsNaN(fr) {
					t.Fatalf("pair %d: NaN frequency", i)
				}
			}
		}
	})
}
