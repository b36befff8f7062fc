package convert_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/backend/forward/forwardtest"
	"inferno/backend/scalar"
	"inferno/convert"
	"inferno/gguf"
	"inferno/internal/floatbits"
	"inferno/kvcache"
	"inferno/model"
	"inferno/model/qwen3"
	"inferno/numfmt"
)

// convertTo converts the checkpoint folder dir to a GGUF of type typ in a
// new temporary folder and returns its path.
func convertTo(t testing.TB, dir string, typ gguf.TensorType) string {
	t.Helper()
	return convertWith(t, dir, convert.Options{Type: typ})
}

// convertWith converts dir with opts to a new temporary file.
func convertWith(t testing.TB, dir string, opts convert.Options) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.gguf")
	if _, err := convert.Convert(context.Background(), dir, out, opts); err != nil {
		t.Fatal(err)
	}
	return out
}

// lastLogits runs the scalar backend over ids and returns the last
// position's logits.
func lastLogits(t testing.TB, m arch.Model, ids []int32) []float32 {
	t.Helper()
	r := forwardtest.Single(t, m, scalar.NewScalar(), 0, kvcache.F32)
	defer r.Close()
	if err := r.Forward(ids); err != nil {
		t.Fatal(err)
	}
	l, err := r.Logits()
	if err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), l...)
}

// TestGoldenRoundTrip rebuilds the golden model's checkpoint in
// Hugging Face form (weights dequantized to F32) and converts it back. The
// F32 file holds exactly the dequantized weights and gives the same logits
// as the golden Q8_0 model's weights dequantized in memory; the Q8_0 file
// holds exactly the golden file's bytes for every tensor, because
// requantizing a dequantized Q8_0 block with ggml's rounding gives the
// block back (the largest value is 127 times the scale, so the scale comes
// back exactly and every value rounds to its old integer).
func TestGoldenRoundTrip(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "Qwen3-tiny")
	goldenCheckpoint(t, convert.F32).write(t, dir)

	golden, err := gguf.Open(goldenModel)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { golden.Close() }) // after the parallel subtests
	goldenModel, err := qwen3.Load(golden)
	if err != nil {
		t.Fatal(err)
	}
	// The reference: the golden file with every tensor dequantized to F32,
	// rewritten in memory by package gguf.
	w := gguf.NewWriter()
	for _, kv := range golden.KVs {
		if err := w.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range golden.Tensors {
		vals := make([]float32, ti.Elements())
		if err := numfmt.DequantizeRow(vals, ti.Data, ti.Type, len(vals)); err != nil {
			t.Fatal(err)
		}
		data, _ := numfmt.QuantizeRow(nil, vals, gguf.TensorF32)
		if err := w.AddTensor(ti.Name, gguf.TensorF32, ti.Shape, data); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	ref, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	refModel, err := qwen3.Load(ref)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("f32", func(t *testing.T) {
		t.Parallel()
		m, err := model.Open(convertTo(t, dir, gguf.TensorF32))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if len(m.File.Tensors) != len(golden.Tensors) {
			t.Fatalf("%d tensors, want %d", len(m.File.Tensors), len(golden.Tensors))
		}
		for _, want := range ref.Tensors {
			got, ok := m.File.Tensor(want.Name)
			if !ok {
				t.Fatalf("tensor %s missing", want.Name)
			}
			if got.Type != gguf.TensorF32 || !reflect.DeepEqual(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
				t.Errorf("%s: %s %v differs from the dequantized golden tensor (%s %v)", want.Name, got.Type, got.Shape, want.Type, want.Shape)
			}
		}
		names, ids, hf := goldenPrompts(t)
		for _, name := range names {
			got := lastLogits(t, m.Arch, ids[name])
			if err := floatbits.Check(got, lastLogits(t, refModel, ids[name])); err != nil {
				t.Errorf("%s: converted F32 model vs dequantized golden model: %v", name, err)
			}
			if e := relL2(got, lastLogits(t, goldenModel, ids[name])); e > 1e-5 {
				t.Errorf("%s: converted F32 model differs from the golden Q8_0 model by relative L2 %.3g", name, e)
			}
			if e := relL2(got, hf[name]); e > 1e-4 {
				t.Errorf("%s: converted F32 model differs from the transformers reference by relative L2 %.3g", name, e)
			}
		}
	})

	t.Run("q8_0", func(t *testing.T) {
		t.Parallel()
		m, err := model.Open(convertTo(t, dir, gguf.TensorQ8_0))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if len(m.File.Tensors) != len(golden.Tensors) {
			t.Fatalf("%d tensors, want %d", len(m.File.Tensors), len(golden.Tensors))
		}
		for _, want := range golden.Tensors {
			got, ok := m.File.Tensor(want.Name)
			if !ok {
				t.Fatalf("tensor %s missing", want.Name)
			}
			if got.Type != want.Type || !reflect.DeepEqual(got.Shape, want.Shape) {
				t.Errorf("%s: %s %v, want %s %v", want.Name, got.Type, got.Shape, want.Type, want.Shape)
			} else if !bytes.Equal(got.Data, want.Data) {
				t.Errorf("%s: data differs from the golden file", want.Name)
			}
		}
		names, ids, _ := goldenPrompts(t)
		for _, name := range names[:2] {
			if err := floatbits.Check(lastLogits(t, m.Arch, ids[name]), lastLogits(t, goldenModel, ids[name])); err != nil {
				t.Errorf("%s: converted Q8_0 model vs golden: %v", name, err)
			}
		}
		if ft, _ := m.File.Int("general.file_type"); ft != 7 {
			t.Errorf("general.file_type = %d, want 7 (MOSTLY_Q8_0)", ft)
		}
	})
}

// TestTokenizerMetadata checks that the tokenizer metadata written for the
// real Qwen3 tokenizer files equals, key for key and in order, the
// tokenizer.* metadata llama.cpp's converter wrote into the golden file.
func TestTokenizerMetadata(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := goldenCheckpoint(t, convert.F32)
	c.tensors = nil
	c.write(t, dir)
	kvs, err := convert.Metadata(dir, convert.Options{Type: gguf.TensorQ8_0})
	if err != nil {
		t.Fatal(err)
	}
	golden, err := gguf.Open(goldenModel)
	if err != nil {
		t.Fatal(err)
	}
	defer golden.Close()
	var want, got []gguf.KV
	for _, kv := range golden.KVs {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			want = append(want, kv)
		}
	}
	for _, kv := range kvs {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			got = append(got, kv)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d tokenizer keys, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.Key != w.Key {
			t.Errorf("key %d is %s, want %s", i, g.Key, w.Key)
			continue
		}
		if g.Key == "tokenizer.ggml.token_type" {
			checkTokenTypes(t, g.Value, w.Value)
			continue
		}
		if g.Value.Type != w.Value.Type || !reflect.DeepEqual(g.Value.Any(), w.Value.Any()) {
			t.Errorf("%s differs from the golden file: %s", g.Key, describeDiff(g.Value.Any(), w.Value.Any()))
		}
	}
	// The other keys: those of the golden file that llama.cpp writes for
	// the model's settings, with the same values and types.
	have := map[string]gguf.Value{}
	for _, kv := range kvs {
		have[kv.Key] = kv.Value
	}
	for _, kv := range golden.KVs {
		if kv.Key == "general.name" || strings.HasPrefix(kv.Key, "tokenizer.") {
			continue
		}
		if v, ok := have[kv.Key]; !ok || v.Type != kv.Value.Type || !reflect.DeepEqual(v.Any(), kv.Value.Any()) {
			t.Errorf("%s = %v (%s), golden file has %v (%s)", kv.Key, v.Any(), v.Type, kv.Value.Any(), kv.Value.Type)
		}
	}
	for key, want := range map[string]any{
		"general.quantization_version": uint32(2),
		"general.type":                 "model",
		"general.name":                 filepath.Base(dir),
		"general.sampling.top_k":       int32(20),
		"general.sampling.top_p":       float32(0.95),
		"general.sampling.temp":        float32(0.6),
	} {
		if v, ok := have[key]; !ok || v.Any() != want {
			t.Errorf("%s = %v, want %v", key, v.Any(), want)
		}
	}
}

// checkTokenTypes compares the token types with the golden file's. They
// are equal but for one kind of token: added tokens that tokenizer.json
// does not mark special but that look like control tokens ("<|...|>",
// here <|fim_prefix|>, <|fim_middle|>, <|fim_suffix|>, <|fim_pad|>,
// <|repo_name|> and <|file_sep|>). llama.cpp's convert_hf_to_gguf.py (its
// get_vocab_base, with does_token_look_special) makes them control tokens
// (3), as the converter does; the golden file has them user-defined (4), as
// converters before does_token_look_special wrote them. llama.cpp's loader
// turns these six into control tokens anyway, and inferno treats both types
// alike.
func checkTokenTypes(t *testing.T, got, want gguf.Value) {
	t.Helper()
	g, _ := got.AsArray()
	w, _ := want.AsArray()
	gt, ok1 := g.Values.([]int32)
	wt, ok2 := w.Values.([]int32)
	if !ok1 || !ok2 || len(gt) != len(wt) {
		t.Fatalf("token types: %s, want %s", describeDiff(got.Any(), want.Any()), w.Elem)
	}
	var tj struct {
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
	}
	b, err := os.ReadFile(filepath.Join(tokenizerDir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &tj); err != nil {
		t.Fatal(err)
	}
	lookalike := map[int]bool{}
	for _, a := range tj.AddedTokens {
		if !a.Special && strings.HasPrefix(a.Content, "<|") && strings.HasSuffix(a.Content, "|>") {
			lookalike[a.ID] = true
		}
	}
	if len(lookalike) != 6 {
		t.Errorf("%d non-special <|...|> added tokens, want 6", len(lookalike))
	}
	for i := range gt {
		switch {
		case lookalike[i]:
			if gt[i] != 3 || wt[i] != 4 {
				t.Errorf("token %d: type %d, golden %d; want 3 and 4", i, gt[i], wt[i])
			}
		case gt[i] != wt[i]:
			t.Errorf("token %d: type %d, golden file has %d", i, gt[i], wt[i])
		}
	}
}

func describeDiff(got, want any) string {
	ga, ok1 := got.(gguf.Array)
	wa, ok2 := want.(gguf.Array)
	if !ok1 || !ok2 {
		return fmt.Sprintf("%.80v, want %.80v", got, want)
	}
	if ga.Elem != wa.Elem || ga.Len() != wa.Len() {
		return fmt.Sprintf("array of %d %s, want %d %s", ga.Len(), ga.Elem, wa.Len(), wa.Elem)
	}
	gv, wv := reflect.ValueOf(ga.Values), reflect.ValueOf(wa.Values)
	for i := range gv.Len() {
		if !reflect.DeepEqual(gv.Index(i).Interface(), wv.Index(i).Interface()) {
			return fmt.Sprintf("element %d is %q, want %q", i, gv.Index(i).Interface(), wv.Index(i).Interface())
		}
	}
	return "?"
}

// TestShards checks that a checkpoint split over two files with an index
// converts to the same bytes as the single-file checkpoint, whatever the
// number of goroutines converting: to Q8_0 and to BF16 (Q8_0 alone with
// -short).
func TestShards(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	one := filepath.Join(base, "a", "Qwen3-tiny") // same folder name: same general.name
	two := filepath.Join(base, "b", "Qwen3-tiny")
	c := goldenCheckpoint(t, convert.BF16)
	c.write(t, one)
	c.shards = 2
	c.write(t, two)
	if _, err := os.Stat(filepath.Join(two, "model-00002-of-00002.safetensors")); err != nil {
		t.Fatal(err)
	}
	types := []gguf.TensorType{gguf.TensorQ8_0, gguf.TensorBF16}
	if testing.Short() {
		types = types[:1]
	}
	for _, typ := range types {
		a, err := os.ReadFile(convertWith(t, one, convert.Options{Type: typ, Workers: 1}))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(convertWith(t, two, convert.Options{Type: typ, Workers: 3}))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: sharded checkpoint gives a different file (%d vs %d bytes)", typ, len(b), len(a))
		}
	}
}

// TestTiedAndUntied checks the output head: absent or tied in the
// checkpoint, no output.weight; a separate lm_head becomes output.weight,
// which the model then uses.
func TestTiedAndUntied(t *testing.T) {
	base := t.TempDir()
	c := smallCheckpoint(t)
	emb := c.tensor("model.embed_tokens.weight")
	head := decode(t, emb)
	for i := range head {
		head[i] = -2 * head[i]
	}
	ids := []int32{72, 101, 108, 108, 111, 256}

	tied := filepath.Join(base, "tied")
	c.write(t, tied)
	mt, err := model.Open(convertTo(t, tied, gguf.TensorF32))
	if err != nil {
		t.Fatal(err)
	}
	defer mt.Close()
	if _, ok := mt.File.Tensor("output.weight"); ok {
		t.Error("tied checkpoint: output.weight written")
	}
	tiedLogits := lastLogits(t, mt.Arch, ids)

	// tie_word_embeddings true with an lm_head that repeats the embedding
	// (as some checkpoints store it): still no output.weight.
	dup := filepath.Join(base, "dup")
	c.tensors = append(c.tensors, convert.Tensor{Name: "lm_head.weight", DType: convert.F32, Shape: emb.Shape, Data: emb.Data})
	c.write(t, dup)
	md, err := model.Open(convertTo(t, dup, gguf.TensorF32))
	if err != nil {
		t.Fatal(err)
	}
	defer md.Close()
	if _, ok := md.File.Tensor("output.weight"); ok {
		t.Error("tied checkpoint with lm_head: output.weight written")
	}

	untied := filepath.Join(base, "untied")
	c.remove("lm_head.weight")
	c.tensors = append(c.tensors, convert.Tensor{Name: "lm_head.weight", DType: convert.F32, Shape: emb.Shape, Data: encode(head, convert.F32)})
	c.config["tie_word_embeddings"] = false
	c.write(t, untied)
	for _, typ := range []gguf.TensorType{gguf.TensorF32, gguf.TensorQ8_0} {
		mu, err := model.Open(convertTo(t, untied, typ))
		if err != nil {
			t.Fatal(err)
		}
		out, ok := mu.File.Tensor("output.weight")
		if !ok {
			t.Fatalf("%s: untied checkpoint: no output.weight", typ)
		}
		want, _ := numfmt.QuantizeRow(nil, head, typ)
		if out.Type != typ || !reflect.DeepEqual(out.Shape, []uint64{uint64(emb.Shape[1]), uint64(emb.Shape[0])}) || !bytes.Equal(out.Data, want) {
			t.Errorf("%s: output.weight is %s %v, or its data is not lm_head's", typ, out.Type, out.Shape)
		}
		if w := mu.Arch.Tensors(); w.Output == w.Embed {
			t.Errorf("%s: the model does not use output.weight", typ)
		}
		if typ == gguf.TensorF32 {
			// The head is -2 times the embedding: so are the logits.
			got := lastLogits(t, mu.Arch, ids)
			for i := range got {
				if d := got[i] + 2*tiedLogits[i]; math.Abs(float64(d)) > 1e-4*(1+math.Abs(float64(got[i]))) {
					t.Fatalf("logit %d is %v, want -2 * %v", i, got[i], tiedLogits[i])
				}
			}
		}
		mu.Close()
	}
}

// TestSourceTypes converts BF16 and F16 checkpoints to every output type
// and checks each tensor's bytes against the encoding of the source values
// (norms always F32; F16 and BF16 kept bit for bit when the type does not
// change), and that the files load and run. With -short, each source goes
// to its own type and to one other, every output type once.
func TestSourceTypes(t *testing.T) {
	t.Parallel()
	_, ids, hf := goldenPrompts(t)
	short := map[convert.DType][]gguf.TensorType{
		convert.BF16: {gguf.TensorBF16, gguf.TensorF32},
		convert.F16:  {gguf.TensorF16, gguf.TensorQ8_0},
	}
	for _, src := range []convert.DType{convert.BF16, convert.F16} {
		c := goldenCheckpoint(t, src)
		dir := filepath.Join(t.TempDir(), "Qwen3-tiny-"+string(src))
		c.write(t, dir)
		for _, typ := range []gguf.TensorType{gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16, gguf.TensorQ8_0} {
			if testing.Short() && !slices.Contains(short[src], typ) {
				continue
			}
			t.Run(fmt.Sprintf("%s-to-%s", src, typ), func(t *testing.T) {
				t.Parallel()
				m, err := model.Open(convertTo(t, dir, typ))
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				for _, ti := range m.File.Tensors {
					st := c.tensor(hfName(t, ti.Name))
					wantType := typ
					if len(ti.Shape) == 1 {
						wantType = gguf.TensorF32
					}
					var want []byte
					if string(src) == wantType.String() {
						want = st.Data
					} else {
						want, _ = numfmt.QuantizeRow(nil, decode(t, st), wantType)
					}
					if ti.Type != wantType || !bytes.Equal(ti.Data, want) {
						t.Errorf("%s: %s, want %s with the source's values", ti.Name, ti.Type, wantType)
					}
				}
				got := lastLogits(t, m.Arch, ids["fox"])
				if e := relL2(got, hf["fox"]); e > 0.05 {
					t.Errorf("logits differ from the transformers reference by relative L2 %.3g", e)
				}
			})
		}
	}
}

// TestQ8_0FallbackF16 checks that a matrix whose rows are not a multiple of
// the Q8_0 block is written as F16, as llama.cpp does.
func TestQ8_0FallbackF16(t *testing.T) {
	c := smallCheckpoint(t)
	// intermediate_size 48: ffn_down's rows have 48 values.
	c.config["intermediate_size"] = 48
	var kept []convert.Tensor
	for _, ten := range c.tensors {
		if !strings.Contains(ten.Name, "mlp.") {
			kept = append(kept, ten)
		}
	}
	c.tensors = kept
	for i := range 2 {
		p := fmt.Sprintf("model.layers.%d.mlp.", i)
		for _, s := range []struct {
			name  string
			shape []int64
		}{{"gate_proj", []int64{48, 32}}, {"up_proj", []int64{48, 32}}, {"down_proj", []int64{32, 48}}} {
			c.tensors = append(c.tensors, convert.Tensor{Name: p + s.name + ".weight", DType: convert.F32, Shape: s.shape,
				Data: encode(make([]float32, s.shape[0]*s.shape[1]), convert.F32)})
		}
	}
	dir := t.TempDir()
	c.write(t, dir)
	f, err := gguf.Open(convertTo(t, dir, gguf.TensorQ8_0))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, want := range map[string]gguf.TensorType{
		"blk.0.ffn_gate.weight":    gguf.TensorQ8_0,
		"blk.0.ffn_down.weight":    gguf.TensorF16,
		"blk.1.attn_q.weight":      gguf.TensorQ8_0,
		"blk.1.attn_q_norm.weight": gguf.TensorF32,
	} {
		if ti, ok := f.Tensor(name); !ok || ti.Type != want {
			t.Errorf("%s: %v, want %s", name, ti, want)
		}
	}
}

// TestStreamingLayout checks the file against what package gguf's Writer
// makes from the same metadata and tensors: the streaming writer lays out
// the same bytes.
func TestStreamingLayout(t *testing.T) {
	dir := t.TempDir()
	smallCheckpoint(t).write(t, dir)
	for _, typ := range []gguf.TensorType{gguf.TensorF32, gguf.TensorQ8_0} {
		path := convertTo(t, dir, typ)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		w := gguf.NewWriter()
		for _, kv := range f.KVs {
			if err := w.Set(kv.Key, kv.Value); err != nil {
				t.Fatal(err)
			}
		}
		for _, ti := range f.Tensors {
			if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, ti.Data); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data) {
			t.Errorf("%s: converted file (%d bytes) differs from gguf.Writer's (%d bytes)", typ, len(data), buf.Len())
		}
		kvs, err := convert.Metadata(dir, convert.Options{Type: typ})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(kvs, f.KVs) {
			t.Errorf("%s: Metadata differs from the file's metadata", typ)
		}
	}
}

// TestProgressAndResult checks the progress callback and the result.
func TestProgressAndResult(t *testing.T) {
	dir := t.TempDir()
	smallCheckpoint(t).write(t, dir)
	out := filepath.Join(t.TempDir(), "new", "dir", "m.gguf")
	var calls int
	var last, total int64
	res, err := convert.Convert(context.Background(), dir, out, convert.Options{
		Type: gguf.TensorQ8_0,
		Progress: func(done, tot int64) {
			if done < last {
				t.Errorf("progress went back from %d to %d", last, done)
			}
			calls, last, total = calls+1, done, tot
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if calls < 2 || last != total || total != st.Size() || res.Bytes != st.Size() {
		t.Errorf("progress: %d calls, last %d of %d; result %d bytes; file %d bytes", calls, last, total, res.Bytes, st.Size())
	}
	if res.Tensors != 2*11+2 || !res.Tied || res.Type != gguf.TensorQ8_0 || res.Path != out {
		t.Errorf("result %+v", res)
	}
	wantParams := int64(320*32 + 2*(32+32*32+16*32*2+32*32+16*2+32+3*64*32) + 32)
	if res.Params != wantParams {
		t.Errorf("params %d, want %d", res.Params, wantParams)
	}
	if l := leftovers(t, filepath.Dir(out)); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
	// A cancelled conversion leaves nothing behind.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out2 := filepath.Join(filepath.Dir(out), "cancelled.gguf")
	if _, err := convert.Convert(ctx, dir, out2, convert.Options{}); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("cancelled conversion: err %v", err)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Error("cancelled conversion wrote its output")
	}
	if l := leftovers(t, filepath.Dir(out)); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// TestMemory checks that conversion streams: converting 57 MB of BF16
// weights to 114 MB of F32 allocates a small, fixed amount of memory (the
// metadata and a few chunk buffers), not memory that grows with the
// tensors.
func TestMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 57 MB checkpoint")
	}
	const hidden, ffn, heads, kvHeads, headDim, vocab = 1024, 8192, 8, 4, 128, 320
	c := smallCheckpoint(t)
	for k, v := range map[string]any{"hidden_size": hidden, "intermediate_size": ffn, "num_hidden_layers": 1,
		"num_attention_heads": heads, "num_key_value_heads": kvHeads, "head_dim": headDim} {
		c.config[k] = v
	}
	pattern := encode([]float32{0.5, -0.25, 0.125, 1, -1, 0.75, 0.01, -0.03}, convert.BF16)
	add := func(name string, shape ...int64) {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		data := bytes.Repeat(pattern, int(n)/8)
		c.tensors = append(c.tensors, convert.Tensor{Name: name, DType: convert.BF16, Shape: shape, Data: data})
	}
	c.tensors = nil
	add("model.embed_tokens.weight", vocab, hidden)
	p := "model.layers.0."
	for _, s := range []struct {
		name  string
		shape []int64
	}{
		{"input_layernorm", []int64{hidden}}, {"post_attention_layernorm", []int64{hidden}},
		{"self_attn.q_norm", []int64{headDim}}, {"self_attn.k_norm", []int64{headDim}},
		{"self_attn.q_proj", []int64{heads * headDim, hidden}}, {"self_attn.k_proj", []int64{kvHeads * headDim, hidden}},
		{"self_attn.v_proj", []int64{kvHeads * headDim, hidden}}, {"self_attn.o_proj", []int64{hidden, heads * headDim}},
		{"mlp.gate_proj", []int64{ffn, hidden}}, {"mlp.up_proj", []int64{ffn, hidden}}, {"mlp.down_proj", []int64{hidden, ffn}},
	} {
		add(p+s.name+".weight", s.shape...)
	}
	add("model.norm.weight", hidden)
	dir := t.TempDir()
	c.write(t, dir)
	c = nil
	out := filepath.Join(t.TempDir(), "m.gguf")

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := convert.Convert(context.Background(), dir, out, convert.Options{Type: gguf.TensorF32, Workers: 2})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%.1f MB of weights written with %.1f MB allocated", float64(res.Bytes)/1e6, float64(alloc)/1e6)
	if res.Bytes < 100e6 || alloc > 24e6 {
		t.Errorf("converting %d bytes allocated %d bytes, want at most 24 MB", res.Bytes, alloc)
	}
}
