package qwen3_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"inferno/backend"
	"inferno/backend/forward"
	"inferno/backend/pool"
	"inferno/backend/scalar"
	"inferno/backend/simd"
	"inferno/gguf"
	"inferno/internal/floatbits"
	"inferno/kvcache"
	"inferno/model/qwen3"
	"inferno/numfmt"
)

// quantModel writes and loads a small random Qwen3 model (2 layers,
// hidden 256, FFN 512, 4 heads of 64, 2 KV heads, 512 tokens) whose
// matrices have type typ, except those mixed gives another type (a
// Q4_K_M-like file: the embedding, attn_v and ffn_down in Q6_K). Norms are
// F32. Every width is a multiple of 256, so that every block type fits.
func quantModel(t testing.TB, typ gguf.TensorType, mixed map[string]gguf.TensorType) *qwen3.Model {
	t.Helper()
	const (
		layers, hidden, ffn, heads, kv, hd, vocab = 2, 256, 512, 4, 2, 64, 512
	)
	w := gguf.NewWriter()
	for k, v := range map[string]any{
		"general.architecture":                   "qwen3",
		"qwen3.block_count":                      uint32(layers),
		"qwen3.embedding_length":                 uint32(hidden),
		"qwen3.feed_forward_length":              uint32(ffn),
		"qwen3.attention.head_count":             uint32(heads),
		"qwen3.attention.head_count_kv":          uint32(kv),
		"qwen3.attention.key_length":             uint32(hd),
		"qwen3.attention.value_length":           uint32(hd),
		"qwen3.context_length":                   uint32(4096),
		"qwen3.rope.freq_base":                   float32(1e6),
		"qwen3.attention.layer_norm_rms_epsilon": float32(1e-6),
	} {
		val, err := gguf.MakeValue(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Set(k, val); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(typ), 99))
	add := func(name string, tt gguf.TensorType, rows, cols int, scale, mean float64) {
		base := strings.TrimSuffix(name, ".weight")
		if m, ok := mixed[base[strings.LastIndexByte(base, '.')+1:]]; ok && rows > 1 {
			tt = m
		}
		vals := make([]float32, rows*cols)
		for i := range vals {
			vals[i] = float32(mean + scale*rng.NormFloat64())
		}
		f, _ := numfmt.FormatOf(tt)
		data := make([]byte, len(vals)/f.BlockSize*f.BlockBytes)
		f.Quantize(data, vals)
		shape := []uint64{uint64(cols)}
		if rows > 1 {
			shape = append(shape, uint64(rows))
		}
		if err := w.AddTensor(name, tt, shape, data); err != nil {
			t.Fatal(err)
		}
	}
	add("token_embd.weight", typ, vocab, hidden, 1, 0)
	add("output_norm.weight", gguf.TensorF32, 1, hidden, 0.1, 1)
	for l := range layers {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", gguf.TensorF32, 1, hidden, 0.1, 1)
		add(p+"attn_q.weight", typ, heads*hd, hidden, 0.06, 0)
		add(p+"attn_k.weight", typ, kv*hd, hidden, 0.06, 0)
		add(p+"attn_v.weight", typ, kv*hd, hidden, 0.06, 0)
		add(p+"attn_output.weight", typ, hidden, heads*hd, 0.06, 0)
		add(p+"attn_q_norm.weight", gguf.TensorF32, 1, hd, 0.1, 1)
		add(p+"attn_k_norm.weight", gguf.TensorF32, 1, hd, 0.1, 1)
		add(p+"ffn_norm.weight", gguf.TensorF32, 1, hidden, 0.1, 1)
		add(p+"ffn_gate.weight", typ, ffn, hidden, 0.06, 0)
		add(p+"ffn_up.weight", typ, ffn, hidden, 0.06, 0)
		add(p+"ffn_down.weight", typ, hidden, ffn, 0.04, 0)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m, err := qwen3.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	quantOnce sync.Once
	quantMs   map[string]*qwen3.Model
)

// quantModels are the models of the quantized tests, made once: one per
// block type, and a Q4_K_M-like mixture.
func quantModels(t testing.TB) map[string]*qwen3.Model {
	quantOnce.Do(func() { quantMs = makeQuantModels(t) })
	return quantMs
}

func makeQuantModels(t testing.TB) map[string]*qwen3.Model {
	ms := map[string]*qwen3.Model{}
	for _, typ := range []gguf.TensorType{
		gguf.TensorQ4_K, gguf.TensorQ6_K, gguf.TensorQ5_K, gguf.TensorQ3_K, gguf.TensorQ2_K, gguf.TensorIQ4_XS,
		gguf.TensorQ4_0, gguf.TensorQ5_0, gguf.TensorIQ4_NL, gguf.TensorQ4_1, gguf.TensorQ5_1,
	} {
		ms[typ.String()] = quantModel(t, typ, nil)
	}
	ms["Q4_K_M"] = quantModel(t, gguf.TensorQ4_K, map[string]gguf.TensorType{
		"token_embd": gguf.TensorQ6_K, "attn_v": gguf.TensorQ6_K, "ffn_down": gguf.TensorQ6_K,
	})
	return ms
}

// TestQuantTypesLogits runs every block type's model on every fast
// backend and checks the logits against the scalar backend's
// (dequantize, then float32), within the 8-bit activations' tolerance of
// the golden tests; and that the fast backends agree bit for bit whatever
// their thread count.
func TestQuantTypesLogits(t *testing.T) {
	prompt := []int32{1, 100, 7, 300, 42, 511, 0, 9, 256, 77, 13}
	for name, m := range quantModels(t) {
		want := logitsOf(t, m, scalar.NewScalar(), prompt, false)
		var first []float32
		for _, be := range sortedKeys(fastBackends()) {
			ops := fastBackends()[be]()
			got := logitsOf(t, m, ops, prompt, false)
			if c, ok := ops.(interface{ Close() }); ok {
				c.Close()
			}
			if e := relL2(got, want); e > 5e-2 {
				t.Errorf("%s on %s: relative L2 error %.3g against scalar > 5e-2", name, be, e)
			} else if be == "simd" {
				t.Logf("%s: relative L2 error %.3g against scalar", name, e)
			}
			if first == nil {
				first = got
			} else if err := floatbits.Check(first, got); err != nil {
				t.Errorf("%s on %s: differs from the other fast backends: %v", name, be, err)
			}
		}
	}
}

// TestQuantBatchedEqualsAlone is TestBatchedEqualsAlone for every block
// type: a sequence's logits in a batch are bitwise those it has alone.
func TestQuantBatchedEqualsAlone(t *testing.T) {
	for name, m := range quantModels(t) {
		for _, be := range []string{"simd", "pool-2"} {
			t.Run(name+"/"+be, func(t *testing.T) {
				ops := fastBackends()[be]()
				if c, ok := ops.(interface{ Close() }); ok {
					defer c.Close()
				}
				seqs := runBatched(t, m, ops, kvcache.F16, 16, 6, 6)
				for i, s := range seqs {
					checkAlone(t, i, newSingle(t, m, ops, 0, kvcache.F16), s)
				}
			})
		}
	}
}

// TestQuantDecodeAllocs: a decode step of a Q4_K_M-like model allocates
// nothing.
func TestQuantDecodeAllocs(t *testing.T) {
	m := quantModels(t)["Q4_K_M"]
	for _, be := range []string{"simd", "pool-2"} {
		ops := fastBackends()[be]()
		r := newSingle(t, m, ops, 0, kvcache.F16)
		if err := r.Forward([]int32{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		checkDecodeAllocs(t, be, r)
		if c, ok := ops.(interface{ Close() }); ok {
			c.Close()
		}
	}
}

// noQ6K is a backend that does not compute with Q6_K weights.
type noQ6K struct{ backend.Ops }

func (noQ6K) Supports(t gguf.TensorType) bool { return t != gguf.TensorQ6_K && simd.Supports(t) }

// TestUnsupportedWeight: a backend refuses a model with a weight type it
// does not support, in one line naming the tensor and the type.
func TestUnsupportedWeight(t *testing.T) {
	m := quantModels(t)["Q4_K_M"]
	_, err := forward.NewBatched(m, noQ6K{simd.New()}, 64, 4, 16, kvcache.F16)
	want := `tensor "token_embd.weight": type Q6_K is not supported by the simd backend`
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v, want one line containing %q", err, want)
	}
	if err := forward.Check(m, pool.New(1)); err != nil {
		t.Fatalf("pool: %v", err)
	}
	if err := forward.Check(m, scalar.NewScalar()); err != nil {
		t.Fatalf("scalar: %v", err)
	}
}
