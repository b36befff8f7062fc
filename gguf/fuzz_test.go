package gguf_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"inferno/gguf"
)

// fuzzSeeds returns small inputs for FuzzParse: valid files written by the
// Writer (varied metadata types, a few small tensors, several alignments),
// the start of the golden file, and malformed variants.
func fuzzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, align := range []uint64{0, 1, 64} {
		w := gguf.NewWriter()
		w.Alignment = align
		for _, kv := range []struct {
			k string
			v any
		}{
			{"general.architecture", "fuzz"},
			{"u8", uint8(3)},
			{"i16", int16(-2)},
			{"u32", uint32(7)},
			{"f32", float32(0.5)},
			{"b", true},
			{"u64", uint64(1) << 40},
			{"f64", -1.25},
			{"strs", []string{"a", "bc", ""}},
			{"i32s", []int32{1, -1}},
			{"bools", []bool{true, false}},
			{"nested", []gguf.Array{{Elem: gguf.TypeUint16, Values: []uint16{1, 2}}, {Elem: gguf.TypeArray, Values: []gguf.Array{}}}},
		} {
			if err := w.Set(kv.k, kv.v); err != nil {
				t.Fatal(err)
			}
		}
		for _, tn := range []struct {
			name  string
			typ   gguf.TensorType
			shape []uint64
			size  int
		}{
			{"w.f32", gguf.TensorF32, []uint64{2, 2}, 16},
			{"w.q8", gguf.TensorQ8_0, []uint64{32}, 34},
			{"w.f16", gguf.TensorF16, []uint64{3}, 6},
		} {
			data := bytes.Repeat([]byte{byte(len(tn.name))}, tn.size)
			if err := w.AddTensor(tn.name, tn.typ, tn.shape, data); err != nil {
				t.Fatal(err)
			}
		}
		seeds = append(seeds, encode(t, w))
	}

	// Metadata only, and a header only.
	w := gguf.NewWriter()
	if err := w.Set("tokenizer.ggml.tokens", []string{"<s>", "hello", "wörld"}); err != nil {
		t.Fatal(err)
	}
	seeds = append(seeds, encode(t, w), encode(t, gguf.NewWriter()))

	// A single BF16 tensor, no metadata.
	w = gguf.NewWriter()
	if err := w.AddTensor("bf", gguf.TensorBF16, []uint64{1, 2, 1, 1}, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	seeds = append(seeds, encode(t, w))

	// The first 4 KiB of the golden file: header and early metadata.
	seeds = append(seeds, bytes.Clone(golden(t)[:4096]))

	// Malformed variants of the first seed.
	base := seeds[0]
	patch := func(f func(b []byte)) {
		b := bytes.Clone(base)
		f(b)
		seeds = append(seeds, b)
	}
	patch(func(b []byte) { b[0] = 'X' })                                                    // bad magic
	patch(func(b []byte) { binary.LittleEndian.PutUint32(b[4:], 1) })                       // version 1
	patch(func(b []byte) { binary.BigEndian.PutUint32(b[4:], 3) })                          // big-endian
	patch(func(b []byte) { binary.LittleEndian.PutUint64(b[16:], 1<<60) })                  // huge n_kv
	patch(func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 1<<60) })                   // huge n_tensors
	patch(func(b []byte) { b[kvValue(t, b, "b")] = 2 })                                     // bool 2
	patch(func(b []byte) { binary.LittleEndian.PutUint32(b[kvValue(t, b, "u32")-4:], 99) }) // unknown type
	patch(func(b []byte) {
		binary.LittleEndian.PutUint64(b[kvValue(t, b, "strs")+4:], 1<<61) // huge array
	})
	patch(func(b []byte) {
		tf := tensorOffsets(t, b, "w.q8")
		binary.LittleEndian.PutUint32(b[tf.typ:], 77) // unknown tensor type
	})
	patch(func(b []byte) {
		tf := tensorOffsets(t, b, "w.f16")
		binary.LittleEndian.PutUint64(b[tf.offset:], 1<<30) // data past the end
	})
	patch(func(b []byte) {
		tf := tensorOffsets(t, b, "w.f32")
		binary.LittleEndian.PutUint32(b[tf.nDims:], 5) // 5 dimensions
	})
	seeds = append(seeds, base[:len(base)/2], base[:24], []byte("GGUF"), nil)
	return seeds
}

func kvValue(t testing.TB, b []byte, key string) int {
	_, _, v := kvOffsets(t, b, key)
	return v
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := gguf.Parse(data)
		if err != nil {
			if file != nil {
				t.Fatalf("Parse returned a file and the error %v", err)
			}
			return
		}
		checkParsed(t, file, data)

		// A file that parses can be written again; writing is then stable.
		out := rewrite(t, file)
		again, err := gguf.Parse(out)
		if err != nil {
			t.Fatalf("rewritten file does not parse: %v", err)
		}
		checkParsed(t, again, out)
		if out2 := rewrite(t, again); !bytes.Equal(out, out2) {
			t.Fatalf("rewriting is not stable")
		}
	})
}

// checkParsed checks the invariants of a successfully parsed file.
func checkParsed(t *testing.T, f *gguf.File, data []byte) {
	a := f.Alignment
	if a == 0 || a&(a-1) != 0 {
		t.Fatalf("alignment %d is not a power of two", a)
	}
	if f.Version != 2 && f.Version != 3 {
		t.Fatalf("version %d", f.Version)
	}
	if f.DataOffset%a != 0 {
		t.Fatalf("data offset %d not aligned to %d", f.DataOffset, a)
	}
	for _, kv := range f.KVs {
		touch(t, kv.Value.Any())
		if v, ok := f.Value(kv.Key); !ok || v.Type != kv.Value.Type {
			t.Fatalf("Value(%q) does not find the pair", kv.Key)
		}
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if len(ti.Shape) < 1 || len(ti.Shape) > gguf.MaxDims {
			t.Fatalf("%q: %d dimensions", ti.Name, len(ti.Shape))
		}
		if ti.Offset%a != 0 {
			t.Fatalf("%q: offset %d not aligned to %d", ti.Name, ti.Offset, a)
		}
		size, ok := ti.Type.RowBytes(ti.Elements())
		if !ok || uint64(len(ti.Data)) != size {
			t.Fatalf("%q: %d bytes of data for %s %v", ti.Name, len(ti.Data), ti.Type, ti.Shape)
		}
		start := f.DataOffset + ti.Offset
		if start > uint64(len(data)) || size > uint64(len(data))-start {
			t.Fatalf("%q: data [%d, +%d) outside the %d-byte input", ti.Name, start, size, len(data))
		}
		// The data is a view of the input, not a copy.
		if size > 0 && &ti.Data[0] != &data[start] {
			t.Fatalf("%q: data does not alias the input at %d", ti.Name, start)
		}
		if p, ok := f.Tensor(ti.Name); !ok || p != ti {
			t.Fatalf("Tensor(%q) does not find it", ti.Name)
		}
	}
}

// touch walks a metadata value.
func touch(t *testing.T, x any) {
	switch x := x.(type) {
	case gguf.Array:
		n := x.Len()
		if inner, ok := x.Values.([]gguf.Array); ok {
			if n != len(inner) {
				t.Fatalf("Len %d of %d arrays", n, len(inner))
			}
			for _, a := range inner {
				touch(t, a)
			}
		}
		if _, err := gguf.MakeValue(x); err != nil {
			t.Fatalf("parsed array rejected by MakeValue: %v", err)
		}
	case nil:
		t.Fatalf("nil value")
	default:
		if _, err := gguf.MakeValue(x); err != nil {
			t.Fatalf("parsed value rejected by MakeValue: %v", err)
		}
	}
}

func rewrite(t *testing.T, f *gguf.File) []byte {
	w := gguf.NewWriter()
	w.Alignment = f.Alignment
	for _, kv := range f.KVs {
		if err := w.Set(kv.Key, kv.Value); err != nil {
			t.Fatalf("Set(%q): %v", kv.Key, err)
		}
	}
	for _, ti := range f.Tensors {
		if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, ti.Data); err != nil {
			t.Fatalf("AddTensor(%q): %v", ti.Name, err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	return buf.Bytes()
}
