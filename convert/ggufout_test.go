package convert

import (
	"bytes"
	"strings"
	"testing"

	"inferno/gguf"
)

// TestEncodeHeader checks the streaming layout against gguf.Writer: the
// header, followed by each tensor's data padded to the alignment, must be
// byte for byte the file gguf.Writer writes, for every kind of metadata
// value.
func TestEncodeHeader(t *testing.T) {
	kvs := []kv{
		{"general.architecture", "qwen3"},
		{"u8", uint8(3)}, {"i8", int8(-3)}, {"u16", uint16(7)}, {"i16", int16(-2)},
		{"u32", uint32(7)}, {"i32", int32(-7)}, {"f32", float32(0.5)}, {"b", true}, {"nb", false},
		{"u64", uint64(1) << 40}, {"i64", int64(-1) << 40}, {"f64", -1.25},
		{"strs", []string{"a", "bc", ""}}, {"i32s", []int32{1, -1}}, {"bools", []bool{true, false}},
		{"u8s", []uint8{1, 2}}, {"i8s", []int8{-1}}, {"u16s", []uint16{9}}, {"i16s", []int16{-9}},
		{"u32s", []uint32{5}}, {"f32s", []float32{1.5}}, {"u64s", []uint64{6}}, {"i64s", []int64{-6}},
		{"f64s", []float64{2.5}},
		{"nested", []gguf.Array{{Elem: gguf.TypeUint16, Values: []uint16{1, 2}}, {Elem: gguf.TypeString, Values: []string{"x"}}}},
	}
	tensors := []outTensor{
		{name: "w.f32", typ: gguf.TensorF32, shape: []uint64{3, 1}, size: 12},
		{name: "w.q8", typ: gguf.TensorQ8_0, shape: []uint64{32, 2}, size: 68},
		{name: "w.f16", typ: gguf.TensorF16, shape: []uint64{5}, size: 10},
	}
	size := layout(tensors)
	header, err := encodeHeader(kvs, tensors)
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	pw := &padWriter{w: &stream}
	pw.Write(header)
	w := gguf.NewWriter()
	for _, p := range kvs {
		if err := w.Set(p.key, p.val); err != nil {
			t.Fatal(err)
		}
	}
	for i, ot := range tensors {
		data := bytes.Repeat([]byte{byte(i + 1)}, int(ot.size))
		if err := w.AddTensor(ot.name, ot.typ, ot.shape, data); err != nil {
			t.Fatal(err)
		}
		pw.Write(data)
		if err := pw.pad(); err != nil {
			t.Fatal(err)
		}
	}
	var want bytes.Buffer
	if _, err := w.WriteTo(&want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stream.Bytes(), want.Bytes()) {
		t.Fatalf("streamed file (%d bytes) differs from gguf.Writer's (%d bytes)", stream.Len(), want.Len())
	}
	if uint64(len(header))+size != uint64(stream.Len()) {
		t.Errorf("header %d + data %d != file %d", len(header), size, stream.Len())
	}
	f, err := gguf.Parse(stream.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.KVs) != len(kvs) || len(f.Tensors) != len(tensors) {
		t.Errorf("parsed %d pairs and %d tensors", len(f.KVs), len(f.Tensors))
	}

	if _, err := encodeHeader([]kv{{"a", uint32(1)}, {"a", uint32(2)}}, nil); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Error("duplicate key accepted")
	}
	if _, err := encodeHeader([]kv{{"a", struct{}{}}}, nil); err == nil {
		t.Error("unsupported value accepted")
	}
}
