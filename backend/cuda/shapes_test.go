package cuda

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"inferno/arch"
	"inferno/gguf"
	"inferno/model/qwen3"
	"inferno/numfmt"
)

// shapeSpec is a Qwen3 shape for a test model.
type shapeSpec struct {
	name                                                string
	layers, hidden, ffn, heads, kvHeads, headDim, vocab int
	untied                                              bool // output.weight apart from token_embd.weight
}

// shapes are the models of TestShapes: head ratios 3 (6 query heads, 2 KV
// heads, as a new user tried), 5 (Qwen3-14B's), 6, 7 and 8 (32B's), head
// dimensions 64, 128 and 256, untied output heads, and 40 layers.
var shapes = []shapeSpec{
	{"ratio3", 3, 256, 640, 6, 2, 128, 1000, false},
	{"hd64-untied", 2, 384, 1024, 8, 2, 64, 1000, true},
	{"hd256", 2, 512, 768, 4, 2, 256, 1000, false},
	{"ratio5-untied", 2, 320, 640, 10, 2, 64, 1000, true},
	{"ratio6-hd256", 2, 512, 512, 12, 2, 256, 777, true},
	{"ratio7", 2, 448, 512, 7, 1, 64, 1000, false},
	{"ratio8", 2, 512, 1024, 16, 2, 128, 1000, true},
	{"40-layers", 40, 128, 256, 4, 2, 64, 1000, false},
}

// writeShape writes a model of shape s with random Q8_0 weights (scaled as
// synth scales them) to out, tensor by tensor (an 8B shape streams to a
// file).
func writeShape(out io.Writer, s shapeSpec, seed uint64) error {
	w := gguf.NewWriter()
	for _, kv := range []struct {
		key string
		val any
	}{
		{"general.architecture", "qwen3"},
		{"general.alignment", uint32(32)},
		{"qwen3.block_count", uint32(s.layers)},
		{"qwen3.context_length", uint32(4096)},
		{"qwen3.embedding_length", uint32(s.hidden)},
		{"qwen3.feed_forward_length", uint32(s.ffn)},
		{"qwen3.attention.head_count", uint32(s.heads)},
		{"qwen3.attention.head_count_kv", uint32(s.kvHeads)},
		{"qwen3.attention.key_length", uint32(s.headDim)},
		{"qwen3.attention.value_length", uint32(s.headDim)},
		{"qwen3.rope.freq_base", float32(1e6)},
		{"qwen3.attention.layer_norm_rms_epsilon", float32(1e-6)},
	} {
		if err := w.Set(kv.key, kv.val); err != nil {
			return err
		}
	}
	// The tensors, in order: their metadata now, their bytes after the header.
	type tensor struct {
		name        string
		rows, cols  int
		std, center float64 // a matrix's spread, or a norm's center (rows == 0)
	}
	var ts []tensor
	matrix := func(name string, rows, cols int, std float64) { ts = append(ts, tensor{name, rows, cols, std, 0}) }
	norm := func(name string, n int, center float64) { ts = append(ts, tensor{name, 0, n, 0, center}) }
	qd, kvd := s.heads*s.headDim, s.kvHeads*s.headDim
	matrix("token_embd.weight", s.vocab, s.hidden, 0.02)
	for i := range s.layers {
		b := fmt.Sprintf("blk.%d.", i)
		in := 1 / math.Sqrt(float64(s.hidden))
		norm(b+"attn_norm.weight", s.hidden, 1)
		matrix(b+"attn_q.weight", qd, s.hidden, in)
		matrix(b+"attn_k.weight", kvd, s.hidden, in)
		matrix(b+"attn_v.weight", kvd, s.hidden, in)
		norm(b+"attn_q_norm.weight", s.headDim, 1)
		norm(b+"attn_k_norm.weight", s.headDim, 1)
		matrix(b+"attn_output.weight", s.hidden, qd, 1/math.Sqrt(float64(qd)))
		norm(b+"ffn_norm.weight", s.hidden, 1)
		matrix(b+"ffn_gate.weight", s.ffn, s.hidden, in)
		matrix(b+"ffn_up.weight", s.ffn, s.hidden, in)
		matrix(b+"ffn_down.weight", s.hidden, s.ffn, 1/math.Sqrt(float64(s.ffn)))
	}
	norm("output_norm.weight", s.hidden, 5/(0.02*math.Sqrt(float64(s.hidden))))
	if s.untied {
		matrix("output.weight", s.vocab, s.hidden, 0.02)
	}
	for _, t := range ts {
		var err error
		if t.rows == 0 {
			_, err = w.AddTensorInfo(t.name, gguf.TensorF32, []uint64{uint64(t.cols)})
		} else {
			_, err = w.AddTensorInfo(t.name, gguf.TensorQ8_0, []uint64{uint64(t.cols), uint64(t.rows)})
		}
		if err != nil {
			return err
		}
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	n, err := w.WriteHeader(bw)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 17))
	cc := rand.NewChaCha8([32]byte{byte(seed), 1})
	var buf []byte
	for _, t := range ts {
		if t.rows == 0 {
			buf = slices.Grow(buf[:0], 4*t.cols)[:4*t.cols]
			for i := range t.cols {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(t.center*(1+0.1*(2*rng.Float64()-1)))))
			}
		} else {
			// Random int8 values (uniform on [-128, 127]: std about
			// 74), one scale a matrix.
			size := t.rows * t.cols / numfmt.QK8_0 * numfmt.BlockQ8_0Bytes
			buf = slices.Grow(buf[:0], size)[:size]
			cc.Read(buf)
			d := numfmt.F32ToF16(float32(t.std / 74))
			for b := 0; b < size; b += numfmt.BlockQ8_0Bytes {
				binary.LittleEndian.PutUint16(buf[b:], d)
			}
		}
		if _, err := bw.Write(buf); err != nil {
			return err
		}
		n += int64(len(buf))
		if pad := (32 - n%32) % 32; pad > 0 {
			if _, err := bw.Write(make([]byte, pad)); err != nil {
				return err
			}
			n += pad
		}
	}
	return bw.Flush()
}

// shapeModel writes a model of shape s into memory and loads it.
func shapeModel(t testing.TB, s shapeSpec) *qwen3.Model {
	t.Helper()
	var buf bytes.Buffer
	if err := writeShape(&buf, s, uint64(s.hidden*100+s.heads)); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m, err := qwen3.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if (m.Output != m.Embed) != s.untied {
		t.Fatalf("%s: output head untied %v, want %v", s.name, m.Output != m.Embed, s.untied)
	}
	return m
}

// TestShapeModels checks that the test models load as specified (on any
// machine) and that the GPU's attention cut fits them.
func TestShapeModels(t *testing.T) {
	t.Parallel()
	for _, s := range shapes {
		m := shapeModel(t, s)
		c := m.Config
		if c.Heads != s.heads || c.KVHeads != s.kvHeads || c.HeadDim != s.headDim || c.Layers != s.layers || c.Vocab != s.vocab {
			t.Errorf("%s: config %+v", s.name, c)
		}
		if err := checkShape(&c); err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
		sh := shapeOf(&c, false)
		ratio := c.Heads / c.KVHeads
		if ratio%sh.dg != 0 || ratio%sh.pg != 0 || sh.dblocks*sh.dg != c.Heads || 64%sh.pg != 0 {
			t.Errorf("%s: shape %+v for ratio %d", s.name, sh, ratio)
		}
	}
	for _, c := range []struct{ hd, ratio, dg, pg int }{
		{128, 2, 2, 2}, {128, 3, 3, 1}, {128, 5, 5, 1}, {128, 7, 7, 1}, {128, 11, 1, 1}, {128, 8, 8, 4}, {128, 16, 8, 4},
		{256, 8, 4, 4}, {256, 6, 3, 2}, {32, 3, 1, 1}, {64, 10, 5, 2}, {64, 9, 3, 1}, {64, 14, 7, 2},
	} {
		if dg, pg := decodeGroup(c.hd, c.ratio, false), prefillGroup(c.ratio); dg != c.dg || pg != c.pg {
			t.Errorf("head dim %d, ratio %d: groups %d and %d, want %d and %d", c.hd, c.ratio, dg, pg, c.dg, c.pg)
		}
	}
	// The extended kernels' groups (windows, sinks): powers of two.
	for _, c := range []struct{ hd, ratio, dg int }{{64, 8, 8}, {64, 16, 8}, {64, 6, 2}, {64, 5, 1}, {256, 4, 4}, {256, 2, 2}, {128, 2, 2}, {32, 8, 4}} {
		if dg := decodeGroup(c.hd, c.ratio, true); dg != c.dg {
			t.Errorf("extended kernels, head dim %d, ratio %d: group %d, want %d", c.hd, c.ratio, dg, c.dg)
		}
	}
	bad := arch.Config{Heads: 8, KVHeads: 2, HeadDim: 96, Hidden: 256, FFN: 512}
	if err := checkShape(&bad); err == nil {
		t.Error("head dimension 96 accepted")
	}
}

// TestShapes runs each test model on the GPU against the CPU: greedy
// transcripts of one sequence (engine.Single) and the CPU reference (a
// prompt of 150 tokens: prefill, then decode over two attention splits),
// and the BatchRunner against each sequence alone (prefill, mixed and
// decode batches, the decode graphs with and without the cluster
// attention; not with -short).
func TestShapes(t *testing.T) {
	requireGPU(t)
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			m := shapeModel(t, s)
			sh := shapeOf(&m.Config, false)
			t.Logf("%d layers, %d query heads, %d KV heads, head dim %d, untied %v: decode blocks take %d query heads, prefill blocks %d",
				s.layers, s.heads, s.kvHeads, s.headDim, s.untied, sh.dg, sh.pg)
			transcript(t, m, randomPrompt(uint64(s.hidden), 150, m.Config.Vocab), 16)
			if !testing.Short() { // TestBatchEqualsAlone's shapes batch in -short
				batchEqualsAlone(t, m, 16, 16)
			}
		})
	}
}
