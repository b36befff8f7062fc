package forward_test

import (
	"math"
	"slices"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/forward/forwardtest"
	"inferno/backend/pool"
	"inferno/backend/scalar"
	"inferno/backend/simd"
	"inferno/gguf"
	"inferno/internal/floatbits"
	"inferno/kvcache"
	"inferno/numfmt"
)

// mxfp4Models returns two copies of a mixture-of-experts model whose
// expert stacks hold the same values: MXFP4 blocks (numfmt's quantization
// of random weights) in mx, their dequantization as F32 in f32. The other
// weights are F32 and shared. It has one layer: the router's input is
// then the same in both (with more, the experts' rounding in one layer
// moves the next layer's router input, and a near tie between two
// experts may go the other way: not an error, and not what is tested).
func mxfp4Models(t *testing.T, seed uint64) (mx, f32 *model) {
	t.Helper()
	c := small()
	c.Layers = 1
	c.MoE = arch.MoE{Experts: 5, TopK: 2, ExpertFFN: 64, NormTopK: true}
	f32 = newModel(c, seed)
	mx = &model{c: c, plan: f32.plan, w: f32.w}
	mx.w.Layers = slices.Clone(f32.w.Layers)
	for i := range f32.w.Layers {
		for _, r := range []arch.Role{arch.RoleExpertGate, arch.RoleExpertUp, arch.RoleExpertDown} {
			w := f32.w.Layers[i].Matrix(r)
			vals := make([]float32, w.Rows*w.Cols)
			if err := numfmt.DequantizeRow(vals, w.Data, gguf.TensorF32, len(vals)); err != nil {
				t.Fatal(err)
			}
			q, err := numfmt.QuantizeRow(nil, vals, gguf.TensorMXFP4)
			if err != nil {
				t.Fatal(err)
			}
			if err := numfmt.DequantizeRow(vals, q, gguf.TensorMXFP4, len(vals)); err != nil {
				t.Fatal(err)
			}
			deq, _ := numfmt.QuantizeRow(nil, vals, gguf.TensorF32)
			mx.w.Layers[i].SetMatrix(r, &arch.Weight{Name: w.Name, Type: gguf.TensorMXFP4, Rows: w.Rows, Cols: w.Cols, Data: q})
			f32.w.Layers[i].SetMatrix(r, &arch.Weight{Name: w.Name, Type: gguf.TensorF32, Rows: w.Rows, Cols: w.Cols, Data: deq})
		}
	}
	return mx, f32
}

// TestMoEMXFP4 runs a mixture of experts with MXFP4 expert stacks on
// every CPU backend, token by token and as one prompt, against the same
// model with F32 stacks holding the dequantized values: the scalar
// backend, which multiplies dequantized rows, gives the F32 model's bits;
// simd and pool, whose expert products take 8-bit activations, stay
// within 3e-2 of the float64 reference (relative L2; 1.5e-2 measured, as
// IQ4_NL gives) with its argmax at every position.
func TestMoEMXFP4(t *testing.T) {
	mx, f32 := mxfp4Models(t, 39)
	tokens := []int32{3, 17, 39, 0, 22, 22, 5, 11, 9, 30, 2, 38, 14, 1, 27, 8}
	want := reference(f32, tokens)
	argmax := func(v []float32) int {
		best := 0
		for i, x := range v {
			if x > v[best] {
				best = i
			}
		}
		return best
	}
	argmax64 := func(v []float64) int {
		best := 0
		for i, x := range v {
			if x > v[best] {
				best = i
			}
		}
		return best
	}
	backends := map[string]func() backend.Ops{"scalar": func() backend.Ops { return scalar.NewScalar() },
		"simd": func() backend.Ops { return simd.New() }, "pool": func() backend.Ops { return pool.New(2) }}
	for be, ops := range backends {
		t.Run(be, func(t *testing.T) {
			rm := forwardtest.Single(t, mx, ops(), 0, kvcache.F32)
			defer rm.Close()
			rf := forwardtest.Single(t, f32, ops(), 0, kvcache.F32)
			defer rf.Close()
			worst := 0.0
			for pos, tok := range tokens {
				if err := rm.Forward([]int32{tok}); err != nil {
					t.Fatal(err)
				}
				if err := rf.Forward([]int32{tok}); err != nil {
					t.Fatal(err)
				}
				lm, _ := rm.Logits()
				lf, _ := rf.Logits()
				if be == "scalar" {
					if i := floatbits.FirstDiff(lm, lf); i >= 0 {
						t.Fatalf("position %d: logit %d is %g with MXFP4 experts, %g with F32", pos, i, lm[i], lf[i])
					}
				}
				e := relErr(lm, want[pos])
				worst = max(worst, e)
				if e > 3e-2 || argmax(lm) != argmax64(want[pos]) {
					t.Errorf("position %d: relative error %.3g, argmax %d, reference %d", pos, e, argmax(lm), argmax64(want[pos]))
				}
			}
			// The whole prompt at once: the experts' products of several
			// tokens (tiles), the last position's logits.
			rp := forwardtest.Single(t, mx, ops(), 0, kvcache.F32)
			defer rp.Close()
			if err := rp.Forward(tokens); err != nil {
				t.Fatal(err)
			}
			lp, _ := rp.Logits()
			last := want[len(tokens)-1]
			if e := relErr(lp, last); e > 3e-2 || argmax(lp) != argmax64(last) {
				t.Errorf("prompt: relative error %.3g, argmax %d, reference %d", e, argmax(lp), argmax64(last))
			}
			t.Logf("worst relative error %.2g", worst)
			if math.IsNaN(worst) {
				t.Fatal("NaN logits")
			}
		})
	}
}
