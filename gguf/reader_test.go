package gguf_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"inferno/gguf"
)

const goldenPath = "../testdata/golden/tiny-q8_0.gguf"

var goldenOnce = sync.OnceValues(func() ([]byte, error) { return os.ReadFile(goldenPath) })

// golden returns the bytes of the golden file. Callers must not modify them.
func golden(t testing.TB) []byte {
	t.Helper()
	b, err := goldenOnce()
	if err != nil {
		t.Fatalf("reading golden file: %v", err)
	}
	return b
}

// goldenCopy returns a private copy of the golden bytes.
func goldenCopy(t testing.TB) []byte { return bytes.Clone(golden(t)) }

// encode writes w to memory.
func encode(t testing.TB, w *gguf.Writer) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	if err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func putU32(b []byte, off int, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }
func putU64(b []byte, off int, v uint64) { binary.LittleEndian.PutUint64(b[off:], v) }

// indexOnce returns the offset of the only occurrence of pat in b.
func indexOnce(t testing.TB, b, pat []byte) int {
	t.Helper()
	i := bytes.Index(b, pat)
	if i < 0 || bytes.LastIndex(b, pat) != i {
		t.Fatalf("pattern %q occurs %d times, want once", pat, bytes.Count(b, pat))
	}
	return i
}

// encodedString is a GGUF string: its u64 length, then its bytes.
func encodedString(s string) []byte { return append(le64(uint64(len(s))), s...) }

// kvOffsets returns the offsets of the key string, the type tag and the
// value of the metadata pair key in an encoded file.
func kvOffsets(t testing.TB, b []byte, key string) (keyOff, typeOff, valueOff int) {
	t.Helper()
	keyOff = indexOnce(t, b, encodedString(key))
	typeOff = keyOff + 8 + len(key)
	return keyOff, typeOff, typeOff + 4
}

// tensorFields holds the offsets of the fields of one tensor info entry.
type tensorFields struct {
	name, nDims int
	dims        []int
	typ, offset int
}

func tensorOffsets(t testing.TB, b []byte, name string) tensorFields {
	t.Helper()
	var f tensorFields
	f.name = indexOnce(t, b, encodedString(name))
	f.nDims = f.name + 8 + len(name)
	n := int(binary.LittleEndian.Uint32(b[f.nDims:]))
	for i := range n {
		f.dims = append(f.dims, f.nDims+4+8*i)
	}
	f.typ = f.nDims + 4 + 8*n
	f.offset = f.typ + 4
	return f
}

// valueSize is the encoded size of a metadata value (without its type tag).
func valueSize(x any) int {
	switch x := x.(type) {
	case uint8, int8, bool:
		return 1
	case uint16, int16:
		return 2
	case uint32, int32, float32:
		return 4
	case uint64, int64, float64:
		return 8
	case string:
		return 8 + len(x)
	case gguf.Array:
		n := 4 + 8
		switch s := x.Values.(type) {
		case []string:
			for _, e := range s {
				n += 8 + len(e)
			}
		case []gguf.Array:
			for _, e := range s {
				n += valueSize(e)
			}
		default:
			n += x.Len() * valueSize(zero(x.Elem))
		}
		return n
	}
	panic("valueSize: unexpected type")
}

func zero(t gguf.ValueType) any {
	switch t {
	case gguf.TypeUint8:
		return uint8(0)
	case gguf.TypeInt8:
		return int8(0)
	case gguf.TypeBool:
		return false
	case gguf.TypeUint16:
		return uint16(0)
	case gguf.TypeInt16:
		return int16(0)
	case gguf.TypeUint32:
		return uint32(0)
	case gguf.TypeInt32:
		return int32(0)
	case gguf.TypeFloat32:
		return float32(0)
	}
	return uint64(0)
}

// layout computes where the tensor table and the data section of f start,
// from the encoded sizes of its parts.
func layout(f *gguf.File) (tableStart, tableEnd int) {
	off := 4 + 4 + 8 + 8
	for _, kv := range f.KVs {
		off += 8 + len(kv.Key) + 4 + valueSize(kv.Value.Any())
	}
	tableStart = off
	for _, ti := range f.Tensors {
		off += 8 + len(ti.Name) + 4 + 8*len(ti.Shape) + 4 + 8
	}
	return tableStart, off
}

// mustParseErr parses b, which must fail, and checks that the error message
// contains every one of want.
func mustParseErr(t *testing.T, b []byte, want ...string) error {
	t.Helper()
	var f *gguf.File
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Parse panicked: %v", r)
			}
		}()
		f, err = gguf.Parse(b)
	}()
	if err == nil {
		t.Fatalf("Parse succeeded (%d KVs, %d tensors), want an error containing %q", len(f.KVs), len(f.Tensors), want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	return err
}

func TestGoldenOpen(t *testing.T) {
	f, err := gguf.Open(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := f.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}()
	if f.Version != 3 {
		t.Errorf("Version = %d, want 3", f.Version)
	}
	if f.Alignment != 32 {
		t.Errorf("Alignment = %d, want 32", f.Alignment)
	}
	if f.DataOffset%32 != 0 {
		t.Errorf("DataOffset %d is not aligned", f.DataOffset)
	}
	if len(f.KVs) != 23 {
		t.Errorf("%d KVs, want 23", len(f.KVs))
	}

	str := func(key, want string) {
		t.Helper()
		if got, err := f.String(key); err != nil || got != want {
			t.Errorf("String(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
	integer := func(key string, want int64) {
		t.Helper()
		if got, err := f.Int(key); err != nil || got != want {
			t.Errorf("Int(%q) = %d, %v; want %d", key, got, err, want)
		}
	}
	str("general.architecture", "qwen3")
	str("general.name", "synthetic-qwen3-tiny")
	str("tokenizer.ggml.model", "gpt2")
	str("tokenizer.ggml.pre", "qwen2")
	integer("qwen3.block_count", 2)
	integer("qwen3.embedding_length", 64)
	integer("qwen3.feed_forward_length", 192)
	integer("qwen3.context_length", 40960)
	integer("qwen3.attention.head_count", 4)
	integer("qwen3.attention.head_count_kv", 2)
	integer("qwen3.attention.key_length", 32)
	integer("tokenizer.ggml.eos_token_id", 151645)
	integer("tokenizer.ggml.bos_token_id", 151643)
	if v, _ := f.Value("qwen3.block_count"); v.Type != gguf.TypeUint32 {
		t.Errorf("qwen3.block_count has type %s, want uint32", v.Type)
	}
	if x, err := f.Float("qwen3.rope.freq_base"); err != nil || x != 1e6 {
		t.Errorf("rope.freq_base = %v, %v; want 1e6", x, err)
	}
	if x, err := f.Float("qwen3.attention.layer_norm_rms_epsilon"); err != nil || x != float64(float32(1e-6)) {
		t.Errorf("rms eps = %v, %v; want float32 1e-6", x, err)
	}
	if b, err := f.Bool("tokenizer.ggml.add_bos_token"); err != nil || b {
		t.Errorf("add_bos_token = %v, %v; want false", b, err)
	}
	if s, err := f.String("tokenizer.chat_template"); err != nil || !strings.Contains(s, "<|im_start|>") {
		t.Errorf("chat_template: %v (%d bytes)", err, len(s))
	}

	// The vocabulary array has one entry per embedding row (151,936): the
	// 151,669 real tokens padded with placeholders.
	tokens, err := f.Strings("tokenizer.ggml.tokens")
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 151936 {
		t.Errorf("%d tokens, want 151936", len(tokens))
	}
	for id, want := range map[int]string{0: "!", 151643: "<|endoftext|>", 151644: "<|im_start|>", 151645: "<|im_end|>"} {
		if id < len(tokens) && tokens[id] != want {
			t.Errorf("token %d = %q, want %q", id, tokens[id], want)
		}
	}
	types, err := f.Int32s("tokenizer.ggml.token_type")
	if err != nil || len(types) != len(tokens) {
		t.Errorf("token_type: %d entries, %v", len(types), err)
	}
	merges, err := f.Strings("tokenizer.ggml.merges")
	if err != nil || len(merges) != 151387 {
		t.Errorf("merges: %d entries, %v; want 151387", len(merges), err)
	}

	// Tied embeddings: 24 tensors (no output.weight).
	if len(f.Tensors) != 24 {
		t.Errorf("%d tensors, want 24", len(f.Tensors))
	}
	if _, ok := f.Tensor("output.weight"); ok {
		t.Errorf("unexpected output.weight")
	}
	checkTensor := func(name string, typ gguf.TensorType, shape ...uint64) *gguf.TensorInfo {
		t.Helper()
		ti, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("tensor %q missing", name)
		}
		if ti.Type != typ || !equalShape(ti.Shape, shape) {
			t.Errorf("%s: %s %v, want %s %v", name, ti.Type, ti.Shape, typ, shape)
		}
		size, _ := typ.RowBytes(ti.Elements())
		if uint64(len(ti.Data)) != size {
			t.Errorf("%s: %d data bytes, want %d", name, len(ti.Data), size)
		}
		return ti
	}
	emb := checkTensor("token_embd.weight", gguf.TensorQ8_0, 64, 151936)
	if emb.Elements() != 64*151936 || len(emb.Data) != 151936*2*34 {
		t.Errorf("token_embd: %d elements, %d bytes", emb.Elements(), len(emb.Data))
	}
	checkTensor("blk.0.attn_norm.weight", gguf.TensorF32, 64)
	checkTensor("blk.0.attn_q.weight", gguf.TensorQ8_0, 64, 128)
	checkTensor("blk.1.attn_k_norm.weight", gguf.TensorF32, 32)
	checkTensor("blk.1.ffn_down.weight", gguf.TensorQ8_0, 192, 64)
	checkTensor("output_norm.weight", gguf.TensorF32, 64)

	// The tensors are laid out back to back, each aligned, ending at the end
	// of the file; their data matches the bytes of the file.
	raw := golden(t)
	var next uint64
	for i, ti := range f.Tensors {
		if ti.Offset != next {
			t.Errorf("tensor %d %s: offset %d, want %d", i, ti.Name, ti.Offset, next)
		}
		start := f.DataOffset + ti.Offset
		if !bytes.Equal(ti.Data, raw[start:start+uint64(len(ti.Data))]) {
			t.Errorf("tensor %s: data differs from the file bytes", ti.Name)
		}
		next = (ti.Offset + uint64(len(ti.Data)) + 31) &^ 31
	}
	if f.DataOffset+next != uint64(len(raw)) {
		t.Errorf("data ends at %d, file is %d bytes", f.DataOffset+next, len(raw))
	}
	// The F32 norm weights of a Qwen3 model are finite.
	norm, _ := f.Tensor("output_norm.weight")
	for i := 0; i < len(norm.Data); i += 4 {
		if x := math.Float32frombits(binary.LittleEndian.Uint32(norm.Data[i:])); math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("output_norm[%d] = %v", i/4, x)
		}
	}

	// Parse of the same bytes agrees with Open.
	p, err := gguf.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.DataOffset != f.DataOffset || len(p.KVs) != len(f.KVs) || len(p.Tensors) != len(f.Tensors) {
		t.Errorf("Parse and Open disagree")
	}
	tableStart, tableEnd := layout(f)
	if !bytes.HasPrefix(raw[tableStart:], encodedString("token_embd.weight")) {
		t.Errorf("tensor table does not start at computed offset %d", tableStart)
	}
	if want := (uint64(tableEnd) + 31) &^ 31; f.DataOffset != want {
		t.Errorf("DataOffset = %d, want %d", f.DataOffset, want)
	}
}

func equalShape(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAccessorErrors(t *testing.T) {
	w := gguf.NewWriter()
	for _, kv := range []struct {
		k string
		v any
	}{
		{"s", "text"},
		{"u8", uint8(7)},
		{"u64", uint64(math.MaxUint64)},
		{"i64", int64(-5)},
		{"f32", float32(0.5)},
		{"f64", 0.25},
		{"b", true},
		{"strs", []string{"a", "b"}},
		{"i32s", []int32{1, -2}},
		{"u32s", []uint32{1, 2}},
	} {
		if err := w.Set(kv.k, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	f, err := gguf.Parse(encode(t, w))
	if err != nil {
		t.Fatal(err)
	}

	// Accessors that succeed, including integer widening.
	if n, err := f.Int("u8"); err != nil || n != 7 {
		t.Errorf("Int(u8) = %d, %v", n, err)
	}
	if n, err := f.Int("i64"); err != nil || n != -5 {
		t.Errorf("Int(i64) = %d, %v", n, err)
	}
	if x, err := f.Float("f32"); err != nil || x != 0.5 {
		t.Errorf("Float(f32) = %v, %v", x, err)
	}
	if x, err := f.Float("f64"); err != nil || x != 0.25 {
		t.Errorf("Float(f64) = %v, %v", x, err)
	}
	if b, err := f.Bool("b"); err != nil || !b {
		t.Errorf("Bool(b) = %v, %v", b, err)
	}
	if s, err := f.Strings("strs"); err != nil || len(s) != 2 || s[1] != "b" {
		t.Errorf("Strings(strs) = %q, %v", s, err)
	}
	if s, err := f.Int32s("i32s"); err != nil || len(s) != 2 || s[1] != -2 {
		t.Errorf("Int32s(i32s) = %v, %v", s, err)
	}
	if v, ok := f.Value("u64"); !ok {
		t.Errorf("Value(u64) missing")
	} else if _, ok := v.AsInt(); ok {
		t.Errorf("AsInt of MaxUint64 succeeded")
	}

	// Missing keys wrap ErrMissingKey and name the key.
	missing := []func() error{
		func() error { _, err := f.String("no.such.key"); return err },
		func() error { _, err := f.Int("no.such.key"); return err },
		func() error { _, err := f.Float("no.such.key"); return err },
		func() error { _, err := f.Bool("no.such.key"); return err },
		func() error { _, err := f.Strings("no.such.key"); return err },
		func() error { _, err := f.Int32s("no.such.key"); return err },
	}
	for i, get := range missing {
		err := get()
		if !errors.Is(err, gguf.ErrMissingKey) || !strings.Contains(err.Error(), `"no.such.key"`) {
			t.Errorf("accessor %d on a missing key: %v", i, err)
		}
	}
	if _, ok := f.Value("no.such.key"); ok {
		t.Errorf("Value of a missing key reports ok")
	}
	if _, ok := f.Tensor("no.such.tensor"); ok {
		t.Errorf("Tensor of a missing name reports ok")
	}

	// Wrong types: the message names the key, the actual and the wanted type.
	wrong := []struct {
		get  func() error
		want []string
	}{
		{func() error { _, err := f.String("u8"); return err }, []string{`"u8"`, "uint8", "want a string"}},
		{func() error { _, err := f.Int("s"); return err }, []string{`"s"`, "string", "want an integer"}},
		{func() error { _, err := f.Int("f32"); return err }, []string{`"f32"`, "float32"}},
		{func() error { _, err := f.Int("u64"); return err }, []string{`"u64"`, "uint64"}},
		{func() error { _, err := f.Float("i64"); return err }, []string{`"i64"`, "int64", "want a float"}},
		{func() error { _, err := f.Bool("u8"); return err }, []string{`"u8"`, "want a bool"}},
		{func() error { _, err := f.Strings("s"); return err }, []string{`"s"`, "want an array of strings"}},
		{func() error { _, err := f.Strings("i32s"); return err }, []string{`"i32s"`, "array of int32", "want an array of strings"}},
		{func() error { _, err := f.Int32s("u32s"); return err }, []string{`"u32s"`, "array of uint32", "want an array of int32"}},
		{func() error { _, err := f.Int32s("strs"); return err }, []string{`"strs"`, "array of string"}},
	}
	for i, c := range wrong {
		err := c.get()
		if err == nil {
			t.Errorf("case %d: no error", i)
			continue
		}
		if errors.Is(err, gguf.ErrMissingKey) {
			t.Errorf("case %d: type error %v wraps ErrMissingKey", i, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("case %d: error %q does not contain %q", i, err, w)
			}
		}
	}
}

// TestTruncatedGolden cuts the golden file at many offsets: in the header,
// inside metadata, inside the tensor table and inside tensor data. Every
// prefix must fail with an error wrapping ErrTruncated.
//
// A cut past the tokenizer vocabulary makes Parse decode megabytes of
// metadata (tens of ms), so the golden file is cut there at a sample of
// offsets, and a slim copy of it (the same 24 tensors and data, without the
// tokenizer arrays) is cut at every byte of its tensor table and at both
// ends and the middle of every tensor's data.
func TestTruncatedGolden(t *testing.T) {
	raw := golden(t)
	f, err := gguf.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	checkCuts(t, f, raw, truncationCuts(t, f, len(raw), false))

	w := gguf.NewWriter()
	for _, kv := range f.KVs {
		if a, ok := kv.Value.AsArray(); ok && a.Len() > 1000 || kv.Key == "tokenizer.chat_template" {
			continue
		}
		if err := w.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range f.Tensors {
		if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, ti.Data); err != nil {
			t.Fatal(err)
		}
	}
	slim := encode(t, w)
	sf, err := gguf.Parse(slim)
	if err != nil {
		t.Fatal(err)
	}
	if len(sf.Tensors) != 24 || len(sf.KVs) != 19 {
		t.Fatalf("slim file: %d tensors, %d KVs", len(sf.Tensors), len(sf.KVs))
	}
	checkCuts(t, sf, slim, truncationCuts(t, sf, len(slim), true))
}

// truncationCuts lists prefix lengths of the file f was parsed from: every
// byte of the header, a sample of the metadata, and the tensor table and
// data densely or sparsely.
func truncationCuts(t *testing.T, f *gguf.File, size int, dense bool) []cut {
	tableStart, tableEnd := layout(f)
	var cuts []cut
	for n := 0; n < 64; n++ {
		cuts = append(cuts, cut{n, "header"})
	}
	for n := 64; n < min(4096, tableStart); n += 37 {
		cuts = append(cuts, cut{n, "metadata"})
	}
	off := 24
	for _, kv := range f.KVs {
		size := 8 + len(kv.Key) + 4 + valueSize(kv.Value.Any())
		// Inside the key length, the key, the type tag, the value, and
		// just before the next pair.
		ds := []int{1, 9, 8 + len(kv.Key) + 2, 8 + len(kv.Key) + 5, size - 1}
		if off > 1<<20 { // past the vocabulary: expensive
			ds = []int{size - 1}
		}
		for _, d := range ds {
			if d < size {
				cuts = append(cuts, cut{off + d, "metadata " + kv.Key})
			}
		}
		off += size
	}
	if off != tableStart {
		t.Fatalf("metadata ends at %d, table computed to start at %d", off, tableStart)
	}
	cuts = append(cuts, cut{tableStart, "end of metadata"})
	for i, ti := range f.Tensors {
		size := 8 + len(ti.Name) + 4 + 8*len(ti.Shape) + 4 + 8
		switch {
		case dense:
			for d := range size {
				cuts = append(cuts, cut{off + d, "tensor table " + ti.Name})
			}
		case i == 0:
			cuts = append(cuts, cut{off + 10, "tensor table " + ti.Name})
		case i == len(f.Tensors)/2:
			cuts = append(cuts, cut{off + size - 4, "tensor table " + ti.Name})
		}
		off += size
	}
	if off != tableEnd {
		t.Fatalf("tensor table ends at %d, want %d", off, tableEnd)
	}
	cuts = append(cuts, cut{tableEnd - 1, "end of tensor table"}, cut{int(f.DataOffset) - 1, "padding"}, cut{int(f.DataOffset), "start of data"})
	for i, ti := range f.Tensors {
		start := int(f.DataOffset + ti.Offset)
		end := start + len(ti.Data)
		if dense || i == 0 || i == len(f.Tensors)/2 {
			cuts = append(cuts, cut{start + 1, "data " + ti.Name}, cut{(start + end) / 2, "data " + ti.Name}, cut{end - 1, "data " + ti.Name})
		}
	}
	cuts = append(cuts, cut{size - 1, "last byte"})
	for _, c := range cuts {
		if c.n < 0 || c.n >= size {
			t.Fatalf("cut %d (%s) out of range", c.n, c.where)
		}
	}
	return cuts
}

// checkCuts runs checkCut for every cut, on all CPUs.
func checkCuts(t *testing.T, f *gguf.File, raw []byte, cuts []cut) {
	tableStart, tableEnd := layout(f)
	work := make(chan cut)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for c := range work {
				checkCut(t, f, raw, c, tableStart, tableEnd)
			}
		})
	}
	for _, c := range cuts {
		work <- c
	}
	close(work)
	wg.Wait()
	t.Logf("%d cuts of a %d-byte file", len(cuts), len(raw))
}

// cut is a prefix length of the golden file and what it cuts into.
type cut struct {
	n     int
	where string
}

// checkCut parses raw[:c.n], which must fail with ErrTruncated. It may run
// on any goroutine.
func checkCut(t *testing.T, f *gguf.File, raw []byte, c cut, tableStart, tableEnd int) {
	// No spare capacity beyond the cut, so that reading past it cannot go
	// unnoticed.
	b := raw[:c.n:c.n]
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("cut at %d (%s): panic %v", c.n, c.where, r)
			}
		}()
		_, err = gguf.Parse(b)
	}()
	if err == nil {
		t.Errorf("cut at %d (%s): no error", c.n, c.where)
		return
	}
	if !errors.Is(err, gguf.ErrTruncated) {
		t.Errorf("cut at %d (%s): error %q does not wrap ErrTruncated", c.n, c.where, err)
	}
	msg := err.Error()
	switch {
	case c.n >= tableEnd:
		if !strings.Contains(msg, "past the end") {
			t.Errorf("cut at %d (%s): error %q does not say past the end", c.n, c.where, err)
		}
		// The first tensor whose data is cut is named.
		var first string
		for _, ti := range f.Tensors {
			if f.DataOffset+ti.Offset+uint64(len(ti.Data)) > uint64(c.n) {
				first = ti.Name
				break
			}
		}
		if !strings.Contains(msg, `"`+first+`"`) {
			t.Errorf("cut at %d (%s): error %q does not name %q", c.n, c.where, err, first)
		}
	case c.n >= tableStart:
		if !strings.Contains(msg, "tensor ") {
			t.Errorf("cut at %d (%s): error %q does not say which tensor", c.n, c.where, err)
		}
	}
}

// smallFile returns a small valid file: four metadata pairs and three
// tensors (F32 [4 2], Q8_0 [32 2], F16 [3]).
func smallFile(t testing.TB) []byte {
	t.Helper()
	w := gguf.NewWriter()
	set := func(k string, v any) {
		if err := w.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	set("general.architecture", "test")
	set("test.key1", uint32(7))
	set("test.key2", true)
	set("test.list", []int32{1, 2, 3})
	add := func(name string, typ gguf.TensorType, shape []uint64, size int) {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*7 + len(name))
		}
		if err := w.AddTensor(name, typ, shape, data); err != nil {
			t.Fatal(err)
		}
	}
	add("tensor.a", gguf.TensorF32, []uint64{4, 2}, 32)
	add("tensor.b", gguf.TensorQ8_0, []uint64{32, 2}, 68)
	add("tensor.c", gguf.TensorF16, []uint64{3}, 6)
	b := encode(t, w)
	if _, err := gguf.Parse(b); err != nil {
		t.Fatalf("small file does not parse: %v", err)
	}
	return b
}

// smallDataEnd returns where the data of the last tensor of b ends; the
// padding after it is not needed.
func smallDataEnd(t testing.TB, b []byte) int {
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	last := f.Tensors[len(f.Tensors)-1]
	return int(f.DataOffset + last.Offset + uint64(len(last.Data)))
}

func TestParseMalformed(t *testing.T) {
	base := smallFile(t)
	_, _, key2Val := kvOffsets(t, base, "test.key2")
	key2Off, _, _ := kvOffsets(t, base, "test.key2")
	_, listType, listVal := kvOffsets(t, base, "test.list")
	_, _, archVal := kvOffsets(t, base, "general.architecture")
	ta := tensorOffsets(t, base, "tensor.a")
	tb := tensorOffsets(t, base, "tensor.b")
	tc := tensorOffsets(t, base, "tensor.c")
	cEnd := smallDataEnd(t, base)

	cases := []struct {
		name      string
		patch     func(b []byte) []byte
		want      []string
		truncated bool
	}{
		{"bad magic", func(b []byte) []byte { b[0] = 'X'; return b }, []string{"bad magic", "XGUF"}, false},
		{"magic only", func(b []byte) []byte { return b[:3] }, []string{"magic"}, true},
		{"version 0", func(b []byte) []byte { putU32(b, 4, 0); return b }, []string{"unsupported version 0"}, false},
		{"version 1", func(b []byte) []byte { putU32(b, 4, 1); return b }, []string{"version 1", "not supported"}, false},
		{"version 99", func(b []byte) []byte { putU32(b, 4, 99); return b }, []string{"unsupported version 99"}, false},
		{"version 2 is accepted but truncated", func(b []byte) []byte { putU32(b, 4, 2); return b[:cEnd-1] }, []string{"tensor.c", "past the end"}, true},
		{"big-endian header", func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[4:], 3)
			binary.BigEndian.PutUint64(b[8:], 3)
			binary.BigEndian.PutUint64(b[16:], 4)
			return b
		}, []string{"big-endian"}, false},
		{"big-endian version 2", func(b []byte) []byte { binary.BigEndian.PutUint32(b[4:], 2); return b }, []string{"big-endian"}, false},
		{"huge tensor count", func(b []byte) []byte { putU64(b, 8, 1<<60); return b }, []string{"claims 1152921504606846976 tensors"}, true},
		{"huge KV count", func(b []byte) []byte { putU64(b, 16, 1<<60); return b }, []string{"claims 1152921504606846976 metadata pairs"}, true},
		{"max KV count", func(b []byte) []byte { putU64(b, 16, math.MaxUint64); return b }, []string{"metadata pairs"}, true},
		{"huge key length", func(b []byte) []byte { putU64(b, 24, 1<<62); return b }, []string{"metadata pair 0", "key"}, true},
		{"huge string value", func(b []byte) []byte { putU64(b, archVal, 1<<62); return b }, []string{`"general.architecture"`}, true},
		{"unknown value type", func(b []byte) []byte { putU32(b, listType, 13); return b }, []string{`"test.list"`, "unknown value type 13"}, false},
		{"unknown array element type", func(b []byte) []byte { putU32(b, listVal, 200); return b }, []string{`"test.list"`, "unknown array element type 200"}, false},
		{"huge array count", func(b []byte) []byte { putU64(b, listVal+4, 1<<60); return b }, []string{`"test.list"`, "does not fit"}, true},
		{"bool value 2", func(b []byte) []byte { b[key2Val] = 2; return b }, []string{`"test.key2"`, "bool value 2"}, false},
		{"duplicate key", func(b []byte) []byte { b[key2Off+8+len("test.key2")-1] = '1'; return b }, []string{`"test.key1"`, "appears twice"}, false},
		{"duplicate tensor", func(b []byte) []byte { b[tb.name+8+len("tensor.b")-1] = 'a'; return b }, []string{`tensor "tensor.a" appears twice`}, false},
		{"unknown tensor type", func(b []byte) []byte { putU32(b, tb.typ, 77); return b }, []string{`"tensor.b"`, "unknown tensor type 77"}, false},
		{"zero dimensions", func(b []byte) []byte { putU32(b, ta.nDims, 0); return b }, []string{`"tensor.a"`, "0 dimensions"}, false},
		{"five dimensions", func(b []byte) []byte { putU32(b, tc.nDims, 5); return b }, []string{`"tensor.c"`, "5 dimensions"}, false},
		{"shape overflows 64 bits", func(b []byte) []byte {
			putU64(b, ta.dims[0], 1<<32)
			putU64(b, ta.dims[1], 1<<32)
			return b
		}, []string{`"tensor.a"`, "too large"}, false},
		{"shape over 2^48 elements", func(b []byte) []byte {
			putU64(b, ta.dims[0], 1<<40)
			putU64(b, ta.dims[1], 1<<9)
			return b
		}, []string{`"tensor.a"`, "too large"}, false},
		{"Q8_0 first dim not a block multiple", func(b []byte) []byte { putU64(b, tb.dims[0], 33); return b }, []string{`"tensor.b"`, "first dimension 33", "Q8_0 block size 32"}, false},
		{"Q8_0 first dim 16", func(b []byte) []byte {
			putU64(b, tb.dims[0], 16)
			putU64(b, tb.dims[1], 4)
			return b
		}, []string{`"tensor.b"`, "first dimension 16"}, false},
		{"misaligned tensor offset", func(b []byte) []byte {
			putU64(b, tb.offset, binary.LittleEndian.Uint64(b[tb.offset:])+4)
			return b
		}, []string{`"tensor.b"`, "not a multiple of the alignment 32"}, false},
		{"tensor data past EOF", func(b []byte) []byte { putU64(b, tc.offset, 1<<20); return b }, []string{`"tensor.c"`, "past the end"}, true},
		{"tensor offset wraps around", func(b []byte) []byte { putU64(b, tc.offset, math.MaxUint64&^31); return b }, []string{`"tensor.c"`, "past the end"}, true},
		{"tensor data cut by one byte", func(b []byte) []byte { return b[:cEnd-1] }, []string{`"tensor.c"`, "past the end"}, true},
		{"only the padding after the data cut", func(b []byte) []byte { return b[:cEnd] }, nil, false},
		{"tensor table cut", func(b []byte) []byte { return b[:tb.typ+2] }, []string{"tensor 1", `"tensor.b"`}, true},
		{"huge tensor name", func(b []byte) []byte { putU64(b, tc.name, 1<<62); return b }, []string{"tensor 2", "name"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			b := c.patch(bytes.Clone(base))
			if c.want == nil {
				if _, err := gguf.Parse(b); err != nil {
					t.Fatal(err)
				}
				return
			}
			err := mustParseErr(t, b, c.want...)
			if got := errors.Is(err, gguf.ErrTruncated); got != c.truncated {
				t.Errorf("errors.Is(%q, ErrTruncated) = %v, want %v", err, got, c.truncated)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestParseHugeCountsAllocation checks that a header claiming as many
// entries as the file could hold does not allocate in proportion to the
// count before finding out it is wrong.
func TestParseHugeCountsAllocation(t *testing.T) {
	b := make([]byte, 16<<20)
	copy(b, "GGUF")
	putU32(b, 4, 3)
	for _, field := range []int{8, 16} { // n_tensors, n_kv
		c := bytes.Clone(b)
		putU64(c, field, uint64(len(c)-24)/24)
		if field == 8 {
			putU64(c, 16, 0)
		}
		// Make the first entry invalid right away: a tensor with 0
		// dimensions, or a KV of unknown type 0xffffffff.
		putU32(c, 24+8, 0xffffffff)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := gguf.Parse(c)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatalf("field %d: no error", field)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
			t.Errorf("field %d: Parse allocated %d bytes for a %d-byte input before failing (%v)", field, alloc, len(c), err)
		}
	}
}

func TestArrayNestingTooDeep(t *testing.T) {
	// Eight levels are allowed. The innermost array holds three uint32s
	// which, once its header is patched to say "1 array", read as the
	// header of a ninth level: element type uint8, 0 elements.
	inner := gguf.Array{Elem: gguf.TypeUint32, Values: []uint32{uint32(gguf.TypeUint8), 0, 0}}
	v := inner
	for range 7 {
		v = gguf.Array{Elem: gguf.TypeArray, Values: []gguf.Array{v}}
	}
	w := gguf.NewWriter()
	if err := w.Set("deep", v); err != nil {
		t.Fatal(err)
	}
	b := encode(t, w)
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatalf("8 levels: %v", err)
	}
	got, _ := f.Value("deep")
	for range 7 {
		a, _ := got.AsArray()
		got, _ = gguf.MakeValue(a.Values.([]gguf.Array)[0])
	}
	if a, _ := got.AsArray(); a.Elem != gguf.TypeUint32 || a.Len() != 3 {
		t.Fatalf("innermost array = %+v", a)
	}

	hdr := append(le32(uint32(gguf.TypeUint32)), le64(3)...)
	i := indexOnce(t, b, append(hdr, make([]byte, 12)...))
	putU32(b, i, uint32(gguf.TypeArray))
	putU64(b, i+4, 1)
	mustParseErr(t, b, `"deep"`, "nested deeper than 8")

	// Unbounded self-similar nesting: every array holds one array.
	var rec []byte
	rec = append(rec, le32(uint32(gguf.TypeArray))...)
	for range 1000 {
		rec = append(rec, le32(uint32(gguf.TypeArray))...)
		rec = append(rec, le64(1)...)
	}
	w = gguf.NewWriter()
	if err := w.Set("r", uint8(0)); err != nil {
		t.Fatal(err)
	}
	b = encode(t, w)
	_, typeOff, _ := kvOffsets(t, b, "r")
	b = append(b[:typeOff:typeOff], rec...)
	mustParseErr(t, b, `"r"`, "nested deeper than 8")
}

func TestBoolArrayValue2(t *testing.T) {
	w := gguf.NewWriter()
	if err := w.Set("flags", []bool{false, true, false}); err != nil {
		t.Fatal(err)
	}
	b := encode(t, w)
	_, _, v := kvOffsets(t, b, "flags")
	b[v+12+2] = 2
	mustParseErr(t, b, `"flags"`, "bool value 2")
}

func TestBadAlignment(t *testing.T) {
	w := gguf.NewWriter()
	w.Alignment = 64
	if err := w.AddTensor("t", gguf.TensorF32, []uint64{3}, make([]byte, 12)); err != nil {
		t.Fatal(err)
	}
	base := encode(t, w)
	f, err := gguf.Parse(base)
	if err != nil || f.Alignment != 64 {
		t.Fatalf("alignment 64: %v", err)
	}
	_, typeOff, valOff := kvOffsets(t, base, "general.alignment")
	for _, a := range []uint32{0, 3, 48, 100, 1 << 21} {
		b := bytes.Clone(base)
		putU32(b, valOff, a)
		mustParseErr(t, b, "general.alignment", "not a power of two")
	}
	// A signed negative alignment.
	b := bytes.Clone(base)
	putU32(b, typeOff, uint32(gguf.TypeInt32))
	putU32(b, valOff, uint32(0xffffffc0)) // -64
	mustParseErr(t, b, "general.alignment -64")
	// Alignment 1 is a power of two: the data follows the table directly.
	b = bytes.Clone(base)
	putU32(b, valOff, 1)
	if f, err := gguf.Parse(b); err != nil || f.Alignment != 1 {
		t.Errorf("alignment 1: %v", err)
	}

	// general.alignment of a non-integer type.
	w = gguf.NewWriter()
	if err := w.Set("general.alignmenX", "sixty-four"); err != nil {
		t.Fatal(err)
	}
	b = encode(t, w)
	k, _, _ := kvOffsets(t, b, "general.alignmenX")
	b[k+8+len("general.alignment")-1] = 't'
	mustParseErr(t, b, "general.alignment sixty-four", "not a power of two")
}

func TestParseZeroTensors(t *testing.T) {
	w := gguf.NewWriter()
	if err := w.Set("general.architecture", "none"); err != nil {
		t.Fatal(err)
	}
	b := encode(t, w)
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != 0 || len(f.KVs) != 1 || f.Version != 3 {
		t.Errorf("got %d tensors, %d KVs, version %d", len(f.Tensors), len(f.KVs), f.Version)
	}
	if f.DataOffset%32 != 0 || f.DataOffset > uint64(len(b)) {
		t.Errorf("DataOffset %d for a %d-byte file", f.DataOffset, len(b))
	}

	// The smallest file: a header with no metadata and no tensors.
	hdr := append([]byte("GGUF"), le32(3)...)
	hdr = append(hdr, make([]byte, 16)...)
	f, err = gguf.Parse(hdr)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != 0 || len(f.KVs) != 0 || f.Alignment != 32 {
		t.Errorf("empty file: %+v", f)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close of a parsed file: %v", err)
	}
	for n := range len(hdr) {
		mustParseErr(t, hdr[:n:n])
	}
	mustParseErr(t, nil, "magic")
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := gguf.Open(filepath.Join(dir, "missing.gguf"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := gguf.Open(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
	empty := filepath.Join(dir, "empty.gguf")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gguf.Open(empty); !errors.Is(err, gguf.ErrTruncated) || !strings.Contains(err.Error(), "0 bytes") {
		t.Errorf("empty file: %v", err)
	}
	short := filepath.Join(dir, "short.gguf")
	if err := os.WriteFile(short, []byte("GGUF\x03\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gguf.Open(short); !errors.Is(err, gguf.ErrTruncated) {
		t.Errorf("8-byte file: %v", err)
	}

	// A malformed file: the error says what and which file.
	bad := filepath.Join(dir, "bad.gguf")
	b := smallFile(t)
	b[0] = 'g'
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gguf.Open(bad); err == nil || !strings.Contains(err.Error(), "bad magic") || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad magic: %v", err)
	}
	cut := filepath.Join(dir, "cut.gguf")
	b = smallFile(t)
	if err := os.WriteFile(cut, b[:smallDataEnd(t, b)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gguf.Open(cut); !errors.Is(err, gguf.ErrTruncated) || !strings.Contains(err.Error(), `"tensor.c"`) {
		t.Errorf("truncated file: %v", err)
	}

	// A good small file opens, and its data matches.
	good := filepath.Join(dir, "good.gguf")
	if err := os.WriteFile(good, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := gguf.Parse(b)
	for i := range f.Tensors {
		if !bytes.Equal(f.Tensors[i].Data, p.Tensors[i].Data) {
			t.Errorf("tensor %s differs between Open and Parse", f.Tensors[i].Name)
		}
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
