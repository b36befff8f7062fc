package quantize_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"inferno/gguf"
	"inferno/internal/fifo"
	"inferno/quantize"
	"inferno/synth"
)

// small is a small F32 model whose rows hold K-quant blocks, untied.
var small = synth.Options{Preset: "tiny", Type: gguf.TensorF32, Seed: 5,
	Shape: synth.Shape{Layers: 4, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 1, HeadDim: 64, Vocab: 300, Untied: true}}

func TestQuantizeMetadata(t *testing.T) {
	dir := t.TempDir()
	in := writeSynth(t, dir, "in.gguf", small)
	out := filepath.Join(dir, "sub", "out.gguf") // a folder that does not exist yet
	var last, total int64
	res, err := quantize.Quantize(context.Background(), in, out, quantize.Options{
		Mixture: "q4_k_m", Progress: func(done, tot int64) { last, total = done, tot }})
	if err != nil {
		t.Fatal(err)
	}
	src, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Metadata: the input's, with file_type and quantization_version moved
	// to the end, as llama-quantize's gguf_set_val does.
	var want []string
	for _, kv := range src.KVs {
		if kv.Key != "general.file_type" && kv.Key != "general.quantization_version" {
			want = append(want, kv.Key)
		}
	}
	want = append(want, "general.quantization_version", "general.file_type")
	var got []string
	for _, kv := range f.KVs {
		got = append(got, kv.Key)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("metadata keys\n%v\nwant\n%v", got, want)
	}
	if ft, _ := f.Int("general.file_type"); ft != 15 {
		t.Errorf("general.file_type %d, want 15", ft)
	}
	if qv, _ := f.Int("general.quantization_version"); qv != 2 {
		t.Errorf("general.quantization_version %d, want 2", qv)
	}
	if toks, err := f.Strings("tokenizer.ggml.tokens"); err != nil || len(toks) != 300 {
		t.Errorf("tokens: %d, %v", len(toks), err)
	}
	// Tensors: same order and shapes.
	if len(f.Tensors) != len(src.Tensors) {
		t.Fatalf("%d tensors, want %d", len(f.Tensors), len(src.Tensors))
	}
	for i, ti := range f.Tensors {
		if ti.Name != src.Tensors[i].Name || !slices.Equal(ti.Shape, src.Tensors[i].Shape) {
			t.Errorf("tensor %d: %s %v, want %s %v", i, ti.Name, ti.Shape, src.Tensors[i].Name, src.Tensors[i].Shape)
		}
	}
	tt := func(name string) gguf.TensorType { x, _ := f.Tensor(name); return x.Type }
	if tt("output.weight") != gguf.TensorQ6_K || tt("token_embd.weight") != gguf.TensorQ4_K ||
		tt("blk.3.attn_v.weight") != gguf.TensorQ6_K || tt("blk.1.attn_q.weight") != gguf.TensorQ4_K ||
		tt("blk.1.attn_norm.weight") != gguf.TensorF32 {
		t.Errorf("types: output %s, token_embd %s, blk.3.attn_v %s, blk.1.attn_q %s, blk.1.attn_norm %s",
			tt("output.weight"), tt("token_embd.weight"), tt("blk.3.attn_v.weight"), tt("blk.1.attn_q.weight"), tt("blk.1.attn_norm.weight"))
	}
	st, _ := os.Stat(out)
	if res.OutFile != st.Size() || last != total || total != st.Size() {
		t.Errorf("sizes: result %d, progress %d of %d, file %d", res.OutFile, last, total, st.Size())
	}
	if res.Mixture.Name != "Q4_K_M" || res.Tensors != len(f.Tensors) || res.Quantized != 4*7+2 {
		t.Errorf("result %+v", res)
	}
	if b := res.BitsPerWeight(); b < 4.5 || b > 6 {
		t.Errorf("%.2f bits per weight", b)
	}
	if b := res.InBitsPerWeight(); b != 32 {
		t.Errorf("input %.2f bits per weight, want 32", b)
	}
	if leftovers(t, filepath.Dir(out)) != 1 {
		t.Error("temporary files left behind")
	}
}

// leftovers counts the files in dir.
func leftovers(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestQuantizeThreads checks that the output does not depend on the
// number of threads.
func TestQuantizeThreads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeSynth(t, dir, "in.gguf", small)
	for _, mix := range []string{"Q4_K_M", "IQ4_XS", "Q5_0"} {
		var files [][]byte
		for _, threads := range []int{1, 3, 8} {
			out := filepath.Join(dir, "out.gguf")
			if _, err := quantize.Quantize(context.Background(), in, out, quantize.Options{Mixture: mix, Threads: threads}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, data)
		}
		if !bytes.Equal(files[0], files[1]) || !bytes.Equal(files[0], files[2]) {
			t.Errorf("%s: 1, 3 and 8 threads give different files", mix)
		}
	}
}

// TestQuantizeAlignment checks that an input's general.alignment is kept.
func TestQuantizeAlignment(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := synth.Write(&buf, small); err != nil {
		t.Fatal(err)
	}
	src, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	in := rewrite(t, dir, src, func(w *gguf.Writer) { w.Alignment = 256 }, nil)
	out := filepath.Join(dir, "out.gguf")
	if _, err := quantize.Quantize(context.Background(), in, out, quantize.Options{Mixture: "Q6_K"}); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Alignment != 256 {
		t.Errorf("alignment %d, want 256", f.Alignment)
	}
	for _, ti := range f.Tensors {
		if ti.Offset%256 != 0 {
			t.Errorf("%s at offset %d", ti.Name, ti.Offset)
		}
	}
}

// rewrite writes src to a file in dir, with setup applied to the writer
// and edit (when not nil) to each metadata pair.
func rewrite(t *testing.T, dir string, src *gguf.File, setup func(*gguf.Writer), edit func(kv gguf.KV) (gguf.KV, bool)) string {
	t.Helper()
	w := gguf.NewWriter()
	if setup != nil {
		setup(w)
	}
	for _, kv := range src.KVs {
		if edit != nil {
			var keep bool
			if kv, keep = edit(kv); !keep {
				continue
			}
		}
		if err := w.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range src.Tensors {
		if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, ti.Data); err != nil {
			t.Fatal(err)
		}
	}
	fh, err := os.CreateTemp(dir, "in-*.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := w.WriteTo(fh); err != nil {
		t.Fatal(err)
	}
	return fh.Name()
}

// TestQuantizeErrors checks that bad input ends with a clear error and
// leaves nothing behind.
func TestQuantizeErrors(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := synth.Write(&buf, small); err != nil {
		t.Fatal(err)
	}
	src, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.gguf")
	os.WriteFile(good, buf.Bytes(), 0o644)
	notGGUF := filepath.Join(dir, "text.gguf")
	os.WriteFile(notGGUF, []byte("this is not a gguf file, not even close to one"), 0o644)
	truncated := filepath.Join(dir, "truncated.gguf")
	os.WriteFile(truncated, buf.Bytes()[:buf.Len()/2], 0o644)
	setKV := func(key string, val any) func(gguf.KV) (gguf.KV, bool) {
		return func(kv gguf.KV) (gguf.KV, bool) {
			if kv.Key == key {
				if val == nil {
					return kv, false
				}
				v, err := gguf.MakeValue(val)
				if err != nil {
					t.Fatal(err)
				}
				kv.Value = v
			}
			return kv, true
		}
	}
	bert := rewrite(t, dir, src, nil, setKV("general.architecture", "bert"))
	noLayers := rewrite(t, dir, src, nil, setKV("qwen3.block_count", nil))
	zeroHeads := rewrite(t, dir, src, nil, setKV("qwen3.attention.head_count_kv", uint32(0)))
	var q8 bytes.Buffer
	q8opts := small
	q8opts.Type = gguf.TensorQ8_0
	if err := synth.Write(&q8, q8opts); err != nil {
		t.Fatal(err)
	}
	quantized := filepath.Join(dir, "q8.gguf")
	os.WriteFile(quantized, q8.Bytes(), 0o644)
	odd := writeSynth(t, dir, "odd.gguf", synth.Options{Preset: "tiny", Type: gguf.TensorF32,
		Shape: synth.Shape{Layers: 2, Hidden: 64, FFN: 80, Heads: 2, KVHeads: 1, HeadDim: 40, Vocab: 300}})

	nan := filepath.Join(dir, "nan.gguf")
	withNaN := bytes.Clone(buf.Bytes())
	up, _ := src.Tensor("blk.1.ffn_up.weight")
	copy(withNaN[src.DataOffset+up.Offset+4*256*7:], []byte{0, 0, 0xc0, 0x7f})
	os.WriteFile(nan, withNaN, 0o644)

	i32 := rewrite(t, dir, src, func(w *gguf.Writer) {
		if err := w.AddTensor("extra.weight", gguf.TensorI32, []uint64{4}, make([]byte, 16)); err != nil {
			t.Fatal(err)
		}
	}, nil)

	out := filepath.Join(dir, "out", "out.gguf")
	tests := []struct {
		in, mixture, want string
	}{
		{good, "Q4_K_X", `unknown quantization type "Q4_K_X"`},
		{good, "", "unknown quantization type"},
		{filepath.Join(dir, "missing.gguf"), "Q4_K_M", "no such file"},
		{notGGUF, "Q4_K_M", "bad magic"},
		{truncated, "Q4_K_M", "past the end of the file"},
		{bert, "Q4_K_M", `architecture "bert" is not supported (want `},
		{noLayers, "Q4_K_M", "qwen3.block_count"},
		{zeroHeads, "Q4_K_M", "head_count_kv = 0 is out of range"},
		{quantized, "Q4_K_M", "token_embd.weight is already quantized (Q8_0)"},
		{i32, "Q4_K_M", "tensor extra.weight has type I32; quantize reads F32, F16 and BF16 tensors"},
		{odd, "Q4_0", "blk.0.attn_output.weight: rows of 80 values are not a multiple of the Q4_0 block size 32"},
		{nan, "Q4_K_M", "tensor blk.1.ffn_up.weight: row 7 holds a NaN or an infinity"},
		{nan, "F32", "tensor blk.1.ffn_up.weight: row 7 holds a NaN or an infinity"},
		{good, "Q4_K_M", "same file"}, // out == in below
	}
	for i, tc := range tests {
		o := out
		if i == len(tests)-1 {
			o = tc.in
		}
		_, err := quantize.Quantize(context.Background(), tc.in, o, quantize.Options{Mixture: tc.mixture})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: error %v, want %q", filepath.Base(tc.in), tc.mixture, err, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s %s: output written", filepath.Base(tc.in), tc.mixture)
		}
		if _, err := os.Stat(filepath.Dir(out)); err == nil {
			t.Errorf("%s %s: the output folder made for it was left behind", filepath.Base(tc.in), tc.mixture)
		}
	}
	if st, err := os.Stat(good); err != nil || st.Size() != int64(buf.Len()) {
		t.Error("the input was overwritten")
	}

	// Cancelled: nothing left behind either.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := quantize.Quantize(ctx, good, out, quantize.Options{Mixture: "Q4_K_M"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v", err)
	}
	if _, err := os.Stat(filepath.Dir(out)); err == nil {
		t.Error("cancelled: the output folder made for it was left behind")
	}
}

// TestQuantizeOutputNotRegular checks that an output that is a folder or
// a special file is refused before anything is written, and kept.
func TestQuantizeOutputNotRegular(t *testing.T) {
	dir := t.TempDir()
	in := writeSynth(t, dir, "in.gguf", small)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	if _, err := quantize.Quantize(context.Background(), in, sub, quantize.Options{Mixture: "Q8_0"}); err == nil ||
		err.Error() != "quantize: output "+sub+" is a folder" {
		t.Errorf("folder: error %v", err)
	}
	pipe := filepath.Join(dir, "fifo")
	if err := fifo.Make(pipe); err != nil {
		t.Skip(err)
	}
	if _, err := quantize.Quantize(context.Background(), in, pipe, quantize.Options{Mixture: "Q8_0"}); err == nil ||
		!strings.Contains(err.Error(), "output "+pipe+" is a named pipe, not a regular file") {
		t.Errorf("named pipe: error %v", err)
	}
	if st, err := os.Lstat(pipe); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the named pipe was replaced: %v", err)
	}
	if es, _ := os.ReadDir(dir); len(es) != 3 {
		t.Errorf("%d files in the folder, want 3", len(es))
	}
}
