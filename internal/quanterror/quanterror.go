// Package quanterror measures how far a quantized model's logits are from
// a float32 model's (docs/QUANT.md): the fixture's types, the error
// figures and the file operations that tools/quant-error (which makes
// model/qwen3/testdata/quant_error.json) and model/qwen3's TestQuantError
// (which checks inferno against it) both need, so that the two compute the
// very same things.
package quanterror

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"

	"inferno/backend"
	"inferno/backend/forward"
	"inferno/batch"
	"inferno/engine"
	"inferno/gguf"
	"inferno/kvcache"
	"inferno/model/qwen3"
	"inferno/numfmt"
	"inferno/synth"
)

// Synth is the synthetic model: `inferno synth` flags, F32 weights.
type Synth struct {
	Preset  string `json:"preset"`
	Layers  int    `json:"layers"`
	Hidden  int    `json:"hidden"`
	FFN     int    `json:"ffn"`
	Heads   int    `json:"heads"`
	KVHeads int    `json:"kv_heads"`
	HeadDim int    `json:"head_dim"`
	Vocab   int    `json:"vocab_size"`
	Seed    uint64 `json:"seed"`
}

// Errors are a quantized model's logits against the float32 model's, over
// every position of the token sequence.
type Errors struct {
	RelL2  float64 `json:"rel_l2"`  // ||q - f|| / ||f|| over all positions and tokens
	MaxAbs float64 `json:"max_abs"` // largest |q - f|
	Top1   float64 `json:"top1"`    // share of positions whose largest logit is the float32 model's
	KLD    float64 `json:"kld"`     // mean over positions of KL(softmax f || softmax q), nats
}

// Pair is one file's errors in both engines, each against its own logits
// of a float32 model.
type Pair struct {
	Inferno Errors `json:"inferno"`
	Llama   Errors `json:"llama"`
}

// Entry is one mixture.
type Entry struct {
	Mixture string         `json:"mixture"`
	Types   map[string]int `json:"types"` // tensors per type in the file
	BPW     float64        `json:"bpw"`   // tensor data bits per weight
	// TensorSHA256 hashes the tensors of `inferno quantize`'s file,
	// DequantizedSHA256 those of its dequantized float32 copy
	// (tensorHash).
	TensorSHA256      string `json:"tensor_sha256"`
	DequantizedSHA256 string `json:"dequantized_sha256"`
	// VsF32 is the quantized file's logits against the float32 model's:
	// the error of quantization, weights and activations together.
	VsF32 Pair `json:"vs_f32"`
	// VsDequantized is the quantized file's logits against those of its
	// dequantized copy (the same weights in float32): the error of the
	// products alone, 8-bit activations and the kernels' arithmetic.
	VsDequantized Pair `json:"vs_dequantized"`
	// LlamaVsInferno is llama.cpp's logits of the quantized file against
	// inferno's: how far apart the two engines are on the same file.
	LlamaVsInferno Errors `json:"llama_vs_inferno"`
	// LlamaQuantizeSame says whether llama-quantize's file for the same
	// input and mixture has the same tensors; LlamaQuantize is its logits'
	// errors against the float32 model's.
	LlamaQuantizeSame bool  `json:"llama_quantize_same"`
	LlamaQuantize     *Pair `json:"llama_quantize,omitempty"`
}

// Fixture is model/qwen3/testdata/quant_error.json.
type Fixture struct {
	About  string `json:"about"`
	Synth  Synth  `json:"synth"`
	Tokens []int  `json:"tokens"`
	// F32TensorSHA256 hashes the float32 model's tensor data.
	F32TensorSHA256 string `json:"f32_tensor_sha256"`
	// F32 is llama.cpp's float32 logits against inferno's: the floor
	// under every figure.
	F32      Errors  `json:"f32_llama_vs_inferno"`
	Mixtures []Entry `json:"mixtures"`
}

// Tokens returns the token sequence: n ids drawn uniformly from the
// vocabulary by a PCG seeded with seed.
func Tokens(n, vocab int, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 0x71756e74))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(rng.IntN(vocab))
	}
	return ids
}

// Options returns the synth.Options of s with F32 weights.
func (s Synth) Options() synth.Options {
	return synth.Options{
		Preset: s.Preset, Seed: s.Seed, Type: gguf.TensorF32,
		Shape: synth.Shape{Layers: s.Layers, Hidden: s.Hidden, FFN: s.FFN, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim, Vocab: s.Vocab},
	}
}

// Dequantize writes a copy of the GGUF file in whose quantized tensors
// are dequantized to float32 (package numfmt's decoders, bit-exact with
// ggml's), the metadata unchanged but general.file_type (0, all F32).
func Dequantize(in, out string) error {
	f, err := gguf.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, kv := range f.KVs {
		v := kv.Value
		if kv.Key == "general.file_type" {
			v, _ = gguf.MakeValue(uint32(0))
		}
		if err := w.Set(kv.Key, v); err != nil {
			return err
		}
	}
	for _, t := range f.Tensors {
		typ, data := t.Type, t.Data
		if typ != gguf.TensorF32 {
			vals := make([]float32, t.Elements())
			if err := numfmt.DequantizeRow(vals, data, typ, len(vals)); err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
			typ, data = gguf.TensorF32, make([]byte, 4*len(vals))
			for i, v := range vals {
				binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
			}
		}
		if err := w.AddTensor(t.Name, typ, t.Shape, data); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// Logits runs tokens through m on ops and returns the logits of every
// position, position after position: in one forward pass with every
// position an output, or, with oneByOne, one token at a time (the
// matrix-vector kernels instead of the multi-token tiles).
func Logits(m *qwen3.Model, ops backend.Ops, tokens []int32, oneByOne bool) ([]float32, error) {
	if oneByOne {
		br, err := forward.NewBatched(m, ops, len(tokens), 1, len(tokens), kvcache.F32)
		if err != nil {
			return nil, err
		}
		r := engine.NewSingle(br)
		defer r.Close()
		var out []float32
		for _, tok := range tokens {
			if err := r.Forward([]int32{tok}); err != nil {
				return nil, err
			}
			l, err := r.Logits()
			if err != nil {
				return nil, err
			}
			out = append(out, l...)
		}
		return out, nil
	}
	br, err := forward.NewBatched(m, ops, 0, 1, len(tokens), kvcache.F32)
	if err != nil {
		return nil, err
	}
	defer br.Close()
	var b batch.Batch
	b.Add(b.AddSeq([]int32{0}), tokens, 0, false)
	for i := range tokens {
		b.Outputs = append(b.Outputs, int32(i))
	}
	if err := br.Forward(&b); err != nil {
		return nil, err
	}
	var out []float32
	for i := range tokens {
		l, err := br.Logits(i)
		if err != nil {
			return nil, err
		}
		out = append(out, l...)
	}
	return out, nil
}

// Measure returns the errors of got against want, rows of vocab values.
func Measure(got, want []float32, vocab int) Errors {
	var num, den, maxAbs, kld float64
	top1 := 0
	rows := len(want) / vocab
	for r := range rows {
		g, w := got[r*vocab:(r+1)*vocab], want[r*vocab:(r+1)*vocab]
		for i := range w {
			d := float64(g[i]) - float64(w[i])
			num += d * d
			den += float64(w[i]) * float64(w[i])
			maxAbs = math.Max(maxAbs, math.Abs(d))
		}
		if argmax(g) == argmax(w) {
			top1++
		}
		kld += kl(w, g)
	}
	return Errors{RelL2: math.Sqrt(num / den), MaxAbs: maxAbs, Top1: float64(top1) / float64(rows), KLD: kld / float64(rows)}
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// kl returns KL(softmax p || softmax q) in nats.
func kl(p, q []float32) float64 {
	lp, lq := logSoftmax(p), logSoftmax(q)
	var s float64
	for i := range lp {
		s += math.Exp(lp[i]) * (lp[i] - lq[i])
	}
	return s
}

func logSoftmax(v []float32) []float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, float64(x))
	}
	var s float64
	for _, x := range v {
		s += math.Exp(float64(x) - m)
	}
	ls := m + math.Log(s)
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x) - ls
	}
	return out
}

// TensorHash returns the SHA-256 of a GGUF file's tensors: name, type,
// shape and data of each, in the order of their names (llama-quantize
// writes them in another order than its input's). Metadata does not
// enter it.
func TensorHash(path string) (string, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	ts := append([]gguf.TensorInfo(nil), f.Tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	h := sha256.New()
	for _, t := range ts {
		var hdr []byte
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(t.Name)))
		hdr = append(hdr, t.Name...)
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(t.Type))
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(t.Shape)))
		for _, d := range t.Shape {
			hdr = binary.LittleEndian.AppendUint64(hdr, d)
		}
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(t.Data)))
		h.Write(hdr)
		h.Write(t.Data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
