// Package modeltest helps the tests of the architecture packages build
// GGUF files: a synthetic model, or a copy of one with its metadata and
// tensors edited.
package modeltest

import (
	"bytes"
	"testing"

	"inferno/gguf"
	"inferno/synth"
)

// Synth writes the model opts describe (synth.Write) and parses it.
func Synth(t testing.TB, opts synth.Options) *gguf.File {
	t.Helper()
	var buf bytes.Buffer
	if err := synth.Write(&buf, opts); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Edit copies src through the GGUF writer, letting editKV and editTensor
// (either may be nil) change each metadata pair and tensor, or drop it by
// returning false, and parses the result.
func Edit(t testing.TB, src *gguf.File, editKV func(*gguf.KV) bool, editTensor func(*gguf.TensorInfo) bool) *gguf.File {
	t.Helper()
	w := gguf.NewWriter()
	for _, kv := range src.KVs {
		if editKV != nil && !editKV(&kv) {
			continue
		}
		if err := w.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range src.Tensors {
		if editTensor != nil && !editTensor(&ti) {
			continue
		}
		if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, ti.Data); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Value returns x as a metadata value (gguf.MakeValue), failing t if it
// has no GGUF type.
func Value(t testing.TB, x any) gguf.Value {
	t.Helper()
	v, err := gguf.MakeValue(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Rename returns an edit for Edit that turns each key of renames into the
// key and value it maps to ([]any{key, value}).
func Rename(t testing.TB, renames map[string]any) func(*gguf.KV) bool {
	return func(kv *gguf.KV) bool {
		if r, ok := renames[kv.Key].([]any); ok {
			kv.Key, kv.Value = r[0].(string), Value(t, r[1])
		}
		return true
	}
}
