package synth

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/backend/forward/forwardtest"
	"inferno/backend/scalar"
	"inferno/family"
	"inferno/gguf"
	"inferno/kvcache"
	"inferno/model/qwen3"
	"inferno/tokenizer"
)

func write(t *testing.T, opts Options) (*gguf.File, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, opts); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f, buf.Bytes()
}

// TestTinyLoadsAndIsDeterministic writes the tiny preset in each type
// three times (two seeds): the same seed gives the same file, another seed
// another file, and the file loads with a byte-level vocabulary. With
// -short, the embedding has 1024 rows instead of the preset's 151,936.
func TestTinyLoadsAndIsDeterministic(t *testing.T) {
	var shape Shape
	if testing.Short() {
		shape.Vocab = 1024
	}
	for _, typ := range []gguf.TensorType{gguf.TensorQ8_0, gguf.TensorF16, gguf.TensorBF16, gguf.TensorF32} {
		f, b1 := write(t, Options{Preset: "tiny", Shape: shape, Type: typ, Seed: 3})
		_, b2 := write(t, Options{Preset: "tiny", Shape: shape, Type: typ, Seed: 3})
		_, b3 := write(t, Options{Preset: "tiny", Shape: shape, Type: typ, Seed: 4})
		if sha256.Sum256(b1) != sha256.Sum256(b2) {
			t.Errorf("%s: same seed gave different files", typ)
		}
		if sha256.Sum256(b1) == sha256.Sum256(b3) {
			t.Errorf("%s: different seeds gave the same file", typ)
		}
		m, err := qwen3.Load(f)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if m.Layers[0].Matrix(arch.RoleGate).Type != typ || m.Output != m.Embed {
			t.Errorf("%s: gate type %s, tied %v", typ, m.Layers[0].Matrix(arch.RoleGate).Type, m.Output == m.Embed)
		}
		// One token per embedding row, as llama.cpp's loader expects.
		tokens, err := f.Strings("tokenizer.ggml.tokens")
		if err != nil || len(tokens) != m.Config.Vocab {
			t.Errorf("%s: %d tokens for %d embedding rows (%v)", typ, len(tokens), m.Config.Vocab, err)
		}
		tok, err := tokenizer.FromGGUF(f)
		if err != nil {
			t.Fatal(err)
		}
		if ids := tok.Encode("hi<|im_end|>"); len(ids) != 3 || tok.Decode(ids) != "hi<|im_end|>" {
			t.Errorf("byte vocabulary: Encode = %v", ids)
		}
	}
}

func TestVocabFrom(t *testing.T) {
	src, err := gguf.Open("../testdata/golden/tiny-q8_0.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	f, _ := write(t, Options{Preset: "tiny", Type: gguf.TensorQ8_0, Seed: 1, Vocab: src})
	for _, key := range []string{"tokenizer.ggml.merges", "tokenizer.chat_template", "tokenizer.ggml.eos_token_id"} {
		if _, ok := f.Value(key); !ok {
			t.Errorf("%s not copied", key)
		}
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if ids := tok.Encode("Hello world"); len(ids) != 2 || ids[0] != 9707 {
		t.Errorf("Encode = %v, want [9707 1879]", ids)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Preset: "7b", Type: gguf.TensorQ8_0}, `unknown preset "7b"`},
		{Options{Preset: "tiny", Type: gguf.TensorQ8_K}, "unsupported weight type Q8_K"},
		{Options{Preset: "tiny", Mixture: "Q4_K_X"}, `unknown quantization type "Q4_K_X"`},
		{Options{Preset: "tiny", Shape: Shape{Heads: 6, KVHeads: 4}}, "6 query heads are not a multiple of 4 KV heads"},
		{Options{Preset: "tiny", Shape: Shape{HeadDim: 33}}, "head dimension 33 is odd"},
		{Options{Preset: "tiny", Shape: Shape{Layers: -1}}, "layers -1 is out of range"},
		{Options{Preset: "tiny", Shape: Shape{Vocab: 100}}, "vocabulary of 100 tokens is smaller than the 259"},
		// Rows of 64 hold no Q4_K block and pure has no fallback.
		{Options{Preset: "tiny", Mixture: "Q4_K_M", Pure: true}, "not a multiple of the Q4_K block size 256"},
		{Options{Preset: "tiny", Type: gguf.TensorQ4_K}, "not a multiple of the Q4_K block size 256"},
	} {
		err := Write(&bytes.Buffer{}, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// TestPresets checks the presets' shapes against Qwen3's config.json files.
func TestPresets(t *testing.T) {
	want := map[string][8]int{ // layers, hidden, ffn, heads, kv heads, head dim, untied, parameters (millions)
		"0.6b": {28, 1024, 3072, 16, 8, 128, 0, 596},
		"1.7b": {28, 2048, 6144, 16, 8, 128, 0, 1720},
		"4b":   {36, 2560, 9728, 32, 8, 128, 0, 4022},
		"8b":   {36, 4096, 12288, 32, 8, 128, 1, 8190},
		"14b":  {40, 5120, 17408, 40, 8, 128, 1, 14768},
		"32b":  {64, 5120, 25600, 64, 8, 128, 1, 32762},
	}
	for name, w := range want {
		p := presetConfig(name)
		untied := 0
		if !p.TiedOutput {
			untied = 1
		}
		got := [8]int{p.Layers, p.Hidden, p.FFN, p.Heads, p.KVHeads, p.HeadDim, untied, 0}
		for _, s := range specs(p) {
			got[7] += s.rows * s.cols
		}
		got[7] /= 1e6
		if got != w || p.Vocab != 151936 || p.ContextLength != 40960 {
			t.Errorf("%s: %v vocab %d context %d, want %v vocab 151936 context 40960", name, got, p.Vocab, p.ContextLength, w)
		}
	}
	for _, name := range PresetNames() {
		if _, _, ok := family.LookupPreset(name); !ok {
			t.Errorf("PresetNames lists %s, not a preset", name)
		}
	}
}

// TestMixtureTypes checks that a Q4_K_M model of the 8B and 1.7B shapes
// has llama.cpp's types: Q6_K for the output head (the token embedding
// when tied) and the attn_v and ffn_down layers use_more_bits picks, Q4_K
// elsewhere, F32 norms.
func TestMixtureTypes(t *testing.T) {
	for _, tc := range []struct {
		preset string
		embd   gguf.TensorType
		more   []int
	}{
		{"8b", gguf.TensorQ4_K, []int{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 31, 32, 33, 34, 35}},
		{"1.7b", gguf.TensorQ6_K, []int{0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 24, 25, 26, 27}},
	} {
		names, types, err := Types(Options{Preset: tc.preset, Mixture: "Q4_K_M"})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]gguf.TensorType{}
		for i, n := range names {
			got[n] = types[i]
		}
		check := func(name string, want gguf.TensorType) {
			if got[name] != want {
				t.Errorf("%s: %s is %s, want %s", tc.preset, name, got[name], want)
			}
		}
		check("token_embd.weight", tc.embd)
		if tc.preset == "8b" {
			check("output.weight", gguf.TensorQ6_K)
		} else if _, ok := got["output.weight"]; ok {
			t.Errorf("%s: output.weight in a tied model", tc.preset)
		}
		check("output_norm.weight", gguf.TensorF32)
		for i := range presetConfig(tc.preset).Layers {
			more := gguf.TensorQ4_K
			if slices.Contains(tc.more, i) {
				more = gguf.TensorQ6_K
			}
			b := fmt.Sprintf("blk.%d.", i)
			check(b+"attn_v.weight", more)
			check(b+"ffn_down.weight", more)
			for _, n := range []string{"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"} {
				check(b+n+".weight", gguf.TensorQ4_K)
			}
			check(b+"attn_norm.weight", gguf.TensorF32)
		}
	}
}

// TestShapes writes models of unusual shapes (head ratio 3, head dims 64
// and 256 with an untied head) in several types and checks that they load.
func TestShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		shape Shape
		typ   string
	}{
		{Shape{Heads: 6, KVHeads: 2}, "Q8_0"},
		{Shape{Heads: 6, KVHeads: 2, HeadDim: 64, Untied: true}, "F16"},
		{Shape{Hidden: 256, FFN: 512, Heads: 2, KVHeads: 1, HeadDim: 256, Untied: true, Layers: 3, Vocab: 1000}, "Q4_K_M"},
		{Shape{Hidden: 256, FFN: 256, Heads: 8, KVHeads: 1, HeadDim: 32, Layers: 2, Vocab: 512}, "IQ4_XS"},
	} {
		opts := Options{Preset: "tiny", Shape: tc.shape, Mixture: tc.typ, Seed: 2}
		f, _ := write(t, opts)
		r, err := Resolve(opts)
		if err != nil {
			t.Fatal(err)
		}
		p := &r.Config
		heads, _ := f.Int("qwen3.attention.head_count")
		kv, _ := f.Int("qwen3.attention.head_count_kv")
		hd, _ := f.Int("qwen3.attention.key_length")
		if int(heads) != p.Heads || int(kv) != p.KVHeads || int(hd) != p.HeadDim {
			t.Errorf("%+v: heads %d/%d of %d", tc.shape, heads, kv, hd)
		}
		out, ok := f.Tensor("output.weight")
		if ok != tc.shape.Untied {
			t.Errorf("%+v: output.weight present %v", tc.shape, ok)
		}
		q, _ := f.Tensor("blk.0.attn_q.weight")
		if q.Shape[1] != uint64(p.Heads*p.HeadDim) {
			t.Errorf("%+v: attn_q shape %v", tc.shape, q.Shape)
		}
		if ok && out.Shape[1] != uint64(p.Vocab) {
			t.Errorf("%+v: output shape %v", tc.shape, out.Shape)
		}
		if tc.typ == "Q8_0" || tc.typ == "F16" {
			if _, err := qwen3.Load(f); err != nil {
				t.Errorf("%+v: %v", tc.shape, err)
			}
		}
	}
}

// TestBank checks the bank mode: deterministic whatever the number of
// workers, seed-dependent, rows drawn from the bank, and a loadable model.
func TestBank(t *testing.T) {
	t.Parallel()
	opts := Options{Preset: "tiny", Shape: Shape{Vocab: 4096}, Mixture: "Q8_0", Seed: 3, Bank: 16, Workers: 1}
	f, b1 := write(t, opts)
	opts.Workers = 5
	_, b2 := write(t, opts)
	opts.Seed = 4
	_, b3 := write(t, opts)
	if !bytes.Equal(b1, b2) {
		t.Error("1 and 5 workers gave different files")
	}
	if bytes.Equal(b1, b3) {
		t.Error("different seeds gave the same file")
	}
	// token_embd has 4096 rows, from a bank of 16 distinct rows.
	e, _ := f.Tensor("token_embd.weight")
	rb := len(e.Data) / int(e.Shape[1])
	rows := map[string]int{}
	for r := range int(e.Shape[1]) {
		rows[string(e.Data[r*rb:(r+1)*rb])]++
	}
	if len(rows) != 16 {
		t.Errorf("token_embd has %d distinct rows, want 16", len(rows))
	}
	for _, n := range rows {
		if n < 4096/16/2 {
			t.Errorf("a bank row is used %d times of 4096", n)
		}
	}
	m, err := qwen3.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	r := forwardtest.Single(t, m, scalar.NewScalar(), 0, kvcache.F32)
	defer r.Close()
	if err := r.Forward([]int32{10, 20}); err != nil {
		t.Fatal(err)
	}
	// A mixture in bank mode has the same types as drawn directly.
	opts = Options{Preset: "tiny", Shape: Shape{Hidden: 256, FFN: 256}, Mixture: "Q4_K_M", Bank: 8}
	fb, _ := write(t, opts)
	opts.Bank = -1
	fd, _ := write(t, opts)
	for i, ti := range fb.Tensors {
		if ti.Type != fd.Tensors[i].Type || ti.Name != fd.Tensors[i].Name {
			t.Errorf("%s: %s in a bank, %s drawn directly", ti.Name, ti.Type, fd.Tensors[i].Type)
		}
	}
}

// TestLogitSpread checks that the final norm's gain gives logits a spread
// of a few units, so the top token wins by a margin of order 1.
func TestLogitSpread(t *testing.T) {
	f, _ := write(t, Options{Preset: "tiny", Type: gguf.TensorQ8_0, Seed: 1})
	m, err := qwen3.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	r := forwardtest.Single(t, m, scalar.NewScalar(), 0, kvcache.F32)
	defer r.Close()
	if err := r.Forward([]int32{10, 20, 30, 40}); err != nil {
		t.Fatal(err)
	}
	logits, _ := r.Logits()
	var sum, sq float64
	for _, v := range logits {
		sum += float64(v)
		sq += float64(v) * float64(v)
	}
	n := float64(len(logits))
	std := math.Sqrt(sq/n - (sum/n)*(sum/n))
	t.Logf("logit standard deviation %.2f", std)
	if std < 2 || std > 10 {
		t.Errorf("logit standard deviation %.2f, want 2 to 10", std)
	}
}
