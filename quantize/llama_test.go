package quantize_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"inferno/gguf"
	"inferno/quantize"
	"inferno/synth"
)

// variant is a model of testdata/variants.txt.
type variant struct {
	name string
	opts synth.Options
}

// readVariants parses testdata/variants.txt: a name and "inferno synth" flags.
func readVariants(t *testing.T) []variant {
	t.Helper()
	data, err := os.ReadFile("testdata/variants.txt")
	if err != nil {
		t.Fatal(err)
	}
	var vs []variant
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		v := variant{name: f[0], opts: synth.Options{Type: gguf.TensorF32}}
		for i := 1; i < len(f); i++ {
			if f[i] == "--untied" {
				v.opts.Shape.Untied = true
				continue
			}
			if i+1 >= len(f) {
				t.Fatalf("variants.txt: %s: flag %s has no value", v.name, f[i])
			}
			val := f[i+1]
			i++
			if f[i-1] == "--preset" {
				v.opts.Preset = val
				continue
			}
			n, err := strconv.ParseUint(val, 10, 64)
			if err != nil {
				t.Fatalf("variants.txt: %s: %s %s: %v", v.name, f[i-1], val, err)
			}
			dst := map[string]*int{
				"--layers": &v.opts.Shape.Layers, "--hidden": &v.opts.Shape.Hidden, "--ffn": &v.opts.Shape.FFN,
				"--heads": &v.opts.Shape.Heads, "--kv-heads": &v.opts.Shape.KVHeads, "--head-dim": &v.opts.Shape.HeadDim,
				"--vocab-size": &v.opts.Shape.Vocab, "--experts": &v.opts.Shape.Experts, "--experts-used": &v.opts.Shape.TopK,
				"--expert-ffn": &v.opts.Shape.ExpertFFN,
			}[f[i-1]]
			switch {
			case f[i-1] == "--seed":
				v.opts.Seed = n
			case dst != nil:
				*dst = int(n)
			default:
				t.Fatalf("variants.txt: %s: unknown flag %s", v.name, f[i-1])
			}
		}
		vs = append(vs, v)
	}
	return vs
}

// fixtureTensor is llama-quantize's type and data hash for one tensor.
type fixtureTensor struct{ typ, hash string }

// readFixture parses testdata/llama-quantize.tsv: variant -> mixture ->
// tensor -> type and hash; a nil tensor map means llama-quantize refused.
func readFixture(t *testing.T) map[string]map[string]map[string]fixtureTensor {
	t.Helper()
	fh, err := os.Open("testdata/llama-quantize.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	fx := map[string]map[string]map[string]fixtureTensor{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 5 {
			t.Fatalf("llama-quantize.tsv: bad line %q", sc.Text())
		}
		if fx[f[0]] == nil {
			fx[f[0]] = map[string]map[string]fixtureTensor{}
		}
		if f[2] == "error" {
			fx[f[0]][f[1]] = nil
			continue
		}
		if fx[f[0]][f[1]] == nil {
			fx[f[0]][f[1]] = map[string]fixtureTensor{}
		}
		fx[f[0]][f[1]][f[2]] = fixtureTensor{f[3], f[4]}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return fx
}

// writeSynth writes a synth model to a file in dir.
func writeSynth(t *testing.T, dir, name string, opts synth.Options) string {
	t.Helper()
	path := filepath.Join(dir, name)
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := synth.Write(fh, opts); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLlamaQuantizeFixture regenerates the F32 models of
// testdata/variants.txt, quantizes each with every mixture, and checks
// every 2-D tensor's type and data against what llama-quantize wrote for
// the same model (testdata/llama-quantize.tsv, recorded by compare.sh
// --record), and that the mixtures llama-quantize refuses are refused.
// With -short, mixture i runs on variant i modulo the number of variants
// only: every mixture and every variant once at least.
func TestLlamaQuantizeFixture(t *testing.T) {
	t.Parallel()
	fx := readFixture(t)
	dir := t.TempDir()
	variants := readVariants(t)
	for vi, v := range variants {
		in := writeSynth(t, dir, v.name+".gguf", v.opts)
		want := fx[v.name]
		if len(want) != len(quantize.Mixtures()) {
			t.Fatalf("%s: the fixture has %d mixtures, want %d", v.name, len(want), len(quantize.Mixtures()))
		}
		for mi, m := range quantize.Mixtures() {
			if testing.Short() && mi%len(variants) != vi {
				continue
			}
			w, ok := want[m.Name]
			if !ok {
				t.Errorf("%s %s: not in the fixture", v.name, m.Name)
				continue
			}
			out := filepath.Join(dir, v.name+"-"+m.Name+".gguf")
			_, err := quantize.Quantize(context.Background(), in, out, quantize.Options{Mixture: m.Name})
			if w == nil {
				if err == nil {
					t.Errorf("%s %s: llama-quantize refuses the model, inferno quantized it", v.name, m.Name)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", v.name, m.Name, err)
				continue
			}
			f, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			n, bad := 0, 0
			for _, ti := range f.Tensors {
				if len(ti.Shape) < 2 {
					continue
				}
				n++
				sum := sha256.Sum256(ti.Data)
				got := fixtureTensor{ti.Type.String(), hex.EncodeToString(sum[:8])}
				if exp, ok := w[ti.Name]; !ok {
					t.Errorf("%s %s: tensor %s is not in the fixture", v.name, m.Name, ti.Name)
				} else if got != exp {
					if bad++; bad <= 3 {
						t.Errorf("%s %s: %s is %s %s, llama-quantize wrote %s %s", v.name, m.Name, ti.Name, got.typ, got.hash, exp.typ, exp.hash)
					}
				}
			}
			if ft, _ := f.Int("general.file_type"); ft != int64(m.FileType) {
				t.Errorf("%s %s: general.file_type %d, want %d", v.name, m.Name, ft, m.FileType)
			}
			f.Close()
			os.Remove(out)
			if n != len(w) {
				t.Errorf("%s %s: %d 2-D tensors, the fixture has %d", v.name, m.Name, n, len(w))
			}
			if bad > 0 {
				t.Errorf("%s %s: %d of %d tensors differ from llama-quantize's", v.name, m.Name, bad, n)
			}
		}
	}
}

// TestSynthMatchesFixture checks that synth writes a small model in a
// mixture directly with the types and data llama-quantize gives its F32
// model: the draws are the F32 model's, encoded as llama-quantize would.
func TestSynthMatchesFixture(t *testing.T) {
	fx := readFixture(t)
	for _, v := range readVariants(t) {
		if v.name != "B" {
			continue
		}
		for _, mix := range []string{"Q4_K_M", "Q3_K_M", "IQ4_XS", "Q5_1"} {
			opts := v.opts
			opts.Mixture = mix
			var buf bytes.Buffer
			if err := synth.Write(&buf, opts); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Parse(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			m, _ := quantize.ParseMixture(mix)
			if ft, _ := f.Int("general.file_type"); ft != int64(m.FileType) {
				t.Errorf("%s %s: general.file_type %d, want %d", v.name, mix, ft, m.FileType)
			}
			for _, ti := range f.Tensors {
				if len(ti.Shape) < 2 {
					continue
				}
				sum := sha256.Sum256(ti.Data)
				got := fixtureTensor{ti.Type.String(), hex.EncodeToString(sum[:8])}
				if want := fx[v.name][mix][ti.Name]; got != want {
					t.Errorf("%s %s: %s is %s %s, llama-quantize wrote %s %s", v.name, mix, ti.Name, got.typ, got.hash, want.typ, want.hash)
				}
			}
		}
	}
}
