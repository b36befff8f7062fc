package gguf_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"inferno/gguf"
)

// sameBits reports whether a and b are deeply equal, comparing floats by
// their bits (so NaNs with equal payloads match and 0 differs from -0) and
// treating nil and empty slices alike.
func sameBits(a, b any) bool { return sameValue(reflect.ValueOf(a), reflect.ValueOf(b)) }

func sameValue(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32:
		// Not via a.Float: converting to float64 would quiet a signaling NaN.
		return math.Float32bits(a.Interface().(float32)) == math.Float32bits(b.Interface().(float32))
	case reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Interface:
		return sameValue(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return a.Equal(b)
}

func f32bits(b uint32) float32 { return math.Float32frombits(b) }

// allValues lists one metadata value of every kind the format has.
func allValues() []struct {
	key string
	val any
	typ gguf.ValueType
} {
	type kv = struct {
		key string
		val any
		typ gguf.ValueType
	}
	nested := []gguf.Array{
		{Elem: gguf.TypeInt32, Values: []int32{1, -2, 3}},
		{Elem: gguf.TypeString, Values: []string{"x", "", "yz"}},
		{Elem: gguf.TypeArray, Values: []gguf.Array{
			{Elem: gguf.TypeFloat64, Values: []float64{0.5}},
			{Elem: gguf.TypeBool, Values: []bool{}},
		}},
		{Elem: gguf.TypeUint8, Values: []uint8{}},
	}
	return []kv{
		{"u8.zero", uint8(0), gguf.TypeUint8},
		{"u8.max", uint8(math.MaxUint8), gguf.TypeUint8},
		{"i8.min", int8(math.MinInt8), gguf.TypeInt8},
		{"i8.max", int8(math.MaxInt8), gguf.TypeInt8},
		{"u16.max", uint16(math.MaxUint16), gguf.TypeUint16},
		{"i16.min", int16(math.MinInt16), gguf.TypeInt16},
		{"u32.max", uint32(math.MaxUint32), gguf.TypeUint32},
		{"i32.min", int32(math.MinInt32), gguf.TypeInt32},
		{"f32", float32(-1.5), gguf.TypeFloat32},
		{"f32.negzero", float32(math.Copysign(0, -1)), gguf.TypeFloat32},
		{"f32.inf", float32(math.Inf(1)), gguf.TypeFloat32},
		{"f32.nan", f32bits(0x7fc0_1234), gguf.TypeFloat32},
		{"f32.tiny", f32bits(1), gguf.TypeFloat32},
		{"bool.true", true, gguf.TypeBool},
		{"bool.false", false, gguf.TypeBool},
		{"string", "hello, world", gguf.TypeString},
		{"string.empty", "", gguf.TypeString},
		{"string.unicode", "héllo 世界 🦀 \x00 nul\n", gguf.TypeString},
		{"string.invalid-utf8", "\xff\xfe", gguf.TypeString},
		{"u64.max", uint64(math.MaxUint64), gguf.TypeUint64},
		{"i64.min", int64(math.MinInt64), gguf.TypeInt64},
		{"i64.max", int64(math.MaxInt64), gguf.TypeInt64},
		{"f64.pi", math.Pi, gguf.TypeFloat64},
		{"f64.negzero", math.Copysign(0, -1), gguf.TypeFloat64},
		{"f64.ninf", math.Inf(-1), gguf.TypeFloat64},
		{"f64.nan", math.Float64frombits(0x7ff8_0000_dead_beef), gguf.TypeFloat64},
		{"f64.subnormal", math.SmallestNonzeroFloat64, gguf.TypeFloat64},

		{"arr.u8", []uint8{0, 1, 255}, gguf.TypeArray},
		{"arr.i8", []int8{-128, 0, 127}, gguf.TypeArray},
		{"arr.u16", []uint16{0, 65535}, gguf.TypeArray},
		{"arr.i16", []int16{-32768, 32767}, gguf.TypeArray},
		{"arr.u32", []uint32{1, math.MaxUint32}, gguf.TypeArray},
		{"arr.i32", []int32{math.MinInt32, -1, 0, 1}, gguf.TypeArray},
		{"arr.f32", []float32{1, -0.25, float32(math.Inf(-1)), f32bits(0x7f80_0001)}, gguf.TypeArray},
		{"arr.bool", []bool{true, false, true}, gguf.TypeArray},
		{"arr.string", []string{"a", "", "ünï", "\x00"}, gguf.TypeArray},
		{"arr.u64", []uint64{0, math.MaxUint64}, gguf.TypeArray},
		{"arr.i64", []int64{math.MinInt64, math.MaxInt64}, gguf.TypeArray},
		{"arr.f64", []float64{math.MaxFloat64, -math.SmallestNonzeroFloat64, math.NaN()}, gguf.TypeArray},
		{"arr.nested", nested, gguf.TypeArray},
		{"arr.explicit", gguf.Array{Elem: gguf.TypeInt16, Values: []int16{7}}, gguf.TypeArray},

		{"empty.u8", []uint8{}, gguf.TypeArray},
		{"empty.i8", []int8{}, gguf.TypeArray},
		{"empty.u16", []uint16{}, gguf.TypeArray},
		{"empty.i16", []int16{}, gguf.TypeArray},
		{"empty.u32", []uint32{}, gguf.TypeArray},
		{"empty.i32", []int32{}, gguf.TypeArray},
		{"empty.f32", []float32{}, gguf.TypeArray},
		{"empty.bool", []bool{}, gguf.TypeArray},
		{"empty.string", []string{}, gguf.TypeArray},
		{"empty.u64", []uint64{}, gguf.TypeArray},
		{"empty.i64", []int64{}, gguf.TypeArray},
		{"empty.f64", []float64{}, gguf.TypeArray},
		{"empty.nested", []gguf.Array{}, gguf.TypeArray},
		{"nil.string", []string(nil), gguf.TypeArray},

		{"", "the empty key", gguf.TypeString},
		{"ключ.日本語.🔑", uint32(42), gguf.TypeUint32},
		{"key with spaces\tand\ttabs", int8(-1), gguf.TypeInt8},
	}
}

// wantAny is what Value.Any gives back for a value passed to Writer.Set:
// slices come back wrapped in an Array.
func wantAny(t *testing.T, x any) any {
	v, err := gguf.MakeValue(x)
	if err != nil {
		t.Fatalf("MakeValue(%T): %v", x, err)
	}
	return v.Any()
}

func TestRoundTripValues(t *testing.T) {
	vals := allValues()
	w := gguf.NewWriter()
	for _, kv := range vals {
		if err := w.Set(kv.key, kv.val); err != nil {
			t.Fatalf("Set(%q): %v", kv.key, err)
		}
	}
	b := encode(t, w)
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.KVs) != len(vals) || len(f.Tensors) != 0 {
		t.Fatalf("%d KVs, %d tensors; want %d, 0", len(f.KVs), len(f.Tensors), len(vals))
	}
	for i, kv := range vals {
		got := f.KVs[i]
		if got.Key != kv.key {
			t.Errorf("KV %d: key %q, want %q", i, got.Key, kv.key)
		}
		if got.Value.Type != kv.typ {
			t.Errorf("%q: type %s, want %s", kv.key, got.Value.Type, kv.typ)
		}
		if want := wantAny(t, kv.val); !sameBits(got.Value.Any(), want) {
			t.Errorf("%q: read back %#v, want %#v", kv.key, got.Value.Any(), want)
		}
		if v, ok := f.Value(kv.key); !ok || !sameBits(v.Any(), got.Value.Any()) {
			t.Errorf("Value(%q) does not find the pair", kv.key)
		}
	}

	// Empty arrays come back as empty slices of the element type, not nil.
	v, _ := f.Value("empty.string")
	if a, _ := v.AsArray(); a.Elem != gguf.TypeString || a.Values == nil || a.Len() != 0 {
		t.Errorf("empty string array read back as %#v", a)
	}
	if s, err := f.Strings("nil.string"); err != nil || s == nil || len(s) != 0 {
		t.Errorf("Strings(nil.string) = %#v, %v", s, err)
	}
	// NaN payloads survive.
	v, _ = f.Value("f32.nan")
	if x := v.Any().(float32); math.Float32bits(x) != 0x7fc0_1234 {
		t.Errorf("f32 NaN bits %#x", math.Float32bits(x))
	}
	v, _ = f.Value("arr.nested")
	a, _ := v.AsArray()
	if a.Elem != gguf.TypeArray || a.Len() != 4 {
		t.Fatalf("nested array: %#v", a)
	}
	inner := a.Values.([]gguf.Array)
	if inner[1].Elem != gguf.TypeString || inner[2].Values.([]gguf.Array)[0].Values.([]float64)[0] != 0.5 {
		t.Errorf("nested array contents: %#v", inner)
	}

	// Writing what was read gives the same bytes.
	w2 := gguf.NewWriter()
	for _, kv := range f.KVs {
		if err := w2.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	if b2 := encode(t, w2); !bytes.Equal(b, b2) {
		t.Errorf("rewriting the parsed values changes the bytes")
	}
}

func TestRoundTripTensors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	type tensor struct {
		name  string
		typ   gguf.TensorType
		shape []uint64
		data  []byte
	}
	tensors := []tensor{
		{"f32.vec", gguf.TensorF32, []uint64{5}, randBytes(20)},
		{"f16.mat", gguf.TensorF16, []uint64{3, 7}, randBytes(42)},
		{"bf16.3d", gguf.TensorBF16, []uint64{5, 3, 2}, randBytes(60)},
		{"q8_0.mat", gguf.TensorQ8_0, []uint64{64, 3}, randBytes(6 * 34)},
		{"q8_0.4d", gguf.TensorQ8_0, []uint64{32, 1, 2, 1}, randBytes(2 * 34)},
		{"f32.empty", gguf.TensorF32, []uint64{4, 0}, []byte{}},
		{"f32.one", gguf.TensorF32, []uint64{1}, randBytes(4)},
		{"q4_0.other", gguf.TensorQ4_0, []uint64{32}, randBytes(18)},
		{"тензор", gguf.TensorF16, []uint64{1, 1, 1, 1}, randBytes(2)},
	}
	for _, align := range []uint64{0, 1, 8, 32, 64, 4096} {
		w := gguf.NewWriter()
		w.Alignment = align
		if err := w.Set("general.architecture", "test"); err != nil {
			t.Fatal(err)
		}
		for _, tn := range tensors {
			if err := w.AddTensor(tn.name, tn.typ, tn.shape, tn.data); err != nil {
				t.Fatal(err)
			}
		}
		b := encode(t, w)
		f, err := gguf.Parse(b)
		if err != nil {
			t.Fatalf("alignment %d: %v", align, err)
		}
		want := align
		if want == 0 {
			want = gguf.DefaultAlignment
		}
		if f.Alignment != want {
			t.Errorf("alignment %d: read back %d", align, f.Alignment)
		}
		_, hasKey := f.Value("general.alignment")
		if n, err := f.Int("general.alignment"); hasKey && (err != nil || uint64(n) != want) {
			t.Errorf("alignment %d: general.alignment = %d, %v", align, n, err)
		}
		if hasKey != (want != gguf.DefaultAlignment) {
			t.Errorf("alignment %d: general.alignment present = %v", align, hasKey)
		}
		if f.DataOffset%want != 0 || uint64(len(b))%want != 0 {
			t.Errorf("alignment %d: data offset %d, file size %d", align, f.DataOffset, len(b))
		}
		if len(f.Tensors) != len(tensors) {
			t.Fatalf("alignment %d: %d tensors", align, len(f.Tensors))
		}
		for i, tn := range tensors {
			got := f.Tensors[i]
			if got.Name != tn.name || got.Type != tn.typ || !equalShape(got.Shape, tn.shape) {
				t.Errorf("alignment %d: tensor %d is %q %s %v, want %q %s %v", align, i, got.Name, got.Type, got.Shape, tn.name, tn.typ, tn.shape)
			}
			if got.Offset%want != 0 {
				t.Errorf("alignment %d: %s offset %d not aligned", align, tn.name, got.Offset)
			}
			if !bytes.Equal(got.Data, tn.data) {
				t.Errorf("alignment %d: %s data differs", align, tn.name)
			}
			if p, ok := f.Tensor(tn.name); !ok || p != &f.Tensors[i] {
				t.Errorf("alignment %d: Tensor(%q) lookup failed", align, tn.name)
			}
			if i > 0 {
				prev := f.Tensors[i-1]
				if min := prev.Offset + uint64(len(prev.Data)); got.Offset < min || got.Offset >= min+want {
					t.Errorf("alignment %d: %s at %d, previous ends at %d", align, tn.name, got.Offset, min)
				}
			}
		}
	}
}

// TestWriterAlignmentKey: a general.alignment set as metadata governs the
// padding, as the reader will take it.
func TestWriterAlignmentKey(t *testing.T) {
	for _, v := range []any{uint32(64), uint64(128), int32(16), uint8(8)} {
		w := gguf.NewWriter()
		if err := w.Set("general.alignment", v); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "b", "c"} {
			if err := w.AddTensor(name, gguf.TensorF32, []uint64{3}, make([]byte, 12)); err != nil {
				t.Fatal(err)
			}
		}
		f, err := gguf.Parse(encode(t, w))
		if err != nil {
			t.Fatalf("general.alignment %v: %v", v, err)
		}
		n, _ := f.Int("general.alignment")
		if step := (12 + uint64(n) - 1) / uint64(n) * uint64(n); f.Alignment != uint64(n) || f.Tensors[2].Offset != 2*step {
			t.Errorf("general.alignment %v: alignment %d, offsets %d %d", v, f.Alignment, f.Tensors[1].Offset, f.Tensors[2].Offset)
		}
		if len(f.KVs) != 1 {
			t.Errorf("general.alignment %v: %d KVs, want 1", v, len(f.KVs))
		}
	}
	// The same value in both places is fine.
	w := gguf.NewWriter()
	w.Alignment = 64
	if err := w.Set("general.alignment", uint32(64)); err != nil {
		t.Fatal(err)
	}
	if f, err := gguf.Parse(encode(t, w)); err != nil || f.Alignment != 64 || len(f.KVs) != 1 {
		t.Errorf("matching alignments: %v", err)
	}
}

func TestWriterErrors(t *testing.T) {
	w := gguf.NewWriter()
	check := func(what string, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, s := range want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not contain %q", what, err, s)
			}
		}
	}

	if err := w.Set("k", uint32(1)); err != nil {
		t.Fatal(err)
	}
	check("duplicate key", w.Set("k", "other"), `"k"`, "twice")
	check("int", w.Set("int", 1), `"int"`, "unsupported", "int")
	check("[]int", w.Set("ints", []int{1}), `"ints"`, "unsupported")
	check("map", w.Set("map", map[string]int{}), `"map"`, "unsupported")
	check("nil", w.Set("nil", nil), `"nil"`, "unsupported")
	check("array element mismatch", w.Set("a1", gguf.Array{Elem: gguf.TypeUint8, Values: []string{"x"}}), `"a1"`, "[]string")
	check("array of arrays holding ints", w.Set("a2", gguf.Array{Elem: gguf.TypeArray, Values: []int32{1}}), `"a2"`)
	check("unknown element type", w.Set("a3", gguf.Array{Elem: 42, Values: []uint8{}}), `"a3"`)
	check("array of nil", w.Set("a4", gguf.Array{Elem: gguf.TypeString}), `"a4"`)
	check("nested mismatch", w.Set("a5", []gguf.Array{{Elem: gguf.TypeInt32, Values: []int32{}}, {Elem: gguf.TypeFloat32, Values: []float64{1}}}), `"a5"`, "float32")
	deep := gguf.Array{Elem: gguf.TypeUint8, Values: []uint8{1}}
	for range 8 {
		deep = gguf.Array{Elem: gguf.TypeArray, Values: []gguf.Array{deep}}
	}
	check("9 levels of arrays", w.Set("deep", deep), `"deep"`, "nested deeper than 8")
	if err := w.Set("deep8", deep.Values.([]gguf.Array)[0]); err != nil {
		t.Errorf("8 levels of arrays: %v", err)
	}
	for _, k := range []string{"int", "a1", "a2", "deep"} {
		if err := w.Set(k, uint8(0)); err != nil {
			t.Errorf("key %q was taken by a failed Set: %v", k, err)
		}
	}

	data := make([]byte, 16)
	if err := w.AddTensor("t", gguf.TensorF32, []uint64{4}, data); err != nil {
		t.Fatal(err)
	}
	check("duplicate tensor", w.AddTensor("t", gguf.TensorF32, []uint64{4}, data), `"t"`, "twice")
	check("short data", w.AddTensor("s", gguf.TensorF32, []uint64{5}, data), `"s"`, "16 bytes", "needs 20")
	check("long data", w.AddTensor("l", gguf.TensorF16, []uint64{4}, data), `"l"`, "needs 8")
	check("nil data", w.AddTensor("n", gguf.TensorQ8_0, []uint64{32}, nil), `"n"`, "needs 34")
	check("no dimensions", w.AddTensor("d0", gguf.TensorF32, nil, nil), `"d0"`, "0 dimensions")
	check("five dimensions", w.AddTensor("d5", gguf.TensorF32, []uint64{1, 1, 1, 1, 1}, data[:4]), `"d5"`, "5 dimensions")
	check("Q8_0 33", w.AddTensor("q", gguf.TensorQ8_0, []uint64{33}, make([]byte, 34)), `"q"`, "does not fit type Q8_0")
	check("Q8_0 rows of 16", w.AddTensor("q2", gguf.TensorQ8_0, []uint64{16, 2}, make([]byte, 34)), `"q2"`, "Q8_0")
	check("unknown type", w.AddTensor("u", gguf.TensorType(77), []uint64{4}, data), `"u"`, "TensorType(77)")
	check("shape overflows", w.AddTensor("o", gguf.TensorF32, []uint64{1 << 32, 1 << 32}, nil), `"o"`, "too large")
	check("shape over 2^48", w.AddTensor("o2", gguf.TensorI8, []uint64{1 << 40, 1 << 9}, nil), `"o2"`, "too large")
	if err := w.AddTensor("s", gguf.TensorF32, []uint64{4}, data); err != nil {
		t.Errorf("name taken by a failed AddTensor: %v", err)
	}

	// What the Writer accepted still writes and reads back.
	f, err := gguf.Parse(encode(t, w))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != 2 || len(f.KVs) != 6 {
		t.Errorf("%d tensors, %d KVs; want 2, 6", len(f.Tensors), len(f.KVs))
	}

	// WriteTo errors.
	var buf bytes.Buffer
	for _, a := range []uint64{3, 48, 1 << 21} {
		w := gguf.NewWriter()
		w.Alignment = a
		_, err := w.WriteTo(&buf)
		check("alignment", err, "alignment", "power of two")
	}
	w = gguf.NewWriter()
	w.Alignment = 64
	if err := w.Set("general.alignment", uint32(32)); err != nil {
		t.Fatal(err)
	}
	_, err = w.WriteTo(&buf)
	check("conflicting alignments", err, "general.alignment")
	for _, v := range []any{"x", uint32(0), uint32(24), int8(-8)} {
		w = gguf.NewWriter()
		if err := w.Set("general.alignment", v); err != nil {
			t.Fatal(err)
		}
		_, err = w.WriteTo(&buf)
		check("bad general.alignment", err, "alignment")
	}
	w = gguf.NewWriter()
	if err := w.Set("zero", gguf.Value{}); err != nil {
		t.Fatal(err)
	}
	_, err = w.WriteTo(&buf)
	check("zero Value", err, `"zero"`)

	// Errors of the underlying writer are returned.
	w = gguf.NewWriter()
	if err := w.AddTensor("big", gguf.TensorF32, []uint64{1 << 20}, make([]byte, 4<<20)); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	n, err := w.WriteTo(&failWriter{limit: 1 << 20, err: boom})
	if !errors.Is(err, boom) {
		t.Errorf("failing writer: %v", err)
	}
	if n > 1<<20 {
		t.Errorf("failing writer: reported %d bytes written", n)
	}
}

type failWriter struct {
	n, limit int
	err      error
}

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		k := w.limit - w.n
		w.n = w.limit
		return k, w.err
	}
	w.n += len(p)
	return len(p), nil
}

func TestMakeValue(t *testing.T) {
	for _, kv := range allValues() {
		v, err := gguf.MakeValue(kv.val)
		if err != nil {
			t.Errorf("MakeValue(%T): %v", kv.val, err)
			continue
		}
		if v.Type != kv.typ {
			t.Errorf("MakeValue(%T).Type = %s, want %s", kv.val, v.Type, kv.typ)
		}
		a, ok := v.AsArray()
		if ok != (kv.typ == gguf.TypeArray) {
			t.Errorf("MakeValue(%T).AsArray ok = %v", kv.val, ok)
			continue
		}
		if !ok {
			if !sameBits(v.Any(), kv.val) {
				t.Errorf("MakeValue(%T).Any() = %v", kv.val, v.Any())
			}
			continue
		}
		want := 0
		if x, isArray := kv.val.(gguf.Array); isArray {
			want = x.Len()
		} else {
			want = reflect.ValueOf(kv.val).Len()
		}
		if a.Len() != want {
			t.Errorf("MakeValue(%T): Len %d, want %d", kv.val, a.Len(), want)
		}
	}
	// AsX accessors report ok only for their own kinds.
	v, _ := gguf.MakeValue(int16(-3))
	if n, ok := v.AsInt(); !ok || n != -3 {
		t.Errorf("AsInt(int16 -3) = %d, %v", n, ok)
	}
	if _, ok := v.AsFloat(); ok {
		t.Errorf("AsFloat of an int16")
	}
	if _, ok := v.AsString(); ok {
		t.Errorf("AsString of an int16")
	}
	if _, ok := v.AsBool(); ok {
		t.Errorf("AsBool of an int16")
	}
	if _, ok := v.AsArray(); ok {
		t.Errorf("AsArray of an int16")
	}
	v, _ = gguf.MakeValue(uint64(math.MaxInt64))
	if n, ok := v.AsInt(); !ok || n != math.MaxInt64 {
		t.Errorf("AsInt(MaxInt64 as uint64) = %d, %v", n, ok)
	}
	if s := gguf.ValueType(99).String(); s != "ValueType(99)" {
		t.Errorf("ValueType(99).String() = %q", s)
	}
	if s := gguf.TensorQ8_0.String(); s != "Q8_0" {
		t.Errorf("TensorQ8_0.String() = %q", s)
	}
	if gguf.TensorType(77).Known() || gguf.TensorType(77).BlockSize() != 0 {
		t.Errorf("TensorType(77) is known")
	}
	if n, ok := gguf.TensorQ8_0.RowBytes(64); !ok || n != 68 {
		t.Errorf("Q8_0.RowBytes(64) = %d, %v", n, ok)
	}
	if _, ok := gguf.TensorQ8_0.RowBytes(48); ok {
		t.Errorf("Q8_0.RowBytes(48) ok")
	}
}

// TestRewriteGolden copies every KV and tensor of the golden file through
// the Writer. The result parses back to identical metadata and tensors and,
// as both follow the same layout rules, is byte for byte the golden file.
func TestRewriteGolden(t *testing.T) {
	raw := golden(t)
	f, err := gguf.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter()
	w.Alignment = f.Alignment
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
	out := encode(t, w)
	g, err := gguf.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.KVs) != len(f.KVs) || len(g.Tensors) != len(f.Tensors) {
		t.Fatalf("%d KVs and %d tensors, want %d and %d", len(g.KVs), len(g.Tensors), len(f.KVs), len(f.Tensors))
	}
	for i := range f.KVs {
		a, b := f.KVs[i], g.KVs[i]
		if a.Key != b.Key || a.Value.Type != b.Value.Type || !sameBits(a.Value.Any(), b.Value.Any()) {
			t.Errorf("KV %d (%q) differs after rewriting", i, a.Key)
		}
	}
	for i := range f.Tensors {
		a, b := f.Tensors[i], g.Tensors[i]
		if a.Name != b.Name || a.Type != b.Type || a.Offset != b.Offset || !equalShape(a.Shape, b.Shape) || !bytes.Equal(a.Data, b.Data) {
			t.Errorf("tensor %d (%q) differs after rewriting", i, a.Name)
		}
	}
	if g.DataOffset != f.DataOffset {
		t.Errorf("DataOffset %d, want %d", g.DataOffset, f.DataOffset)
	}
	if !bytes.Equal(out, raw) {
		i := 0
		for i < len(out) && i < len(raw) && out[i] == raw[i] {
			i++
		}
		t.Errorf("rewritten file (%d bytes) differs from the golden file (%d bytes) from offset %d", len(out), len(raw), i)
	}
}

// TestWriteHeaderStreaming: a header from WriteHeader, followed by each
// tensor's data padded to the alignment, is the file WriteTo writes.
func TestWriteHeaderStreaming(t *testing.T) {
	data := [][]byte{bytes.Repeat([]byte{1}, 12), bytes.Repeat([]byte{2}, 68), bytes.Repeat([]byte{3}, 10)}
	types := []gguf.TensorType{gguf.TensorF32, gguf.TensorQ8_0, gguf.TensorF16}
	shapes := [][]uint64{{3, 1}, {32, 2}, {5}}
	whole, streamed := gguf.NewWriter(), gguf.NewWriter()
	for _, w := range []*gguf.Writer{whole, streamed} {
		if err := w.Set("general.architecture", "qwen3"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range data {
		if err := whole.AddTensor(fmt.Sprint("t", i), types[i], shapes[i], data[i]); err != nil {
			t.Fatal(err)
		}
		size, err := streamed.AddTensorInfo(fmt.Sprint("t", i), types[i], shapes[i])
		if err != nil || size != uint64(len(data[i])) {
			t.Fatalf("AddTensorInfo: %d, %v", size, err)
		}
	}
	var want, got bytes.Buffer
	if _, err := whole.WriteTo(&want); err != nil {
		t.Fatal(err)
	}
	if _, err := streamed.WriteHeader(&got); err != nil {
		t.Fatal(err)
	}
	for _, d := range data {
		got.Write(d)
		got.Write(make([]byte, (gguf.DefaultAlignment-uint64(got.Len())%gguf.DefaultAlignment)%gguf.DefaultAlignment))
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("streamed file (%d bytes) differs from WriteTo's (%d bytes)", got.Len(), want.Len())
	}
	if _, err := streamed.WriteTo(&bytes.Buffer{}); err == nil {
		t.Error("WriteTo with data-less tensors succeeded")
	}
	if _, err := streamed.AddTensorInfo("t0", gguf.TensorF32, []uint64{1}); err == nil {
		t.Error("a tensor name added twice")
	}
}
