package quantize

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inferno/gguf"
)

// FuzzParseMixture checks that ParseMixture never panics, accepts a name
// in any case and returns only mixtures of the table, each of which its
// own name and file type parse back to.
func FuzzParseMixture(f *testing.F) {
	for _, s := range []string{"Q4_K_M", "q4_k_m", " Q5_K ", "15", "0", "32", "Q4_K_X", "", "+15", "١٥", "q8_0\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		m, err := ParseMixture(name)
		if err != nil {
			if !strings.Contains(err.Error(), "unknown quantization type") {
				t.Fatalf("%q: error %v", name, err)
			}
			return
		}
		if got, ok := MixtureOf(m.FileType); !ok || got != m {
			t.Fatalf("%q: %+v is not the table's mixture of file type %d", name, m, m.FileType)
		}
		for _, again := range []string{m.Name, strings.ToLower(m.Name), strings.ToLower(name)} {
			if m2, err := ParseMixture(again); err != nil || m2 != m {
				t.Fatalf("%q gives %+v, %q gives %+v, %v", name, m, again, m2, err)
			}
		}
	})
}

// FuzzTypes runs the rules on tensors of any name and shape: no panic,
// and every type chosen holds the tensor's rows in whole blocks.
func FuzzTypes(f *testing.F) {
	var seed bytes.Buffer
	for _, t := range (shape{2, 256, 512, 4, 2, 64, 300, true}).tensors() {
		seed.WriteString(t.Name)
		seed.WriteByte(0)
		binary.Write(&seed, binary.LittleEndian, uint16(t.Shape[0]))
		if len(t.Shape) > 1 {
			binary.Write(&seed, binary.LittleEndian, uint16(t.Shape[1]))
		} else {
			binary.Write(&seed, binary.LittleEndian, uint16(1))
		}
		seed.WriteByte(0)
	}
	f.Add(seed.Bytes(), uint8(11), false, uint8(2), uint8(4), uint8(2))
	f.Add([]byte("blk.-1.ffn_down.weight\x00\x21\x00\x03\x00\x00output.weight\x00\x00\x00\x05\x00\x01"), uint8(4), true, uint8(0), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, which uint8, pure bool, layers, heads, kvHeads uint8) {
		// Each tensor: a name up to a zero byte, two 16-bit dimensions and
		// a type byte (F32, F16 or BF16).
		var ts []Tensor
		for len(ts) < 64 {
			name, rest, ok := bytes.Cut(data, []byte{0})
			if !ok || len(rest) < 5 {
				break
			}
			d0, d1 := binary.LittleEndian.Uint16(rest), binary.LittleEndian.Uint16(rest[2:])
			typ := [3]gguf.TensorType{gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16}[rest[4]%3]
			ts = append(ts, Tensor{Name: string(name), Type: typ, Shape: []uint64{uint64(d0), uint64(d1)}})
			data = rest[5:]
		}
		m := mixtures[int(which)%len(mixtures)]
		plan, err := Types(ts, Model{Layers: int(layers), Heads: int(heads), KVHeads: int(kvHeads)}, m, pure)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tensor ") {
				t.Fatalf("error without the tensor's name: %v", err)
			}
			return
		}
		if len(plan.Types) != len(ts) {
			t.Fatalf("%d types for %d tensors", len(plan.Types), len(ts))
		}
		for i, typ := range plan.Types {
			if !typ.Known() || ts[i].Shape[0]%uint64(typ.BlockSize()) != 0 {
				t.Fatalf("%s %v: type %s", ts[i].Name, ts[i].Shape, typ)
			}
			if _, ok := typ.RowBytes(ts[i].Shape[0]); !ok {
				t.Fatalf("%s %v: type %s has no row size", ts[i].Name, ts[i].Shape, typ)
			}
		}
	})
}

// FuzzQuantize quantizes corrupted GGUF files: Quantize must not panic,
// must fail with an error or write a file that parses with the input's
// tensors, and must leave nothing behind when it fails.
func FuzzQuantize(f *testing.F) {
	f.Add(tinyModel(f), uint8(11))
	f.Add(tinyModel(f)[:200], uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		in, err := gguf.Parse(data)
		if err != nil {
			return // the parser has its own fuzz target
		}
		dir := t.TempDir()
		inPath := filepath.Join(dir, "in.gguf")
		if err := os.WriteFile(inPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		outPath := filepath.Join(dir, "out", "out.gguf")
		m := mixtures[int(which)%len(mixtures)]
		_, err = Quantize(context.Background(), inPath, outPath, Options{Mixture: m.Name, Threads: 2})
		if err != nil {
			if _, serr := os.Stat(filepath.Dir(outPath)); serr == nil {
				t.Fatalf("failed (%v) and left the output folder behind", err)
			}
			return
		}
		out, err := gguf.Open(outPath)
		if err != nil {
			t.Fatalf("the output does not parse: %v", err)
		}
		defer out.Close()
		if len(out.Tensors) != len(in.Tensors) {
			t.Fatalf("%d tensors, want %d", len(out.Tensors), len(in.Tensors))
		}
		for i, ot := range out.Tensors {
			if ot.Name != in.Tensors[i].Name {
				t.Fatalf("tensor %d is %s, want %s", i, ot.Name, in.Tensors[i].Name)
			}
		}
	})
}

// tinyModel returns a small F32 Qwen3 model: one layer whose rows hold
// 256 values, so that every mixture applies, and matrices of two rows, so
// that the file stays small.
func tinyModel(t testing.TB) []byte {
	w := gguf.NewWriter()
	for _, kv := range []struct {
		k string
		v any
	}{
		{"general.architecture", "qwen3"},
		{"qwen3.block_count", uint32(1)},
		{"qwen3.attention.head_count", uint32(2)},
		{"qwen3.attention.head_count_kv", uint32(1)},
	} {
		if err := w.Set(kv.k, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	for _, tn := range (shape{1, 256, 256, 2, 1, 128, 4, true}).tensors() {
		if len(tn.Shape) > 1 {
			tn.Shape[1] = 2
		}
		n := 1
		for _, d := range tn.Shape {
			n *= int(d)
		}
		data := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(data[4*i:], uint32(0x3c000000+i*977%0x1000000))
		}
		if err := w.AddTensor(tn.Name, tn.Type, tn.Shape, data); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
