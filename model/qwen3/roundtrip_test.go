package qwen3_test

import (
	"bytes"
	"inferno/kvcache"
	"path/filepath"
	"testing"

	"inferno/backend/scalar"
	"inferno/gguf"
	"inferno/model/qwen3"
	"inferno/numfmt"
)

// TestRewriteF32 rewrites the golden model through the GGUF writer with
// every tensor dequantized to F32, and checks that the rewritten file gives
// the same logits: the writer, the reader and the F32 path agree with the
// Q8_0 path.
func TestRewriteF32(t *testing.T) {
	t.Parallel()
	src, err := gguf.Open(filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w := gguf.NewWriter()
	for _, kv := range src.KVs {
		if kv.Key == "general.file_type" {
			continue
		}
		if err := w.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range src.Tensors {
		n := int(ti.Elements())
		vals := make([]float32, n)
		if err := numfmt.DequantizeRow(vals, ti.Data, ti.Type, n); err != nil {
			t.Fatalf("%s: %v", ti.Name, err)
		}
		data, err := numfmt.QuantizeRow(nil, vals, gguf.TensorF32)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(ti.Name, gguf.TensorF32, ti.Shape, data); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f32, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if tt, _ := f32.Tensor("blk.0.attn_q.weight"); tt.Type != gguf.TensorF32 {
		t.Fatalf("rewritten tensor has type %s", tt.Type)
	}
	mq, err := qwen3.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := qwen3.Load(f32)
	if err != nil {
		t.Fatal(err)
	}
	g := loadGolden(t)
	for _, name := range sortedKeys(g.Prompts) {
		ids := g.Prompts[name].IDs
		rq := newSingle(t, mq, scalar.NewScalar(), 0, kvcache.F32)
		rf := newSingle(t, mf, scalar.NewScalar(), 0, kvcache.F32)
		if err := rq.Forward(ids); err != nil {
			t.Fatal(err)
		}
		if err := rf.Forward(ids); err != nil {
			t.Fatal(err)
		}
		lq, _ := rq.Logits()
		lf, _ := rf.Logits()
		if e := relL2(lf, lq); e > 1e-5 {
			t.Errorf("%s: F32 rewrite differs from Q8_0 by relative L2 %.3g > 1e-5", name, e)
		}
	}
}
