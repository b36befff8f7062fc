package quantize

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"inferno/gguf"
)

// shape is a dense Qwen3 shape for the rules.
type shape struct {
	layers, hidden, ffn, heads, kvHeads, headDim, vocab int
	untied                                              bool
}

// Real Qwen3 shapes (config.json of Qwen3-1.7B, 4B, 8B, 14B, 32B).
var (
	qwen17b = shape{28, 2048, 6144, 16, 8, 128, 151936, false}
	qwen4b  = shape{36, 2560, 9728, 32, 8, 128, 151936, false}
	qwen8b  = shape{36, 4096, 12288, 32, 8, 128, 151936, true}
	qwen14b = shape{40, 5120, 17408, 40, 8, 128, 151936, true}
	qwen32b = shape{64, 5120, 25600, 64, 8, 128, 151936, true}
)

// tensors lists s's tensors in the order convert and synth write them.
func (s shape) tensors() []Tensor {
	u := func(d ...int) []uint64 {
		r := make([]uint64, len(d))
		for i, x := range d {
			r[i] = uint64(x)
		}
		return r
	}
	qd, kvd := s.heads*s.headDim, s.kvHeads*s.headDim
	ts := []Tensor{{"token_embd.weight", gguf.TensorF32, u(s.hidden, s.vocab)}}
	for i := range s.layers {
		b := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			Tensor{b + "attn_norm.weight", gguf.TensorF32, u(s.hidden)},
			Tensor{b + "attn_q.weight", gguf.TensorF32, u(s.hidden, qd)},
			Tensor{b + "attn_k.weight", gguf.TensorF32, u(s.hidden, kvd)},
			Tensor{b + "attn_v.weight", gguf.TensorF32, u(s.hidden, kvd)},
			Tensor{b + "attn_q_norm.weight", gguf.TensorF32, u(s.headDim)},
			Tensor{b + "attn_k_norm.weight", gguf.TensorF32, u(s.headDim)},
			Tensor{b + "attn_output.weight", gguf.TensorF32, u(qd, s.hidden)},
			Tensor{b + "ffn_norm.weight", gguf.TensorF32, u(s.hidden)},
			Tensor{b + "ffn_gate.weight", gguf.TensorF32, u(s.hidden, s.ffn)},
			Tensor{b + "ffn_up.weight", gguf.TensorF32, u(s.hidden, s.ffn)},
			Tensor{b + "ffn_down.weight", gguf.TensorF32, u(s.ffn, s.hidden)},
		)
	}
	ts = append(ts, Tensor{"output_norm.weight", gguf.TensorF32, u(s.hidden)})
	if s.untied {
		ts = append(ts, Tensor{"output.weight", gguf.TensorF32, u(s.hidden, s.vocab)})
	}
	return ts
}

// typesOf runs the rules on s and returns the types by tensor name.
func typesOf(t *testing.T, s shape, mixture string, pure bool) (map[string]gguf.TensorType, int) {
	t.Helper()
	m, err := ParseMixture(mixture)
	if err != nil {
		t.Fatal(err)
	}
	ts := s.tensors()
	p, err := Types(ts, Model{Layers: s.layers, Heads: s.heads, KVHeads: s.kvHeads}, m, pure)
	if err != nil {
		t.Fatalf("%s: %v", mixture, err)
	}
	got := map[string]gguf.TensorType{}
	for i, x := range ts {
		got[x.Name] = p.Types[i]
	}
	return got, p.Fallbacks
}

// Layers whose attn_v and ffn_down get more bits in Q4_K_M and Q5_K_M
// (use_more_bits(i, n): i < n/8, i >= 7n/8, or (i - n/8) % 3 == 2),
// worked out by hand from llama-quant.cpp for each layer count.
var moreBits = map[int][]int{
	16: {0, 1, 2, 4, 7, 10, 13, 14, 15},
	28: {0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 24, 25, 26, 27},
	36: {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 31, 32, 33, 34, 35},
	40: {0, 1, 2, 3, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 34, 35, 36, 37, 38, 39},
	64: {0, 1, 2, 3, 4, 5, 6, 7, 10, 13, 16, 19, 22, 25, 28, 31, 34, 37, 40, 43, 46, 49, 52, 55, 56, 57, 58, 59, 60, 61, 62, 63},
}

func in(layers []int, i int) bool {
	for _, l := range layers {
		if l == i {
			return true
		}
	}
	return false
}

// rule is the expected type of a tensor kind in every layer (or, for
// token_embd and output, the tensor).
type rule func(layer int) gguf.TensorType

func always(t gguf.TensorType) rule { return func(int) gguf.TensorType { return t } }

// inLayers gives hi in the layers listed and lo elsewhere.
func inLayers(layers []int, hi, lo gguf.TensorType) rule {
	return func(i int) gguf.TensorType {
		if in(layers, i) {
			return hi
		}
		return lo
	}
}

// below gives hi in layers below n and lo from n on.
func below(n int, hi, lo gguf.TensorType) rule {
	return func(i int) gguf.TensorType {
		if i < n {
			return hi
		}
		return lo
	}
}

const (
	f16   = gguf.TensorF16
	bf16  = gguf.TensorBF16
	f32   = gguf.TensorF32
	q4_0  = gguf.TensorQ4_0
	q4_1  = gguf.TensorQ4_1
	q5_0  = gguf.TensorQ5_0
	q5_1  = gguf.TensorQ5_1
	q8_0  = gguf.TensorQ8_0
	q2_k  = gguf.TensorQ2_K
	q3_k  = gguf.TensorQ3_K
	q4_k  = gguf.TensorQ4_K
	q5_k  = gguf.TensorQ5_K
	q6_k  = gguf.TensorQ6_K
	iq4nl = gguf.TensorIQ4_NL
	iq4xs = gguf.TensorIQ4_XS
)

// TestRules checks the type of every tensor of real Qwen3 shapes under
// each mixture against the rules of llama-quant.cpp, worked out by hand:
// tied and untied heads, GQA ratios 2 to 8, 28 to 64 layers.
func TestRules(t *testing.T) {
	tests := []struct {
		name    string
		shape   shape
		mixture string
		// embd and output: token_embd.weight and output.weight (untied only).
		embd, output gguf.TensorType
		// q covers attn_q, attn_k, ffn_gate and ffn_up.
		q, v, o, down rule
	}{
		// Tied: the token embedding is the output head and gets Q6_K.
		{"1.7B", qwen17b, "Q4_K_M", q6_k, 0, always(q4_k), inLayers(moreBits[28], q6_k, q4_k), always(q4_k), inLayers(moreBits[28], q6_k, q4_k)},
		{"4B", qwen4b, "Q4_K_M", q6_k, 0, always(q4_k), inLayers(moreBits[36], q6_k, q4_k), always(q4_k), inLayers(moreBits[36], q6_k, q4_k)},
		// Untied: token_embd keeps the base type, output.weight gets Q6_K.
		{"8B", qwen8b, "Q4_K_M", q4_k, q6_k, always(q4_k), inLayers(moreBits[36], q6_k, q4_k), always(q4_k), inLayers(moreBits[36], q6_k, q4_k)},
		{"14B", qwen14b, "Q4_K_M", q4_k, q6_k, always(q4_k), inLayers(moreBits[40], q6_k, q4_k), always(q4_k), inLayers(moreBits[40], q6_k, q4_k)},
		{"32B", qwen32b, "Q4_K_M", q4_k, q6_k, always(q4_k), inLayers(moreBits[64], q6_k, q4_k), always(q4_k), inLayers(moreBits[64], q6_k, q4_k)},
		{"1.7B", qwen17b, "Q5_K_M", q6_k, 0, always(q5_k), inLayers(moreBits[28], q6_k, q5_k), always(q5_k), inLayers(moreBits[28], q6_k, q5_k)},
		{"32B", qwen32b, "Q5_K_M", q5_k, q6_k, always(q5_k), inLayers(moreBits[64], q6_k, q5_k), always(q5_k), inLayers(moreBits[64], q6_k, q5_k)},
		// Q4_K_S: the first 4 attn_v and the first eighth of ffn_down get Q5_K.
		{"1.7B", qwen17b, "Q4_K_S", q6_k, 0, always(q4_k), below(4, q5_k, q4_k), always(q4_k), below(3, q5_k, q4_k)},
		{"14B", qwen14b, "Q4_K_S", q4_k, q6_k, always(q4_k), below(4, q5_k, q4_k), always(q4_k), below(5, q5_k, q4_k)},
		{"32B", qwen32b, "Q4_K_S", q4_k, q6_k, always(q4_k), below(4, q5_k, q4_k), always(q4_k), below(8, q5_k, q4_k)},
		// Q3_K: S is plain; M raises the first 2 attn_v and the first
		// sixteenth of ffn_down to Q5_K, the rest of them and attn_output
		// to Q4_K; L raises them all to Q5_K.
		{"1.7B", qwen17b, "Q3_K_S", q6_k, 0, always(q3_k), always(q3_k), always(q3_k), always(q3_k)},
		{"1.7B", qwen17b, "Q3_K_M", q6_k, 0, always(q3_k), below(2, q5_k, q4_k), always(q4_k), below(1, q5_k, q4_k)},
		{"32B", qwen32b, "Q3_K_M", q3_k, q6_k, always(q3_k), below(2, q5_k, q4_k), always(q4_k), below(4, q5_k, q4_k)},
		{"8B", qwen8b, "Q3_K_L", q3_k, q6_k, always(q3_k), always(q5_k), always(q5_k), always(q5_k)},
		// Q2_K: attn_v Q3_K below GQA 4, Q4_K from 4; ffn_down and attn_output Q3_K.
		{"1.7B", qwen17b, "Q2_K", q6_k, 0, always(q2_k), always(q3_k), always(q3_k), always(q3_k)},
		{"4B", qwen4b, "Q2_K", q6_k, 0, always(q2_k), always(q4_k), always(q3_k), always(q3_k)},
		{"14B", qwen14b, "Q2_K", q2_k, q6_k, always(q2_k), always(q4_k), always(q3_k), always(q3_k)},
		{"32B", qwen32b, "Q5_K_S", q5_k, q6_k, always(q5_k), always(q5_k), always(q5_k), always(q5_k)},
		{"1.7B", qwen17b, "Q6_K", q6_k, 0, always(q6_k), always(q6_k), always(q6_k), always(q6_k)},
		{"8B", qwen8b, "Q6_K", q6_k, q6_k, always(q6_k), always(q6_k), always(q6_k), always(q6_k)},
		// The legacy types: only the head changes (Q6_K).
		{"1.7B", qwen17b, "Q4_0", q6_k, 0, always(q4_0), always(q4_0), always(q4_0), always(q4_0)},
		{"8B", qwen8b, "Q4_0", q4_0, q6_k, always(q4_0), always(q4_0), always(q4_0), always(q4_0)},
		{"14B", qwen14b, "Q4_1", q4_1, q6_k, always(q4_1), always(q4_1), always(q4_1), always(q4_1)},
		{"4B", qwen4b, "Q5_0", q6_k, 0, always(q5_0), always(q5_0), always(q5_0), always(q5_0)},
		{"32B", qwen32b, "Q5_1", q5_1, q6_k, always(q5_1), always(q5_1), always(q5_1), always(q5_1)},
		// Q8_0 stays Q8_0 everywhere, the head included.
		{"1.7B", qwen17b, "Q8_0", q8_0, 0, always(q8_0), always(q8_0), always(q8_0), always(q8_0)},
		{"32B", qwen32b, "Q8_0", q8_0, q8_0, always(q8_0), always(q8_0), always(q8_0), always(q8_0)},
		// IQ4: attn_v Q5_K from GQA 4; the first eighth of ffn_down Q5_K.
		{"1.7B", qwen17b, "IQ4_XS", q6_k, 0, always(iq4xs), always(iq4xs), always(iq4xs), below(3, q5_k, iq4xs)},
		{"14B", qwen14b, "IQ4_XS", iq4xs, q6_k, always(iq4xs), always(q5_k), always(iq4xs), below(5, q5_k, iq4xs)},
		{"32B", qwen32b, "IQ4_NL", iq4nl, q6_k, always(iq4nl), always(q5_k), always(iq4nl), below(8, q5_k, iq4nl)},
		// Float mixtures: no rules.
		{"1.7B", qwen17b, "F16", f16, 0, always(f16), always(f16), always(f16), always(f16)},
		{"8B", qwen8b, "BF16", bf16, bf16, always(bf16), always(bf16), always(bf16), always(bf16)},
		{"8B", qwen8b, "F32", f32, f32, always(f32), always(f32), always(f32), always(f32)},
	}
	for _, tc := range tests {
		got, fallbacks := typesOf(t, tc.shape, tc.mixture, false)
		name := tc.name + " " + tc.mixture
		check := func(tensor string, want gguf.TensorType) {
			t.Helper()
			if got[tensor] != want {
				t.Errorf("%s: %s is %s, want %s", name, tensor, got[tensor], want)
			}
		}
		if fallbacks != 0 {
			t.Errorf("%s: %d fallbacks", name, fallbacks)
		}
		check("token_embd.weight", tc.embd)
		if tc.shape.untied {
			check("output.weight", tc.output)
		}
		check("output_norm.weight", f32)
		for i := range tc.shape.layers {
			b := fmt.Sprintf("blk.%d.", i)
			for _, n := range []string{"attn_q", "attn_k", "ffn_gate", "ffn_up"} {
				check(b+n+".weight", tc.q(i))
			}
			check(b+"attn_v.weight", tc.v(i))
			check(b+"attn_output.weight", tc.o(i))
			check(b+"ffn_down.weight", tc.down(i))
			for _, n := range []string{"attn_norm", "attn_q_norm", "attn_k_norm", "ffn_norm"} {
				check(b+n+".weight", f32)
			}
		}
	}
}

// TestRulesOrder checks that the attn_v and ffn_down counters follow
// llama.cpp's loader order (by layer number, then name), not the order of
// the tensors in the file: shuffling them changes nothing, and blk.10
// comes after blk.9.
func TestRulesOrder(t *testing.T) {
	s := qwen8b
	want, _ := typesOf(t, s, "Q4_K_M", false)
	m, _ := ParseMixture("Q4_K_M")
	ts := s.tensors()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		rng.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
		p, err := Types(ts, Model{Layers: s.layers, Heads: s.heads, KVHeads: s.kvHeads}, m, false)
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range ts {
			if p.Types[i] != want[x.Name] {
				t.Fatalf("shuffled: %s is %s, want %s", x.Name, p.Types[i], want[x.Name])
			}
		}
	}
}

// TestFallback checks tensor_type_fallback: rows that do not hold whole
// blocks of the type the rules chose.
func TestFallback(t *testing.T) {
	// Rows of 160 (hidden) and 512 (ffn_down), tied; rows of 160 for attn_output.
	s := shape{layers: 4, hidden: 160, ffn: 512, heads: 5, kvHeads: 1, headDim: 32, vocab: 300}
	tests := []struct {
		mixture          string
		embd, q, v, down gguf.TensorType
	}{
		// The tied head: a row length the base type's block does not
		// divide gives Q8_0; Q4_0's head is Q6_K, which falls back to Q8_0.
		// Layer 1 gets no extra bits in a 4-layer model; GQA is 5.
		{"Q4_K_M", q8_0, q5_0, q5_0, q4_k},
		{"Q5_K_S", q8_0, q5_1, q5_1, q5_k},
		{"Q3_K_S", q8_0, q4_0, q4_0, q3_k},
		{"Q2_K", q8_0, q4_0, q5_0, q3_k},
		{"Q6_K", q8_0, q8_0, q8_0, q6_k},
		{"IQ4_XS", q8_0, iq4nl, q5_1, iq4xs},
		{"Q4_0", q8_0, q4_0, q4_0, q4_0},
	}
	for _, tc := range tests {
		got, fallbacks := typesOf(t, s, tc.mixture, false)
		if got["token_embd.weight"] != tc.embd || got["blk.1.attn_q.weight"] != tc.q ||
			got["blk.1.attn_v.weight"] != tc.v || got["blk.1.ffn_down.weight"] != tc.down {
			t.Errorf("%s: token_embd %s, attn_q %s, attn_v %s, ffn_down %s; want %s %s %s %s", tc.mixture,
				got["token_embd.weight"], got["blk.1.attn_q.weight"], got["blk.1.attn_v.weight"], got["blk.1.ffn_down.weight"],
				tc.embd, tc.q, tc.v, tc.down)
		}
		if fallbacks == 0 {
			t.Errorf("%s: no fallbacks counted", tc.mixture)
		}
	}
	// Q4_K_M's attn_v and ffn_down of the last layer (i >= 7n/8) would be
	// Q6_K: Q8_0 for rows of 160, Q6_K for rows of 512.
	if got, _ := typesOf(t, s, "Q4_K_M", false); got["blk.3.attn_v.weight"] != q8_0 || got["blk.3.ffn_down.weight"] != q6_k {
		t.Errorf("Q4_K_M blk.3: attn_v %s, ffn_down %s, want Q8_0 and Q6_K", got["blk.3.attn_v.weight"], got["blk.3.ffn_down.weight"])
	}

	// Rows of 80 (ffn_down, attn_output): not a multiple of 32.
	s = shape{layers: 2, hidden: 64, ffn: 80, heads: 2, kvHeads: 1, headDim: 40, vocab: 300}
	if got, _ := typesOf(t, s, "Q4_K_M", false); got["blk.0.ffn_down.weight"] != f16 || got["blk.0.attn_output.weight"] != f16 {
		t.Errorf("Q4_K_M rows of 80: ffn_down %s, attn_output %s, want F16 (llama.cpp's last resort)",
			got["blk.0.ffn_down.weight"], got["blk.0.attn_output.weight"])
	}
	for _, mix := range []string{"Q4_0", "Q8_0", "IQ4_NL"} {
		m, _ := ParseMixture(mix)
		_, err := Types(s.tensors(), Model{Layers: s.layers, Heads: s.heads, KVHeads: s.kvHeads}, m, false)
		if err == nil || !strings.Contains(err.Error(), "no fallback") || !strings.Contains(err.Error(), "attn_output") {
			t.Errorf("%s rows of 80: error %v, want no fallback for attn_output", mix, err)
		}
	}
	// Pure: no fallback at all.
	m, _ := ParseMixture("Q4_K_M")
	if _, err := Types(s.tensors(), Model{Layers: s.layers, Heads: s.heads, KVHeads: s.kvHeads}, m, true); err == nil {
		t.Error("pure Q4_K on rows of 64 accepted")
	}
}

// TestPure checks that --pure gives every weight matrix the base type.
func TestPure(t *testing.T) {
	got, _ := typesOf(t, qwen8b, "Q4_K_M", true)
	for name, typ := range got {
		want := q4_k
		if strings.HasSuffix(name, "_norm.weight") {
			want = f32
		}
		if typ != want {
			t.Errorf("pure Q4_K_M: %s is %s, want %s", name, typ, want)
		}
	}
}

func TestParseMixture(t *testing.T) {
	for name, want := range map[string]string{
		"Q4_K_M": "Q4_K_M", "q4_k_m": "Q4_K_M", "Q4_K": "Q4_K_M", "q5_k": "Q5_K_M", "Q3_K": "Q3_K_M",
		"iq4_xs": "IQ4_XS", "f16": "F16", "bf16": "BF16", "15": "Q4_K_M", "7": "Q8_0", "0": "F32", " Q6_K ": "Q6_K",
	} {
		m, err := ParseMixture(name)
		if err != nil || m.Name != want {
			t.Errorf("ParseMixture(%q) = %v, %v; want %s", name, m.Name, err, want)
		}
	}
	for _, name := range []string{"", "Q4", "Q4_K_X", "IQ2_XXS", "Q2_K_S", "q8_1", "99", "COPY"} {
		if _, err := ParseMixture(name); err == nil || !strings.Contains(err.Error(), "Q4_K_M") {
			t.Errorf("ParseMixture(%q): error %v, want one listing the mixtures", name, err)
		}
	}
	// The file types are llama.h's.
	for name, ft := range map[string]uint32{"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q8_0": 7, "Q5_0": 8, "Q5_1": 9,
		"Q2_K": 10, "Q3_K_S": 11, "Q3_K_M": 12, "Q3_K_L": 13, "Q4_K_S": 14, "Q4_K_M": 15, "Q5_K_S": 16, "Q5_K_M": 17,
		"Q6_K": 18, "IQ4_NL": 25, "IQ4_XS": 30, "BF16": 32, "MXFP4_MOE": 38} {
		if m, _ := ParseMixture(name); m.FileType != ft {
			t.Errorf("%s: file type %d, want %d", name, m.FileType, ft)
		}
	}
	if len(Mixtures()) != 20 {
		t.Errorf("%d mixtures, want 20", len(Mixtures()))
	}
}

// TestAllowsQuantization checks which tensors are never quantized.
func TestAllowsQuantization(t *testing.T) {
	for name, shape := range map[string][]uint64{
		"blk.0.attn_norm.weight":    {256},
		"blk.0.attn_q_norm.weight":  {128},
		"output_norm.weight":        {256},
		"blk.0.attn_q.weight":       {256, 1}, // one row: 1-D for ggml
		"blk.0.attn_q.bias":         {256, 256},
		"blk.0.ffn_gate_inp.weight": {256, 8},
	} {
		if allowsQuantization(Tensor{name, gguf.TensorF32, shape}) {
			t.Errorf("%s %v: quantized", name, shape)
		}
	}
	for name, shape := range map[string][]uint64{
		"blk.0.attn_q.weight": {256, 256},
		"token_embd.weight":   {256, 300},
		"output.weight":       {256, 300, 1},
	} {
		if !allowsQuantization(Tensor{name, gguf.TensorF32, shape}) {
			t.Errorf("%s %v: not quantized", name, shape)
		}
	}
}

// TestRules70B: llama-quantize gives attn_v more bits in the models
// llama.cpp types 70B (80 layers of llama with grouped-query attention, or
// of qwen2), and only there.
func TestRules70B(t *testing.T) {
	s := shape{80, 1024, 2048, 64, 8, 128, 1024, true} // a 70B's layers, narrow
	m, err := ParseMixture("Q4_K_M")
	if err != nil {
		t.Fatal(err)
	}
	attnV := func(model Model) map[gguf.TensorType]int {
		p, err := Types(s.tensors(), model, m, false)
		if err != nil {
			t.Fatal(err)
		}
		n := map[gguf.TensorType]int{}
		for i, tn := range s.tensors() {
			if strings.HasSuffix(tn.Name, "attn_v.weight") {
				n[p.Types[i]]++
			}
		}
		return n
	}
	// Q4_K_M: use_more_bits layers get Q6_K, the others Q4_K, which the
	// 70B rule raises to Q5_K.
	base := map[gguf.TensorType]int{gguf.TensorQ6_K: 40, gguf.TensorQ4_K: 40}
	bumped := map[gguf.TensorType]int{gguf.TensorQ6_K: 40, gguf.TensorQ5_K: 40}
	for _, tc := range []struct {
		model Model
		want  map[gguf.TensorType]int
	}{
		{Model{Layers: 80, Heads: 64, KVHeads: 8, Arch: "qwen3"}, base},
		{Model{Layers: 80, Heads: 64, KVHeads: 8, Arch: "llama"}, bumped},
		{Model{Layers: 80, Heads: 64, KVHeads: 64, Arch: "llama"}, base}, // 65B
		{Model{Layers: 80, Heads: 64, KVHeads: 8, Arch: "qwen2"}, bumped},
		{Model{Layers: 64, Heads: 64, KVHeads: 8, Arch: "qwen2"}, base},
	} {
		got := attnV(tc.model)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%+v: attn_v types %v, want %v", tc.model, got, tc.want)
		}
	}
}
